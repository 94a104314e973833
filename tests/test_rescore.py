"""Offline rescoring of the fused stage (``[retrieval] rescore``) on the example corpus KB built by
the real pipeline: the real embedder's stored chunk vectors and the real word overlap."""

from __future__ import annotations

import shutil

import pytest
from support.kbs import corpus_kb

from core.config import load_config
from spr.qa import KnowledgeBase
from spr.records import ChunkRef, Evidence
from spr.retrieval.base import Retriever
from spr.retrieval.rescore import LINK, NAMED, OfflineReranker, follow_references, offline_scores
from store.entity_graph import words
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


def test_next_hops_are_the_best_chunk_of_each_document_the_first_names():
    named = {"head text": ["doc:a", "doc:b", "doc:c"]}.get
    documents = ["doc:a", "doc:b", "doc:b", "doc:c", "doc:d"]
    texts = ["head text", "b1", "b2", "c1", "d1"]
    scores = [0.9, 0.3, 0.5, 0.85, 0.6]
    new, order, hops = follow_references(documents, texts, scores, lambda t: named(t, []), 0.2)
    assert hops == {2, 3}  # doc:b's better chunk and doc:c's; not the first's own document, not doc:b twice
    assert new == pytest.approx([0.9, 0.3, 0.7, 0.9, 0.6])  # doc:c's hop is capped at the first's score
    assert order == [0, 3, 2, 4, 1]  # the first stays first
    plain = ([0.9, 0.3, 0.5, 0.85, 0.6], [0, 3, 4, 2, 1], set())
    assert follow_references(documents, texts, scores, None, 0.2) == plain
    assert follow_references(documents, texts, scores, lambda t: named(t, []), 0.0) == plain


# On the example corpus a Westmark notice names the National Solar Plan, a plan names the
# Renewable Energy Act, ...: cross-references by title.
LINKED = (
    "Which law sets the feed-in tariff for distributed photovoltaics in Westmark?",
    "What does the National Solar Plan require from grid operators?",
    "Who runs the National Energy Monitoring Center?",
    PENALTY,
)


def test_hybrid_lifts_the_documents_its_first_passage_names(kb_dir):
    with KnowledgeBase.open(_rescoring(kb_dir, rescore_link_bonus=0.0)) as kb:
        before = {q: kb.retriever("hybrid").search(q, 10).evidence for q in LINKED}
    with KnowledgeBase.open(_rescoring(kb_dir)) as kb:
        after = {q: kb.retriever("hybrid").search(q, 10).evidence for q in LINKED}
    assert not any(name == LINK for evidence in before.values() for e in evidence for name, _ in e.ranks)
    lifted = 0
    for q, evidence in after.items():
        first = evidence[0]
        for position, e in enumerate(evidence):
            if (LINK, 1) not in e.ranks:
                continue
            lifted += 1
            assert e.chunk.document != first.chunk.document
            title = words(e.chunk.title)
            text = words(first.text)
            assert any(text[i : i + len(title)] == title for i in range(len(text)))  # the first passage names it
            earlier = [x.chunk.iri for x in before[q]]
            assert e.chunk.iri not in earlier or position <= earlier.index(e.chunk.iri)  # never lower than before
    assert lifted >= 2


class _Ranked(Retriever):
    """A first stage that returns given evidence in the given order (the reranker is under test)."""

    name = "hybrid"

    def __init__(self, evidence):
        self.evidence = evidence

    def retrieve(self, question, k):
        return list(self.evidence[:k])


def test_the_rescoring_reads_the_heading_path_over_the_text():
    """A plan's table says its country only in its title: the words of the question are there all the same."""
    text = "Table 2.3. Share of renewables in gross final energy consumption in 2030: 42 %."
    chunks = [ChunkRef(f"urn:c{i}", f"urn:d{i}", title, 0, len(text), text, heading_path=title)
              for i, title in enumerate(["Germany_National Objectives and Targets", "Spain_National Objectives and Targets"])]  # fmt: skip
    first = [Evidence(kind="chunk", text=text, score=1.0, source="hybrid", chunk=c) for c in chunks]
    reranker = OfflineReranker(_Ranked(first), None, top_n=2)
    ranked = reranker.search("What share of Spain's final energy will renewables cover in 2030?", 2).evidence
    assert [e.chunk.title for e in ranked][0].startswith("Spain")
    assert ranked[0].score > ranked[1].score


def test_a_candidate_of_a_document_the_question_names_gains_the_named_bonus():
    """"What currency predated the Euro in the country Signmark is from?": Signmark's own passage
    shares one word with the question, yet it is the first hop."""
    texts = {"urn:euro": "The euro replaced national currencies such as the Finnish markka in 2002.",
             "urn:signmark": "Signmark is a Finnish rapper who competed in Finland's qualification.",
             "urn:peseta": "The peseta was the currency of Spain before the euro."}  # fmt: skip
    first = [
        Evidence(kind="chunk", text=t, score=1.0, source="hybrid", chunk=ChunkRef(iri, iri + "-doc", iri[4:], 0, len(t), t))
        for iri, t in texts.items()
    ]
    question = "What currency predated the Euro in the country Signmark is from?"
    names = {question: {"urn:signmark-doc"}}  # the documents each text names by their title

    def ranked(bonus: float) -> list:
        reranker = OfflineReranker(_Ranked(first), None, top_n=3, named_by=lambda t: names.get(t, set()), named_bonus=bonus)
        return list(reranker.search(question, 3).evidence)

    plain, named = ranked(0.0), ranked(0.5)
    position = {e.chunk.iri: i for i, e in enumerate(plain)}
    assert position["urn:signmark"] > 0 and all((NAMED, 1) not in e.ranks for e in plain)
    assert named[0].chunk.iri == "urn:signmark" and (NAMED, 1) in named[0].ranks
    assert all((NAMED, 1) not in e.ranks for e in named[1:]) and all(0.0 <= e.score <= 1.0 for e in named)
    assert [e.chunk.iri for e in named[1:]] == [e.chunk.iri for e in plain if e.chunk.iri != "urn:signmark"]


def test_hybrid_lifts_the_document_the_question_names(kb_dir):
    question = "What does the National Solar Plan 2025-2030 require from grid operators?"
    with KnowledgeBase.open(_rescoring(kb_dir, rescore_named_bonus=0.0)) as kb:
        before = kb.retriever("hybrid").search(question, 10).evidence
    with KnowledgeBase.open(_rescoring(kb_dir, rescore_named_bonus=0.5)) as kb:
        after = kb.retriever("hybrid").search(question, 10).evidence
    assert not any((NAMED, 1) in e.ranks for e in before)
    lifted = [e for e in after if (NAMED, 1) in e.ranks]
    assert lifted and all(e.chunk.title == "National Solar Plan 2025-2030" for e in lifted)
    assert after[0].chunk.title == "National Solar Plan 2025-2030"
    earlier = [e.chunk.iri for e in before]
    assert all(e.chunk.iri not in earlier or i <= earlier.index(e.chunk.iri) for i, e in enumerate(after) if e in lifted)


def test_a_document_the_first_names_is_pulled_in_when_no_candidate_is_from_it():
    """"What kind of university did the author of Alexander and the Terrible, … attend?": the book's
    passage names Judith Viorst, whose passage the first stage did not find."""
    def chunk(iri: str, text: str, score: float) -> Evidence:
        return Evidence(kind="chunk", text=text, score=score, source="hybrid", chunk=ChunkRef(iri, iri + "-doc", iri[4:], 0, len(text), text))

    first = [chunk("urn:book", "Alexander and the Terrible Day is a children's book written by Judith Viorst.", 1.0),
             chunk("urn:other", "A university of the land-grant kind teaches agriculture.", 0.9)]  # fmt: skip
    viorst = chunk("urn:viorst", "Viorst is a graduate of Rutgers University in Newark.", 0.35)
    asked: list = []

    def pull(question, documents):
        asked.append(sorted(documents))
        return [viorst] if "urn:viorst-doc" in documents else []

    def named_by(text):
        return {"urn:viorst-doc", "urn:book-doc"} if "Judith Viorst" in text else set()

    question = "What kind of university did the author of Alexander and the Terrible Day attend?"
    plain = OfflineReranker(_Ranked(first), None, top_n=2, named_by=named_by, link_bonus=0.1).search(question, 3).evidence
    pulled = OfflineReranker(_Ranked(first), None, top_n=2, named_by=named_by, link_bonus=0.1, pull=pull).search(question, 3).evidence
    assert [e.chunk.iri for e in plain] == ["urn:book", "urn:other"]
    assert asked == [["urn:viorst-doc"]]  # only a named document that no candidate is from (not the first's own)
    assert [e.chunk.iri for e in pulled][0] == "urn:book" and "urn:viorst" in [e.chunk.iri for e in pulled]
    hop = next(e for e in pulled if e.chunk.iri == "urn:viorst")
    assert (LINK, 1) in hop.ranks and hop.ranks[0][0] == "rescore"  # no first-stage rank: it was pulled
    assert 0.0 <= hop.score <= pulled[0].score


def test_hybrid_pulls_in_the_document_its_first_passage_names(kb_dir):
    """With two candidates, the Monitoring Center's decision names the National Solar Plan
    2025-2030, which then has no candidate: it is pulled in."""
    question = "What does the National Energy Monitoring Center collect data on?"
    with KnowledgeBase.open(_rescoring(kb_dir, rescore_top_n=2, rescore_pull=False)) as kb:
        before = kb.retriever("hybrid").search(question, 2).evidence
    with KnowledgeBase.open(_rescoring(kb_dir, rescore_top_n=2)) as kb:
        after = kb.retriever("hybrid").search(question, 3).evidence
    assert before[0].chunk.title.startswith("Decision on the Establishment")
    assert "National Solar Plan 2025-2030" in before[0].text
    assert all(e.chunk.title != "National Solar Plan 2025-2030" for e in before)
    pulled = [e for e in after if e.chunk.title == "National Solar Plan 2025-2030"]
    assert pulled and (LINK, 1) in pulled[0].ranks and after[0].chunk.iri == before[0].chunk.iri
    assert pulled[0].chunk.heading_path  # evidence as the fused stage makes it: heading path, offsets
    assert pulled[0].text in pulled[0].chunk.text or pulled[0].chunk.text in pulled[0].text


def test_a_long_unit_is_scored_by_its_best_sentence_a_short_one_by_its_window():
    """A law article's window vector blurs the one provision asked about; a short paragraph's best
    sentence would only favour length (``[retrieval] rescore_sentence_words``)."""
    texts = {"urn:article": "Member States shall report. " * 10 + "The fee is EUR 50.", "urn:short": "The fee is EUR 40. It is paid yearly."}
    first = [
        Evidence(kind="chunk", text=t, score=1.0, source="hybrid", chunk=ChunkRef(iri, iri + "-doc", "Act", 0, len(t), t))
        for iri, t in texts.items()
    ]
    window = {"urn:article": 0.3, "urn:short": 0.6}
    sentence = {"urn:article": 0.9, "urn:short": 0.95}
    asked: list[list[str]] = []

    def sentence_cosines(question, chunks):
        asked.append(list(chunks))
        return {c: sentence[c] for c in chunks}

    def ranked(words: int) -> list[str]:
        reranker = OfflineReranker(
            _Ranked(first), lambda q, chunks: {c: window[c] for c in chunks}, top_n=2, dense_weight=1.0,
            sentence_cosines=sentence_cosines, sentence_words=words,
        )
        return [e.chunk.iri for e in reranker.search("What is the fee?", 2).evidence]

    assert ranked(10**6) == ["urn:short", "urn:article"] and asked == []  # no unit is long: windows only
    assert ranked(20) == ["urn:article", "urn:short"] and asked == [["urn:article"]]  # 45 words > 20; the short one keeps 0.6
    assert ranked(0) == ["urn:short", "urn:article"]  # every unit by its best sentence: 0.95 > 0.9


def test_without_sentence_vectors_long_units_keep_their_window_cosines(kb_dir, tmp_path):
    copy = tmp_path / "kb"
    shutil.copytree(kb_dir, copy)
    shutil.rmtree(KBLayout(copy).index("sentences"))

    def scores(words: int) -> list[tuple[str, float]]:
        config = _rescoring(copy, weight_sentences=0.0, rescore_sentence_words=words)  # the sentence signal needs the index too
        with KnowledgeBase.open(config) as kb:
            result = kb.retriever("hybrid").search(PENALTY, 3)
        assert "word overlap only" not in result.trace.note
        return [(e.chunk.iri, e.score) for e in result.evidence]

    assert scores(0) == scores(10**6)


def test_hybrid_scores_long_units_by_their_best_sentence(kb_dir):
    def scores(words: int) -> dict[str, float]:
        with KnowledgeBase.open(_rescoring(kb_dir, rescore_sentence_words=words)) as kb:
            return {e.chunk.iri: e.score for e in kb.retriever("hybrid").search(PENALTY, 5).evidence}

    windows, sentences = scores(10**6), scores(0)
    shared = windows.keys() & sentences.keys()
    assert shared and all(sentences[c] >= windows[c] for c in shared)  # the best of window and sentence, never less
    assert any(sentences[c] > windows[c] for c in shared)
