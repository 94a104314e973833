"""Sentence scoring: how relevant a sentence is to the question, for the extractive answer's picks,
the LLM's evidence focus and the deeper look. Pure apart from the embedder call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from spr.asking import case_words
from spr.lexical import lexical_scores

if TYPE_CHECKING:
    from core.embed import Embedder


class SentenceScorer(Protocol):
    name: str
    threshold: float  # candidates scoring below this are not relevant

    def score(self, question: str, candidates: Sequence[str]) -> list[float]:
        """One relevance score per candidate, higher is better."""
        ...


@dataclass
class LexicalScorer:
    """Weighted content-word overlap with the question, in [0, 1]. ``threshold``: least score that
    counts (``[answer] min_overlap``)."""

    threshold: float
    name: str = "lexical"

    def score(self, question: str, candidates: Sequence[str]) -> list[float]:
        return lexical_scores(question, candidates, case_words(question))


@dataclass
class HybridScorer:
    """The mean of embedding cosine and lexical overlap. Cosine alone rates any on-topic sentence
    fairly high (an energy question vs. an energy sentence), overlap alone misses paraphrases;
    the mean needs some of both, which is what tells an answer from a neighbour. Roughly [0, 1]."""

    embedder: Embedder
    threshold: float  # [answer] min_score
    name: str = "hybrid"

    def score(self, question: str, candidates: Sequence[str]) -> list[float]:
        cosines = cosine_scores(self.embedder, question, candidates)
        return [(c + w) / 2 for c, w in zip(cosines, lexical_scores(question, candidates, case_words(question)))]


@dataclass
class EmbeddingScorer:
    """Cosine similarity of normalized sentence embeddings, in [-1, 1]."""

    embedder: Embedder
    threshold: float  # [answer] min_similarity
    name: str = "embedding"

    def score(self, question: str, candidates: Sequence[str]) -> list[float]:
        return cosine_scores(self.embedder, question, candidates)


@dataclass
class _OnScorer:
    """A scorer built on ``scorer``: its name and threshold are that scorer's."""

    scorer: SentenceScorer

    @property
    def name(self) -> str:
        return self.scorer.name

    @property
    def threshold(self) -> float:
        return self.scorer.threshold


@dataclass
class BestOfScorer(_OnScorer):
    """``scorer``'s score of each candidate against the question or any of ``alternates`` (a
    translation of it into the documents' language, :mod:`spr.translate`), whichever is higher."""

    alternates: tuple[str, ...]

    def score(self, question: str, candidates: Sequence[str]) -> list[float]:
        rows = [self.scorer.score(q, candidates) for q in (question, *self.alternates)]
        return [max(column) for column in zip(*rows)] if candidates else []


@dataclass
class AbbreviatingScorer(_OnScorer):
    """``scorer`` with the question's spelled-out long forms followed by the short forms the
    documents write for them ("the Just Transition Fund" → "… (JTF)"): after its definition a
    regulation writes "the JTF", and word overlap with the long form misses those sentences.
    ``short_forms``: the question → the short forms to add
    (:meth:`core.abbreviations.Abbreviations.expansions`)."""

    short_forms: Callable[[str], list[str]]

    def score(self, question: str, candidates: Sequence[str]) -> list[float]:
        forms = self.short_forms(question)
        return self.scorer.score(f"{question} ({', '.join(forms)})" if forms else question, candidates)


def cosine_scores(embedder: Embedder, question: str, candidates: Sequence[str]) -> list[float]:
    """Cosine of each candidate's embedding with the question's, in [-1, 1]."""
    if not candidates:
        return []
    vectors = embedder.embed_many([question, *candidates])
    return [float(x) for x in np.asarray(vectors[1:]) @ np.asarray(vectors[0])]
