"""Community retrieval (the EGD GraphRAG design): modes ``community`` and ``entity``, no LLM.

Both read what the stages ``communities`` and ``reports`` wrote (:mod:`store.communities`): the
communities of one hierarchy level (``[communities] level``), their reports, the entity
descriptions, and the two vector indexes ``<kb>/indexes/reports`` and
``<kb>/indexes/entity_descriptions`` (embedded on first use unless the reports stage embedded
them: ``[communities] embed``).

- ``community``: the question's embedding against the report vectors; the top ``k`` reports of the
  level, best first (score = cosine). After them come the chunks the reports' findings cite, most
  similar to the question first (by the chunk index; in finding order without one), at most ``k``:
  the document text a generated answer can cite and a reader can check.
- ``entity``: the top ``n`` entities (``[communities] top_entities``) by the cosine of their
  description; each community of the level scores the best similarity among its members in those
  ``n``; the reports of the top ``k`` (score = that similarity), then the ``n`` descriptions.

Both pack what they return within ``TOKENS_PER_REPORT * k`` estimated tokens
(:func:`spr.fuse.estimate_tokens`; 800 a report: 4k at k = 5, the published ~3.8k), counted as
:func:`spr.fuse.fuse` counts them: the best report and (entity) the ``n`` descriptions always
enter, a later report or chunk that does not fit is skipped. The trace's note gives the tokens.

Evidence format. There is no evidence kind for a report or a description (:mod:`spr.records` has
"chunk" and "triple"), so both are kind "chunk" whose :class:`~spr.records.ChunkRef` points at the
RDF node that holds the text: a report's ``iri`` and ``document`` are its community (the text is
the community's ``pkb:reportText``, ``title`` the report title), a description's are its entity
(the text is its ``pkb:description``, ``title`` its label). ``start``/``end`` index into that text,
so a citation of a report quotes ``pkb:reportText[start:end]`` of the community its ``document``
names — checkable like a document quote. ``source`` says what each piece is:
``community:report``, ``community:chunk``, ``entity:report``, ``entity:description``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import StoreError
from spr.fuse import FACTS_HEADER, PASSAGES_HEADER, estimate_tokens
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever, chunk_evidence, chunk_refs, elapsed_ms
from spr.retrieval.vector import DenseSignal, load_chunk_index
from store.communities import (
    DESCRIPTIONS_INDEX,
    REPORTS_INDEX,
    Community,
    Report,
    community_index,
    read_communities,
    read_descriptions,
    read_reports,
)
from store.layout import KBLayout
from store.vocab import SKOS, values_clause

if TYPE_CHECKING:
    import numpy as np

    from core.embed import Embedder
    from spr.retrieval.base import Services
    from store.base import RDFStore
    from store.vectors import VectorIndex

COMMUNITY = "community"
ENTITY = "entity"
REINDEX = "run `policykb reindex reports`"
# A search fetches this many times the wanted hits before filtering to the level (the report
# index may hold every level's reports) or de-duplicating (an id may have several vectors).
_OVERFETCH = 4
# Estimated tokens per report (the published contrast: ~3.8k tokens a question at k = 5): both
# modes pack their pieces within this times k.
TOKENS_PER_REPORT = 800


def evidence_tokens(item: Evidence) -> int:
    """Estimated tokens of one piece as :func:`spr.fuse.fuse` counts it (title prefix, "[n] ")."""
    text = item.text
    if item.kind == "chunk" and item.chunk is not None and item.chunk.title:
        text = f"({item.chunk.title}) {text}"
    return estimate_tokens(text) + 2


def context_overhead() -> int:
    """The two block headers of a rendered context."""
    return estimate_tokens(FACTS_HEADER) + estimate_tokens(PASSAGES_HEADER)


def pack(candidates: Sequence[Evidence], used: int, budget: int, *, first: bool = False, limit: int | None = None) -> tuple[list[Evidence], int]:
    """The candidates, in order, that fit ``budget`` estimated tokens on top of ``used`` (one that
    does not fit is skipped, a later smaller one may); ``first``: the first candidate enters even
    when it does not fit; ``limit``: at most so many. Returns them and the tokens then used."""
    out: list[Evidence] = []
    for item in candidates:
        if limit is not None and len(out) >= limit:
            break
        cost = evidence_tokens(item)
        if used + cost <= budget or (first and not out):
            out.append(item)
            used += cost
    return out, used


def report_ref(report: Report) -> ChunkRef:
    """The report as a citable source: its community IRI, ``pkb:reportText`` and title."""
    text = report.text
    return ChunkRef(report.community, report.community, report.title, 0, len(text), text)


def description_ref(entity: str, label: str, description: str) -> ChunkRef:
    """An entity description as a citable source: the entity IRI, its ``pkb:description``, its label."""
    return ChunkRef(entity, entity, label, 0, len(description), description)


def report_evidence(report: Report, score: float, source: str) -> Evidence:
    ref = report_ref(report)
    return Evidence("chunk", ref.text, float(score), source, chunk=ref)


def description_evidence(entity: str, label: str, description: str, score: float, source: str) -> Evidence:
    ref = description_ref(entity, label, description)
    return Evidence("chunk", ref.text, float(score), source, chunk=ref)


class CommunityData:
    """The communities of one level, their reports, descriptions and indexes of one KB, each
    read on first use and kept (a KB is opened read-only). Shared by the four modes' retrievers;
    a missing piece raises a one-line :class:`StoreError` that names the command to run."""

    def __init__(self, store: RDFStore, kb_dir: Path, level: int = 0, embedder: Embedder | None = None):
        self.store = store
        self.kb_dir = Path(kb_dir)
        self.level = level
        self.embedder = embedder  # embeds an index the reports stage left to first use; None: load only
        self._lock = threading.RLock()
        self._reports_index: VectorIndex | None = None
        self._descriptions_index: VectorIndex | None = None
        self._communities: dict[str, Community] | None = None
        self._reports: dict[str, Report] | None = None
        self._community_of: dict[str, str] | None = None
        self._descriptions: dict[str, str] | None = None
        self._labels: dict[str, str] = {}

    # --- indexes ---------------------------------------------------------------------------------
    def _load(self, name: str, what: str) -> VectorIndex:
        from store.vectors import VectorIndex

        folder = KBLayout(self.kb_dir).index(name)
        try:
            if self.embedder is not None:
                return community_index(self.store, self.kb_dir, name, self.embedder)
            return VectorIndex.load(folder)
        except StoreError:
            raise StoreError(f"this KB has no {what} (no index in {folder}); {REINDEX}") from None

    @property
    def reports_index(self) -> VectorIndex:
        with self._lock:
            if self._reports_index is None:
                self._reports_index = self._load(REPORTS_INDEX, "community reports")
            return self._reports_index

    @property
    def descriptions_index(self) -> VectorIndex:
        with self._lock:
            if self._descriptions_index is None:
                self._descriptions_index = self._load(DESCRIPTIONS_INDEX, "entity descriptions")
            return self._descriptions_index

    # --- store records -----------------------------------------------------------------------------
    @property
    def communities(self) -> dict[str, Community]:
        """The level's communities by IRI."""
        with self._lock:
            if self._communities is None:
                self._communities = {c.iri: c for c in read_communities(self.store, self.level)}
            return self._communities

    @property
    def reports(self) -> dict[str, Report]:
        """The reports of the level's communities by community IRI; a KB without any raises."""
        with self._lock:
            if self._reports is None:
                communities = self.communities
                if not communities:
                    raise StoreError(f"this KB has no communities at level {self.level}; {REINDEX}")
                self._reports = {r.community: r for r in read_reports(self.store, communities)}
                if not self._reports:
                    raise StoreError(f"this KB has no community reports at level {self.level}; {REINDEX}")
            return self._reports

    @property
    def community_of(self) -> dict[str, str]:
        """Entity IRI → its community at the level (the partition of a level is disjoint)."""
        with self._lock:
            if self._community_of is None:
                self._community_of = {m: c.iri for c in self.communities.values() for m in c.members}
            return self._community_of

    @property
    def descriptions(self) -> dict[str, str]:
        with self._lock:
            if self._descriptions is None:
                self._descriptions = read_descriptions(self.store)
            return self._descriptions

    def labels(self, entities: Sequence[str]) -> dict[str, str]:
        """Display labels (``skos:prefLabel``; the smallest when there are several), kept."""
        with self._lock:
            missing = sorted({e for e in entities if e and e not in self._labels})
            if missing:
                rows = self.store.select(f"SELECT ?e ?l WHERE {{ {values_clause('e', missing)} ?e <{SKOS}prefLabel> ?l }}").rows
                found: dict[str, str] = {}
                for r in rows:
                    e, label = r["e"].value, r["l"].value  # type: ignore[union-attr]
                    found[e] = min(found.get(e, label), label)
                for e in missing:
                    self._labels[e] = found.get(e, "")
            return {e: self._labels.get(e, "") for e in entities}

    # --- searches ----------------------------------------------------------------------------------
    def _checked(self, index: VectorIndex, query: np.ndarray, what: str) -> None:
        if index.dimension != query.shape[-1]:
            raise StoreError(
                f"the {what} index holds {index.dimension}-d vectors but the embedder makes {query.shape[-1]}-d ones; "
                f"set [embed] model to the KB's embedder or {REINDEX}"
            )

    def top_reports(self, query: np.ndarray, k: int) -> list[tuple[Report, float]]:
        """The ``k`` reports of the level most similar to ``query``, best first."""
        reports, index = self.reports, self.reports_index
        self._checked(index, query, "report")
        if k <= 0 or not len(index):
            return []
        depth = k * _OVERFETCH
        while True:
            best: dict[str, float] = {}
            for hit in index.search(query, depth)[0]:
                if hit.id in reports:
                    best.setdefault(hit.id, hit.score)
            if len(best) >= k or depth >= len(index):
                break
            depth *= 4
        return [(reports[c], s) for c, s in list(best.items())[:k]]

    def top_entities(self, query: np.ndarray, n: int) -> list[tuple[str, float]]:
        """The ``n`` entities whose description is most similar to ``query``, best first."""
        index = self.descriptions_index
        self._checked(index, query, "description")
        if n <= 0 or not len(index):
            return []
        depth = n * 2
        while True:
            best: dict[str, float] = {}
            for hit in index.search(query, depth)[0]:
                best.setdefault(hit.id, hit.score)
            if len(best) >= n or depth >= len(index):
                break
            depth *= 4
        return list(best.items())[:n]

    def community_scores(self, entities: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
        """Communities of the level with a report, each scored by the best similarity of its
        members among ``entities``; best first, ties by IRI."""
        reports, community_of = self.reports, self.community_of
        score: dict[str, float] = {}
        for entity, similarity in entities:
            c = community_of.get(entity)
            if c is not None and c in reports:
                score[c] = max(score.get(c, similarity), similarity)
        return sorted(score.items(), key=lambda cs: (-cs[1], cs[0]))

    def entity_descriptions(self, entities: Sequence[tuple[str, float]], source: str) -> list[Evidence]:
        """Each entity's description as evidence (entities without one are left out)."""
        descriptions = self.descriptions
        labels = self.labels([e for e, _ in entities])
        return [
            description_evidence(e, labels.get(e, ""), descriptions[e], s, source) for e, s in entities if descriptions.get(e)
        ]


class CommunityRetriever(Retriever):
    """Mode ``community``: the top ``k`` reports of the level by cosine, then the chunks their
    findings cite (at most ``cited_chunks``, default ``k``), most similar to the question first,
    all within ``tokens_per_report * k`` estimated tokens (the best report always enters)."""

    name = COMMUNITY

    def __init__(
        self,
        data: CommunityData,
        embedder: Embedder,
        chunks: DenseSignal | None = None,
        *,
        cited_chunks: int | None = None,
        tokens_per_report: int = TOKENS_PER_REPORT,
    ):
        self.data = data
        self.embedder = embedder
        self.chunks = chunks
        self.cited_chunks = cited_chunks
        self.tokens_per_report = tokens_per_report

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        budget = self.tokens_per_report * max(1, k)
        hits = self.data.top_reports(self.embedder.embed(question), k)
        candidates = [report_evidence(r, s, f"{self.name}:report") for r, s in hits]
        reports, used = pack(candidates, context_overhead(), budget, first=True)
        kept = {e.chunk.iri for e in reports if e.chunk is not None}
        limit = k if self.cited_chunks is None else self.cited_chunks
        cited, used = pack(self._cited(question, [h for h in hits if h[0].community in kept]), used, budget, limit=limit)
        note = (
            f"{self.name}: {len(reports)} reports of level {self.data.level}, {len(cited)} cited chunks; "
            f"{used if reports else 0:,} context tokens (budget {budget:,})"
        )
        return Retrieval(tuple(reports + cited), Trace(note=note, timings_ms={self.name: elapsed_ms(started)}))

    def _cited(self, question: str, hits: list[tuple[Report, float]]) -> list[Evidence]:
        """The chunks the reports' findings cite, most similar to the question first (by the
        chunk index), else in report and finding order; each scored by its cosine (by its
        report's when there is no chunk index)."""
        order: dict[str, float] = {}
        for report, score in hits:
            for finding in report.findings:
                for chunk in finding.chunks:
                    order.setdefault(chunk, score)
        if not order:
            return []
        scores = dict(order)
        ranked = list(order)
        if self.chunks is not None:
            try:
                scores.update(self.chunks.similarities(question, ranked))
                ranked.sort(key=lambda c: -scores[c])
            except StoreError:  # no chunk index (or another embedder's): keep the findings' order
                pass
        refs = chunk_refs(self.data.store, ranked)
        return [chunk_evidence(refs[c], scores[c], f"{self.name}:chunk") for c in ranked if c in refs]


class EntityRetriever(Retriever):
    """Mode ``entity``: the top ``top_entities`` entities by description cosine; the communities
    of the level scored by the best similarity of their members among them; the reports of the
    top ``k``, best first, then the entities' descriptions, all within ``tokens_per_report * k``
    estimated tokens (the descriptions and the best report always enter)."""

    name = ENTITY

    def __init__(self, data: CommunityData, embedder: Embedder, top_entities: int = 10, *, tokens_per_report: int = TOKENS_PER_REPORT):
        self.data = data
        self.embedder = embedder
        self.top_entities = top_entities
        self.tokens_per_report = tokens_per_report

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        budget = self.tokens_per_report * max(1, k)
        entities = self.data.top_entities(self.embedder.embed(question), self.top_entities)
        scored = self.data.community_scores(entities)[: max(0, k)]
        descriptions = self.data.entity_descriptions(entities, f"{self.name}:description")
        used = context_overhead() + sum(evidence_tokens(e) for e in descriptions)
        all_reports = self.data.reports
        candidates = [report_evidence(all_reports[c], s, f"{self.name}:report") for c, s in scored]
        reports, used = pack(candidates, used, budget, first=True)
        note = (
            f"{self.name}: {len(entities)} entities → {len(reports)} of {len(scored)} reports of level {self.data.level}, "
            f"{len(descriptions)} descriptions; {used:,} context tokens (budget {budget:,})"
        )
        return Retrieval(tuple(reports + descriptions), Trace(note=note, timings_ms={self.name: elapsed_ms(started)}))


def community_data(kb: Services) -> CommunityData:
    """The KB's community data at ``[communities] level`` (one per factory call; each mode's
    retriever is built once per KB)."""
    return CommunityData(kb.store, kb.config.kb_dir, kb.config.communities.level, kb.embedder)


def make_community(kb: Services) -> Retriever:
    """The registry's factory for mode ``community``."""
    chunks = DenseSignal(kb.embedder, lambda: load_chunk_index(kb.config.kb_dir))
    return CommunityRetriever(community_data(kb), kb.embedder, chunks)


def make_entity(kb: Services) -> Retriever:
    """The registry's factory for mode ``entity``."""
    return EntityRetriever(community_data(kb), kb.embedder, kb.config.communities.top_entities)
