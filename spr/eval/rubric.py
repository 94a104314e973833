"""Rubric scores of an answer judged by a language model, after EGD GraphRAG's evaluation (and the
four criteria of Edge et al. 2024, "From Local to Global: A Graph RAG Approach to Query-Focused
Summarization"), plus reference-based scores.

- **comprehensiveness, diversity, directness, empowerment**: each rated 1-4 against the written
  level descriptions of :data:`CRITERIA`, **each answer on its own** (question + answer, no
  second answer to compare with: no pairwise position bias), ``runs`` times (3) at a temperature
  above 0 with the run number in the prompt (so the runs differ and a response cache keeps all
  three), normalized as (s - 1) / 3 to [0, 1] and averaged over the valid runs. A reply that is
  not valid JSON with four integers 1-4 is asked again once (with a note, a new request); a
  second failure skips that run (None when no run is valid). ``rubric``: the mean of the four.
- **semantic_similarity**: cosine of the answer with the closest reference answer, with the
  configured embedder, clipped to [0, 1] (RAGAS answer similarity).
- **factual_correctness**: RAGAS's F1 of claims: precision = the answer's claims supported by
  the reference, recall = the reference's claims supported by the answer, both by the judge's
  faithfulness procedure (:meth:`spr.eval.judge.Judge.faithfulness`); 0 for an abstention on a
  question with a reference.
- answer relevance is the existing judge's (RAGAS, :mod:`spr.eval.judge`).

:class:`RubricJudge` is the :class:`~spr.eval.judge.Judge` that ``policykb eval --judge`` uses:
its ``score`` adds these to faithfulness and the relevances; it finds a question's references by
the question text (the runner hands the judge no gold). With ``ragas=False`` it scores the rubric
table's metrics only (answer relevance, the rubric, semantic similarity, factual correctness) and
skips faithfulness, context relevance and the judged citations: on two CPU cores those are most of
the judge's ~12 model calls per answer (``bench/eval_rubric.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import ModelError, ModelNotFoundError, ModelUnavailableError
from spr.eval.citations import plain_text
from spr.eval.judge import Judge
from spr.records import is_abstention

if TYPE_CHECKING:
    from core.embed import Embedder
    from core.llm import LLM

# criterion -> (what it asks, the description of levels 1..4)
CRITERIA: dict[str, tuple[str, tuple[str, str, str, str]]] = {
    "comprehensiveness": (
        "How much detail does the answer provide to cover all aspects of the question?",
        (
            "misses most aspects of the question or gives almost no detail",
            "covers one aspect with little detail; important parts are missing",
            "covers the main aspects with some detail; minor gaps",
            "covers every aspect of the question in detail",
        ),
    ),
    "diversity": (
        "How varied and rich is the answer in offering different perspectives, actors, provisions or insights?",
        (
            "one narrow point or none",
            "two related points from a single perspective",
            "several distinct points or perspectives",
            "a wide range of distinct, relevant perspectives and insights",
        ),
    ),
    "directness": (
        "How specifically and clearly does the answer address the question?",
        (
            "does not address the question, or is evasive or off-topic",
            "addresses it only partly or buries the answer in unrelated text",
            "answers the question clearly with some unnecessary material",
            "answers exactly what was asked, clearly and concisely",
        ),
    ),
    "empowerment": (
        "How well does the answer help the reader understand the topic and make informed judgements?",
        (
            "gives the reader nothing to understand or act on",
            "gives some facts but no explanation or context",
            "explains the relevant rules or facts so the reader can follow them",
            "explains clearly, with sources or reasons, so the reader can judge and act on their own",
        ),
    ),
}
RUBRIC_KEYS = (*CRITERIA, "rubric")
SCORES = (*RUBRIC_KEYS, "semantic_similarity", "factual_correctness")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {name: {"type": "integer", "enum": [1, 2, 3, 4]} for name in CRITERIA},
    "required": list(CRITERIA),
}


# --- the arithmetic (pure) --------------------------------------------------------------------------
def normalize(level: float) -> float:
    """A 1-4 rating on [0, 1].

    >>> [normalize(s) for s in (1, 2, 4)]
    [0.0, 0.3333333333333333, 1.0]
    """
    return (float(level) - 1.0) / 3.0


def parse_rubric(reply: Any) -> dict[str, int] | None:
    """The four ratings of a judge's reply, or None when one is missing or not an integer 1-4
    (integral floats and digit strings are accepted).

    >>> parse_rubric({"comprehensiveness": 3, "diversity": "2", "directness": 4.0, "empowerment": 1})
    {'comprehensiveness': 3, 'diversity': 2, 'directness': 4, 'empowerment': 1}
    >>> parse_rubric({"comprehensiveness": 5, "diversity": 2, "directness": 4, "empowerment": 1}) is None
    True
    """
    if not isinstance(reply, Mapping):
        return None
    out = {}
    for name in CRITERIA:
        value = reply.get(name)
        if isinstance(value, bool):
            return None
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or not 1 <= value <= 4:
            return None
        out[name] = value
    return out


def aggregate(runs: Sequence[Mapping[str, int] | None]) -> dict[str, float | None]:
    """Per criterion the mean normalized rating over the valid runs, and ``rubric``, the mean of the
    four; all None without a valid run.

    >>> aggregate([{"comprehensiveness": 4, "diversity": 1, "directness": 4, "empowerment": 1}, None,
    ...            {"comprehensiveness": 2, "diversity": 1, "directness": 4, "empowerment": 1}])["comprehensiveness"]
    0.6666666666666666
    """
    valid = [r for r in runs if r is not None]
    if not valid:
        return dict.fromkeys(RUBRIC_KEYS)
    out: dict[str, float | None] = {name: sum(normalize(r[name]) for r in valid) / len(valid) for name in CRITERIA}
    out["rubric"] = sum(out[name] for name in CRITERIA) / len(CRITERIA)  # type: ignore[misc]
    return out


def f1(precision: float | None, recall: float | None) -> float | None:
    """Harmonic mean; None when either is None.

    >>> f1(0.5, 1.0)
    0.6666666666666666
    >>> f1(0.0, 0.0)
    0.0
    """
    if precision is None or recall is None:
        return None
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def semantic_similarity(answer: str, references: Sequence[str], embedder: Embedder) -> float | None:
    """The best cosine of ``answer`` with one of ``references`` (unit vectors), clipped to [0, 1];
    None without an answer or a reference."""
    refs = [r for r in references if r and r.strip()]
    if not answer.strip() or not refs:
        return None
    vectors = embedder.embed_many([answer, *refs])
    return float(min(1.0, max(0.0, max(float(np.dot(vectors[0], v)) for v in vectors[1:]))))


# --- the rubric judge -------------------------------------------------------------------------------
def rubric_prompt(question: str, answer: str, run: int = 1, runs: int = 3, retry: bool = False) -> list[dict[str, str]]:
    """The chat messages rating one answer on the four criteria (``run`` of ``runs``)."""
    levels = "\n\n".join(
        f"{name} — {ask}\n" + "\n".join(f"  {i}: {text}" for i, text in enumerate(desc, 1)) for name, (ask, desc) in CRITERIA.items()
    )
    user = (
        f"Rate the answer below on four criteria, each an integer from 1 to 4 as described.\n\n{levels}\n\n"
        f"Question: {question}\n\nAnswer: {answer}\n\n"
        f"This is independent assessment {run} of {runs}; judge the answer on its own merits.\n"
        "Reply as JSON with the integer keys " + ", ".join(f"'{c}'" for c in CRITERIA) + "."
    )
    if retry:
        user += " Your previous reply was not valid: reply with exactly those four keys, each an integer 1, 2, 3 or 4."
    system = "You are a strict, fair evaluator of answers to questions about policy documents."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class Rubric:
    """Rates answers on :data:`CRITERIA` with ``llm``: ``runs`` independent ratings at
    ``temperature``, each retried once when invalid (see the module docstring)."""

    def __init__(self, llm: LLM, runs: int = 3, temperature: float = 0.7, max_tokens: int = 96):
        self.llm = llm
        self.runs = runs
        self.temperature = temperature
        self.max_tokens = max_tokens

    def rate(self, question: str, answer: str, run: int = 1) -> dict[str, int] | None:
        """One run's four ratings, or None after two invalid replies."""
        for retry in (False, True):
            try:
                reply = self.llm.complete_json(
                    rubric_prompt(question, answer, run, self.runs, retry), SCHEMA, max_tokens=self.max_tokens, temperature=self.temperature
                )
            except (ModelUnavailableError, ModelNotFoundError):
                raise
            except ModelError:
                continue
            parsed = parse_rubric(reply)
            if parsed is not None:
                return parsed
        return None

    def score(self, question: str, answer: str) -> dict[str, float | None]:
        """The four criteria and ``rubric`` on [0, 1], averaged over the runs (None: no valid run
        or no answer)."""
        if not answer.strip():
            return dict.fromkeys(RUBRIC_KEYS)
        return aggregate([self.rate(question, answer, run) for run in range(1, self.runs + 1)])


class RubricJudge(Judge):
    """The RAGAS-style :class:`~spr.eval.judge.Judge` plus the rubric and the reference-based
    scores. ``references``: question text → its reference answers (the dataset's gold);
    ``ragas=False``: the rubric table's metrics only (see the module docstring)."""

    def __init__(
        self, llm: LLM, embedder: Embedder, references: Mapping[str, Sequence[str]] | None = None, *, runs: int = 3,
        temperature: float = 0.7, ragas: bool = True, **kwargs: Any,
    ):
        super().__init__(llm, embedder, **kwargs)
        self.references = {k: tuple(v) for k, v in (references or {}).items()}
        self.rubric = Rubric(llm, runs=runs, temperature=temperature)
        self.ragas = ragas

    def score(self, question: str, answer: str, context: str, abstained: bool) -> dict[str, float | None]:
        answer = plain_text(answer)
        abstained = abstained or is_abstention(answer)
        if self.ragas:
            out = super().score(question, answer, context, abstained)
        else:
            out = {"answer_relevance": 0.0 if abstained else self._safe(self.answer_relevance, question, answer)}
        refs = self.references.get(question, ())
        out.update(self.rubric.score(question, answer))
        out["semantic_similarity"] = semantic_similarity(answer, refs, self.embedder)
        out["factual_correctness"] = (0.0 if abstained else self._safe(self.factual_correctness, question, answer, refs)) if refs else None
        return out

    def citations(self, answer: str, evidence: Mapping[int, str], abstained: bool) -> dict[str, float | None]:
        return super().citations(answer, evidence, abstained) if self.ragas else {}

    def factual_correctness(self, question: str, answer: str, references: Sequence[str]) -> float | None:
        """F1 of the answer's claims supported by the reference and the reference's claims
        supported by the answer (the first reference)."""
        reference = references[0]
        precision = self.faithfulness(question, answer, reference)
        recall = self.faithfulness(question, reference, answer)
        return f1(precision, recall)
