"""Offline rescoring of the fused stage (``[retrieval] rescore``) on the example corpus KB built by
the real pipeline: the real embedder's stored chunk vectors and the real word overlap."""

from __future__ import annotations

import shutil

import pytest
from support.kbs import corpus_kb

from core.config import load_config
from spr.qa import KnowledgeBase
from spr.retrieval.rescore import OfflineReranker, offline_scores
from store.layout import KBLayout

PENALTY = "What fine must an operator pay who fails to register an installation?"


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    return corpus_kb(tmp_path_factory)


def _rescoring(kb_dir, **update):
    config = load_config(kb_dir=kb_dir)
    return config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"rescore": True, **update})})


def test_scores_weigh_cosine_and_overlap():
    assert offline_scores("fine for operators", ["fine for operators", "x"], [None, None], 0.7) == [1.0, 0.0]
    dense_only = offline_scores("a b", ["c", "d"], [0.9, -0.2], 1.0)
    assert dense_only == [0.9, 0.0]  # a negative cosine counts as no match


def test_hybrid_rescored_keeps_first_stage_ranks_and_orders_by_score(kb_dir):
    with KnowledgeBase.open(_rescoring(kb_dir, rescore_top_n=10)) as kb:
        result = kb.retriever("hybrid").search(PENALTY, 3)
    assert len(result.evidence) == 3
    assert all(e.ranks[-1][0] == "rescore" for e in result.evidence)
    assert all(any(name in ("bm25", "dense", "graph") for name, _ in e.ranks[:-1]) for e in result.evidence)
    scores = [e.score for e in result.evidence]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert "Penalties" in result.evidence[0].chunk.heading_path
    assert "rescore" in result.trace.timings_ms
    with KnowledgeBase.open(_rescoring(kb_dir)) as kb:  # dual's passages are the rescored ones
        dual = kb.retriever("dual").search(PENALTY, 3)
    assert [e.chunk.iri for e in dual.evidence if e.chunk] == [e.chunk.iri for e in result.evidence]


def test_without_chunk_vectors_it_falls_back_to_word_overlap(kb_dir, tmp_path):
    copy = tmp_path / "kb"
    shutil.copytree(kb_dir, copy)
    shutil.rmtree(KBLayout(copy).index("chunks"))
    config = _rescoring(copy, weight_dense=0.0)  # the dense signal needs the index too
    with KnowledgeBase.open(config) as kb:
        result = kb.retriever("hybrid").search(PENALTY, 3)
    assert result.evidence and "word overlap only" in result.trace.note


def test_top_n_must_be_positive(kb_dir):
    with KnowledgeBase.open(kb_dir) as kb, pytest.raises(ValueError):
        OfflineReranker(kb.retriever("vector"), None, top_n=0)
