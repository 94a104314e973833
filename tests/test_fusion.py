"""The fused text stage (mode ``hybrid``), its signals, retrieval units, and ``dual``'s fact gate —
on the example corpus ingested by the real pipeline (every derived index built)."""

from __future__ import annotations

import shutil

import pytest
from support.kbs import corpus_kb

from core.text import reading_text, word_windows
from spr.qa import KnowledgeBase
from spr.records import Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever
from spr.retrieval.dual import DualRetriever
from spr.retrieval.fusion import Ranked, reciprocal_rank_fusion
from store.units import heading_paths, read_units

PENALTY = "What fine must an operator pay who fails to register an installation?"


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    return corpus_kb(tmp_path_factory)


@pytest.fixture(scope="module")
def kb(kb_dir):
    with KnowledgeBase.open(kb_dir) as opened:
        yield opened


def test_rrf_weights_and_ties():
    a = [Ranked("x", 3.0), Ranked("y", 2.0)]
    b = [Ranked("y", 0.9), Ranked("x", 0.8)]
    # equal weights: x and y tie on score and signals -> IRI order decides, deterministically
    fused = reciprocal_rank_fusion({"a": a, "b": b}, {"a": 1.0, "b": 1.0}, 60)
    assert [f.chunk for f in fused] == ["x", "y"]
    # a heavier second signal puts its first choice first; a zero weight removes a signal
    assert reciprocal_rank_fusion({"a": a, "b": b}, {"a": 1.0, "b": 2.0}, 60)[0].chunk == "y"
    only_a = reciprocal_rank_fusion({"a": a, "b": b}, {"a": 1.0, "b": 0.0}, 60)
    assert [f.ranks for f in only_a] == [(("a", 1),), (("a", 2),)]


def test_reading_text_and_windows():
    assert reading_text("#### Article 1 ##### Subject matter ([^E0001])") == "Article 1 Subject matter"
    assert reading_text("C# and #1 stay") == "C# and #1 stay"
    # regression: EUR-Lex and German law exports label footnotes with up to 40 characters
    assert reading_text("the Council [^ntr14-L_2021172EN.01005301-E0014].") == "the Council."
    assert reading_text("gilt [^F807051_1_BJNR197010005BJNE005007118] ab") == "gilt ab"
    assert reading_text("[^E0001]: OJ L 243, 9.7.2021") == "[^E0001]: OJ L 243, 9.7.2021"  # the footnote itself stays
    words = " ".join(f"w{i}" for i in range(100))
    windows = word_windows(words, 40, 10)
    assert windows[0].split()[0] == "w0" and windows[-1].split()[-1] == "w99"  # the tail is not lost
    assert all(len(w.split()) <= 40 for w in windows)
    with pytest.raises(ValueError):
        word_windows(words, 10, 10)


def test_units_carry_heading_paths(kb):
    units = {u.iri: u for u in read_units(kb.store)}
    penalty = [u for u in units.values() if "Article 5 Penalties" in u.heading_path]
    assert penalty, "the Renewable Energy Act's Article 5 has a heading path"
    unit = penalty[0]
    assert unit.path[0] == "Renewable Energy Act of 2024" and "Chapter III Enforcement" in unit.path
    assert "#" not in unit.index_text.split("\n", 1)[0]
    assert heading_paths(kb.store, [unit.iri]) == {unit.iri: unit.heading_path}


def test_hybrid_finds_the_penalty_article_and_says_by_which_signals(kb):
    result = kb.retriever("hybrid").search(PENALTY, 3)
    top = result.evidence[0]
    assert "50,000" in top.text
    assert "Article 5 Penalties" in top.chunk.heading_path
    names = {name for name, _ in top.ranks}
    assert {"bm25", "dense"} <= names, top.ranks
    assert all(rank >= 1 for _, rank in top.ranks)
    timings = set(result.trace.timings_ms)
    assert {"bm25", "dense", "graph", "hybrid"} <= timings
    assert "questions" not in timings  # weight 0 by default: the signal is not run


def test_weights_come_from_the_config(kb):
    from spr.retrieval.fusion import FusedRetriever
    from spr.retrieval.registry import signals

    only_bank = FusedRetriever(kb.store, signals(kb), {"questions": 1.0}, rrf_k=60, depth=10)
    evidence = only_bank.retrieve(PENALTY, 3)
    assert evidence and all(dict(e.ranks).keys() == {"questions"} for e in evidence)
    assert evidence[0].matched, "the latent questions that voted are kept"


def test_single_signal_modes(kb):
    for mode, signal in (("bm25", "bm25"), ("vector", "dense")):
        evidence = kb.retriever(mode).retrieve(PENALTY, 2)
        assert evidence and evidence[0].source == mode
        assert evidence[0].ranks == ((signal, 1),)


def test_graph_signal_seeds_from_named_entities(kb):
    from spr.retrieval.registry import signals

    graph = next(s for s in signals(kb) if s.name == "graph")
    ranked = graph.rank("What does the Renewable Energy Act of 2024 require?", 5)
    assert ranked and all(r.score > 0 for r in ranked)
    assert graph.rank("zzzz qqqq", 5) == []  # no entity named: the signal abstains


def test_a_missing_index_leaves_the_other_signals(kb_dir, tmp_path):
    copy = tmp_path / "kb"
    shutil.copytree(kb_dir, copy)
    shutil.rmtree(copy / "indexes" / "bm25")
    with KnowledgeBase.open(copy) as kb:
        result = kb.retriever("hybrid").search(PENALTY, 3)
    assert result.evidence and "reindex bm25" in result.trace.note
    assert all("bm25" not in dict(e.ranks) for e in result.evidence)


def test_words_lead_where_the_embedder_cannot_read_the_documents(kb_dir):
    """An English KB read by an embedder declared German-only stands in for German laws read by an
    English embedder: BM25 takes the embedding signals' weight, no cosine rescoring, and the trace
    says why."""
    from core.config import load_config
    from spr.retrieval.fusion import FusedRetriever, words_lead
    from spr.retrieval.rescore import OfflineReranker

    config = load_config(kb_dir=kb_dir)
    assert config.embed.reads("en") and not config.embed.reads("de")
    with KnowledgeBase.open(kb_dir) as native:
        assert isinstance(native.retriever("hybrid").inner.inner, OfflineReranker)  # inside the bridge and per-option searches
    foreign = config.model_copy(update={"embed": config.embed.model_copy(update={"languages": "de, fr"})})
    with KnowledgeBase.open(foreign) as kb:
        assert kb.language == "en"
        retriever = kb.retriever("hybrid").inner.inner
        assert isinstance(retriever, FusedRetriever)
        assert retriever.weights == words_lead(config.retrieval.weights) != config.retrieval.weights
        assert retriever.weights["bm25"] > retriever.weights["dense"]
        result = retriever.search(PENALTY, 3)
    assert "documents in English, which the embedder was not trained on: BM25 leads" in result.trace.note
    assert result.evidence and all("rescore" not in dict(e.ranks) for e in result.evidence)
    assert dict(result.evidence[0].ranks).get("bm25") == 1
    assert words_lead({"dense": 1.0}) == {"dense": 1.0} and words_lead({"bm25": 1.0, "dense": 0.5}) == {"bm25": 1.0, "dense": 0.5}


class _Fixed(Retriever):
    def __init__(self, name: str, evidence: tuple[Evidence, ...]):
        self.name = name
        self.evidence = evidence

    def retrieve(self, question, k):
        return list(self.evidence)

    def search(self, question, k):
        return Retrieval(self.evidence, Trace(answers=("x",), timings_ms={self.name: 1.0}))


def test_dual_withholds_facts_below_the_confidence_threshold(kb):
    text = kb.retriever("hybrid")
    fact = Evidence("triple", "A supports B.", 1.0, "spr", confidence=0.3)
    weak = DualRetriever(_Fixed("spr", (fact,)), text, min_confidence=0.5).search(PENALTY, 3)
    assert [e.kind for e in weak.evidence] == ["chunk"] * 3
    assert "withheld" in weak.trace.note and weak.trace.answers == ()
    strong = DualRetriever(_Fixed("spr", (fact,)), text, min_confidence=0.2).search(PENALTY, 3)
    assert [e.kind for e in strong.evidence] == ["triple", "chunk", "chunk", "chunk"]
    # never fewer or other passages than the text stage alone
    assert [e.key for e in strong.evidence[1:]] == [e.key for e in text.search(PENALTY, 3).evidence]


def test_spr_facts_carry_a_confidence(kb):
    evidence = kb.retriever("spr").retrieve("Who supports rooftop photovoltaic projects?", 3)
    assert evidence, "the rule parser answers this question on the example corpus"
    assert all(e.confidence is not None and 0.0 <= e.confidence <= 1.0 for e in evidence)


def test_long_units_are_windowed_within_the_embedders_limit(kb):
    """German compounds tokenize into many more pieces per word than English: the windows are cut
    again until every one fits, and together they cover the whole text (no lost tail)."""
    from kgpipeline.derived.chunk_vectors import ChunkVectorStage, window_words

    embedder = kb.embedder
    text = " ".join(["Die Bundesnetzagentur überwacht die Einhaltung der Netzentgeltverordnung und "
                     "Kraft-Wärme-Kopplungsanlagen im Übertragungsnetzbetreibergebiet."] * 60) + " ENDE"
    stage = ChunkVectorStage(embedder, overlap=0.2)
    windows = stage._windows(text, window_words(embedder.max_tokens))
    assert len(windows) > 1
    assert max(embedder.token_counts(windows)) <= embedder.max_tokens
    assert windows[-1].endswith("ENDE")


def test_an_index_from_another_embedder_is_named_not_a_shape_error(kb_dir, tmp_path):
    from core.errors import StoreError

    copy = tmp_path / "kb"
    shutil.copytree(kb_dir, copy)
    (copy / "policykb.toml").write_text('[embed]\nmodel = "all-mpnet-base-v2"\n', encoding="utf-8")
    with KnowledgeBase.open(copy) as other:
        other.config.embed.model = "all-mpnet-base-v2"
        with pytest.raises(StoreError, match="reindex chunks"):
            other.retriever("vector").retrieve(PENALTY, 3)
