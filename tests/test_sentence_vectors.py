"""Derived stage "sentences": chunk sentences are embedded at ingest, so an extractive answer embeds
only the question. Real pipeline, real store, the test embedder (MiniLM)."""

from __future__ import annotations

import pytest

from kgpipeline.derived.sentence_vectors import chunk_sentences
from kgpipeline.pipeline import STAGES, derived_stages
from spr.fuse import sentences


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    from support.kbs import corpus_kb

    return corpus_kb(tmp_path_factory)


def test_the_stage_cuts_sentences_as_the_answer_side_does():
    text = "## Article 5\n\nAn operator shall pay EUR 50,000. The Bureau decides.\n- a list item"
    assert chunk_sentences(text) == [s.text for s in sentences(text)]


def test_stage_runs_after_bm25_and_can_be_turned_off():
    from core.config import Config

    assert list(STAGES).index("sentences") > list(STAGES).index("bm25")
    config = Config()
    assert "sentences" in [s.name for s in derived_stages(config)]
    off = config.model_copy(update={"answer": config.answer.model_copy(update={"precompute_sentences": False})})
    assert "sentences" not in [s.name for s in derived_stages(off)]


def test_an_extractive_answer_embeds_only_the_question(kb):
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(kb) as base:
        answer = base.ask("How much is the fine for an operator who fails to register an installation?", mode="hybrid")
        totals = base.tracker.totals
    assert not answer.abstained and answer.confidence is not None and answer.confidence >= base.config.answer.min_score
    assert totals.texts_embedded <= 1  # the question at most (another test may have asked it); every sentence was cached
    assert totals.embed_cache_hits > 5
