"""Dataset loaders on the real data in ../shared/data, the generic JSONL format, sampling, and the
corpus JSONL round trip through the ingest's preprocessor (passage id = document id)."""

from __future__ import annotations

import json

import pytest

from core.errors import InputError
from kgpipeline.preprocess import load_documents
from spr.eval.datasets import default_data_dir, load_dataset, load_jsonl, sample, write_corpus
from spr.eval.pathquestion import parse_answers, parse_path, readable
from spr.eval.records import EvalDataset, EvalQuestion, Passage

DATA = default_data_dir()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not at {DATA}")


@needs_data
@pytest.mark.parametrize(
    ("name", "questions", "passages", "unanswerable"),
    [("hotpotqa", 100, 994, 0), ("musique", 100, 1890, 0), ("squad2", 626, 87, 333), ("rag-eurlex", 43, 212, 0), ("pq-2h", 1533, 754, 0)],
)
def test_real_sets_load_with_their_gold(name, questions, passages, unanswerable):
    d = load_dataset(name)
    assert (len(d.questions), len(d.passages), sum(not q.answerable for q in d.questions)) == (questions, passages, unanswerable)
    ids = {p.id for p in d.passages}
    assert len(ids) == len(d.passages)
    for q in d.questions:
        assert q.gold_passage_ids and set(q.gold_passage_ids) <= ids, q.id
        assert bool(q.answers) == q.answerable


@needs_data
def test_gold_passages_hold_the_evidence():
    hp = load_dataset("hotpotqa")
    by_id = {p.id: p for p in hp.passages}
    q = hp.questions[0]  # "If Gallu is a demon Lilu is what?" -> supporting "Lilu (mythology)"
    assert "Lilu (mythology)" in {by_id[g].title for g in q.gold_passage_ids}
    eur = load_dataset("rag-eurlex")
    first = eur.questions[0]
    assert first.gold_passage_ids == ("eu-ai-act-art-73",)
    text = {p.id: p.text for p in eur.passages}["eu-ai-act-art-73"]
    assert "not later than 15 days" in " ".join(text.split())


def test_pathquestion_parsing():
    assert parse_answers("female(female/)") == ("female",)
    assert parse_answers("a_b(a_b/c/)") == ("a b", "c")
    assert parse_path("x#r1#y#r2#z#<end>#z") == ["x", "r1", "y", "r2", "z"]
    assert readable("__people__person__place_of_birth") == "place of birth"


@needs_data
def test_pathquestion_gold_is_the_hop_subjects():
    d = load_dataset("pq-2h")
    by_id = {p.id: p for p in d.passages}
    q = d.questions[0]  # adelaide ... #children# maria josepha of portugal #gender# female
    assert q.answers == ("female",) and q.kind == "2hop"
    titles = [by_id[g].title for g in q.gold_passage_ids]
    assert titles == ["adelaide of lowenstein wertheim rosenberg", "maria josepha of portugal"]
    assert "maria josepha of portugal gender female." in by_id[q.gold_passage_ids[1]].text


def test_generic_jsonl_builds_a_corpus_from_contexts(tmp_path):
    f = tmp_path / "set.jsonl"
    rows = [
        {"question": "Q1?", "answer": "A", "contexts": ["Alpha text.", "Beta text."]},
        {"id": "u", "question": "Q2?", "answer": "", "answerable": False},
        {"question": "Q3?", "answers": ["B", "b"], "contexts": ["beta  TEXT."]},  # same context, other spacing
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows))
    d = load_jsonl(f)
    assert [p.text for p in d.passages] == ["Alpha text.", "Beta text."]
    assert d.questions[0].gold_passage_ids == ("p00000", "p00001")
    assert d.questions[1].id == "u" and not d.questions[1].answerable and d.questions[1].answers == ()
    assert d.questions[2].gold_passage_ids == ("p00001",)
    with pytest.raises(InputError, match="no 'contexts'"):
        f2 = tmp_path / "bare.jsonl"
        f2.write_text(json.dumps({"question": "Q?", "answer": "A"}))
        load_jsonl(f2)


def test_sample_is_seeded_and_keeps_order():
    qs = tuple(EvalQuestion(str(i), f"q{i}", ("a",), (f"p{i}",), pool=(f"p{i}", "px")) for i in range(50))
    d = EvalDataset("t", qs, tuple(Passage(f"p{i}", "", "t") for i in range(50)) + (Passage("px", "", "t"), Passage("unused", "", "t")))
    a, b = sample(d, 10, seed=3), sample(d, 10, seed=3)
    assert [q.id for q in a.questions] == [q.id for q in b.questions]
    assert [int(q.id) for q in a.questions] == sorted(int(q.id) for q in a.questions)
    assert [q.id for q in sample(d, 10, seed=4).questions] != [q.id for q in a.questions]
    assert len(a.passages) == len(d.passages)  # full corpus by default
    pooled = sample(d, 10, seed=3, corpus="pool")
    assert {p.id for p in pooled.passages} == {f"p{q.id}" for q in a.questions} | {"px"}
    assert pooled.name != d.name  # its own cached KB
    assert sample(d, None) == d


def test_corpus_ids_survive_the_ingest_preprocessor(tmp_path):
    d = EvalDataset("t", (), (Passage("p00000", "Lilu (mythology)", "Lilu (mythology)\n\nA demon."), Passage("gdpr-art-5", "GDPR Article 5", "Principles.")))
    path = tmp_path / "corpus.jsonl"
    digest = write_corpus(d, path)
    assert write_corpus(d, path) == digest
    docs = load_documents(path).documents
    assert [(doc.doc_id, doc.title) for doc in docs] == [("p00000", "Lilu (mythology)"), ("gdpr-art-5", "GDPR Article 5")]
