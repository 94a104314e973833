"""PNG figures of an evaluation run (matplotlib, Agg backend: no display needed).

- ``metrics.png``: one group of bars per headline metric (:func:`headline`, labelled with the
  report's column titles), one bar per system, with 95% percentile bootstrap intervals of the mean
  over questions.
- ``cost_quality.png``: quality (mean F1, or retrieval Recall when no answer metric applies) against
  median latency and against LLM tokens per question (context tokens when no system called an
  LLM), one point per system.
- ``correlogram.png``: the Pearson correlation matrix of the per-question metric scores
  (:func:`correlations`: one observation per system × question, pairwise complete; the rubric
  criteria and reference-based scores with the headline metrics), so redundant metrics show.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from spr.eval.records import EvalSettings, QuestionResult
from spr.eval.report import RUBRIC, column_titles, per_question, structured, summarize
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


def correlations(results: Sequence[QuestionResult], metrics: Sequence[str], min_pairs: int = 3) -> tuple[list[str], list[list[float | None]]]:
    """Pearson r between every two of ``metrics`` over the (system, question) pairs scored on
    both; a metric without variance or with fewer than ``min_pairs`` values is left out, a pair
    with too few common values or a constant side is None. Returns the metrics kept and the matrix.

    >>> from spr.eval.records import QuestionResult as R
    >>> rows = [R("d", "s", str(i), "q", "", True, (), (), "", False, (), None, {"a": a, "b": b, "c": 0.5})
    ...         for i, (a, b) in enumerate([(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)])]
    >>> correlations(rows, ["a", "b", "c"])
    (['a', 'b'], [[1.0, -1.0], [-1.0, 1.0]])
    """
    import numpy as np

    columns: dict[str, dict[tuple[str, str], float]] = {}
    for metric in metrics:
        values = {(r.system, r.question_id): float(v) for r in results if (v := r.scores.get(metric)) is not None}
        if len(values) >= min_pairs and max(values.values()) - min(values.values()) > 1e-12:
            columns[metric] = values
    names = list(columns)
    matrix: list[list[float | None]] = []
    for a in names:
        row: list[float | None] = []
        for b in names:
            keys = sorted(columns[a].keys() & columns[b].keys())
            x = np.array([columns[a][k] for k in keys])
            y = np.array([columns[b][k] for k in keys])
            if len(keys) < min_pairs or x.std() == 0 or y.std() == 0:
                row.append(None)
            else:
                row.append(round(float(np.corrcoef(x, y)[0, 1]), 12))
        matrix.append(row)
    return names, matrix


def correlogram_metrics(settings: EvalSettings) -> list[str]:
    """The metrics of ``correlogram.png``: the headline ones, the judged ones and the rubric table's."""
    extra = ["em", "answer_relevance", "context_relevance", "citation_recall_judge", "citation_precision_judge"]
    return list(dict.fromkeys([*headline(settings), *extra, *(k for k, _ in RUBRIC)]))


def plot_correlogram(results: Sequence[QuestionResult], settings: EvalSettings, path: Path) -> Path | None:
    """Heat map of :func:`correlations` (−1 blue … +1 red, r in each cell); None with fewer than two metrics."""
    metrics = [k for k in correlogram_metrics(settings) if k != "hits@1" or structured(results)]
    names, matrix = correlations(results, metrics)
    if len(names) < 2:
        return None
    import numpy as np

    plt = _pyplot()
    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    size = max(4.0, 0.55 * len(names) + 1.5)
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    image = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu_r", vmin=-1, vmax=1)
    titles = column_titles(settings)
    labels = [titles.get(k, k) for k in names]
    ax.set_xticks(range(len(names)), labels, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(names)), labels, fontsize=8)
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            ax.text(j, i, "–" if v is None else f"{v:.2f}", ha="center", va="center", fontsize=6,
                    color="white" if v is not None and abs(v) > 0.6 else "black")
    fig.colorbar(image, ax=ax, shrink=0.8, label="Pearson r (per system × question)")
    ax.set_title("Correlation of per-question metric scores", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(out_dir: Path, results: Sequence[QuestionResult], settings: EvalSettings, seed: int = 0) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    made = [
        plot_metrics(results, settings, out_dir / "metrics.png", seed), plot_cost_quality(results, settings, out_dir / "cost_quality.png"),
        plot_correlogram(results, settings, out_dir / "correlogram.png"),
    ]
    return [p for p in made if p is not None]
