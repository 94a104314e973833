"""Microsoft GraphRAG's two query modes as baselines (Edge et al., 2024): ``local`` and ``global``.

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

``global`` (GraphRAG global search): map — every report of the level, in batches of at most
``[communities] global_batch_tokens``, one LLM call per batch asking for the points of those
reports that help answer the question, each with a 0–100 importance score (JSON schema, at most
``points`` per call); an output that does not parse or fit is skipped and counted, never fatal.
Reduce — the points with a score above 0, best first (a repeated text once), are the evidence (``global:point``, kind
"triple" without a fact; its ``chunk`` is the report it came from under the IRI
``<community>#point-<n>``, so each point keeps its own citation id while the quote comes from
the report's ``pkb:reportText``); the answer is the normal answer path's call over them. The map
calls go through the KB's model, so their requests and tokens are in ``Answer.usage`` (counted
from the tracker, as ``ask`` counts the answer's) and in the trace's note.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal

from core.errors import ModelOutputError, StoreError
from core.usage import UsageScope
from spr.fuse import estimate_tokens
from spr.lexical import lexical_scores
from spr.records import ChunkRef, Evidence, Fact, Retrieval, Trace
from spr.retrieval.base import Retriever, chunk_evidence, chunk_refs, elapsed_ms
from spr.retrieval.community import CommunityData, community_data, context_overhead, evidence_tokens, report_evidence
from spr.verbalize import format_literal, label_from_iri, verbalize
from store.communities import Report
from store.vocab import PKB, RDF, SKOS, values_clause

if TYPE_CHECKING:
    from core.embed import Embedder
    from core.llm import LLM
    from spr.retrieval.base import Services

LOCAL = "local"
GLOBAL = "global"
# GraphRAG local search's shares of the budget: community reports, text units (the rest: entities
# and relationships).
REPORT_SHARE = 0.1
TEXT_SHARE = 0.5
_CHUNK_BATCH = 64  # chunk texts fetched per query while packing


# --- local -------------------------------------------------------------------------------------------
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


# --- global ------------------------------------------------------------------------------------------
MAP_SYSTEM = (
    "You are a helpful assistant answering questions about policy documents from summaries of "
    "communities of the documents' entities (the data reports). Use only the reports."
)
MAP_INSTRUCTIONS = (
    "List at most {points} key points from the reports above that help answer the question. For each point give "
    '"description": one or two sentences grounded in the reports; "score": how important the point is for '
    'answering the question, an integer from 0 (does not help) to 100 (answers it); "report": the number of the '
    "report it comes from. If the reports do not help, reply with an empty list of points. "
    'Reply with JSON only, for example {{"points": [{{"description": "...", "score": 80, "report": 1}}]}}.'
)
_MAP_CUT = 3.0  # characters per token when a single report must be cut to a batch


def map_schema(points: int, reports: int) -> dict[str, Any]:
    """The map call's JSON schema: at most ``points`` points, each citing one of ``reports``."""
    point = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "maxLength": 300},
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "report": {"type": "integer", "minimum": 1, "maximum": max(1, reports)},
        },
        "required": ["description", "score", "report"],
    }
    return {
        "type": "object",
        "properties": {"points": {"type": "array", "items": point, "maxItems": points}},
        "required": ["points"],
    }


@dataclass(frozen=True)
class Point:
    """One map output: what a report says for the question, its 0–100 importance, its report."""

    text: str
    score: int
    report: Report


@dataclass(frozen=True)
class MapStats:
    """The map phase of one question. ``calls``: requests (cache hits included: what the answer
    costs uncached), ``cache_hits`` of them served by the response cache; ``invalid``: outputs
    skipped (not JSON, wrong shape); tokens as the backend counted them, cache hits included;
    ``estimated_prompt_tokens``: :func:`spr.fuse.estimate_tokens` of the prompts."""

    batches: int = 0
    reports: int = 0
    calls: int = 0
    cache_hits: int = 0
    invalid: int = 0
    points: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_prompt_tokens: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class GlobalResult:
    points: tuple[Point, ...]
    stats: MapStats
    evidence: tuple[Evidence, ...] = ()


class GlobalRetriever(Retriever):
    """GraphRAG global search: map over every report of the level, reduce to the best points."""

    name = GLOBAL

    def __init__(
        self,
        data: CommunityData,
        llm: LLM | Callable[[], LLM],
        *,
        batch_tokens: int = 3000,
        points: int = 5,
        map_tokens: int = 512,
    ):
        self.data = data
        self._llm = llm
        self.batch_tokens = batch_tokens
        self.points = points
        self.map_tokens = map_tokens
        self._batches: list[tuple[Report, ...]] | None = None

    @property
    def llm(self) -> LLM:
        if callable(self._llm) and not hasattr(self._llm, "complete"):
            self._llm = self._llm()
        return self._llm  # type: ignore[return-value]

    # --- map ---------------------------------------------------------------------------------------
    def batches(self) -> list[tuple[Report, ...]]:
        """The level's reports in batches of at most ``batch_tokens`` (a larger report alone,
        cut to fit); largest communities first, then by IRI (deterministic)."""
        if self._batches is None:
            communities = self.data.communities
            reports = sorted(self.data.reports.values(), key=lambda r: (-len(communities[r.community].members), r.community))
            batches: list[list[Report]] = []
            used = 0
            for report in reports:
                cost = estimate_tokens(report.text) + 4
                if batches and used + cost <= self.batch_tokens:
                    batches[-1].append(report)
                    used += cost
                else:
                    batches.append([report])
                    used = cost
            self._batches = [tuple(b) for b in batches]
        return self._batches

    def map_messages(self, question: str, batch: Sequence[Report]) -> list[dict[str, str]]:
        """The map prompt for one batch: the numbered reports, the question, the instructions."""
        limit = int(self.batch_tokens * _MAP_CUT)
        blocks = [f"Report {i}:\n{r.text[:limit]}" for i, r in enumerate(batch, 1)]
        user = (
            "---Data reports---\n" + "\n\n".join(blocks) + f"\n\n---Question---\n{question}\n\n"
            + MAP_INSTRUCTIONS.format(points=self.points)
        )
        return [{"role": "system", "content": MAP_SYSTEM}, {"role": "user", "content": user}]

    def map_prompt_tokens(self, question: str) -> int:
        """Estimated prompt tokens of the whole map phase for ``question``, without calling the model."""
        return sum(_message_tokens(self.map_messages(question, b)) for b in self.batches())

    def run(self, question: str) -> GlobalResult:
        """Map every batch, then reduce: points with a score above 0, best first."""
        started = time.perf_counter()
        batches = self.batches()
        llm = self.llm
        scope = UsageScope()  # this run's calls alone: the tracker is shared across threads
        points: list[Point] = []
        invalid = 0
        estimated = 0
        for batch in batches:
            messages = self.map_messages(question, batch)
            estimated += _message_tokens(messages)
            try:
                with scope.active():
                    value = llm.complete_json(messages, map_schema(self.points, len(batch)), max_tokens=self.map_tokens)
            except ModelOutputError:
                invalid += 1
                continue
            found = _points(value, batch)
            if found is None:
                invalid += 1
                continue
            points += found
        spent = scope.totals
        points.sort(key=lambda p: -p.score)  # stable: ties keep the map order
        seen: set[str] = set()
        kept = []
        for p in points:  # score 0 = no help (GraphRAG drops those); a repeated point counts once
            key = p.text.lower()
            if p.score > 0 and key not in seen:
                seen.add(key)
                kept.append(p)
        stats = MapStats(
            batches=len(batches),
            reports=sum(len(b) for b in batches),
            calls=spent.requests,
            cache_hits=spent.cache_hits,
            invalid=invalid,
            points=len(kept),
            prompt_tokens=spent.usage.prompt_tokens + spent.saved.prompt_tokens,
            completion_tokens=spent.usage.completion_tokens + spent.saved.completion_tokens,
            estimated_prompt_tokens=estimated,
            seconds=time.perf_counter() - started,
        )
        return GlobalResult(tuple(kept), stats, tuple(point_evidence(p, i, self.name) for i, p in enumerate(kept)))

    # --- the retriever interface -------------------------------------------------------------------
    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.run(question).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        result = self.run(question)
        s = result.stats
        note = (
            f"{self.name}: {s.calls} map calls over {s.reports} reports of level {self.data.level} "
            f"({s.cache_hits} from cache, {s.invalid} invalid outputs skipped); map tokens {s.prompt_tokens:,} prompt + "
            f"{s.completion_tokens:,} completion; {s.points} points kept"
        )
        timings = {self.name: elapsed_ms(started), f"{self.name}_map": s.seconds * 1000.0}
        return Retrieval(result.evidence, Trace(note=note, timings_ms=timings))


def point_evidence(point: Point, n: int, source: str) -> Evidence:
    """A reduce point as evidence: kind "triple" without a fact; its chunk is the report it came
    from under ``<community>#point-<n>`` (a citation id of its own, the quote from the report)."""
    text = point.report.text
    ref = ChunkRef(f"{point.report.community}#point-{n}", point.report.community, point.report.title, 0, len(text), text)
    return Evidence("triple", point.text, point.score / 100.0, f"{source}:point", chunk=ref)


def _points(value: Any, batch: Sequence[Report]) -> list[Point] | None:
    """The valid points of one map output (None when its shape is wrong). A point whose report
    number is off goes to the batch's report sharing most of its words."""
    items = value.get("points") if isinstance(value, dict) else None
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        text, score, number = item.get("description"), item.get("score"), item.get("report")
        if not isinstance(text, str) or not text.strip() or isinstance(score, bool) or not isinstance(score, (int, float)):
            continue
        if isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= len(batch):
            report = batch[number - 1]
        else:
            overlap = lexical_scores(text, [r.text for r in batch])
            report = batch[max(range(len(batch)), key=lambda i: (overlap[i], -i))]
        out.append(Point(" ".join(text.split()), int(min(100, max(0, score))), report))
    return out


def _message_tokens(messages: Sequence[Mapping[str, str]]) -> int:
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)


# --- factories ---------------------------------------------------------------------------------------
def make_local(kb: Services) -> Retriever:
    """The registry's factory for mode ``local``."""
    c = kb.config.communities
    return LocalRetriever(community_data(kb), kb.embedder, lambda: kb.term_labels, top_entities=c.top_entities, budget=c.local_tokens)


def make_global(kb: Services) -> Retriever:
    """The registry's factory for mode ``global`` (the KB's [llm] model, loaded on first use)."""
    c = kb.config.communities
    return GlobalRetriever(community_data(kb), lambda: kb.llm, batch_tokens=c.global_batch_tokens)  # type: ignore[attr-defined]
