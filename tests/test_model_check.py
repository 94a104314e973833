"""The model check ([answer] model_check, spr/model_check.py): the [llm] model's yes/no on what an
answer would quote, read by P(yes) against [answer] model_check_threshold.

A real model (the test LLM, SmolLM2-135M, through llama.cpp) and a real KB (the example corpus).
The tiny model's judgement is not the one measured (docs/answers.md#the-models-check, Qwen2.5-Coder-1.5B),
so these tests pin the mechanics around it: its own P(yes) against the threshold, where the check
runs for each answer kind, and a model that is down.
"""

from __future__ import annotations

import logging
import re

import pytest
from support.kbs import corpus_kb
from support.models import model_endpoint_down

from core.config import AnswerConfig, LLMConfig, load_config
from core.llm import make_llm
from spr.generate import Draft
from spr.model_check import DECLINED, ModelVerdict, check_prompt, model_check
from spr.qa import KnowledgeBase
from spr.records import ABSTAIN, Citation

pytestmark = pytest.mark.slow  # builds a KB and loads a model

QUESTION = "How far must wind turbines be from homes?"
QUOTE = "Wind turbines shall be sited at least 800 metres from the nearest dwelling. [1]"
THRESHOLD = AnswerConfig().model_check_threshold


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    return corpus_kb(tmp_path_factory)


@pytest.fixture(scope="module")
def llm():
    return make_llm(LLMConfig(model_path="smollm2-135m-instruct"), None, cache=False)


def test_the_prompt_reads_the_quote_without_markers_or_markup_then_the_question():
    prompt = check_prompt(QUESTION, "#### Article 4\nWind turbines shall be sited far away. [1] [2]", max_words=4)
    assert "Text: Article 4 Wind turbines …\nQuestion: How far must wind turbines be from homes?\n" in prompt
    assert "[1]" not in prompt and "####" not in prompt and prompt.endswith("Answer yes or no.")


def test_nothing_quoted_and_a_yes_no_question_ask_no_model():
    """An abstention has nothing to read; a yes/no question is left to the rules (the model reads
    a "shall not" as a no to the question itself)."""

    def no_model():
        raise AssertionError("the model was asked")

    assert model_check(no_model, QUESTION, Draft(ABSTAIN, (), True), THRESHOLD).declined is None
    assert model_check(no_model, QUESTION, Draft("  ", (), False), THRESHOLD).declined is None
    quoted = Draft("The Fund shall not support nuclear power plants. [1]", (), False)
    assert model_check(no_model, "We run a plant. Can the Fund support nuclear power?", quoted, threshold=1.0).declined is None


def test_the_answer_stands_at_the_models_own_p_yes_and_is_declined_above_it(llm):
    p_yes = llm.yes_probability(check_prompt(QUESTION, QUOTE))
    assert 0.0 < p_yes < 1.0
    quoted = Draft(QUOTE, (), False, confidence=0.7)
    assert model_check(lambda: llm, QUESTION, quoted, threshold=p_yes).declined is None
    declined = model_check(lambda: llm, QUESTION, quoted, threshold=min(1.0, p_yes + 1e-6)).declined
    assert declined is not None and declined.abstained and declined.text == ABSTAIN and declined.citations == ()
    assert declined.abstain_reason == f"{DECLINED} (P(yes) = {p_yes:.2f})"
    assert declined.confidence == 0.7  # the sentence score stays what the extractive pick measured


def test_the_verdict_keeps_p_yes_for_the_trace_and_none_where_the_model_was_not_asked(llm):
    p_yes = llm.yes_probability(check_prompt(QUESTION, QUOTE))
    stood = model_check(lambda: llm, QUESTION, Draft(QUOTE, (), False), threshold=0.0)
    assert stood.p_yes == pytest.approx(p_yes) and stood.declined is None
    assert stood.note == f"the model read the quote as answering (P(yes) = {p_yes:.2f})"
    assert model_check(lambda: llm, QUESTION, Draft(QUOTE, (), False), threshold=1.0).note == ""  # declined: its reason says it
    assert model_check(lambda: llm, QUESTION, Draft(ABSTAIN, (), True), THRESHOLD) == ModelVerdict()


def test_the_model_reads_where_the_quote_is_from(llm):
    """The quote's citation titles go before it, each once ("GDPR Article 12" beside a CRA
    question shows a quote from another act); the P(yes) is that prompt's."""
    cites = tuple(Citation(i, f"c{i}", "d", "Wind Energy Act Article 4", 0, 10, "Wind turbines") for i in (1, 2))
    prompt = check_prompt(QUESTION, QUOTE, [c.title for c in cites])
    assert "\nText (from Wind Energy Act Article 4): Wind turbines shall be sited" in prompt
    verdict = model_check(lambda: llm, QUESTION, Draft(QUOTE, cites, False), threshold=0.0)
    assert verdict.p_yes == pytest.approx(llm.yes_probability(prompt))


def test_a_model_that_is_down_declines_nothing_and_the_skip_is_logged(monkeypatch, caplog):
    model_endpoint_down(monkeypatch)
    down = make_llm(load_config().llm, None, cache=False)
    with caplog.at_level(logging.WARNING, logger="spr.model_check"):
        assert model_check(lambda: down, QUESTION, Draft(QUOTE, (), False), THRESHOLD).declined is None
    assert any("model check skipped, the answer stands" in r.getMessage() for r in caplog.records)


def _config(kb_dir, check: str, threshold: float):
    config = load_config(kb_dir=kb_dir)
    config.answer.model_check = check
    config.answer.model_check_threshold = threshold
    return config


def test_an_extractive_answer_the_model_reads_as_no_answer_abstains(kb_dir):
    """"all": the extractive answer is read after its generator's rule check, in ask and in
    ask_stream alike; a threshold no P(yes) reaches declines it, 0 lets it stand."""
    with KnowledgeBase.open(_config(kb_dir, "all", 1.0)) as kb:
        answers = [kb.ask(QUESTION), [e for e in kb.ask_stream(QUESTION)][-1].answer]
    for answer in answers:
        assert answer.abstained and answer.text == ABSTAIN and answer.citations == ()
        assert answer.abstain_reason.startswith(DECLINED)
        assert answer.usage.llm_calls == 1 and "model_check" in answer.timings_ms
    with KnowledgeBase.open(_config(kb_dir, "all", 0.0)) as kb:
        kept = kb.ask(QUESTION)
    assert not kept.abstained and "800 metres" in kept.text and kept.usage.llm_calls == 1
    # the trace (--explain, /ask) says how sure the model was of the answer it let stand
    assert re.search(r"the model read the quote as answering \(P\(yes\) = \d\.\d\d\)", kept.trace.note)
    assert "the model read" not in answers[0].trace.note  # a declined answer says why in its abstain reason


def test_llm_only_and_off_leave_extractive_answers_to_the_rules(kb_dir):
    for check in ("llm", "off"):
        with KnowledgeBase.open(_config(kb_dir, check, 1.0)) as kb:
            answer = kb.ask(QUESTION)
        assert not answer.abstained and answer.usage.llm_calls == 0 and "model_check" not in answer.timings_ms


def test_an_llm_answer_the_model_reads_as_unanswered_is_declined_before_it_is_written(kb_dir):
    """Before an LLM answer the model reads what the extractive answer would quote; declined, no
    reply is generated: one model call (the yes/no), no draft."""
    with KnowledgeBase.open(_config(kb_dir, "llm", 1.0)) as kb:
        answer = kb.ask(QUESTION, answer="llm")
        streamed = [e for e in kb.ask_stream(QUESTION, answer="llm")]
    for a in (answer, streamed[-1].answer):
        assert a.abstained and a.draft == "" and a.usage.llm_calls == 1
        assert a.abstain_reason.startswith(DECLINED)
    assert len(streamed) == 1  # no token was streamed


def test_with_the_model_down_an_extractive_answer_still_answers(kb_dir, monkeypatch):
    model_endpoint_down(monkeypatch)
    with KnowledgeBase.open(_config(kb_dir, "all", 0.5)) as kb:
        answer = kb.ask(QUESTION)
    assert not answer.abstained and "800 metres" in answer.text
