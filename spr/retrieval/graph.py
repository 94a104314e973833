"""Graph expansion, HippoRAG-style (Gutiérrez et al., 2024): the signal ``graph`` of the fused stage.

The KB's entity–chunk graph has a node per entity, per chunk and per document. An entity is
joined to every chunk that mentions it (``pkb:mentionedIn``) and to every entity it has an
extracted relation with; a document to its chunks, and to every chunk of another document that
names it by its title (a cross-reference: "... under the Climate Law", a Wikipedia passage naming
another article). The entities and documents named in the question seed a personalized PageRank,
each weighted by its specificity (1 / degree, so "Commission" counts less than "Just Transition
Fund"); chunks rank by their PageRank mass. A chunk two hops away — through a shared entity or a
cross-reference — is so found although it shares no words with the question: the multi-hop case.

The graph is read from the store on first use and kept (igraph); a KB without entities, or a
question that names none, gives an empty ranking and the other signals decide.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Mapping, Sequence

from core.config import RetrievalConfig
from spr.retrieval.fusion import Fused, Ranked
from store.base import RDFStore
from store.vocab import DCTERMS, PKB, SKOS

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


class EntityGraph:
    """Entity and chunk nodes with mention and relation edges, and a surface-form lookup."""

    def __init__(self, store: RDFStore):
        import igraph as ig

        mentions = [(r["e"].value, r["c"].value) for r in store.select(_MENTIONS).rows]  # type: ignore[union-attr]
        relations = [(r["a"].value, r["b"].value) for r in store.select(_RELATIONS).rows]  # type: ignore[union-attr]
        documents = [(r["c"].value, r["d"].value, r["title"].value, r["text"].value) for r in store.select(_DOCUMENTS).rows]  # type: ignore[union-attr]
        names: dict[str, int] = {}
        for node in [n for pair in mentions for n in pair] + [n for c, d, _, _ in documents for n in (c, d)]:
            names.setdefault(node, len(names))
        self.names = names
        self.labels = list(names)
        self.chunk_ids = {c for _, c in mentions} | {c for c, _, _, _ in documents}
        self.documents = {d for _, d, _, _ in documents}
        self.chunks_of: dict[str, list[str]] = {}  # document -> its chunks (a row per title: each once)
        for chunk, doc in dict.fromkeys((c, d) for c, d, _, _ in documents):
            self.chunks_of.setdefault(doc, []).append(chunk)
        # first word of a surface form -> its length in words -> surface words -> entities and documents
        self.surfaces: dict[str, dict[int, dict[tuple[str, ...], set[str]]]] = {}
        for r in store.select(_SURFACES).rows:
            self._add_surface(words(r["s"].value), r["e"].value)  # type: ignore[union-attr]
        for _, doc, title, _ in documents:
            for form in title_forms(title):
                self._add_surface(form, doc)
        edges = {(names[e], names[c]) for e, c in mentions}
        edges |= {tuple(sorted((names[a], names[b]))) for a, b in relations if a in names and b in names}
        edges |= {(names[d], names[c]) for c, d, _, _ in documents}  # a document and its chunks
        # a chunk that names another document (by its title): a cross-reference
        for chunk, doc, _, text in documents:
            for other in self._named(words(text)):
                if other != doc and other in names and other not in self.chunk_ids:
                    edges.add((names[chunk], names[other]))
        self.graph = ig.Graph(n=len(names), edges=sorted(edges), directed=False)
        self.degree = dict(zip(self.labels, self.graph.degree(), strict=True))

    def _add_surface(self, surface: tuple[str, ...], node: str) -> None:
        if not surface or len(" ".join(surface)) < _MIN_SURFACE_CHARS or (len(surface) == 1 and surface[0] in _GENERIC):
            return
        self.surfaces.setdefault(surface[0], {}).setdefault(len(surface), {}).setdefault(surface, set()).add(node)

    def _named(self, tokens: tuple[str, ...]) -> set[str]:
        """The nodes whose surface forms occur in ``tokens``: one dictionary lookup per position and
        surface length (a common first word such as "the" starts hundreds of surface forms)."""
        found: set[str] = set()
        for i, token in enumerate(tokens):
            for length, forms in self.surfaces.get(token, {}).items():
                found |= forms.get(tokens[i : i + length], set())
        return found

    def documents_named(self, text: str) -> set[str]:
        """The documents ``text`` names by their title: its cross-references (the edges above)."""
        return {node for node in self._named(words(text)) if node in self.documents}

    def seeds(self, question: str) -> dict[str, float]:
        """Entities and documents named in ``question`` → specificity weight (1 / their degree:
        a node joined to few chunks says more about where the answer is)."""
        return {node: 1.0 / max(1, self.degree.get(node, 1)) for node in self._named(words(question)) if node in self.names}

    def rank_chunks(self, seeds: Mapping[str, float], damping: float, depth: int) -> list[Ranked]:
        if not seeds:
            return []
        reset = [0.0] * len(self.labels)
        for entity, weight in seeds.items():
            reset[self.names[entity]] = weight
        scores: Sequence[float] = self.graph.personalized_pagerank(directed=False, damping=damping, reset=reset)
        chunks = [(scores[i], label) for i, label in enumerate(self.labels) if label in self.chunk_ids and scores[i] > 0]
        chunks.sort(key=lambda x: (-x[0], x[1]))
        return [Ranked(c, s) for s, c in chunks[:depth]]


class GraphSignal:
    """Chunks by personalized PageRank from the question's entities over the KB graph."""

    name = "graph"
    second_stage = True  # runs after the other signals, seeded by their fused top chunks

    def __init__(self, store: RDFStore, config: RetrievalConfig):
        self.store = store
        self.damping = config.ppr_damping
        self.seed_passages = config.graph_seed_passages
        self._graph: EntityGraph | None = None
        self._lock = threading.Lock()

    @property
    def graph(self) -> EntityGraph:
        if self._graph is None:
            with self._lock:
                if self._graph is None:
                    self._graph = EntityGraph(self.store)
        return self._graph

    def rank(self, question: str, depth: int, first: Sequence[Fused] = ()) -> list[Ranked]:
        """PageRank from the entities named in ``question`` and — HippoRAG 2's passage seeds —
        the first stage's top ``seed_passages`` chunks; each group's seed weights sum to 1
        (passages in proportion to their first-stage score)."""
        graph = self.graph
        seeds = _normalized(graph.seeds(question))
        passages = {f.chunk: f.score for f in first[: self.seed_passages] if f.chunk in graph.names}
        for chunk, weight in _normalized(passages).items():
            seeds[chunk] = seeds.get(chunk, 0.0) + weight
        return graph.rank_chunks(seeds, self.damping, depth)


def _normalized(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()} if total > 0 else {}
