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
- **citation recall / precision, judged** (``citation_recall_judge``, ``citation_precision_judge``):
  ALCE's citation measures (:mod:`spr.eval.citations`) with the judge model deciding whether
  evidence supports a statement (:class:`LLMSupport`, a yes/no question) in place of the
  word-and-cosine check.

Faithfulness and answer relevance read the answer without its citation markers
(:func:`spr.eval.citations.plain_text`): a judge should not count "[2]" as a claim.

The arithmetic lives in pure functions below; :class:`Judge` only asks the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.errors import ModelError, ModelUnavailableError
from core.text import reading_text, split_sentences
from spr.eval.citations import citation_values, plain_text
from spr.records import is_abstention
from spr.verify import Support, SupportChecker

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
_SUPPORTED = {
    "type": "object",
    "properties": {"supported": {"type": "integer", "enum": [0, 1]}},
    "required": ["supported"],
}
SUPPORT_PROMPT = (
    "Evidence:\n{evidence}\n\nStatement: {claim}\n"
    "Is the statement fully supported by the evidence (every fact and number in it stated there)? Answer yes or no."
)
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


# --- the judge as a support check ----------------------------------------------------------------
def support_prompt(claim: str, evidence: Sequence[str], max_words: int = 400) -> str:
    """The yes/no question for one claim: its evidence texts (without source markup), each cut to
    ``max_words`` words, then the statement.

    >>> print(support_prompt("Fines reach 4 %.", ["#### Art. 5\\nFines reach 4 % of turnover."]))
    Evidence:
    Art. 5 Fines reach 4 % of turnover.
    <BLANKLINE>
    Statement: Fines reach 4 %.
    Is the statement fully supported by the evidence (every fact and number in it stated there)? Answer yes or no.
    """
    parts = []
    for text in evidence:
        words = reading_text(text).split()
        if words:
            parts.append(" ".join(words[:max_words]) + (" …" if len(words) > max_words else ""))
    return SUPPORT_PROMPT.format(evidence="\n\n".join(parts), claim=claim.strip())


class LLMSupport(SupportChecker):
    """:class:`spr.verify.SupportChecker` with the judge model deciding: a claim is supported when
    P(yes) of :func:`support_prompt` (:meth:`core.llm.LLM.yes_probability`, one token, cached)
    exceeds ``threshold`` (0.5: yes more likely than no; a reply that is neither word gives
    exactly 0.5, which is no support). A backend that cannot return log-probabilities is asked for JSON
    ``{"supported": 0|1}`` instead, from then on. Only ``score`` (P(yes), or the 0/1 reply) and
    ``supported`` of the returned :class:`Support` carry meaning. Answers are memoized per
    (claim, evidence), so ALCE's several checks of one claim ask the model once each."""

    def __init__(self, llm: LLM, threshold: float = 0.5, max_words: int = 400):
        super().__init__(None, threshold)
        self.llm = llm
        self.max_words = max_words
        self.logprobs = True
        self._memo: dict[tuple[str, tuple[str, ...]], Support] = {}

    def support(self, claim: str, evidence: Sequence[str]) -> Support:
        texts = tuple(t for t in evidence if t.strip())
        if not texts:
            return Support(0.0, 0.0, False, 0.0, False)
        key = (claim, texts)
        if key not in self._memo:
            p = self._p_yes(support_prompt(claim, texts, self.max_words))
            self._memo[key] = Support(0.0, 0.0, True, p, p > self.threshold)
        return self._memo[key]

    def _p_yes(self, prompt: str) -> float:
        if self.logprobs:
            try:
                return self.llm.yes_probability(prompt, max_tokens=1)
            except ModelUnavailableError:
                raise
            except ModelError:  # no log-probabilities from this backend: ask for a verdict
                self.logprobs = False
        return float(self.llm.complete_json(prompt + ' Reply as JSON: {"supported": 1} for yes, {"supported": 0} for no.', _SUPPORTED)["supported"] == 1)


# --- the judge ----------------------------------------------------------------------------------------
class Judge:
    """Asks ``llm`` for claims, verdicts, questions and relevant sentences; ``embedder`` compares
    questions. Each metric is None when it does not apply or the judge's output was unusable."""

    def __init__(self, llm: LLM, embedder: Embedder, questions: int = 3, max_context_sentences: int = 40):
        self.llm = llm
        self.embedder = embedder
        self.questions = questions
        self.max_context_sentences = max_context_sentences
        self.support_check = LLMSupport(llm)

    def score(self, question: str, answer: str, context: str, abstained: bool) -> dict[str, float | None]:
        """Faithfulness, answer relevance and context relevance; the answer is read without its
        citation markers (a caller's plain text stays as it is)."""
        answer = plain_text(answer)
        abstained = abstained or is_abstention(answer)
        return {
            "faithfulness": None if abstained else self._safe(self.faithfulness, question, answer, context),
            "answer_relevance": 0.0 if abstained else self._safe(self.answer_relevance, question, answer),
            "context_relevance": self._safe(self.context_relevance, question, context),
        }

    def citations(self, answer: str, evidence: Mapping[int, str], abstained: bool) -> dict[str, float | None]:
        """``citation_recall_judge`` and ``citation_precision_judge`` of ``answer`` (with its
        ``[n]`` markers) given the text behind each citation id (:mod:`spr.eval.citations`)."""
        try:
            return citation_values(answer, evidence, self.support_check, abstained, suffix="_judge")
        except ModelError:
            return {"citation_recall_judge": None, "citation_precision_judge": None}

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
