"""Look past the top k before abstaining on a question that asks for a value.

Answers read the top ``k`` passages (3 by default). When the answerability check
(:mod:`spr.answerable`) finds that no sentence of them states the asked duration, amount, share,
date or count, the answer sometimes sits a few ranks lower: fusion put a neighbouring article of
the same act first. :func:`deepen` takes the retriever's top ``deep_k`` passages instead and adds
the ones (at most :data:`MAX_ADDED`) with a relevant sentence stating the asked value. The
context stays small (what LLM answers read), and the evidence keeps its order: the top k first,
then what the deeper look added.

Only value questions are deepened: a name or number the top k lack (the premise check) is found
somewhere in a corpus more often than not, and on SQuAD 2.0's unanswerable questions — written to
name a detail their paragraph lacks ("in 1961") — looking deeper for it answered them wrongly.
Off by default (``[answer] deepen_k = 0``): on the dev sets it answered about as many questions
wrongly as rightly (docs/answers.md "The answerability check, measured").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from spr import answerable
from spr.fuse import FusedContext
from spr.generate import candidates, check_answerable
from spr.records import Evidence, Retrieval
from spr.scoring import SentenceScorer

MAX_ADDED = 2  # passages a deeper look may add: one for each half of a two-part question


@dataclass(frozen=True)
class Deepened:
    """The widened evidence and its context, and what the deeper look added (1-based ranks)."""

    found: Retrieval
    context: FusedContext
    added: tuple[int, ...]


def deepen(
    question: str,
    shallow: Retrieval,
    verdict: answerable.Verdict,
    deep: Retrieval,
    pack: Callable[[list[Evidence]], FusedContext],
    scorer: SentenceScorer,
) -> Deepened | None:
    """The shallow evidence plus up to :data:`MAX_ADDED` passages of ``deep`` (the same question
    retrieved with a larger k) with a sentence that states the value ``verdict`` (the shallow
    check) found no sentence stating, and that ``scorer`` rates relevant (at or above its
    threshold: a lower-ranked passage must earn its place; a value in an unrelated sentence
    answers nothing). None when the question asks no value, its names are missing, or no deeper
    passage helps. ``pack`` fuses evidence into a context."""
    if verdict.asked is None or answerable.off_topic(question, verdict.missing):
        return None
    have = {e.key for e in shallow.evidence}
    extra = [(rank, e) for rank, e in enumerate(_passages(deep.evidence), start=1) if e.key not in have]
    if not extra:
        return None
    wide = pack([*shallow.evidence, *(e for _, e in extra)])
    wide_verdict = check_answerable(question, wide)
    if not wide_verdict.answerable:
        return None
    helpful = _stating(question, wide, wide_verdict, scorer)
    chosen = [(rank, e) for rank, e in extra if e.key in helpful][:MAX_ADDED]
    if not chosen:
        return None
    evidence = (*shallow.evidence, *(e for _, e in chosen))
    context = pack(list(evidence))
    if not check_answerable(question, context).answerable:
        return None  # the budget cut what made the difference
    ranks = tuple(rank for rank, _ in chosen)
    note = f"looked deeper: passage {', '.join(f'#{r}' for r in ranks)} of the top {len(_passages(deep.evidence))} added ({verdict.reason})"
    trace = replace(shallow.trace, note="; ".join(filter(None, (shallow.trace.note, note))))
    return Deepened(Retrieval(evidence, trace), context, ranks)


def _passages(evidence: tuple[Evidence, ...]) -> list[Evidence]:
    return [e for e in evidence if e.kind == "chunk"]


def _stating(question: str, context: FusedContext, verdict: answerable.Verdict, scorer: SentenceScorer) -> set[str]:
    """Keys of the chunks with a relevant sentence that states the asked value (``verdict.answers``)."""
    keys: dict[int, str] = {p.cid: p.evidence.key for p in context.passages}
    stating = set(verdict.answers)
    pool = [c for c in candidates(context) if c.cid in keys and c.text in stating]
    scores = scorer.score(question, [c.text for c in pool])
    return {keys[c.cid] for c, score in zip(pool, scores) if score >= scorer.threshold}
