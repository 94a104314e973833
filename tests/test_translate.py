"""Questions in another language than the documents (spr/translate.py): when a question is
translated, how the two rankings merge, and the whole path on a KB of German documents
(examples/corpus-de, ingested for real) with the tiny test LLM translating."""

from __future__ import annotations

from pathlib import Path

import pytest

from spr.records import ChunkRef, Evidence, Fact, Retrieval, Trace
from spr.translate import merge, needs_translation

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


def _passage(n: int, ranks: tuple[tuple[str, int], ...] = ()) -> Evidence:
    ref = ChunkRef(f"urn:c{n}", "urn:d", "Doc", 0, 1, "x")
    return Evidence(kind="chunk", text=f"passage {n}", score=1.0, source="hybrid", chunk=ref, ranks=ranks)


def test_merge_fuses_both_rankings_and_says_which_the_translation_found():
    fact = Evidence(kind="triple", text="A fact.", score=1.0, source="spr", fact=Fact("urn:s", "urn:p", "urn:o", "S", "p", "O"))
    asked = Retrieval((fact, _passage(1, (("bm25", 1),)), _passage(2), _passage(3)), Trace(note="asked"))
    translated = Retrieval((_passage(4, (("dense", 1),)), _passage(2), _passage(5)))
    merged = merge(asked, translated, 3)
    assert merged.evidence[0] is fact and merged.trace.note == "asked"
    keys = [e.chunk.iri for e in merged.evidence[1:]]
    assert keys == ["urn:c2", "urn:c1", "urn:c4"]  # found by both first; then rank 1 of each, by IRI
    by_iri = {e.chunk.iri: e for e in merged.evidence[1:]}
    assert by_iri["urn:c2"].ranks == (("translated", 2),)
    assert by_iri["urn:c1"].ranks == (("bm25", 1),)
    assert by_iri["urn:c4"].ranks == (("dense", 1), ("translated", 1))


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
    import socket

    from spr.qa import KnowledgeBase

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("POLICYKB_LLM__PROVIDER", "openai")
    monkeypatch.setenv("POLICYKB_LLM__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("POLICYKB_LLM__MODEL", "none")
    monkeypatch.setenv("POLICYKB_LLM__RETRIES", "0")
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
