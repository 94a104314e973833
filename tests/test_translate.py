"""Questions in another language than the documents (spr/translate.py): when a question is
translated, and the whole path on a KB of German documents (examples/corpus-de, ingested for
real) with the tiny test LLM translating."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.models import model_endpoint_down

from spr.translate import needs_translation

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("question", "language", "expected"),
    [
        ("How much is the subsidy for a heat pump?", "de", True),
        ("Wie hoch ist der Zuschuss für eine Wärmepumpe?", "de", False),
        ("How much is the subsidy for a heat pump?", "en", False),  # an English KB never translates
        ("GDPR?", "de", False),  # no stop words: no language to tell
        ("How much is the subsidy?", "xx", False),  # a language the prompt cannot name
    ],
)
def test_a_question_is_translated_only_when_another_language_fits_it_better(question, language, expected):
    assert needs_translation(question, language) is expected


@pytest.fixture(scope="module")
def german_kb(tmp_path_factory) -> Path:
    from core.config import load_config
    from kgpipeline.pipeline import ingest_paths

    kb = tmp_path_factory.mktemp("german") / "kb"
    kb.mkdir()
    ingest_paths(load_config(kb_dir=kb), [ROOT / "examples" / "corpus-de"])
    return kb


@pytest.mark.slow
def test_an_english_question_over_german_documents_is_retrieved_by_its_translation(german_kb):
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(german_kb) as kb:
        assert kb.language == "de"
        answer = kb.ask("How much is the subsidy for a heat pump?", mode="hybrid")
        prefix = "question translated into German: "
        assert prefix in answer.trace.note
        translation = answer.trace.note.split(prefix, 1)[1]
        assert translation and translation != answer.question
        assert [e.key for e in answer.evidence] == [e.key for e in kb.retriever("hybrid").search(translation, 3).evidence]
        assert answer.usage.llm_calls == 1 and "translate" in answer.timings_ms
        german = kb.ask("Wie hoch ist der Zuschuss für eine Wärmepumpe?", mode="hybrid")
    # a question in the KB's language is retrieved as asked, and the (English) check does not read it
    assert "translated" not in german.trace.note and german.usage.llm_calls == 0
    assert not german.abstained and german.abstain_reason == ""
    assert german.citations[0].title == "Gesetz zur Förderung von Wärmepumpen in der Provinz Westmark"


@pytest.mark.slow
def test_a_translation_that_fails_leaves_the_question_as_asked(german_kb, monkeypatch):
    from spr.qa import KnowledgeBase

    model_endpoint_down(monkeypatch)
    with KnowledgeBase.open(german_kb) as kb:
        answer = kb.ask("How much is the subsidy for a heat pump?", mode="hybrid")
    assert "translated" not in answer.trace.note and answer.evidence  # retrieved as asked, no error


@pytest.mark.slow
def test_translation_off_never_calls_the_model(german_kb, monkeypatch):
    from spr.qa import KnowledgeBase

    monkeypatch.setenv("POLICYKB_ANSWER__TRANSLATE_QUESTIONS", "off")
    with KnowledgeBase.open(german_kb) as kb:
        answer = kb.ask("How much is the subsidy for a heat pump?", mode="hybrid")
    assert answer.usage.llm_calls == 0 and "translated" not in answer.trace.note


@pytest.mark.slow
def test_a_german_question_the_documents_do_not_answer_is_declined_in_german(german_kb):
    """The abstention is worded in the question's language: a German reader is not told "The
    documents do not say."."""
    from spr.qa import KnowledgeBase
    from spr.records import ABSTAIN, is_abstention

    with KnowledgeBase.open(german_kb) as kb:
        answer = kb.ask("Seit wann gilt das Gesetz?", mode="hybrid")
    assert answer.abstained and answer.citations == ()
    assert answer.text == "Die Dokumente sagen dazu nichts." and is_abstention(answer.text)
    assert ABSTAIN != answer.text
