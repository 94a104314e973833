"""The LLM relevance scorer: its output check and prompt, the retry and failure paths with a
scripted model (a fake of the model, the scorer is real), and the contract with the real SmolLM2
GGUF (~1 s a judgement on 2 cores; its quality is not asserted, the 135M model is poor at it)."""

from __future__ import annotations

import pytest

from core.cache import ResponseCache
from core.errors import ModelUnavailableError
from core.llm import LLM, LlamaCppLLM
from core.llm.base import Completion, Request
from core.usage import Usage
from spr.retrieval.relevance import REMINDER, Judgement, LLMRelevance, parse_judgement, relevance_prompt

QUESTION = "How long does a company have to notify a personal data breach to the supervisory authority?"
RELEVANT = (
    "The controller shall without undue delay and, where feasible, not later than 72 hours after having "
    "become aware of it, notify the personal data breach to the supervisory authority."
)
UNRELATED = "Photosynthesis converts light energy into chemical energy in green plants."
VALID = '{"score": 9, "reason": "States the 72-hour deadline."}'


class ScriptedLLM(LLM):
    """A model that answers each request with the next scripted text (the last one repeats) and
    records the messages it was sent; an exception in the script is raised instead."""

    def __init__(self, *answers: str | Exception, **kwargs):
        super().__init__("scripted", **kwargs)
        self.answers = list(answers)
        self.requests: list[Request] = []

    def _generate(self, request: Request) -> Completion:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return Completion(answer, Usage(10, 5), False, self.model_id)


# --- pure parts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "raw"),
    [({"score": 7, "reason": "ok"}, 7), ({"score": 1, "reason": "ok"}, 1), ({"score": 10.0, "reason": "ok"}, 10),
     ({"score": "7", "reason": "ok"}, 7), ({"score": " 3.0 ", "reason": "ok"}, 3)],
)
def test_parse_judgement_accepts_integral_scores_in_range(value, raw):
    assert parse_judgement(value) == Judgement((raw - 1) / 9, raw, "ok")


@pytest.mark.parametrize(
    "value",
    [{"score": 0, "reason": "x"}, {"score": 11, "reason": "x"}, {"score": True, "reason": "x"},
     {"score": "high", "reason": "x"}, {"score": 6.5, "reason": "x"}, {"score": float("nan"), "reason": "x"},
     {"score": None, "reason": "x"}, {"score": 5}, {"score": 5, "reason": "  \n "}, {"score": 5, "reason": 3},
     [5, "x"], "5", None],
)
def test_parse_judgement_rejects_invalid_output(value):
    assert parse_judgement(value) is None


def test_parse_judgement_keeps_the_reason_on_one_line():
    got = parse_judgement({"score": 4, "reason": "  Mentions breaches,\n\tnot the  deadline. "})
    assert got is not None and got.reason == "Mentions breaches, not the deadline." and got.score == pytest.approx(1 / 3)


def test_prompt_puts_the_question_first_and_cuts_the_passage():
    prompt = relevance_prompt("Q?", "#### Article 5\n" + " ".join(f"w{i}" for i in range(500)), max_words=300)
    assert prompt.startswith("Question: Q?\nPassage: Article 5 w0 w1 ") and "####" not in prompt
    assert "w297 …" in prompt and "w298" not in prompt  # "Article 5" is two of the 300 words
    assert prompt.index("Question:") < prompt.index("Passage:") and '"score"' in prompt


def test_negative_retries_are_refused():
    with pytest.raises(ValueError):
        LLMRelevance(ScriptedLLM(VALID), retries=-1)


# --- retries and failures, with a scripted model -------------------------------------------------


def test_invalid_then_valid_answer_uses_the_retry_with_a_different_request():
    llm = ScriptedLLM('{"score": 42, "reason": "way off"}', VALID)
    got = LLMRelevance(llm, retries=1).judge(QUESTION, RELEVANT)
    assert got == Judgement(8 / 9, 9, "States the 72-hour deadline.")
    first, second = llm.requests
    assert first.messages != second.messages and second.messages[0] == first.messages[0]
    assert second.messages[-1] == ("user", REMINDER)
    assert first.temperature == second.temperature == 0.0 and first.max_tokens == 80
    assert first.schema is not None and first.schema["required"] == ["score", "reason"]


def test_always_invalid_answers_give_none_after_retries_plus_one_tries():
    llm = ScriptedLLM("not json", '{"score": 5}', '{"score": "high", "reason": "x"}')
    assert LLMRelevance(llm, retries=2).judge(QUESTION, RELEVANT) is None
    assert len(llm.requests) == 3 and len({r.messages for r in llm.requests}) == 3


def test_a_model_that_is_down_propagates():
    llm = ScriptedLLM(ModelUnavailableError("endpoint down"))
    with pytest.raises(ModelUnavailableError, match="endpoint down"):
        LLMRelevance(llm, retries=3).judge_all(QUESTION, [RELEVANT])
    assert len(llm.requests) == 1  # a failure of the model is not retried here


def test_identical_requests_hit_the_llm_cache_and_the_model_loads_lazily(tmp_path):
    llm = ScriptedLLM("{}", VALID, cache=ResponseCache(tmp_path / "llm.sqlite"))
    loads: list[int] = []
    scorer = LLMRelevance(lambda: loads.append(1) or llm)
    assert loads == []
    first = scorer.judge_all(QUESTION, [RELEVANT])
    again = scorer.judge_all(QUESTION, [RELEVANT])
    assert first == again == [Judgement(8 / 9, 9, "States the 72-hour deadline.")]
    assert len(llm.requests) == 2 and llm.tracker.totals.cache_hits == 2  # the bad try is cached too


# --- the embedded model ------------------------------------------------------------------------


@pytest.mark.slow
def test_real_model_gives_a_judgement_or_none_per_passage():
    llm = LlamaCppLLM(cache=False)
    got = LLMRelevance(llm).judge_all(QUESTION, [RELEVANT, UNRELATED])
    assert len(got) == 2
    for judgement in got:
        if judgement is not None:
            assert 1 <= judgement.raw <= 10 and judgement.score == pytest.approx((judgement.raw - 1) / 9)
            assert 0.0 <= judgement.score <= 1.0 and judgement.reason and "\n" not in judgement.reason
    assert 2 <= llm.tracker.totals.calls <= 4  # one try per passage, plus at most one retry each
