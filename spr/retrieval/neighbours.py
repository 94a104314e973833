"""Small-to-big: the chunks beside each retrieved passage, added when the context has room.

Chunks are at most ``[ingest] chunk_tokens`` long, so a long article is several chunks, and the
one a question matches is not always the one that states the answer: "Member States shall
ensure …" in one, "… within 72 hours" in the next. After the retrieved passages (which keep their
places), the chunks immediately before and after each of them in the same section (by start
offset; in the same document when a chunk has no section) are appended, nearest passage first.
:func:`spr.fuse.fuse` packs evidence in order, so they fill only what the budget leaves. Each one
is its own source with its own citation and exact offsets; ``ranks`` says whose neighbour it is,
``(("beside", n),)``: next to the passage ranked n.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from spr.fuse import FusedContext
from spr.records import Retrieval
from spr.retrieval.base import chunk_evidence, chunk_refs
from store.base import RDFStore
from store.units import chapter_chunks, heading_paths

SOURCE = "beside"


def _siblings(store: RDFStore, anchors: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
    """Anchor chunk IRI → (start offset, IRI) of every chunk of its section (else its document),
    the anchor included, in offset order."""
    out: dict[str, set[tuple[int, str]]] = {}
    for anchor, at, chunk, start in chapter_chunks(store, anchors):
        out.setdefault(anchor, {(at, anchor)}).add((start, chunk))
    return {a: sorted(chunks) for a, chunks in out.items()}


def beside(siblings: Sequence[tuple[int, str]], anchor: str, per_side: int) -> list[str]:
    """The ``per_side`` chunks before and after ``anchor`` in ``siblings`` (sorted by offset),
    nearest first, the one after before the one before (text usually continues forwards)."""
    order = [iri for _, iri in siblings]
    if anchor not in order:
        return []
    at = order.index(anchor)
    out = []
    for step in range(1, per_side + 1):
        out += [order[i] for i in (at + step, at - step) if 0 <= i < len(order)]
    return out


def with_neighbours(store: RDFStore, found: Retrieval, per_side: int) -> Retrieval:
    """``found`` with the neighbours of its passages appended (none already in it); unchanged
    when ``per_side`` is 0 or no passage has a neighbour."""
    anchors = [e.chunk.iri for e in found.evidence if e.kind == "chunk" and e.chunk is not None]
    if per_side <= 0 or not anchors:
        return found
    siblings = _siblings(store, anchors)
    seen = {e.key for e in found.evidence}
    wanted: list[tuple[str, int, float]] = []  # (neighbour IRI, anchor rank, anchor score)
    for rank, evidence in enumerate((e for e in found.evidence if e.kind == "chunk" and e.chunk is not None), 1):
        for iri in beside(siblings.get(evidence.chunk.iri, []), evidence.chunk.iri, per_side):  # type: ignore[union-attr]
            if "chunk:" + iri not in seen:
                seen.add("chunk:" + iri)
                wanted.append((iri, rank, evidence.score))
    if not wanted:
        return found
    refs = chunk_refs(store, [iri for iri, _, _ in wanted])
    paths = heading_paths(store, refs)
    added = [
        replace(chunk_evidence(replace(refs[iri], heading_path=paths.get(iri, "")), score, SOURCE), ranks=((SOURCE, rank),))
        for iri, rank, score in wanted
        if iri in refs
    ]
    return replace(found, evidence=found.evidence + tuple(added))


def packed_neighbours_only(found: Retrieval, context: FusedContext) -> Retrieval:
    """``found`` without the neighbours the budget left out of ``context``: they were offered
    "when the context has room", so one that did not fit is not part of the answer's evidence."""
    packed = {p.evidence.key for p in context.pieces}
    return replace(found, evidence=tuple(e for e in found.evidence if e.source != SOURCE or e.key in packed))
