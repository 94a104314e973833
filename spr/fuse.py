"""The dual-source context: verbalized triples, then text chunks, each cited by number, packed to a
token budget. Pure functions only; retrieval and generation live elsewhere.

Citation ids belong to *sources* (chunks), not to pieces: a triple stated in a chunk that is also in
the context carries that chunk's id, so the generator and the reader see one source once. A triple
whose chunk is not in the context still cites that chunk (its provenance), under its own id.
Ids are numbered in order of first appearance: facts first, then passages (SPR-RAG's order).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from core.text import sentence_spans
from spr.records import ChunkRef, Evidence

FACTS_HEADER = "Facts from the knowledge graph:"
PASSAGES_HEADER = "Passages from the documents:"

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """A conservative token estimate without a tokenizer: BPE vocabularies of small models split
    digits and rare words finely, so we assume 3.2 characters per token (English prose averages
    about 4). Overestimating only wastes a little context; underestimating overflows it."""
    return max(1, math.ceil(len(text) / 3.2)) if text else 0


@dataclass(frozen=True)
class Span:
    """A sentence (or line) of a text: ``text[start:end]`` with surrounding blanks trimmed."""

    start: int
    end: int
    text: str


def sentences(text: str) -> list[Span]:
    """The sentences and lines of ``text`` (:func:`core.text.sentence_spans`) with their offsets."""
    return [Span(a, b, text[a:b]) for a, b in sentence_spans(text)]


@dataclass(frozen=True)
class ContextPiece:
    """One line of the context: ``text`` as given to the generator (a chunk may be cut to its
    leading sentences), ``cid`` the citation id it carries."""

    cid: int
    evidence: Evidence
    text: str
    tokens: int

    @property
    def kind(self) -> str:
        return self.evidence.kind


@dataclass(frozen=True)
class FusedContext:
    """The packed context. ``sources`` maps citation id → the chunk it points to (None for a fact
    without a resolvable chunk); ``dropped`` counts pieces left out for the budget."""

    pieces: tuple[ContextPiece, ...]
    sources: Mapping[int, ChunkRef | None]
    tokens: int
    budget: int
    dropped: int = 0

    @property
    def facts(self) -> tuple[ContextPiece, ...]:
        return tuple(p for p in self.pieces if p.kind == "triple")

    @property
    def passages(self) -> tuple[ContextPiece, ...]:
        return tuple(p for p in self.pieces if p.kind == "chunk")

    def render(self) -> str:
        return render(self.pieces)


def dedupe(evidence: Iterable[Evidence]) -> list[Evidence]:
    """One piece per triple and per chunk, in first-seen order; a repeat lends its higher score,
    its matched questions and (for triples) its provenance graphs to the kept piece."""
    kept: dict[str, Evidence] = {}
    for item in evidence:
        first = kept.get(item.key)
        if first is None:
            kept[item.key] = item
            continue
        merged = replace(
            first,
            score=max(first.score, item.score),
            matched=tuple(dict.fromkeys(first.matched + item.matched)),
            chunk=first.chunk or item.chunk,
        )
        if first.fact is not None and item.fact is not None:
            graphs = tuple(dict.fromkeys(first.fact.graphs + item.fact.graphs))
            merged = replace(merged, fact=replace(first.fact, graphs=graphs))
        kept[item.key] = merged
    return list(kept.values())


def source_key(item: Evidence) -> str:
    """What a citation id stands for: the chunk, else (a fact without a known chunk) its graph or itself."""
    if item.chunk is not None:
        return item.chunk.iri
    if item.fact is not None and item.fact.graphs:
        return item.fact.graphs[0]
    return item.key


def fuse(
    evidence: Sequence[Evidence],
    budget: int,
    *,
    fact_share: float = 0.35,
    count: TokenCounter = estimate_tokens,
) -> FusedContext:
    """Pack de-duplicated evidence, in the given (ranked) order, into ``budget`` tokens.

    Facts may use ``fact_share`` of the budget (all of it when there are no passages), so a query
    returning hundreds of triples cannot crowd out the text; passages take the rest. A passage that
    does not fit is cut to the leading whole sentences that do (offsets stay valid); one that
    cannot keep even a sentence is left out and the next, shorter one is tried.
    """
    items = dedupe(evidence)
    facts = [e for e in items if e.kind == "triple"]
    chunks = [e for e in items if e.kind == "chunk"]
    overhead = count(FACTS_HEADER) + count(PASSAGES_HEADER)
    room = max(0, budget - overhead)
    fact_room = room if not chunks else int(room * fact_share)

    chosen_facts: list[tuple[Evidence, str, int]] = []
    used = 0
    for item in facts:
        cost = count(item.text) + 2  # "[n] " prefix and newline
        if used + cost > fact_room:
            continue
        chosen_facts.append((item, item.text, cost))
        used += cost

    chosen_chunks: list[tuple[Evidence, str, int]] = []
    for item in chunks:
        text = _passage_text(item)
        cost = count(text) + 2
        if used + cost > room:
            text = _fit_sentences(item.text, room - used - 2 - count(_title_prefix(item)), count)
            if not text:
                continue
            text = _title_prefix(item) + text
            cost = count(text) + 2
        chosen_chunks.append((item, text, cost))
        used += cost

    ids: dict[str, int] = {}
    for item, _, _ in [*chosen_facts, *chosen_chunks]:
        ids.setdefault(source_key(item), len(ids) + 1)
    # A fact's source is the chunk *piece* when that chunk made it in: same key, same id.
    sources: dict[int, ChunkRef | None] = {}
    pieces: list[ContextPiece] = []
    for item, text, cost in [*chosen_facts, *chosen_chunks]:
        cid = ids[source_key(item)]
        pieces.append(ContextPiece(cid, item, text, cost))
        if item.chunk is not None or cid not in sources:
            sources[cid] = _cited_chunk(item, text)
    dropped = len(items) - len(pieces)
    return FusedContext(tuple(pieces), MappingProxyType(sources), used + (overhead if pieces else 0), budget, dropped)


def render(pieces: Sequence[ContextPiece]) -> str:
    """The context text: a facts block, then a passages block, each line led by its ``[id]``."""
    lines: list[str] = []
    facts = [p for p in pieces if p.kind == "triple"]
    passages = [p for p in pieces if p.kind == "chunk"]
    if facts:
        lines.append(FACTS_HEADER)
        lines += [f"[{p.cid}] {p.text}" for p in facts]
    if passages:
        if lines:
            lines.append("")
        lines.append(PASSAGES_HEADER)
        lines += [f"[{p.cid}] {' '.join(p.text.split())}" for p in passages]
    return "\n".join(lines)


def _title_prefix(item: Evidence) -> str:
    return f"({item.chunk.title}) " if item.chunk is not None and item.chunk.title else ""


def _passage_text(item: Evidence) -> str:
    return _title_prefix(item) + item.text


def _cited_chunk(item: Evidence, text: str) -> ChunkRef | None:
    """The chunk a citation points to; for a cut passage, only the part that was in the context."""
    chunk = item.chunk
    if chunk is None or item.kind != "chunk":
        return chunk
    body = text[len(_title_prefix(item)) :]
    if body == chunk.text:
        return chunk
    return replace(chunk, end=chunk.start + len(body), text=body)


def _fit_sentences(text: str, room: int, count: TokenCounter) -> str:
    """The longest prefix of whole sentences of ``text`` within ``room`` tokens ("" if none)."""
    if room <= 0:
        return ""
    best = ""
    for span in sentences(text):
        candidate = text[: span.end]
        if count(candidate) > room:
            break
        best = candidate
    return best
