"""Is one system better than another on the same questions? Paired tests and confidence intervals.

- :func:`wilcoxon_p`: the paired Wilcoxon signed-rank test (scipy), two-sided, on per-question
  scores of two systems over the questions both were scored on. Zero differences are dropped
  (Wilcoxon's original treatment); all-zero differences give p = 1.
- :func:`benjamini_hochberg`: false-discovery-rate adjusted p-values (q-values) for the whole family
  of tests of one report, so testing many metric × system pairs does not manufacture "wins".
- :func:`compare_paired`: the test chosen by the data (EGD GraphRAG's procedure): Shapiro-Wilk on
  the paired differences; normal (p >= 0.05) → paired t-test, else Wilcoxon signed-rank.
  :func:`compare_to_baseline` runs it for each system against the baseline on each metric and
  BH-corrects the family (the rubric table of the report).
- :func:`bootstrap_ci`: percentile bootstrap interval of a mean, seeded (reruns draw the same).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

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
    test: str = "wilcoxon"  # or "t-test" (compare_paired), "none" (no non-zero difference)
    statistic: float | None = None

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


@dataclass(frozen=True)
class PairedTest:
    """The outcome of :func:`compare_paired`: ``test`` ("t-test", "wilcoxon" or "none" when every
    difference is 0), its ``statistic`` and two-sided ``p``; ``normality_p``: Shapiro-Wilk's p on
    the differences (None when it could not be run: fewer than 3 pairs or constant differences)."""

    test: str
    statistic: float
    p: float
    normality_p: float | None


def compare_paired(scores_a: Sequence[float], scores_b: Sequence[float], alpha: float = ALPHA) -> PairedTest:
    """Shapiro-Wilk on the differences a - b; normal (p >= ``alpha``) → paired t-test, else the
    Wilcoxon signed-rank test (also when normality cannot be tested: n < 3 or constant
    differences). Two-sided. All-zero differences: ``none``, p = 1.

    >>> compare_paired([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    PairedTest(test='none', statistic=0.0, p=1.0, normality_p=None)
    """
    from scipy.stats import shapiro, ttest_rel, wilcoxon

    x = [float(v) for v in scores_a]
    y = [float(v) for v in scores_b]
    if len(x) != len(y):
        raise ValueError(f"paired samples differ in length: {len(x)} vs {len(y)}")
    diffs = [u - v for u, v in zip(x, y, strict=True)]
    if not any(d != 0 for d in diffs):
        return PairedTest("none", 0.0, 1.0, None)
    normality = None
    if len(diffs) >= 3 and max(diffs) - min(diffs) > 1e-12:
        normality = float(shapiro(diffs).pvalue)
        normality = None if math.isnan(normality) else normality
    if normality is not None and normality >= alpha:
        result = ttest_rel(x, y)
        test = "t-test"
    else:
        result = wilcoxon(diffs, zero_method="wilcox", alternative="two-sided")
        test = "wilcoxon"
    p = float(result.pvalue)
    return PairedTest(test, float(result.statistic), 1.0 if math.isnan(p) else p, normality)


def compare_to_baseline(
    scores: Mapping[str, Mapping[str, Mapping[str, float | None]]], metrics: Sequence[str], baseline: str | None = None
) -> list[Comparison]:
    """Each system against ``baseline`` (default: the first system) on each metric with
    :func:`compare_paired`, Benjamini-Hochberg over all these tests. ``delta`` = mean(baseline) -
    mean(system), as in :func:`compare_all` (``a`` is the baseline)."""
    systems = list(scores)
    if not systems:
        return []
    base = baseline or systems[0]
    raw: list[Comparison] = []
    for metric in metrics:
        for system in systems:
            if system == base:
                continue
            x, y = paired(scores.get(base, {}).get(metric, {}), scores[system].get(metric, {}))
            if len(x) < 2:
                continue
            t = compare_paired(x, y)
            raw.append(Comparison(metric, base, system, len(x), sum(x) / len(x) - sum(y) / len(y), t.p, test=t.test, statistic=t.statistic))
    qs = benjamini_hochberg([c.p for c in raw])
    return [replace(c, q=q) for c, q in zip(raw, qs, strict=True)]


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
