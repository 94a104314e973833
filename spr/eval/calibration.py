"""Calibrating the model's check ([answer] model_check, :mod:`spr.model_check`) on visible data.

The check declines an answer when the [llm] model's P(yes) — does the quoted text answer the
question? — is below [answer] model_check_threshold. Whether that helps depends on the judge: the
threshold of one model means nothing for another. These functions replay the check over answers
made without it (``bench/eval_answers.py --model-check off`` rows), so that any judge — the
embedded 1.5B model, or a stronger one on an endpoint — gets its own AUC and threshold from the
same answers (``bench/calibrate_model_check.py``; docs/answers.md#the-models-check).

A row is what ``bench/eval_answers.py`` writes per question: ``id``, ``question``, ``answerable``,
``abstained``, ``text``, ``citations`` (their ``title``), ``token_recall``, ``translated``.
Pure apart from :func:`score_rows`, which calls the model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from core.llm.base import LLM
from spr.model_check import check_prompt, reads

Row = Mapping[str, object]


def checked(row: Row) -> bool:
    """Whether the product's check reads this answer: one was given, the question does not ask
    yes or no (those are left to the rules), and it was not translated (the check reads the
    translation, which the rows do not keep)."""
    return not row["abstained"] and not row.get("translated") and reads(str(row["question"]), str(row["text"]))


def score_rows(llm: LLM, rows: Iterable[Row]) -> dict[str, float]:
    """P(yes) of the check's prompt (:func:`spr.model_check.check_prompt`) for every answer the
    check would read, by row id. The model's response cache, where it has one, makes a re-run cheap."""
    scores: dict[str, float] = {}
    for row in rows:
        if checked(row):
            titles = [str(c["title"]) for c in row.get("citations") or ()]  # type: ignore[union-attr]
            scores[str(row["id"])] = llm.yes_probability(check_prompt(str(row["question"]), str(row["text"]), titles), max_tokens=1)
    return scores


def auc(pairs: Iterable[tuple[bool, float]]) -> float | None:
    """How often an answerable question's score is above an unanswerable one's (ties count
    half): the area under the ROC curve of ``(answerable, score)`` pairs; None without both kinds.

    >>> auc([(True, 0.9), (True, 0.4), (False, 0.5), (False, 0.1)])
    0.75
    >>> auc([(True, 0.9)]) is None
    True
    """
    pairs = list(pairs)
    pos = [s for a, s in pairs if a]
    neg = [s for a, s in pairs if not a]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


@dataclass(frozen=True)
class Replay:
    """A set's answers with the check at one threshold (rates over the set's questions)."""

    threshold: float | None  # None: the answers as made, without the check
    false_abstention: float  # answerable questions abstained on or declined
    abstain_unanswerable: float | None  # unanswerable questions abstained on or declined; None without any
    token_recall: float  # answerable questions, a declined answer counting 0
    declined_answerable: int
    declined_unanswerable: int


def replay(rows: Sequence[Row], scores: Mapping[str, float], threshold: float | None) -> Replay:
    """``rows`` as the check at ``threshold`` would leave them: an answer whose P(yes) in
    ``scores`` is below it abstains. ``threshold=None`` gives the rows as they are.

    >>> rows = [{"id": "a", "answerable": True, "abstained": False, "token_recall": 1.0},
    ...         {"id": "b", "answerable": False, "abstained": False, "token_recall": None}]
    >>> replay(rows, {"a": 0.8, "b": 0.2}, 0.4)
    Replay(threshold=0.4, false_abstention=0.0, abstain_unanswerable=1.0, token_recall=1.0, declined_answerable=0, declined_unanswerable=1)
    """

    def declined(row: Row) -> bool:
        p = scores.get(str(row["id"]))
        return threshold is not None and p is not None and p < threshold

    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    out = [bool(r["abstained"]) or declined(r) for r in rows]
    by_id = {str(r["id"]): o for r, o in zip(rows, out, strict=True)}
    recall = [0.0 if by_id[str(r["id"])] else float(r["token_recall"] or 0.0) for r in answerable]  # type: ignore[arg-type]
    return Replay(
        threshold,
        round(sum(by_id[str(r["id"])] for r in answerable) / len(answerable), 3) if answerable else 0.0,
        round(sum(by_id[str(r["id"])] for r in unanswerable) / len(unanswerable), 3) if unanswerable else None,
        round(sum(recall) / len(recall), 3) if recall else 0.0,
        sum(declined(r) for r in answerable if not r["abstained"]),
        sum(declined(r) for r in unanswerable if not r["abstained"]),
    )


def highest_threshold(
    replays: Mapping[str, Mapping[float | None, Replay]], calibration: Sequence[str], max_added: float = 0.01
) -> float | None:
    """The highest threshold (the most declined) that adds at most ``max_added`` false abstention
    to each ``calibration`` set, on the three-decimal rates the tables report; None when none does.
    ``replays``: per set, its :class:`Replay` per threshold, ``None`` the answers without the check.

    >>> r = lambda t, fa: Replay(t, fa, 0.5, 0.8, 0, 0)
    >>> highest_threshold({"s": {None: r(None, 0.014), 0.3: r(0.3, 0.014), 0.4: r(0.4, 0.024), 0.5: r(0.5, 0.034)}}, ["s"])
    0.4
    """
    best = None
    thresholds = sorted({t for by_t in replays.values() for t in by_t if t is not None})
    for t in thresholds:
        if all(round(replays[s][t].false_abstention - replays[s][None].false_abstention, 3) <= max_added for s in calibration):
            best = t
    return best
