"""PNG figures of an evaluation run (matplotlib, Agg backend: no display needed).

- ``metrics.png``: one group of bars per headline metric (:func:`headline`, labelled with the
  report's column titles), one bar per system, with 95% percentile bootstrap intervals of the mean
  over questions.
- ``cost_quality.png``: quality (mean F1, or retrieval Recall when no answer metric applies) against
  median latency and against LLM tokens per question (context tokens when no system called an
  LLM), one point per system.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spr.eval.records import EvalSettings, QuestionResult
from spr.eval.report import column_titles, per_question, structured, summarize
from spr.eval.significance import bootstrap_ci


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only; never try to open a window
    import matplotlib.pyplot as plt

    return plt


def headline(settings: EvalSettings) -> list[str]:
    """The per-question metrics drawn in ``metrics.png`` (those with a value in the run). Abst-P is
    a ratio over a system's abstentions, not a mean over questions, so it has no bar; FalseAbst
    is the one bar where lower is better."""
    return [
        f"recall@{settings.recall_ks[len(settings.recall_ks) // 2]}", f"mrr@{settings.k}", "f1", "accuracy", "token_recall", "rougeL",
        "hits@1", "citation_recall", "citation_precision", "abstain_unanswerable", "abstain_answerable", "faithfulness",
    ]


def plot_metrics(results: Sequence[QuestionResult], settings: EvalSettings, path: Path, seed: int = 0) -> Path | None:
    data = per_question(results)
    systems = list(data)
    metrics = [
        k for k in headline(settings)
        if any(v is not None for s in systems for v in data[s].get(k, {}).values()) and (k != "hits@1" or structured(results))
    ]
    if not systems or not metrics:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(metrics) * max(1, len(systems)) / 3), 4.0))
    width = 0.8 / len(systems)
    for i, system in enumerate(systems):
        means, lows, highs = [], [], []
        for metric in metrics:
            values = [v for v in data[system].get(metric, {}).values() if v is not None]
            mean = sum(values) / len(values) if values else 0.0
            ci = bootstrap_ci(values, seed=seed) or (mean, mean)
            means.append(mean)
            lows.append(max(0.0, mean - ci[0]))
            highs.append(max(0.0, ci[1] - mean))
        xs = [j + (i - (len(systems) - 1) / 2) * width for j in range(len(metrics))]
        ax.bar(xs, means, width, yerr=[lows, highs], capsize=2, label=system)
    titles = column_titles(settings)
    ax.set_xticks(range(len(metrics)), [titles.get(k, k) for k in metrics], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean over questions (95% bootstrap CI)")
    ax.legend(fontsize=8, ncols=min(5, len(systems)))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_cost_quality(results: Sequence[QuestionResult], settings: EvalSettings, path: Path) -> Path | None:
    summaries = summarize(results)
    quality_key = "f1" if any(s.means.get("f1") is not None for s in summaries) else f"recall@{settings.recall_ks[-1]}"
    points = [(s, s.means.get(quality_key)) for s in summaries if s.means.get(quality_key) is not None and s.p50_ms is not None]
    if not points:
        return None
    # extractive runs make no LLM calls: their cost is the context they hand over
    llm = any(s.prompt_tokens + s.completion_tokens for s, _ in points)
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.8))
    for s, q in points:
        left.scatter(s.p50_ms, q)
        left.annotate(s.system, (s.p50_ms, q), fontsize=8, xytext=(4, 4), textcoords="offset points")
        tokens = s.prompt_tokens + s.completion_tokens if llm else s.context_tokens
        right.scatter(tokens, q)
        right.annotate(s.system, (tokens, q), fontsize=8, xytext=(4, 4), textcoords="offset points")
    left.set_xlabel("median latency per question (ms)")
    right.set_xlabel("LLM tokens per question (prompt + completion)" if llm else "context tokens per question (no LLM calls)")
    for ax in (left, right):
        ax.set_ylabel(f"mean {quality_key}")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(out_dir: Path, results: Sequence[QuestionResult], settings: EvalSettings, seed: int = 0) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    made = [plot_metrics(results, settings, out_dir / "metrics.png", seed), plot_cost_quality(results, settings, out_dir / "cost_quality.png")]
    return [p for p in made if p is not None]
