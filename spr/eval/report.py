"""The evaluation report: per-system aggregates, Markdown tables with significance marks, and the
per-question JSONL behind them. Aggregation is pure; :func:`write_report` does the file I/O."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from spr.eval import metrics as m
from spr.eval.records import EvalSettings, QuestionResult
from spr.eval.significance import Comparison, compare_all, compare_to_baseline

# (metric key, column title); a column appears when any system has a value for it
RETRIEVAL = [("recall@{k}", "R@{k}"), ("quote_recall@{k}", "QR@{k}"), ("mrr@{K}", "MRR@{K}"), ("context_precision", "CtxP"), ("context_recall", "CtxR")]
ANSWERS = [
    ("em", "EM"), ("f1", "F1"), ("accuracy", "Acc"), ("token_recall", "TokR"), ("rouge1", "R-1"), ("rouge2", "R-2"),
    ("rougeL", "R-L"), ("k_precision", "K-Prec"), ("hits@1", "Hits@1"),
]
# Citations (ALCE, spr.eval.citations) and abstention as a classifier of unanswerable questions:
# Abst-R and FalseAbst are the means of the per-question abstain_* scores (so they get significance
# marks); Abst-P is a ratio over the system's abstentions (SystemSummary.abstention).
TRUST = [
    ("citation_recall", "CitR"), ("citation_precision", "CitP"),
    ("abstention_precision", "Abst-P"), ("abstain_unanswerable", "Abst-R"), ("abstain_answerable", "FalseAbst"),
]
JUDGED = [
    ("faithfulness", "Faith"), ("answer_relevance", "AnsRel"), ("context_relevance", "CtxRel"),
    ("citation_recall_judge", "CitR(judge)"), ("citation_precision_judge", "CitP(judge)"),
]
# The rubric judge (spr.eval.rubric): four 1-4 criteria normalized to [0, 1], their mean, and the
# reference-based scores, in one table with tokens per question and its own tests (vs the baseline).
RUBRIC = [
    ("comprehensiveness", "Compr"), ("diversity", "Divers"), ("directness", "Direct"), ("empowerment", "Empow"), ("rubric", "Rubric"),
    ("answer_relevance", "AnsRel"), ("semantic_similarity", "SemSim"), ("factual_correctness", "FactCorr"),
]
RUBRIC_TITLE = "Rubric (judged alone, 1-4 → [0, 1], mean of 3 runs) and reference-based scores"
LOWER_IS_BETTER = {"abstain_answerable"}


@dataclass(frozen=True)
class SystemSummary:
    """Means per metric over the applicable questions, abstention as a classification (the rates
    of :func:`spr.eval.metrics.abstention_rates` and their counts), and cost/speed per question."""

    system: str
    questions: int
    errors: int
    means: Mapping[str, float | None]
    llm_calls: float
    prompt_tokens: float
    completion_tokens: float
    context_tokens: float
    p50_ms: float | None
    p95_ms: float | None
    abstention: Mapping[str, float | int | None] = field(default_factory=dict)

    def value(self, key: str) -> float | None:
        """A table cell: the mean of a per-question metric, else an abstention rate."""
        v = self.means.get(key)
        if v is None and key in ABSTENTION_RATES:
            v = self.abstention.get(key)
        return None if v is None else float(v)


ABSTENTION_RATES = ("abstention_precision", "abstention_recall", "false_abstention_rate")


def abstention_summary(rows: Sequence[QuestionResult]) -> dict[str, float | int | None]:
    """The abstention rates of one system's scored answers, with their counts. An answer abstains
    as its per-question score says (``abstain_unanswerable`` / ``abstain_answerable``: the empty
    prediction), so Abst-R and FalseAbst equal the means of those scores."""
    pairs = []
    for r in rows:
        v = r.scores.get("abstain_answerable" if r.answerable else "abstain_unanswerable")
        pairs.append((r.answerable, bool(v) if v is not None else r.abstained))
    return {
        **m.abstention_rates(pairs),
        "abstained": sum(a for _, a in pairs),
        "abstained_unanswerable": sum(a for ans, a in pairs if not ans),
        "unanswerable": sum(1 for ans, _ in pairs if not ans),
        "abstained_answerable": sum(a for ans, a in pairs if ans),
        "answerable": sum(1 for ans, _ in pairs if ans),
    }


def structured(results: Sequence[QuestionResult]) -> bool:
    """Hits@1 needs ranked structured answers; without any in the run it would be 0 everywhere."""
    return any(r.top_answer is not None for r in results)


def per_question(results: Sequence[QuestionResult]) -> dict[str, dict[str, dict[str, float | None]]]:
    """``[system][metric][question_id]``: the paired data the tests and the plots use."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for r in results:
        for metric, value in r.scores.items():
            out.setdefault(r.system, {}).setdefault(metric, {})[r.question_id] = value
    return out


def summarize(results: Sequence[QuestionResult]) -> list[SystemSummary]:
    systems = list(dict.fromkeys(r.system for r in results))
    out = []
    for system in systems:
        rows = [r for r in results if r.system == system]
        ok = [r for r in rows if not r.error]
        keys = list(dict.fromkeys(k for r in ok for k in r.scores))
        n = max(1, len(ok))
        latencies = [r.latency_ms for r in ok]
        out.append(
            SystemSummary(
                system, len(rows), len(rows) - len(ok),
                {k: m.mean(r.scores.get(k) for r in ok) for k in keys},
                sum(r.llm_calls for r in ok) / n, sum(r.prompt_tokens for r in ok) / n,
                sum(r.completion_tokens for r in ok) / n, sum(r.context_tokens for r in ok) / n,
                m.percentile(latencies, 50), m.percentile(latencies, 95),
                abstention_summary(ok),
            )
        )
    return out


def _columns(spec: list[tuple[str, str]], settings: EvalSettings, summaries: Sequence[SystemSummary]) -> list[tuple[str, str]]:
    cols = []
    for key, title in spec:
        expanded = [(key.format(k=k), title.format(k=k)) for k in settings.recall_ks] if "{k}" in key else [
            (key.format(K=settings.k), title.format(K=settings.k))
        ]
        cols += [(k, t) for k, t in expanded if any(s.value(k) is not None for s in summaries)]
    return cols


def column_titles(settings: EvalSettings) -> dict[str, str]:
    """Metric key → its column title in the report (the plots label bars with them)."""
    out = {}
    for key, title in RETRIEVAL + ANSWERS + TRUST + JUDGED + RUBRIC:
        for k in settings.recall_ks if "{k}" in key else (settings.k,):
            out[key.format(k=k, K=k)] = title.format(k=k, K=k)
    return out


def _mark(metric: str, system: str, baseline: str, tests: Mapping[tuple[str, str, str], Comparison]) -> str:
    """▲/▼: significantly better/worse than the baseline system on this metric."""
    c = tests.get((metric, baseline, system))
    if c is None or not c.significant:
        return ""
    better = c.delta < 0  # delta = baseline - system
    if metric in LOWER_IS_BETTER:
        better = not better
    return " ▲" if better else " ▼"


def _table(title: str, cols: list[tuple[str, str]], summaries: Sequence[SystemSummary], tests, baseline: str) -> list[str]:
    if not cols:
        return []
    lines = [f"### {title}", "", "| system | " + " | ".join(t for _, t in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for s in summaries:
        cells = []
        for key, _ in cols:
            v = s.value(key)
            cells.append("–" if v is None else f"{v:.3f}" + _mark(key, s.system, baseline, tests))
        lines.append(f"| {s.system} | " + " | ".join(cells) + " |")
    return lines + [""]


TRUST_LEGEND = (
    "CitR: share of an answer's sentences supported by what they cite; CitP: share of its citations that are needed "
    "(ALCE; support = word coverage + cosine + every number present, [answer] min_support). Abst-P: abstentions on "
    "unanswerable / all abstentions; Abst-R: unanswerable questions abstained on; FalseAbst: answerable questions "
    "abstained on (lower is better). Abstentions per system:"
)


def _counts(a: Mapping[str, float | int | None]) -> str:
    n = a.get("abstained", 0)
    return (f"{n} abstention{'' if n == 1 else 's'}: {a.get('abstained_unanswerable', 0)} of {a.get('unanswerable', 0)} unanswerable questions, "
            f"{a.get('abstained_answerable', 0)} of {a.get('answerable', 0)} answerable ones")


def _fmt(v: float | None, digits: int = 0) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def tables(results: Sequence[QuestionResult], settings: EvalSettings, summaries: Sequence[SystemSummary]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The report's metric tables: (title, [(metric key, column title)]), columns with a value only."""
    answer_cols = [c for c in _columns(ANSWERS, settings, summaries) if c[0] != "hits@1" or structured(results)]
    return [
        ("Retrieval (against gold passages)", _columns(RETRIEVAL, settings, summaries)),
        ("Answers", answer_cols),
        ("Citations and abstention", _columns(TRUST, settings, summaries)),
        ("Judged (RAGAS definitions; CitR/CitP with the judge model as support check)", _columns(JUDGED, settings, summaries)),
        (RUBRIC_TITLE, _columns(RUBRIC, settings, summaries)),
    ]


def rubric_metrics(results: Sequence[QuestionResult]) -> list[str]:
    """The rubric table's metrics with a value in the run (each tested against the baseline)."""
    present = {k for r in results for k, v in r.scores.items() if v is not None}
    return [k for k, _ in RUBRIC if k in present]


def _rubric_table(cols: list[tuple[str, str]], summaries: Sequence[SystemSummary], tests: Sequence[Comparison], baseline: str) -> list[str]:
    """The rubric table: the scores with their marks, then tokens per question; the legend
    names the procedure and lists the significant differences with the test each got."""
    by = {(c.metric, c.a, c.b): c for c in tests}
    lines = _table(RUBRIC_TITLE, cols, summaries, by, baseline)[:-1]
    # extractive runs make no LLM calls: their cost is the context they hand over (as in cost_quality.png)
    llm = any(s.prompt_tokens + s.completion_tokens for s in summaries)
    lines[2] = lines[2][:-1] + ("| tok/q |" if llm else "| ctx tok/q |")
    lines[3] += "---|"
    for i, s in enumerate(summaries):
        lines[4 + i] += f" {s.prompt_tokens + s.completion_tokens if llm else s.context_tokens:,.0f} |"
    counts = {t: sum(1 for c in tests if c.test == t) for t in ("t-test", "wilcoxon", "none")}
    lines += [
        "",
        "Rubric: comprehensiveness, diversity, directness, empowerment rated 1-4 against written level descriptions, each "
        "answer on its own (no pairwise comparison), normalized (s - 1) / 3, mean of 3 runs; Rubric = their mean. SemSim: "
        "embedding cosine with the reference answer; FactCorr: F1 of claims (answer vs reference); "
        + ("tok/q: the system's LLM tokens per question (prompt + completion; the judge's are not counted)" if llm else
           "ctx tok/q: context tokens per question (no system called an LLM)")
        + f". ▲/▼ vs `{baseline}`: Shapiro-Wilk on "
        f"the paired differences, then a paired t-test when normal (p ≥ 0.05), else Wilcoxon signed-rank; Benjamini-Hochberg "
        f"q < 0.05 over the {len(tests)} tests of this table ({counts['t-test']} t-tests, {counts['wilcoxon']} Wilcoxon, "
        f"{counts['none']} without any difference).",
        "",
    ]
    titles = dict(RUBRIC)
    significant = [c for c in tests if c.significant]
    lines += [f"- {c.b} vs {c.a}, {titles.get(c.metric, c.metric)}: {-c.delta:+.3f} ({c.test}, n={c.n}, p={c.p:.3g}, q={c.q:.3g})" for c in significant]
    return lines + ([""] if significant else [])


def render_markdown(
    title: str, meta: Mapping[str, str], results: Sequence[QuestionResult], settings: EvalSettings, comparisons: Sequence[Comparison],
    rubric_comparisons: Sequence[Comparison] = (),
) -> str:
    summaries = summarize(results)
    baseline = summaries[0].system if summaries else ""
    tests = {(c.metric, c.a, c.b): c for c in comparisons}
    lines = [f"## {title}", ""] + [f"- {k}: {v}" for k, v in meta.items()] + [""]
    for name, cols in tables(results, settings, summaries):
        if name == RUBRIC_TITLE:
            lines += _rubric_table(cols, summaries, rubric_comparisons, baseline) if cols else []
            continue
        lines += _table(name, cols, summaries, tests, baseline)
        if name.startswith("Citations") and cols:
            lines += [TRUST_LEGEND, ""] + [f"- {s.system}: {_counts(s.abstention)}" for s in summaries] + [""]
    lines += [
        "### Cost and speed (per question)", "",
        "| system | LLM calls | prompt tok | completion tok | context tok | p50 ms | p95 ms | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(
            f"| {s.system} | {s.llm_calls:.2f} | {s.prompt_tokens:,.0f} | {s.completion_tokens:,.0f} | {s.context_tokens:,.0f} | "
            f"{_fmt(s.p50_ms)} | {_fmt(s.p95_ms)} | {s.errors} |"
        )
    lines += ["", f"▲/▼: significantly better/worse than `{baseline}` (paired Wilcoxon signed-rank, Benjamini-Hochberg "
              f"q < 0.05 over all {len(comparisons)} tests of this table set).", ""]
    # comparisons with the baseline are the table marks; list the other significant pairs
    significant = [c for c in comparisons if c.significant and baseline not in (c.a, c.b)]
    if significant:
        lines += ["Other significant pairwise differences (mean a − b, q):", ""]
        lines += [f"- {c.metric}: {c.a} vs {c.b}: {c.delta:+.3f} (n={c.n}, q={c.q:.3g})" for c in significant]
        lines.append("")
    return "\n".join(lines)


def tested_metrics(results: Sequence[QuestionResult], settings: EvalSettings) -> list[str]:
    """The metrics that get significance tests: the headline ones, not every ROUGE variant."""
    keys = [f"recall@{k}" for k in settings.recall_ks] + [
        f"mrr@{settings.k}", "em", "f1", "accuracy", "token_recall", "rougeL", "hits@1", "citation_recall", "citation_precision",
        "abstain_unanswerable", "abstain_answerable", "faithfulness", "answer_relevance", "context_relevance",
        "citation_recall_judge", "citation_precision_judge",
    ]
    present = {k for r in results for k, v in r.scores.items() if v is not None}
    return [k for k in keys if k in present and (k != "hits@1" or structured(results))]


def write_report(out_dir: Path, title: str, meta: Mapping[str, str], results: Sequence[QuestionResult], settings: EvalSettings) -> dict[str, Path]:
    """``report.md``, ``results.jsonl`` (one line per system × question) and ``summary.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    comparisons = compare_all(per_question(results), tested_metrics(results, settings))
    rubric_tests = compare_to_baseline(per_question(results), rubric_metrics(results))
    paths = {"report": out_dir / "report.md", "results": out_dir / "results.jsonl", "summary": out_dir / "summary.json"}
    paths["report"].write_text(render_markdown(title, meta, results, settings, comparisons, rubric_tests) + "\n", encoding="utf-8")
    with paths["results"].open("w", encoding="utf-8") as fh:
        for r in results:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
    summaries = summarize(results)
    summary = {
        "title": title, "meta": dict(meta),
        # the report's columns (metric key → title), then per system the means and the abstention rates
        "columns": {k: t for _, cols in tables(results, settings, summaries) for k, t in cols},
        "systems": [s.__dict__ | {"means": dict(s.means), "abstention": dict(s.abstention)} for s in summaries],
        "comparisons": [c.__dict__ for c in comparisons],
        "rubric_comparisons": [c.__dict__ for c in rubric_tests],
    }
    paths["summary"].write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")
    return paths
