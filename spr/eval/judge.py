"""RAGAS-style metrics judged by a language model: faithfulness, answer relevance, context relevance.

The PyPI ``ragas`` package (0.4.3) drives its judge through LangChain and an OpenAI-style client that
expects network access, so we implement the published definitions (Es et al., "RAGAS: Automated
Evaluation of Retrieval Augmented Generation", EACL 2024 demo; ragas 0.1 docs) over our own model
layer (:mod:`core.llm`), which runs the embedded GGUF or any OpenAI-compatible endpoint:

- **faithfulness** = |claims of the answer supported by the context| / |claims|. The judge first
  splits the answer into standalone claims, then gives each a verdict (1 = can be inferred from
  the context). An answer with no claims (an abstention) is not scored.
- **answer relevance** = mean cosine similarity between the question and ``n`` questions the
  judge writes for the answer (embedded with the KB's embedder); 0 when the judge marks the answer
  noncommittal ("I don't know", the abstention), as in RAGAS.
- **context relevance** (ragas 0.1 ``context_relevancy``) = |context sentences needed to answer
  the question| / |context sentences|. The judge picks sentence numbers, which small models do
  more reliably than copying sentences out.

The arithmetic lives in pure functions below; :class:`Judge` only asks the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.errors import ModelError
from core.text import split_sentences

if TYPE_CHECKING:
    from core.embed import Embedder
    from core.llm import LLM

_CLAIMS = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}, "maxItems": 8}},
    "required": ["claims"],
}
_VERDICTS = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {"type": "integer", "enum": [0, 1]}, "maxItems": 8}},
    "required": ["verdicts"],
}
_QUESTIONS = {
    "type": "object",
    "properties": {
        "questions": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "noncommittal": {"type": "integer", "enum": [0, 1]},
    },
    "required": ["questions", "noncommittal"],
}
_SELECTED = {
    "type": "object",
    "properties": {"relevant": {"type": "array", "items": {"type": "integer"}, "maxItems": 40}},
    "required": ["relevant"],
}


# --- the arithmetic (pure) --------------------------------------------------------------------------
def faithfulness_score(verdicts: Sequence[int], claims: int) -> float | None:
    """Supported claims over all claims; a verdict missing for a claim counts as unsupported."""
    if claims <= 0:
        return None
    return sum(1 for v in list(verdicts)[:claims] if v == 1) / claims


def answer_relevance_score(similarities: Sequence[float], noncommittal: bool) -> float | None:
    """Mean question-to-generated-question cosine, clipped to [0, 1]; 0 for a noncommittal answer."""
    if noncommittal:
        return 0.0
    if not similarities:
        return None
    return float(min(1.0, max(0.0, sum(similarities) / len(similarities))))


def context_relevance_score(selected: Sequence[int], total: int) -> float | None:
    """Distinct valid sentence numbers (1-based) picked as relevant over the context's sentences."""
    if total <= 0:
        return None
    return len({n for n in selected if 1 <= n <= total}) / total


# --- the judge ----------------------------------------------------------------------------------------
class Judge:
    """Asks ``llm`` for claims, verdicts, questions and relevant sentences; ``embedder`` compares
    questions. Each metric is None when it does not apply or the judge's output was unusable."""

    def __init__(self, llm: LLM, embedder: Embedder, questions: int = 3, max_context_sentences: int = 40):
        self.llm = llm
        self.embedder = embedder
        self.questions = questions
        self.max_context_sentences = max_context_sentences

    def score(self, question: str, answer: str, context: str, abstained: bool) -> dict[str, float | None]:
        return {
            "faithfulness": None if abstained else self._safe(self.faithfulness, question, answer, context),
            "answer_relevance": 0.0 if abstained else self._safe(self.answer_relevance, question, answer),
            "context_relevance": self._safe(self.context_relevance, question, context),
        }

    def faithfulness(self, question: str, answer: str, context: str) -> float | None:
        claims = self.llm.complete_json(
            "Split the answer into short standalone claims (each understandable without the others).\n"
            f"Question: {question}\nAnswer: {answer}\nReply as JSON with a list 'claims'.",
            _CLAIMS,
        )["claims"]
        claims = [c for c in claims if isinstance(c, str) and c.strip()][:8]
        if not claims:
            return None
        listed = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, 1))
        verdicts = self.llm.complete_json(
            "For each claim, answer 1 if it can be directly inferred from the context, else 0.\n"
            f"Context:\n{context}\n\nClaims:\n{listed}\n"
            f"Reply as JSON with 'verdicts', a list of {len(claims)} numbers (0 or 1), in claim order.",
            _VERDICTS,
        )["verdicts"]
        return faithfulness_score([int(v) for v in verdicts if isinstance(v, int)], len(claims))

    def answer_relevance(self, question: str, answer: str) -> float | None:
        reply = self.llm.complete_json(
            f"Write {self.questions} different questions that the answer below answers. Set 'noncommittal' to 1 "
            "if the answer is evasive or vague (e.g. 'I don't know', 'the documents do not say'), else 0.\n"
            f"Answer: {answer}\nReply as JSON with 'questions' and 'noncommittal'.",
            _QUESTIONS,
        )
        generated = [q for q in reply["questions"] if isinstance(q, str) and q.strip()][: self.questions]
        if reply.get("noncommittal") == 1:
            return answer_relevance_score([], True)
        if not generated:
            return None
        vectors = self.embedder.embed_many([question, *generated])  # rows are unit length
        sims = [float(np.dot(vectors[0], v)) for v in vectors[1:]]
        return answer_relevance_score(sims, False)

    def context_relevance(self, question: str, context: str) -> float | None:
        spans = split_sentences(context)[: self.max_context_sentences]
        if not spans:
            return None
        listed = "\n".join(f"{i}. {s}" for i, s in enumerate(spans, 1))
        picked = self.llm.complete_json(
            "Which numbered sentences of the context are needed to answer the question? "
            "List only those numbers; an empty list if none is.\n"
            f"Question: {question}\nContext:\n{listed}\nReply as JSON with a list 'relevant'.",
            _SELECTED,
        )["relevant"]
        return context_relevance_score([int(n) for n in picked if isinstance(n, int)], len(spans))

    @staticmethod
    def _safe(metric, *args) -> float | None:
        # One unusable judge reply must not end a long run: that question's metric stays unscored.
        try:
            return metric(*args)
        except ModelError:
            return None
