"""Microsoft GraphRAG's global search as a baseline mode, ``global`` (Edge et al., 2024).

Both read the communities, reports and entity descriptions of :mod:`store.communities` through
:class:`spr.retrieval.community.CommunityData` (evidence format as described there).

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import ModelOutputError
from core.usage import UsageScope
from spr.fuse import estimate_tokens
from spr.lexical import lexical_scores
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever, elapsed_ms
from spr.retrieval.community import CommunityData, community_data
from store.communities import Report

if TYPE_CHECKING:
    from core.llm import LLM
    from spr.retrieval.base import Services

GLOBAL = "global"


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


def make_global(kb: Services) -> Retriever:
    """The registry's factory for mode ``global`` (the KB's [llm] model, loaded on first use)."""
    c = kb.config.communities
    return GlobalRetriever(community_data(kb), lambda: kb.llm, batch_tokens=c.global_batch_tokens)  # type: ignore[attr-defined]
