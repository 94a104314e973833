"""Is one system better than another on the same questions? Paired tests and confidence intervals.

- :func:`wilcoxon_p`: the paired Wilcoxon signed-rank test (scipy), two-sided, on per-question
  scores of two systems over the questions both were scored on. Zero differences are dropped
  (Wilcoxon's original treatment); all-zero differences give p = 1.
- :func:`benjamini_hochberg`: false-discovery-rate adjusted p-values (q-values) for the whole family
  of tests of one report, so testing many metric × system pairs does not manufacture "wins".
- :func:`bootstrap_ci`: percentile bootstrap interval of a mean, seeded (reruns draw the same).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ALPHA = 0.05


@dataclass(frozen=True)
class Comparison:
    """One paired test: ``a`` vs ``b`` on ``metric``. ``delta`` = mean(a) - mean(b) over the ``n``
    paired questions; ``p`` raw, ``q`` Benjamini-Hochberg adjusted within the report's family."""

    metric: str
    a: str
    b: str
    n: int
    delta: float
    p: float
    q: float = 1.0

    @property
    def significant(self) -> bool:
        return self.q < ALPHA


def paired(a: Mapping[str, float | None], b: Mapping[str, float | None]) -> tuple[list[float], list[float]]:
    """Scores of the questions (by id) that both systems were scored on, in a fixed order."""
    keys = sorted(k for k in a.keys() & b.keys() if a[k] is not None and b[k] is not None)
    return [float(a[k]) for k in keys], [float(b[k]) for k in keys]  # type: ignore[arg-type]


def wilcoxon_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p of the paired Wilcoxon signed-rank test; 1.0 without non-zero differences."""
    from scipy.stats import wilcoxon

    diffs = [u - v for u, v in zip(x, y, strict=True)]
    if not any(d != 0 for d in diffs):
        return 1.0
    result = wilcoxon(diffs, zero_method="wilcox", alternative="two-sided")
    p = float(result.pvalue)
    return 1.0 if math.isnan(p) else p


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """BH step-up q-values, in input order: q_(i) = min_{j >= i} p_(j) * m / j, capped at 1."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    q = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        q[i] = min(1.0, running)
    return q


def compare_all(scores: Mapping[str, Mapping[str, Mapping[str, float | None]]], metrics: Sequence[str]) -> list[Comparison]:
    """Every pair of systems on every metric, BH-corrected together.

    ``scores[system][metric][question_id]`` is a per-question score (None = not scored)."""
    systems = list(scores)
    raw: list[Comparison] = []
    for metric in metrics:
        for i, a in enumerate(systems):
            for b in systems[i + 1 :]:
                x, y = paired(scores[a].get(metric, {}), scores[b].get(metric, {}))
                if len(x) < 2:
                    continue
                delta = sum(x) / len(x) - sum(y) / len(y)
                raw.append(Comparison(metric, a, b, len(x), delta, wilcoxon_p(x, y)))
    qs = benjamini_hochberg([c.p for c in raw])
    return [Comparison(c.metric, c.a, c.b, c.n, c.delta, c.p, q) for c, q in zip(raw, qs, strict=True)]


def bootstrap_ci(values: Sequence[float], *, level: float = 0.95, resamples: int = 1000, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values``; None when empty."""
    xs = list(values)
    if not xs:
        return None
    rng = random.Random(seed)
    n = len(xs)
    means = sorted(sum(rng.choices(xs, k=n)) / n for _ in range(resamples))
    lo = means[int((1 - level) / 2 * (resamples - 1))]
    hi = means[int((1 + level) / 2 * (resamples - 1))]
    return lo, hi
