"""The ``sections`` signal (spr/retrieval/sections.py) and its rescoring bonus, on the example
corpus KB built by the real pipeline (real MiniLM vectors, real store): a question asking when an
act applies or what a breach costs is pointed to the act's "Entry into Force" / "Penalties"
article."""

from __future__ import annotations

import json

import pytest
from support.kbs import corpus_kb

from core.config import load_config
from spr.qa import KnowledgeBase
from spr.retrieval.registry import signals
from spr.retrieval.rescore import rescore
from spr.retrieval.sections import SectionSignal, question_kinds, section_label

pytestmark = pytest.mark.slow  # builds the example KB

WHEN = "From which date does the Renewable Energy Act apply?"


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    return corpus_kb(tmp_path_factory)


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("Since when have the rules applied?", ["entry into force"]),
        ("By what date did Member States have to transpose the directive into national law?", ["entry into force"]),
        ("Ab wann gilt das Gesetz?", ["entry into force"]),
        ("What is the highest fine for a provider?", ["penalties"]),
        ("Wie hoch ist das Bußgeld?", ["penalties"]),
        ("What does 'installation' mean in the act?", ["definitions"]),
        ("Which regulation does the act repeal?", ["repeal and amendments"]),
        ("Does the act apply to small installations?", []),  # scope, not a date
        ("How large is the solar target for 2030?", []),
    ],
)
def test_question_kinds(question, kinds):
    assert [k.name for k in question_kinds(question)] == kinds


def test_section_label_is_the_innermost_heading_or_the_document_opening():
    assert section_label(("Act",), "Penalties 1. Member States shall …") == "Penalties 1. Member States shall …"
    assert section_label(("Act", "Chapter III", "Article 5 Penalties"), "Renewable Energy Act …") == "Article 5 Penalties"
    # a chapter named after definitions does not make its "Scope" article one
    assert section_label(("Act", "CHAPTER I SUBJECT MATTER, SCOPE AND DEFINITIONS", "Article 2 Scope"), "") == "Article 2 Scope"


def test_every_chunk_of_a_headingless_article_shares_its_opening_label(tmp_path):
    """An article stored as one record (eu_regulations_pypi) opens with its title; its later
    chunks must be found as that section too (regression: only the first chunk was)."""
    from kgpipeline.pipeline import ingest_paths

    body = " ".join(f"{n}. Infringements of Article {n} shall be subject to administrative fines up to EUR {n} 000 000." for n in range(1, 160))
    (tmp_path / "acts.jsonl").write_text(json.dumps({"id": "gdpr-83", "title": "GDPR Article 83", "text": "General conditions for imposing administrative fines " + body}) + "\n")
    kb = tmp_path / "kb"
    kb.mkdir()
    config = load_config(kb_dir=kb)
    ingest_paths(config, [tmp_path / "acts.jsonl"])
    with KnowledgeBase.open(config) as base:
        labels = SectionSignal(base.store, lambda q, chunks: {c: 0.0 for c in chunks}).labels()
    assert len(labels) > 1 and all(label.startswith("General conditions for imposing administrative fines") for label in labels.values())


def test_the_signal_ranks_the_sections_of_the_asked_kind_and_nothing_else(kb_dir):
    with KnowledgeBase.open(kb_dir) as kb:
        dense = next(s for s in signals(kb) if s.name == "dense")
        signal = SectionSignal(kb.store, dense.similarities)
        ranked = signal.rank(WHEN, 10)
        labels = signal.labels()
        assert ranked and all("Entry into Force" in labels[r.chunk] or "enters into force" in labels[r.chunk].lower() for r in ranked)
        assert signal.rank("Who operates the monitoring center?", 10) == []  # no kind asked: no ranking


def test_hybrid_puts_the_entry_into_force_article_first_and_says_so(kb_dir):
    with KnowledgeBase.open(kb_dir) as kb:
        top = kb.retriever("hybrid").search(WHEN, 3).evidence[0]
    assert top.chunk.heading_path.endswith("Article 6 Entry into Force")
    assert dict(top.ranks)["sections"] == 1 and "enters into force on 1 April 2024" in top.chunk.text
    assert 0.0 <= top.score <= 1.0


def test_without_the_signal_or_the_bonus_the_ranking_is_the_cosine_one(kb_dir):
    config = load_config(kb_dir=kb_dir)
    config.retrieval.weight_sections = 0.0
    with KnowledgeBase.open(config) as kb:
        evidence = kb.retriever("hybrid").search(WHEN, 5).evidence
    assert all("sections" not in dict(e.ranks) for e in evidence)


def test_the_bonus_moves_a_favoured_candidate_up_and_keeps_scores_in_range():
    texts = ["the act applies to grid operators", "this act enters into force on 1 April"]
    plain, _ = rescore("When does the act apply?", ["a", "b"], texts, None, 0.7)
    assert plain[0] > plain[1]
    boosted, _ = rescore("When does the act apply?", ["a", "b"], texts, None, 0.7, favoured={"b"}, bonus=0.9)
    assert boosted[1] > boosted[0] and all(0.0 <= v <= 1.0 for v in boosted)
    assert rescore("q", ["a"], ["x"], None, 0.7, favoured={"z"}, bonus=0.5)[0] == rescore("q", ["a"], ["x"], None, 0.7)[0]


def test_an_extractive_answer_quotes_the_asked_sections_value_first(kb_dir):
    """The registry deadline ("by 30 June 2024") and the entry into force both state a date; the
    question asks when the act applies, so the Entry into Force article's sentence comes first."""
    with KnowledgeBase.open(kb_dir) as kb:
        answer = kb.ask(WHEN)
    assert answer.text.startswith("This Act enters into force on 1 April 2024.")
    assert answer.citations[0].quote == "This Act enters into force on 1 April 2024."


def test_sections_are_taken_from_the_acts_the_first_stage_found(kb_dir):
    """Every act has an "Entry into Force" article; given the first stage's top chunks, only
    those of their acts are ranked (a question about one act is not pointed to another's)."""
    from spr.retrieval.base import chunk_refs
    from spr.retrieval.fusion import Fused

    with KnowledgeBase.open(kb_dir) as kb:
        dense = next(s for s in signals(kb) if s.name == "dense")
        signal = SectionSignal(kb.store, dense.similarities)
        everywhere = signal.rank(WHEN, 10)
        registry = next(e for e in kb.retriever("vector").retrieve("Renewable Energy Registry by 30 June 2024", 5))
        anchored = signal.rank(WHEN, 10, [Fused(registry.chunk.iri, 1.0, (("dense", 1),), ())])
        refs = chunk_refs(kb.store, [r.chunk for r in everywhere + anchored])
    assert len({refs[r.chunk].title for r in everywhere}) > 1  # entry-into-force articles of several acts
    assert anchored and {refs[r.chunk].title for r in anchored} == {registry.chunk.title}
