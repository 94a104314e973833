"""Pure scoring functions: retrieval against gold passages, answers against gold answers.

Conventions: every score lies in [0, 1], higher is better; a function returns ``None`` when the
metric does not apply (no gold to score against), so averages skip those questions instead of
counting them as zeros.

Answer normalization is SQuAD's official one (lower case, punctuation and the articles a/an/the
removed, blanks collapsed). An abstention (:func:`spr.records.is_abstention`: "The documents do not
say.") is the *empty* prediction: right for an unanswerable question (SQuAD 2.0 scores "" against
no answers as EM = F1 = 1), wrong for an answerable one.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from spr.records import is_abstention

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


# --- normalization --------------------------------------------------------------------------------
def normalize_answer(text: str) -> str:
    """SQuAD's normalization: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def prediction(text: str, abstained: bool = False) -> str:
    """What an answer predicts: "" for an abstention, else the text."""
    return "" if abstained or is_abstention(text) else text


# --- answers ----------------------------------------------------------------------------------------
def exact_match(pred: str, golds: Sequence[str]) -> float:
    """SQuAD EM: 1 if the normalized prediction equals a normalized gold. No golds = unanswerable:
    1 iff the prediction is empty."""
    if not golds:
        return float(normalize_answer(pred) == "")
    return float(any(normalize_answer(pred) == normalize_answer(g) for g in golds))


def _f1(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return float(pred == gold)
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def f1(pred: str, golds: Sequence[str]) -> float:
    """SQuAD token F1, the best over the golds (no golds: 1 iff the prediction is empty)."""
    if not golds:
        return float(not tokens(pred))
    return max(_f1(tokens(pred), tokens(g)) for g in golds)


def token_recall(pred: str, golds: Sequence[str]) -> float | None:
    """Share of a gold answer's tokens (as a multiset) that the prediction contains, best gold.

    Long extractive answers rarely match exactly; recall tells whether the answer is in there."""
    if not golds:
        return None
    best = 0.0
    for g in golds:
        gold = Counter(tokens(g))
        if gold:
            best = max(best, sum((gold & Counter(tokens(pred))).values()) / sum(gold.values()))
    return best


def contains_answer(pred: str, golds: Sequence[str]) -> float | None:
    """1 if a normalized gold answer occurs in the normalized prediction on word boundaries
    (open-domain QA's "cover EM" / accuracy). None without golds."""
    if not golds:
        return None
    text = f" {normalize_answer(pred)} "
    return float(any(n and f" {n} " in text for n in map(normalize_answer, golds)))


def hits_at_1(top_answer: str | None, golds: Sequence[str]) -> float | None:
    """KBQA Hits@1: the system's top-ranked answer equals a gold answer (normalized).
    ``top_answer`` None = the system ranked no answer (a miss)."""
    if not golds:
        return None
    return float(top_answer is not None and exact_match(top_answer, golds) == 1.0)


@lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def rouge(pred: str, golds: Sequence[str]) -> dict[str, float] | None:
    """ROUGE-1/2/L F-measures (rouge-score, Porter stemming), best gold per variant."""
    if not golds:
        return None
    scores = [_rouge().score(g, pred) for g in golds]
    return {name: max(s[name].fmeasure for s in scores) for name in ("rouge1", "rouge2", "rougeL")}


def k_precision(answer: str, context: str) -> float | None:
    """K-Precision (Adlakha et al., 2023): share of the answer's tokens that occur in the
    context the generator saw — a lexical faithfulness proxy. None for an empty answer."""
    answer_tokens = tokens(answer)
    if not answer_tokens:
        return None
    vocabulary = set(tokens(context))
    return sum(t in vocabulary for t in answer_tokens) / len(answer_tokens)


# --- retrieval ----------------------------------------------------------------------------------------
def dedupe(ids: Iterable[str]) -> list[str]:
    """Ids in first-seen order: several chunks of one passage count once, at its best rank."""
    return list(dict.fromkeys(i for i in ids if i))


def recall_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    """Share of the gold passages among the first ``k`` distinct retrieved ones (HippoRAG's R@k)."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(dedupe(ranked)[:k])) / len(gold_set)


def word_key(text: str) -> str:
    """Lower-case words joined by single spaces, padded: ``a in b`` then matches whole words."""
    return " " + " ".join(re.findall(r"\w+", text.lower())) + " "


def quote_recall_at_k(chunk_texts: Sequence[str], quotes: Iterable[str], k: int) -> float | None:
    """Share of the gold ``quotes`` found inside one of the first ``k`` retrieved chunk texts,
    compared as lower-case words (the ingest's cleaning of spaces and line-end hyphens does not
    hide a match); None without quotes.

    >>> quote_recall_at_k(["The fine is EUR 50,000.", "Other text"], ["fine is EUR 50,000", "absent"], 2)
    0.5
    """
    wanted = [word_key(q) for q in quotes if q.strip()]
    if not wanted:
        return None
    top = [word_key(t) for t in chunk_texts[:k]]
    return sum(any(w in t for t in top) for w in wanted) / len(wanted)


def mrr_at_k(ranked: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    """Reciprocal rank of the first gold passage within the first ``k``; 0 when none is there."""
    gold_set = set(gold)
    if not gold_set:
        return None
    for rank, pid in enumerate(dedupe(ranked)[:k], 1):
        if pid in gold_set:
            return 1.0 / rank
    return 0.0


def context_precision(ranked: Sequence[str], gold: Iterable[str]) -> float | None:
    """RAGAS context precision with reference ids: the mean of precision@i over the ranks i that
    hold a gold passage (average precision of the context). 0 when no gold passage was retrieved."""
    gold_set = set(gold)
    if not gold_set:
        return None
    hits, total = 0, 0.0
    for i, pid in enumerate(dedupe(ranked), 1):
        if pid in gold_set:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def context_recall(retrieved: Iterable[str], gold: Iterable[str]) -> float | None:
    """RAGAS ID-based context recall: share of the gold passages present in the whole context."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(retrieved)) / len(gold_set)


# --- aggregates -----------------------------------------------------------------------------------------
def mean(values: Iterable[float | None]) -> float | None:
    """Mean over the applicable values (None skipped); None when none applies."""
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def abstention_rates(pairs: Iterable[tuple[bool, bool]]) -> dict[str, float | None]:
    """Abstention as a classifier of unanswerable questions, over one system's
    ``(answerable, abstained)`` pairs. ``abstention_precision``: share of the abstentions that were
    on unanswerable questions; ``abstention_recall``: share of the unanswerable questions abstained
    on; ``false_abstention_rate``: share of the answerable questions abstained on (lower is
    better). Each is None when its denominator is 0.

    >>> abstention_rates([(False, True), (False, False), (True, True), (True, False), (True, False)])
    {'abstention_precision': 0.5, 'abstention_recall': 0.5, 'false_abstention_rate': 0.3333333333333333}
    """
    counts = Counter((bool(answerable), bool(abstained)) for answerable, abstained in pairs)
    right, wrong = counts[(False, True)], counts[(True, True)]
    unanswerable = right + counts[(False, False)]
    answerable = wrong + counts[(True, False)]
    return {
        "abstention_precision": right / (right + wrong) if right + wrong else None,
        "abstention_recall": right / unanswerable if unanswerable else None,
        "false_abstention_rate": wrong / answerable if answerable else None,
    }


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between order statistics."""
    xs = sorted(values)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
