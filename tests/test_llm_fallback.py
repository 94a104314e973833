"""[answer] llm_fallback: an LLM reply the support check withholds whole is replaced by the
extractive answer over the same passages ("extractive", the default), or by the abstention
("abstain"); a model that declines by itself is believed (spr/qa.py ``_fallback``).

The model is scripted (a real ``core.llm.LLM`` subclass whose ``_generate`` returns a fixed reply),
so the withheld reply is known; the store, retrieval, support check and extractive answer are the
real ones over examples/sample-kb.trig."""

from __future__ import annotations

import pytest
from support.kbs import build_sample_kb
from support.llms import ScriptedLLM

from core.config import load_config

QUESTION = "Who issues the Notice on Distributed Photovoltaics?"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    from store.layout import KBLayout
    from store.open import open_store

    kb = build_sample_kb(tmp_path_factory.mktemp("fallback") / "kb")
    (kb / "policykb.toml").write_text('[answer]\nmode = "naive-kg"\n', encoding="utf-8")
    config = load_config(kb_dir=kb)  # the test models (conftest.py)
    store = open_store(config.store, KBLayout(kb), config.kb.base_iri)
    yield config, store
    store.close()


def _ask(sample, reply: str, fallback: str | None = None, stream: bool = False):
    from spr.qa import KnowledgeBase
    from spr.records import AnswerDone

    config, store = sample
    if fallback is not None:
        config = config.model_copy(update={"answer": config.answer.model_copy(update={"llm_fallback": fallback})})
    base = KnowledgeBase(config, store, llm=ScriptedLLM(reply))
    if not stream:
        return base, base.ask(QUESTION, answer="llm")
    return base, next(e.answer for e in base.ask_stream(QUESTION, answer="llm") if isinstance(e, AnswerDone))


INVENTED = "The Ministry of Magic issued the plan in 1850 [1]."


@pytest.mark.parametrize("stream", [False, True])
def test_a_withheld_reply_is_replaced_by_the_quoted_evidence(sample, stream):
    base, answer = _ask(sample, INVENTED, stream=stream)
    extractive = base.ask(QUESTION, answer="extractive")
    assert not extractive.abstained  # the evidence holds an answer to quote
    assert not answer.abstained and answer.text == extractive.text
    assert answer.draft == INVENTED and answer.unsupported  # what the model wrote stays visible
    assert "the evidence is quoted instead" in answer.trace.note
    assert [c.quote for c in answer.citations] == [c.quote for c in extractive.citations]


def test_abstain_keeps_the_abstention(sample):
    _, answer = _ask(sample, INVENTED, fallback="abstain")
    assert answer.abstained and answer.draft == INVENTED and "quoted instead" not in answer.trace.note


def test_a_model_that_declines_is_believed(sample):
    _, answer = _ask(sample, "The documents do not say.")
    assert answer.abstained and not answer.draft
