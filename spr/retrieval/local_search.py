"""Microsoft GraphRAG's local search as a baseline mode, ``local`` (Edge et al., 2024).

Both read the communities, reports and entity descriptions of :mod:`store.communities` through
:class:`spr.retrieval.community.CommunityData` (evidence format as described there).

``local`` (GraphRAG local search; no LLM in retrieval): the question is linked to the top ``n``
entities by the cosine of their descriptions (``[communities] top_entities``); the context is
packed within ``[communities] local_tokens`` (estimated tokens, :func:`spr.fuse.estimate_tokens`)
from, in GraphRAG's proportions, the reports of those entities' communities (10 %), the entities'
descriptions and their relations verbalized (40 %, plus what the reports left) and the chunks
that mention them (the rest, ~50 %). Relations between two linked entities come first; chunks
rank by their best linked entity, then by how many linked entities they mention. The answer is
the normal answer path's one LLM call over that evidence (``ask(..., answer="llm")``); ``k`` is
not used. Sources: ``local:report``, ``local:description``, ``local:relation`` (kind "triple",
with the fact and the chunk stating it), ``local:chunk``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyoxigraph import Literal

from core.errors import StoreError
from spr.records import Evidence, Fact, Retrieval, Trace
from spr.retrieval.base import Retriever, chunk_evidence, chunk_refs, elapsed_ms
from spr.retrieval.community import CommunityData, community_data, context_overhead, evidence_tokens, report_evidence
from spr.verbalize import format_literal, verbalize
from store.vocab import PKB, RDF, SKOS, values_clause
from store.vocabulary import label_from_iri

if TYPE_CHECKING:
    from core.embed import Embedder
    from spr.retrieval.base import Services

LOCAL = "local"
# GraphRAG local search's shares of the budget: community reports, text units (the rest: entities
# and relationships).
REPORT_SHARE = 0.1
TEXT_SHARE = 0.5
_CHUNK_BATCH = 64  # chunk texts fetched per query while packing


@dataclass(frozen=True)
class LocalContext:
    """What local search packed: the evidence in context order and its estimated tokens."""

    evidence: tuple[Evidence, ...]
    tokens: int
    budget: int
    counts: Mapping[str, int] = field(default_factory=dict)  # pieces per source


class LocalRetriever(Retriever):
    """GraphRAG local search's context builder (see the module docstring)."""

    name = LOCAL

    def __init__(
        self,
        data: CommunityData,
        embedder: Embedder,
        term_labels: Mapping[str, str] | Callable[[], Mapping[str, str]],
        *,
        top_entities: int = 10,
        budget: int = 8000,
        report_share: float = REPORT_SHARE,
        text_share: float = TEXT_SHARE,
    ):
        self.data = data
        self.embedder = embedder
        self._term_labels = term_labels
        self.top_entities = top_entities
        self.budget = budget
        self.report_share = report_share
        self.text_share = text_share

    @property
    def term_labels(self) -> Mapping[str, str]:
        if callable(self._term_labels):
            self._term_labels = self._term_labels()
        return self._term_labels

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.build(question).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        context = self.build(question)
        parts = ", ".join(f"{n} {source.split(':')[1]}s" for source, n in context.counts.items())
        note = f"{self.name}: {parts or 'nothing'}; {context.tokens:,} context tokens (budget {context.budget:,})"
        return Retrieval(context.evidence, Trace(note=note, timings_ms={self.name: elapsed_ms(started)}))

    def build(self, question: str) -> LocalContext:
        entities = self.data.top_entities(self.embedder.embed(question), self.top_entities)
        rank = {e: i for i, (e, _) in enumerate(entities)}
        similarity = dict(entities)
        used = context_overhead()
        chosen: list[Evidence] = []

        def pack(candidates: Sequence[Evidence], room: int) -> None:
            nonlocal used
            for item in candidates:
                cost = evidence_tokens(item)
                if used + cost <= room:
                    chosen.append(item)
                    used += cost

        pack(self._reports(entities, rank), int(self.budget * self.report_share))
        pack(self.data.entity_descriptions(entities, f"{self.name}:description"), int(self.budget * (1.0 - self.text_share)))
        pack(self._relations(rank, similarity), int(self.budget * (1.0 - self.text_share)))
        self._pack_chunks(rank, similarity, chosen, used)
        tokens = sum(evidence_tokens(e) for e in chosen) + (context_overhead() if chosen else 0)
        counts: dict[str, int] = {}
        for item in chosen:
            counts[item.source] = counts.get(item.source, 0) + 1
        return LocalContext(tuple(chosen), tokens, self.budget, counts)

    def _reports(self, entities: Sequence[tuple[str, float]], rank: Mapping[str, int]) -> list[Evidence]:
        """Reports of the linked entities' communities: most linked members first."""
        try:
            reports, community_of = self.data.reports, self.data.community_of
        except StoreError:  # descriptions without communities: local search works without reports
            return []
        members: dict[str, list[int]] = {}
        for entity, _ in entities:
            c = community_of.get(entity)
            if c in reports:
                members.setdefault(c, []).append(rank[entity])
        ordered = sorted(members, key=lambda c: (-len(members[c]), min(members[c]), c))
        best = dict(entities)
        return [
            report_evidence(reports[c], max(best[e] for e, _ in entities if community_of.get(e) == c), f"{self.name}:report")
            for c in ordered
        ]

    def _relations(self, rank: Mapping[str, int], similarity: Mapping[str, float]) -> list[Evidence]:
        """The linked entities' triples in chunk graphs (labels and mentions aside), verbalized:
        relations between two linked entities first, then by the better-ranked end, then by how
        many chunks state them."""
        if not rank:
            return []
        rows = self.data.store.select(
            f"SELECT ?g ?s ?p ?o WHERE {{ {values_clause('e', rank)} "
            f"{{ GRAPH ?g {{ ?e ?p ?o }} BIND(?e AS ?s) }} UNION {{ GRAPH ?g {{ ?s ?p ?e }} BIND(?e AS ?o) }} "
            f"?g a <{PKB}Chunk> . FILTER(?p NOT IN (<{SKOS}prefLabel>, <{SKOS}altLabel>, <{PKB}mentionedIn>, <{RDF}type>)) }}"
        ).rows
        graphs: dict[tuple[str, str, str], list[str]] = {}
        literal: dict[tuple[str, str, str], tuple[bool, str]] = {}
        for r in rows:
            o = r["o"]
            key = (r["s"].value, r["p"].value, o.value)  # type: ignore[union-attr]
            graphs.setdefault(key, []).append(r["g"].value)  # type: ignore[union-attr]
            literal[key] = (isinstance(o, Literal), o.datatype.value if isinstance(o, Literal) else "")  # type: ignore[union-attr]
        if not graphs:
            return []
        nodes = {s for s, _, _ in graphs} | {o for (s, p, o) in graphs if not literal[(s, p, o)][0]}
        labels = self.data.labels(sorted(nodes))
        far = len(rank)

        def order(key: tuple[str, str, str]) -> tuple:
            s, _, o = key
            ends = [rank.get(s, far), rank.get(o, far)]
            return (0 if max(ends) < far else 1, min(ends), -len(set(graphs[key])), key)

        facts: list[tuple[Fact, float]] = []
        for key in sorted(graphs, key=order):
            s, p, o = key
            is_literal, datatype = literal[key]
            obj = format_literal(o, datatype) if is_literal else labels.get(o) or label_from_iri(o)
            pred = self.term_labels.get(p) or label_from_iri(p)
            fact = Fact(s, p, o, labels.get(s) or label_from_iri(s), pred, obj, is_literal, tuple(sorted(set(graphs[key]))))
            facts.append((fact, max(similarity.get(s, 0.0), similarity.get(o, 0.0))))
        refs = chunk_refs(self.data.store, [f.graphs[0] for f, _ in facts])
        return [
            Evidence("triple", verbalize(f), float(score), f"{self.name}:relation", chunk=refs.get(f.graphs[0]), fact=f)
            for f, score in facts
        ]

    def _pack_chunks(self, rank: Mapping[str, int], similarity: Mapping[str, float], chosen: list[Evidence], used: int) -> None:
        """Chunks mentioning the linked entities, packed into what the budget has left."""
        if not rank:
            return
        rows = self.data.store.select(f"SELECT DISTINCT ?e ?c WHERE {{ {values_clause('e', rank)} ?e <{PKB}mentionedIn> ?c }}").rows
        mentions: dict[str, set[str]] = {}
        for r in rows:
            mentions.setdefault(r["c"].value, set()).add(r["e"].value)  # type: ignore[union-attr]
        ordered = sorted(mentions, key=lambda c: (min(rank[e] for e in mentions[c]), -len(mentions[c]), c))
        for start in range(0, len(ordered), _CHUNK_BATCH):
            part = ordered[start : start + _CHUNK_BATCH]
            refs = chunk_refs(self.data.store, part)
            for c in part:
                if c not in refs:
                    continue
                score = max(similarity[e] for e in mentions[c])
                item = chunk_evidence(refs[c], score, f"{self.name}:chunk")
                cost = evidence_tokens(item)
                if used + cost <= self.budget:
                    chosen.append(item)
                    used += cost
            if self.budget - used < 16:
                return


def make_local(kb: Services) -> Retriever:
    """The registry's factory for mode ``local``."""
    c = kb.config.communities
    return LocalRetriever(community_data(kb), kb.embedder, lambda: kb.term_labels, top_entities=c.top_entities, budget=c.local_tokens)
