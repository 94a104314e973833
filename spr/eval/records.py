"""The evaluation's records, in one module: datasets (passages, questions with gold), what every
system gets alike (settings), one system's result per question, and a whole run's request and
outcome. Loaders, runner, report and plots all speak these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Passage:
    """One corpus record. ``id`` becomes the ingested document's id (``dcterms:identifier``)."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class EvalQuestion:
    """A question with its gold.

    ``answers``: acceptable answer strings (empty when ``answerable`` is False: the right output is
    the abstention). ``gold_passage_ids``: the passages that support the answer (empty = no
    retrieval gold). ``gold_contexts``: reference context texts, for sets whose gold is text
    (resolved to document ids against the KB by the runner when ``gold_passage_ids`` is empty).
    ``kind``: the set's own question type (bridge/comparison, 2hop, lookup, ...), for breakdowns.
    ``pool``: the passages the set pairs with this question (HotpotQA's and MuSiQue's gold plus
    distractor paragraphs), for the smaller ``corpus="pool"`` setting of :func:`sample`.
    """

    id: str
    question: str
    answers: tuple[str, ...]
    gold_passage_ids: tuple[str, ...] = ()
    answerable: bool = True
    gold_contexts: tuple[str, ...] = ()
    kind: str = ""
    pool: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvalDataset:
    """Questions and their corpus: ``passages`` (written to JSONL) or ``corpus_paths`` (as is)."""

    name: str
    questions: tuple[EvalQuestion, ...]
    passages: tuple[Passage, ...] = ()
    corpus_paths: tuple[Path, ...] = ()
    source: str = ""  # where it was read from, for the report


@dataclass(frozen=True)
class EvalSettings:
    """What every system gets alike. ``k``: chunks retrieved per question (the cut-off of the
    retrieval metrics too); ``recall_ks``: the k of Recall@k (MRR is taken at ``k``)."""

    systems: tuple[str, ...]  # retrieval mode names; the first is the baseline ([eval] systems)
    answer: str  # [answer] answer
    k: int  # [eval] k
    recall_ks: tuple[int, ...]  # [eval] recall_ks
    # Ask every question once, unrecorded, in every system before the timed pass. The KB's embedding
    # cache is shared, so otherwise the first system pays for embedding the context sentences that
    # later systems find cached, and model loads land in someone's p95: latency then measures the
    # order of the runs. Warm, it measures the systems (answers are deterministic either way).
    warmup: bool = True


@dataclass(frozen=True)
class QuestionResult:
    """One system's answer to one question, with its scores (None = metric not applicable)."""

    dataset: str
    system: str
    question_id: str
    question: str
    kind: str
    answerable: bool
    gold_answers: tuple[str, ...]
    gold_ids: tuple[str, ...]
    answer: str
    abstained: bool
    retrieved_ids: tuple[str, ...]  # distinct passage ids in evidence order
    top_answer: str | None  # the structured query's first answer, when the mode has one
    scores: Mapping[str, float | None] = field(default_factory=dict)
    latency_ms: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_tokens: int = 0
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["scores"] = dict(self.scores)
        return data


@dataclass(frozen=True)
class EvalRequest:
    """What to evaluate. ``dataset``: a registered name or a ``.jsonl`` path (``corpus`` then
    optional); ``limit``: questions drawn with ``seed``; ``corpus_scope``: "full" or "pool" (see
    :func:`spr.eval.datasets.sample`); ``out_dir``: where the outputs go."""

    dataset: str
    out_dir: Path
    settings: EvalSettings  # built from [eval] by spr.eval.harness.settings_from
    corpus: Path | None = None
    limit: int | None = None
    seed: int = 0
    corpus_scope: str = "full"  # or "pool": only the sampled questions' own passages (datasets.sample)
    data_dir: Path | None = None
    cache_dir: Path | None = None
    judge: bool = False
    rebuild: bool = False
    plots: bool = True


@dataclass(frozen=True)
class EvalOutcome:
    dataset: str
    results: tuple[QuestionResult, ...]
    files: dict[str, Path] = field(default_factory=dict)
    kb_note: str = ""
    seconds: float = 0.0
