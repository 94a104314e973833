"""The KB's entity–chunk graph as data: read from the store, kept as the derived index ``graph``.

The graph signal (:mod:`spr.retrieval.graph`) ranks chunks by personalized PageRank over a node
per entity, chunk and document: an entity joined to the chunks that mention it and to the entities
it has an extracted relation with, a document to its chunks and to every chunk of another document
that names it by its title (a cross-reference). Reading that from the store takes seconds — the
relation query scans every triple, and every chunk text is compared with every surface form — and
a process pays it on its first question, so each cold ``policykb ask`` did. Ingest now writes the
graph to ``<kb>/indexes/graph/graph.json.gz`` (derived stage ``graph``, after every change, like
the other indexes) and a query process loads it; a KB without the file, or whose indexes are
stale (:mod:`store.freshness`), is read from the store as before.

Pure data here (node names, edges, surface forms); the igraph object and PageRank are the
signal's. The file is JSON (not pickle: a KB directory may come from elsewhere), written
atomically.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from store.base import RDFStore
from store.freshness import stale_since
from store.layout import KBLayout
from store.vocab import DCTERMS, PKB, SKOS

NAME = "graph"  # the derived stage and its folder under <kb>/indexes
FILE = "graph.json.gz"
VERSION = 1  # of the file's layout; another version is read from the store instead

_MENTIONS = f"SELECT ?e ?c WHERE {{ ?e <{PKB}mentionedIn> ?c }}"
# DISTINCT and EXISTS: each chunk graph restates an entity's labels and mentions, so joining them
# gave a row per chunk (523,514 rows for 9,407 surface forms on the six EU acts; the relation join
# ran 6.5 s against 1.2 s) — and a cold `policykb ask` spent ~20 s here.
_SURFACES = (
    f"SELECT DISTINCT ?e ?s WHERE {{ {{ ?e <{SKOS}altLabel> ?s }} UNION {{ ?e <{SKOS}prefLabel> ?s }} "
    f"FILTER EXISTS {{ ?e <{PKB}mentionedIn> ?c }} }}"
)
_DOCUMENTS = f"SELECT ?c ?d ?title ?text WHERE {{ ?c <{PKB}partOfDocument> ?d ; <{PKB}text> ?text . ?d <{DCTERMS}title> ?title }}"
_RELATIONS = (
    f"SELECT DISTINCT ?a ?b WHERE {{ ?a ?p ?b . FILTER(?a != ?b) "
    f"FILTER EXISTS {{ ?a <{PKB}mentionedIn> ?x }} FILTER EXISTS {{ ?b <{PKB}mentionedIn> ?y }} }}"
)
_WORD = re.compile(r"[^\W_]+(?:[-/.][^\W_]+)*")
_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")  # "Taken (film)", "Midway (Arkansas)"
# A document is named by its title when the title is short enough to be cited verbatim.
_MAX_TITLE_WORDS = 8
# Surface forms this short, or these generic words alone, would seed half the graph.
_MIN_SURFACE_CHARS = 3
_GENERIC = frozenset(
    "the a an this that these those it its shall may must and or of to in for on by with member state states "
    "union article regulation directive act law section chapter annex".split()
)


def words(text: str) -> tuple[str, ...]:
    """Lower-cased word tokens without accents (keeping "2024/1689", "co2-emissions" whole): a
    question may write "Aschenbrodel" for "Aschenbrödel".

    >>> words("Who enforces Regulation (EU) 2024/1689?")
    ('who', 'enforces', 'regulation', 'eu', '2024/1689')
    >>> words("Akinoshū Kenji's Aschenbrödel")
    ('akinoshu', 'kenji', 's', 'aschenbrodel')
    """
    if not text.isascii():
        text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return tuple(_WORD.findall(text.lower()))


def title_forms(title: str) -> list[tuple[str, ...]]:
    """The word forms by which a text names a document: its title, and without a trailing
    disambiguation in parentheses when two words or more remain — "Brother (Pearl Jam song)" is
    named "Brother" no more than any text with the word "brother", but "Steven Blankaart" names
    "Steven Blankaart (physician)". Titles over :data:`_MAX_TITLE_WORDS` words are not cited verbatim.

    >>> title_forms("The Terminal (film)"), title_forms("Brother (Pearl Jam song)")
    ([('the', 'terminal', 'film'), ('the', 'terminal')], [('brother', 'pearl', 'jam', 'song')])
    """
    forms = [words(title)]
    bare = _DISAMBIGUATION.sub("", title)
    if bare != title and len(words(bare)) >= 2:
        forms.append(words(bare))
    return [f for f in forms if len(f) <= _MAX_TITLE_WORDS]


@dataclass
class GraphData:
    """Nodes (``labels``: IRIs, a node's id is its place), which are chunks and documents, each
    document's chunks, the surface forms that name nodes (first word → length in words → words →
    nodes), and the undirected edges between node ids (sorted pairs, sorted)."""

    labels: list[str]
    chunk_ids: set[str]
    documents: set[str]
    chunks_of: dict[str, list[str]]
    edges: list[tuple[int, int]]
    surfaces: dict[str, dict[int, dict[tuple[str, ...], set[str]]]] = field(default_factory=dict)

    @property
    def names(self) -> dict[str, int]:
        return {label: i for i, label in enumerate(self.labels)}

    # --- reading the store ------------------------------------------------------------------------
    @classmethod
    def read(cls, store: RDFStore) -> GraphData:
        """The graph as the store holds it now (seconds on a KB of a few thousand chunks)."""
        mentions = [(r["e"].value, r["c"].value) for r in store.select(_MENTIONS).rows]  # type: ignore[union-attr]
        relations = [(r["a"].value, r["b"].value) for r in store.select(_RELATIONS).rows]  # type: ignore[union-attr]
        documents = [(r["c"].value, r["d"].value, r["title"].value, r["text"].value) for r in store.select(_DOCUMENTS).rows]  # type: ignore[union-attr]
        names: dict[str, int] = {}
        for node in [n for pair in mentions for n in pair] + [n for c, d, _, _ in documents for n in (c, d)]:
            names.setdefault(node, len(names))
        chunks_of: dict[str, list[str]] = {}  # a row per title: each chunk once
        for chunk, doc in dict.fromkeys((c, d) for c, d, _, _ in documents):
            chunks_of.setdefault(doc, []).append(chunk)
        data = cls(
            labels=list(names),
            chunk_ids={c for _, c in mentions} | {c for c, _, _, _ in documents},
            documents={d for _, d, _, _ in documents},
            chunks_of=chunks_of,
            edges=[],
        )
        for r in store.select(_SURFACES).rows:
            data.add_surface(words(r["s"].value), r["e"].value)  # type: ignore[union-attr]
        for _, doc, title, _ in documents:
            for form in title_forms(title):
                data.add_surface(form, doc)
        edges = {(names[e], names[c]) for e, c in mentions}
        edges |= {tuple(sorted((names[a], names[b]))) for a, b in relations if a in names and b in names}
        edges |= {(names[d], names[c]) for c, d, _, _ in documents}  # a document and its chunks
        # a chunk that names another document (by its title): a cross-reference
        for chunk, doc, _, text in documents:
            for other in data.named(words(text)):
                if other != doc and other in names and other not in data.chunk_ids:
                    edges.add((names[chunk], names[other]))
        data.edges = sorted(edges)  # type: ignore[arg-type]
        return data

    def add_surface(self, surface: tuple[str, ...], node: str) -> None:
        if not surface or len(" ".join(surface)) < _MIN_SURFACE_CHARS or (len(surface) == 1 and surface[0] in _GENERIC):
            return
        self.surfaces.setdefault(surface[0], {}).setdefault(len(surface), {}).setdefault(surface, set()).add(node)

    def named(self, tokens: tuple[str, ...]) -> set[str]:
        """The nodes whose surface forms occur in ``tokens``: one dictionary lookup per position and
        surface length (a common first word such as "the" starts hundreds of surface forms)."""
        found: set[str] = set()
        for i, token in enumerate(tokens):
            for length, forms in self.surfaces.get(token, {}).items():
                found |= forms.get(tokens[i : i + length], set())
        return found

    def _surface_rows(self) -> Iterable[tuple[tuple[str, ...], set[str]]]:
        for by_length in self.surfaces.values():
            for forms in by_length.values():
                yield from forms.items()

    # --- the file ------------------------------------------------------------------------------------
    def save(self, folder: Path) -> Path:
        """Write ``folder/graph.json.gz`` atomically (a reader sees the old file or the new one)."""
        ids = self.names
        payload = {
            "version": VERSION,
            "labels": self.labels,
            "chunks": sorted(ids[c] for c in self.chunk_ids),
            "documents": sorted(ids[d] for d in self.documents),
            "chunks_of": {str(ids[d]): [ids[c] for c in chunks] for d, chunks in self.chunks_of.items()},
            "surfaces": sorted([" ".join(form), sorted(ids[n] for n in nodes)] for form, nodes in self._surface_rows()),
            "edges": [list(e) for e in self.edges],
        }
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / FILE
        tmp = folder / f"{FILE}.tmp"
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=3) as out:
            json.dump(payload, out, separators=(",", ":"))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, folder: Path) -> GraphData | None:
        """The graph saved in ``folder``; None when there is none, or one of another layout
        version, or an unreadable one (the caller reads the store instead)."""
        try:
            with gzip.open(folder / FILE, "rt", encoding="utf-8") as fh:
                raw = json.load(fh)
            if not isinstance(raw, dict) or raw.get("version") != VERSION:
                return None
            labels: list[str] = raw["labels"]
            data = cls(
                labels=labels,
                chunk_ids={labels[i] for i in raw["chunks"]},
                documents={labels[i] for i in raw["documents"]},
                chunks_of={labels[int(d)]: [labels[c] for c in chunks] for d, chunks in raw["chunks_of"].items()},
                edges=[(a, b) for a, b in raw["edges"]],
            )
            for form, nodes in raw["surfaces"]:
                surface = tuple(form.split(" "))
                data.surfaces.setdefault(surface[0], {}).setdefault(len(surface), {})[surface] = {labels[n] for n in nodes}
            return data
        except (OSError, EOFError, ValueError, KeyError, IndexError, TypeError):
            return None


def open_graph(store: RDFStore, kb_dir: str | Path | None) -> tuple[GraphData, str]:
    """The KB's graph and where it came from: the saved index when it covers the store, else the
    store itself (no index yet — a KB built before it existed —, a damaged one, or stale indexes)."""
    if kb_dir is not None and stale_since(kb_dir) is None:
        saved = GraphData.load(KBLayout(kb_dir).index(NAME))
        if saved is not None:
            return saved, "index"
    return GraphData.read(store), "store"
