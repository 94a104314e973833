"""Two hops for a bridge question, without a model (``[retrieval] bridges``, on by default).

For a question :func:`spr.bridges.bridge` reads as a description plus a question about what it
describes, the inner retriever searches the description ("the city where the performers of
Brother were formed"), takes the sentence of its first passage that best matches the description
("Brother are an Australian rock band formed in Sydney …"), and searches once more with the
question and that sentence. That ranking is interleaved with the question's own (:func:`spr.retrieval.multi_query.interleave`);
a passage it placed gains ``("bridge", rank)`` in its ``ranks``. Other questions pass through
unchanged, at no cost.

This is the retrieve–read–retrieve loop of multi-hop QA (IRCoT, Trivedi et al. 2023) with the
reading done by sentence matching instead of a model, and only where the question's wording says
it has a bridge; the model-written variant is :mod:`spr.retrieval.hop`.
"""

from __future__ import annotations

from core.text import reading_text, split_sentences
from spr.bridges import bridge
from spr.lexical import lexical_scores
from spr.retrieval.multi_query import MultiQueryRetriever, Searches

LABEL = "bridge"


def bridge_sentence(description: str, passage: str) -> str:
    """The sentence of ``passage`` that shares most words with ``description`` (the first on a tie).

    >>> bridge_sentence("the city where Brother were formed", "Brother are a band. Brother were formed in Sydney in 1995.")
    'Brother were formed in Sydney in 1995.'
    """
    sentences = split_sentences(reading_text(passage), require_capital=False) or [passage]
    scores = lexical_scores(description, sentences)
    return sentences[max(range(len(sentences)), key=lambda i: (scores[i], -i))]


class BridgeRetriever(MultiQueryRetriever):
    """``inner`` for the question; for a bridge question also for its description and then for
    the question with the description's best sentence, interleaved with the question's ranking.
    (Measured on MuSiQue: the question with the sentence found more than the rest of the question
    with it, or the sentence alone.)"""

    timing = "bridge"

    def more(self, question: str, k: int) -> tuple[Searches, str] | None:
        found = bridge(question)
        if found is None:
            return None
        described = self.inner.search(found.description, k).evidence
        if not described:
            return None
        query = f"{question} {bridge_sentence(found.description, described[0].text)}"
        return [(LABEL, self.inner.search(query, k).evidence)], f"a bridge question: searched for {found.description!r}, then {query!r}"
