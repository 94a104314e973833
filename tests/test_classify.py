"""Classifier: transparent rules on the sample corpus and real corpora, metadata override, LLM path."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgpipeline.classify import classify, rule_scores
from kgpipeline.preprocess import discover_files, load_documents
from kgpipeline.records import CATEGORIES, SourceDocument

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "corpus"
DATA = ROOT.parent / "shared" / "data" / "policy_corpora"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared/data not present")

EXPECTED = {
    "nl-rea-2024": "legal-regulation",
    "national-solar-plan": "general-policy",
    "westmark-notice-distributed-pv": "general-policy",
    "grid-connection-standard": "standard",
    "energy-efficiency-regulation": "legal-regulation",
    "hydrogen-strategy": "general-policy",
    "westmark-wind-guidelines": "general-policy",
    "monitoring-center-decision": "legal-regulation",
    "heat-pump-standard": "standard",
    "neb-op-2025-01": "general-policy",
    "neb-ms-2025-02": "legal-regulation",
    "web-cm-2025-03": "general-policy",
    "westmark-climate-plan": "general-policy",
}


def sample_docs() -> list[SourceDocument]:
    return [d for p in discover_files(CORPUS) for d in load_documents(p).documents]


def text_doc(title: str, text: str, **meta) -> SourceDocument:
    return SourceDocument("t", "t.txt", "text", title, text, meta)


def test_rules_agree_with_the_sample_corpus_without_metadata_categories():
    docs = sample_docs()
    assert {d.doc_id for d in docs} == set(EXPECTED)
    for doc in docs:
        verdict = classify(dataclasses.replace(doc, category=None))
        assert verdict.method == "rules"
        assert verdict.category == EXPECTED[doc.doc_id], (doc.doc_id, dict(verdict.scores), verdict.cues)
        assert set(verdict.scores) == set(CATEGORIES) and verdict.cues


def test_metadata_category_wins_over_rules():
    doc = text_doc("Renewable Energy Act", "Article 1 Scope\n\nThis Act applies.", category="standard")
    doc = dataclasses.replace(doc, category="standard")
    verdict = classify(doc)
    assert verdict.category == "standard" and verdict.method == "metadata"
    assert verdict.scores["legal-regulation"] > verdict.scores["standard"]  # rules still reported


def test_title_head_word_decides_between_type_words():
    notice = classify(text_doc("Notice on the Implementation of the Renewable Energy Act", "Text."))
    assert notice.category == "general-policy"
    assert any("title head 'notice'" in c for c in notice.cues)
    assert classify(text_doc("Code of Practice for Heat Meters", "Text.")).category == "standard"
    assert classify(text_doc("Energy Code of Westmark", "Text.")).category == "legal-regulation"


def test_structure_cues_without_a_telling_title():
    legal = "\n\n".join(f"Article {i} Duties\n\nThe operator shall pay a fine if it fails." for i in range(1, 6))
    scores, cues = rule_scores(text_doc("Untitled", legal))
    assert max(scores, key=scores.get) == "legal-regulation"
    assert any("Article/§ headings" in c for c in cues) and any("penalty" in c for c in cues)
    std = "1 Scope\n\nText.\n\n2 Normative references\n\nNone.\n\n3 Terms and definitions\n\n3.1 Meter\n\nA device."
    scores, cues = rule_scores(text_doc("Untitled", std))
    assert max(scores, key=scores.get) == "standard"
    assert classify(text_doc("Untitled", "Nothing telling here.")).category == "general-policy"


class FakeLLM:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def complete_json(self, messages, schema):
        self.calls.append((messages, schema))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_llm_is_used_with_an_enum_schema_when_passed():
    llm = FakeLLM({"category": "standard"})
    verdict = classify(text_doc("National Solar Plan", "The plan will reach targets."), llm=llm)
    assert verdict.category == "standard" and verdict.method == "llm"
    messages, schema = llm.calls[0]
    assert schema["properties"]["category"]["enum"] == list(CATEGORIES)
    assert "National Solar Plan" in messages[-1]["content"]


@pytest.mark.parametrize("answer", [RuntimeError("model down"), {"category": "poem"}, "standard"])
def test_llm_failures_fall_back_to_rules(answer):
    verdict = classify(text_doc("National Solar Plan", "The plan will reach targets."), llm=FakeLLM(answer))
    assert verdict.method == "rules" and verdict.category == "general-policy"
    assert verdict.cues[0].startswith("llm failed")


@needs_data
def test_real_corpora():
    for path in sorted((DATA / "egd_regulations").glob("3*.md")):
        doc, = load_documents(path).documents
        assert classify(doc).category == "legal-regulation", path.name
    for name in ("ksg.md", "behg.md", "stromnzv.md"):
        doc, = load_documents(DATA / "de_energy_laws" / name).documents
        assert classify(doc).category == "legal-regulation", name
    necp = DATA / "necp_national_energy_climate_plans" / "national_objectives_and_targets"
    for path in sorted(necp.glob("*.txt"))[::30]:
        doc, = load_documents(path).documents
        verdict = classify(doc)
        assert verdict.category == "general-policy", (path.name, dict(verdict.scores), verdict.cues)
