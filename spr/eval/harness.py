"""One evaluation end to end: load and sample a dataset, build or reuse its KB, run the systems,
write the report, the per-question JSONL and the plots. ``policykb eval`` and ``bench/eval_all.py``
call :func:`evaluate`; the indexing pipeline comes in as the ``ingest`` callable."""

from __future__ import annotations

import time
from collections.abc import Sequence

from core.cache import user_cache_dir
from core.config import Config
from core.errors import InputError
from spr.eval.datasets import load_dataset, sample
from spr.eval.records import EvalOutcome, EvalRequest, EvalSettings
from spr.eval.runner import Ingest, Progress, Reindex, prepare_kb, run
from store.layout import KBLayout


def parse_list(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip()))


def settings_from(config: Config, systems: str | None = None, answer: str | None = None, k: int | None = None) -> EvalSettings:
    """The ``[eval]`` section with command-line overrides."""
    try:
        ks = tuple(sorted({int(x) for x in parse_list(config.eval.recall_ks)}))
    except ValueError:
        raise InputError(f"[eval] recall_ks must be comma-separated integers, got {config.eval.recall_ks!r}") from None
    names = parse_list(systems if systems is not None else config.eval.systems)
    if not names:
        raise InputError("no systems to evaluate")
    return EvalSettings(names, answer or config.answer.answer, k or config.eval.k, ks or (config.eval.k,))


def evaluate(
    config: Config, request: EvalRequest, ingest: Ingest, progress: Progress | None = None, log=None, reindex: Reindex | None = None
) -> EvalOutcome:
    """Run ``request``; ``log(line)`` hears about the KB build and each system."""
    from spr.eval.plots import write_plots
    from spr.eval.report import write_report
    from spr.qa import KnowledgeBase
    from spr.retrieval.registry import RETRIEVERS

    started = time.perf_counter()
    say = log or (lambda line: None)
    unknown = [s for s in request.settings.systems if s not in RETRIEVERS]
    if unknown:
        raise InputError(f"unknown system {unknown[0]!r}; known retrieval modes: {', '.join(RETRIEVERS)}")
    full = load_dataset(request.dataset, request.data_dir, request.corpus)
    dataset = sample(full, request.limit, request.seed, request.corpus_scope)
    cache = request.cache_dir or user_cache_dir()  # KBs of public sets are big and rebuildable
    kb_config, kb_note = prepare_kb(dataset, config, cache, ingest, rebuild=request.rebuild, reindex=reindex)
    say(kb_note)
    with KnowledgeBase.open(kb_config) as kb:
        judge = _judge(kb_config, kb, dataset) if request.judge else None
        results = run(dataset, kb, request.settings, judge=judge, progress=progress)
    seconds = time.perf_counter() - started
    meta = {
        "questions": f"{len(dataset.questions)} of {len(full.questions)}"
        + (f" (seeded sample, --limit {request.limit}, seed {request.seed})" if len(dataset.questions) < len(full.questions) else ""),
        "corpus": (f"{len(dataset.passages)} of {len(full.passages)} passages ({request.corpus_scope})" if dataset.passages else ", ".join(map(str, dataset.corpus_paths))),
        "source": dataset.source,
        "systems": ", ".join(request.settings.systems),
        "answers": f"{request.settings.answer}, k = {request.settings.k} chunks per question",
        "KB": kb_note,
        "wall time": f"{seconds:.0f} s",
    }
    title = f"{dataset.name}: {len(dataset.questions)} questions"
    files = write_report(request.out_dir, title, meta, results, request.settings)
    if request.plots:
        for path in write_plots(request.out_dir, results, request.settings, request.seed):
            files[path.stem] = path
    return EvalOutcome(dataset.name, tuple(results), files, kb_note, seconds)


def _judge(config: Config, kb, dataset):
    from core.llm import make_llm
    from core.usage import UsageTracker
    from spr.eval.rubric import RubricJudge

    # Its own tracker: the judge's calls are not the evaluated systems' cost. The RAGAS-style judge
    # plus the rubric (spr.eval.rubric), which finds each question's reference answers by its text.
    references = {q.question: q.answers for q in dataset.questions if q.answers}
    return RubricJudge(make_llm(config.llm, KBLayout(config.kb_dir).llm_cache, tracker=UsageTracker()), kb.embedder, references)


def summary_lines(outcome: EvalOutcome) -> Sequence[str]:
    lines = [f"{outcome.dataset}: {len(outcome.results)} answers in {outcome.seconds:.0f} s"]
    lines += [f"  {name}: {path}" for name, path in outcome.files.items()]
    return lines
