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
    no_answers = config.model_copy(update={"answer": config.answer.model_copy(update={"precompute_sentences": False})})
    assert "sentences" in [s.name for s in derived_stages(no_answers)]  # the retrieval signal still needs it
    off = no_answers.model_copy(update={"retrieval": config.retrieval.model_copy(update={"weight_sentences": 0.0})})
    assert "sentences" not in [s.name for s in derived_stages(off)]


def test_an_extractive_answer_embeds_only_the_question(kb):
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(kb) as base:
        answer = base.ask("How much is the fine for an operator who fails to register an installation?", mode="hybrid")
        totals = base.tracker.totals
    assert not answer.abstained and answer.confidence is not None and answer.confidence >= base.config.answer.min_score
    assert totals.texts_embedded <= 1  # the question at most (another test may have asked it); every sentence was cached
    assert totals.embed_cache_hits > 5


def test_short_lines_and_repeats_are_not_indexed():
    from kgpipeline.derived.sentence_vectors import indexed_sentences

    text = "## Article 5\n\nAn operator shall pay EUR 50,000. An operator shall pay EUR 50,000.\n- (a) cattle;"
    assert indexed_sentences(text) == ["An operator shall pay EUR 50,000."]


def test_the_sentence_index_holds_each_chunk_sentence_under_its_chunk(kb):
    from kgpipeline.derived.sentence_vectors import indexed_sentences
    from spr.qa import KnowledgeBase
    from store.layout import KBLayout
    from store.vectors import VectorIndex
    from store.vocab import PKB

    index = VectorIndex.load(KBLayout(kb).index("sentences"))
    with KnowledgeBase.open(kb) as base:
        rows = base.store.select(f"SELECT ?c ?t WHERE {{ ?c <{PKB}text> ?t }}").rows
    expected = sorted(r["c"].value for r in rows for _ in indexed_sentences(r["t"].value))
    assert sorted(index.ids) == expected and len(index) > len(rows)


def test_the_sentence_signal_ranks_a_chunk_by_its_best_sentence(kb):
    from spr.qa import KnowledgeBase
    from spr.retrieval.registry import signals

    with KnowledgeBase.open(kb) as base:
        signal = next(s for s in signals(base) if s.name == "sentences")
        ranked = signal.rank("How much is the fine for an operator who fails to register an installation?", 5)
        texts = {e.chunk.iri: e.text for e in base.retriever("vector").retrieve("registration fine", 50)}
        sims = signal.similarities("How much is the fine for an operator who fails to register an installation?", [r.chunk for r in ranked])
    assert len({r.chunk for r in ranked}) == len(ranked) == 5  # distinct chunks, though each has several sentences
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)
    assert "fine" in texts.get(ranked[0].chunk, "").lower() or "EUR" in texts.get(ranked[0].chunk, "")
    assert all(abs(sims[r.chunk] - r.score) < 1e-5 for r in ranked)  # rank score = the best sentence's cosine


def test_a_kb_without_the_sentence_index_names_the_reindex(tmp_path):
    from core.errors import StoreError
    from spr.retrieval.vector import load_sentence_index

    with pytest.raises(StoreError, match="policykb reindex sentences"):
        load_sentence_index(tmp_path)


def test_hybrid_fuses_the_sentence_signal_when_weighted(kb):
    from core.config import load_config
    from spr.qa import KnowledgeBase

    config = load_config(kb_dir=kb)
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update={"weight_sentences": 1.0, "rescore": False})})
    with KnowledgeBase.open(config) as base:
        evidence = base.retriever("hybrid").retrieve("How much is the fine for an operator who fails to register an installation?", 3)
    assert evidence and any("sentences" in dict(e.ranks) for e in evidence)


def test_feedback_signal_moves_the_question_towards_the_first_stage(kb):
    from spr.qa import KnowledgeBase
    from spr.retrieval.fusion import Fused
    from spr.retrieval.registry import signals

    question = "How much is the fine for an operator who fails to register an installation?"
    with KnowledgeBase.open(kb) as base:
        sigs = {s.name: s for s in signals(base)}
        dense = sigs["dense"].rank(question, 5)
        prf = sigs["prf"]
        assert prf.rank(question, 5) == []  # no first stage to learn from: it abstains
        moved = prf.rank(question, 5, [Fused(r.chunk, r.score, (("dense", i),), ()) for i, r in enumerate(dense, 1)])
        far = prf.rank(question, 5, [Fused(r.chunk, r.score, (), ()) for r in sigs["dense"].rank("solar panels on rooftops", 3)])
    assert len(moved) == 5 and moved[0].chunk == dense[0].chunk  # feedback from its own top keeps the best chunk first
    assert [r.chunk for r in far] != [r.chunk for r in moved]  # other feedback moves the query elsewhere


def test_with_the_embedding_cache_off_the_stage_still_writes_the_index(kb, tmp_path):
    from core.embed import make_embedder
    from kgpipeline.derived.sentence_vectors import SentenceVectorStage
    from spr.qa import KnowledgeBase
    from store.layout import KBLayout
    from store.vectors import VectorIndex

    with KnowledgeBase.open(kb) as base:
        embedder = make_embedder(base.config.embed, None, cache=False)
        note = SentenceVectorStage(embedder).run(base.store, tmp_path)
    built = VectorIndex.load(KBLayout(tmp_path).index("sentences"))
    assert "cache off" in note
    assert built.ids == VectorIndex.load(KBLayout(kb).index("sentences")).ids


def test_the_items_of_an_inline_list_are_embedded_under_their_lead_in(kb, tmp_path):
    """An extractive answer quotes a long inline list by the items that answer (spr.lists.trim_inline),
    scoring each item read under its lead-in: the stage puts those readings in the cache too."""
    from pyoxigraph import Literal, NamedNode, Quad

    from core.cache import EmbeddingCache
    from core.embed import make_embedder
    from core.text import item_readings
    from kgpipeline.derived.sentence_vectors import SentenceVectorStage
    from spr.qa import KnowledgeBase
    from store.oxigraph_store import OxigraphStore
    from store.vocab import PKB

    inline = "The Fund shall not support: (a) nuclear power stations; (b) tobacco products; and (c) fossil fuels."
    store = OxigraphStore()
    store.add(Quad(NamedNode("https://example.org/chunk/1"), NamedNode(PKB + "text"), Literal(inline)))
    with KnowledgeBase.open(kb) as base:
        embedder = make_embedder(base.config.embed, tmp_path / "embed.sqlite")
    SentenceVectorStage(embedder).run(store, tmp_path)
    readings = item_readings(inline)
    assert readings[0] == "The Fund shall not support: (a) nuclear power stations;" and len(readings) == 3
    cached = EmbeddingCache(tmp_path / "embed.sqlite").get_many(embedder.model_id, [inline, *readings])
    assert set(cached) == {inline, *readings}
