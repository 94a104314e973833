"""An optional LLM relevance scorer (Document GraphRAG): each candidate passage gets a 1–10 score
with a one-line reason from the [llm] model.

Why a graded score beside the yes/no reranker (:mod:`spr.retrieval.rerank`): it works on any
backend that can produce JSON (no token log-probabilities needed) and its reason can be shown in
an explanation. The output is checked here (:func:`parse_judgement`), because a small model or an
endpoint without a grammar may send an out-of-range or missing score; an invalid answer is asked
again with a short reminder (a different request, so the response cache does not hand back the
same bad answer), and after ``retries`` such tries the judgement is None: callers keep their own
score for that passage. A model that is down (:class:`ModelError`) propagates: callers keep their
first-stage order. Requests are deterministic (temperature 0, same messages for the same
question and passage), so the LLM's own response cache serves a repeated judgement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import ModelOutputError
from core.llm.base import LLM
from core.text import reading_text

RELEVANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 10},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["score", "reason"],
}
PROMPT = (
    "Question: {question}\nPassage: {passage}\n"
    "How relevant is the passage to the question? Rate it from 1 (unrelated) to 10 (answers it) "
    'and give a one-line reason. Answer with JSON: {{"score": <1-10>, "reason": "<one line>"}}'
)
REMINDER = 'Answer only with JSON: {"score": <1-10>, "reason": "<one line>"}'


def relevance_prompt(question: str, passage: str, max_words: int = 300) -> str:
    """The user message for one passage: the question first (the embedded model reuses its KV
    cache across one question's passages), the passage without markup cut to ``max_words`` words.

    >>> print(relevance_prompt("Who?", "#### Article 1\\nAlice signs the act today.", max_words=3))
    Question: Who?
    Passage: Article 1 Alice …
    How relevant is the passage to the question? Rate it from 1 (unrelated) to 10 (answers it) and give a one-line reason. Answer with JSON: {"score": <1-10>, "reason": "<one line>"}
    """
    words = reading_text(passage).split()
    cut = " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
    return PROMPT.format(question=question.strip(), passage=cut)


@dataclass(frozen=True)
class Judgement:
    """The model's verdict on one passage. ``score``: ``(raw - 1) / 9`` in [0, 1]."""

    score: float
    raw: int  # 1..10
    reason: str  # one line


def _integral(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def parse_judgement(value: object) -> Judgement | None:
    """A :class:`Judgement` from the model's JSON, or None when it is not a valid one: a dict with
    an integral ``score`` in 1..10 (``7``, ``7.0`` or ``"7"``) and a non-empty ``reason``.

    >>> parse_judgement({"score": "10", "reason": " States the\\n 72-hour deadline. "})
    Judgement(score=1.0, raw=10, reason='States the 72-hour deadline.')
    >>> [parse_judgement(v) for v in ({"score": 0, "reason": "x"}, {"score": True, "reason": "x"},
    ...  {"score": "high", "reason": "x"}, {"score": 7.5, "reason": "x"}, {"score": 7}, [7, "x"])]
    [None, None, None, None, None, None]
    """
    if not isinstance(value, dict):
        return None
    raw = _integral(value.get("score"))
    reason = value.get("reason")
    reason = " ".join(reason.split()) if isinstance(reason, str) else ""
    if raw is None or not 1 <= raw <= 10 or not reason:
        return None
    return Judgement(score=(raw - 1) / 9, raw=raw, reason=reason)


class LLMRelevance:
    """Scores passages against a question with the LLM. ``llm``: the model, or a callable that
    returns it (loaded only when something is judged). ``retries``: how many more times an
    invalid answer is asked again."""

    def __init__(
        self,
        llm: LLM | Callable[[], LLM],
        *,
        retries: int = 1,
        passage_words: int = 300,
        max_tokens: int = 80,
    ):
        if retries < 0:
            raise ValueError("retries must be at least 0")
        self._llm = llm
        self.retries = retries
        self.passage_words = passage_words
        self.max_tokens = max_tokens

    def messages(self, question: str, passage: str, attempt: int = 0) -> list[dict[str, str]]:
        """The request of try ``attempt`` (0 = first): retries add the reminder, numbered from
        the third try on, so each try is a distinct request for the cache."""
        out = [{"role": "user", "content": relevance_prompt(question, passage, self.passage_words)}]
        if attempt:
            out.append({"role": "user", "content": REMINDER + (f" (try {attempt + 1})" if attempt > 1 else "")})
        return out

    def judge(self, question: str, passage: str) -> Judgement | None:
        """The judgement of one passage; None when every try gave invalid output. Raises
        :class:`core.errors.ModelError` when the model fails."""
        llm = self._llm if isinstance(self._llm, LLM) else self._llm()
        for attempt in range(self.retries + 1):
            try:
                messages = self.messages(question, passage, attempt)
                value = llm.complete_json(messages, RELEVANCE_SCHEMA, max_tokens=self.max_tokens, temperature=0.0)
            except ModelOutputError:
                continue
            if (judgement := parse_judgement(value)) is not None:
                return judgement
        return None

    def judge_all(self, question: str, passages: Sequence[str]) -> list[Judgement | None]:
        """One judgement (or None) per passage, in order."""
        return [self.judge(question, p) for p in passages]
