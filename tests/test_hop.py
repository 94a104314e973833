"""The LLM hops (``[retrieval] llm_hops``): its prompt, how the two rounds merge, a down model, the
registry, and the whole path through a real KB with the real SmolLM2 GGUF. Whether a hop finds
more gold passages is an evaluation, not a test (bench/eval_retrieval.py --llm-hops, docs/retrieval.md "Optional LLM hops")."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from support.kbs import corpus_kb
from support.servers import free_port

from core.config import Config, RetrievalConfig
from core.llm import LLM, OpenAICompatLLM
from core.llm.base import Completion
from core.usage import Usage
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever
from spr.retrieval.hop import LLMHopRetriever, hop_messages, merge_rounds
from spr.retrieval.registry import _hybrid
from spr.retrieval.rerank import LLMReranker
from spr.retrieval.rescore import OfflineReranker


def chunk(i: int, ranks: tuple[tuple[str, int], ...] = ()) -> Evidence:
    text = f"passage {i}"
    return Evidence("chunk", text, 1.0 / i, "hybrid", chunk=ChunkRef(f"urn:chunk:{i}", "urn:doc", "Doc", 0, len(text), text), ranks=ranks)


class ByQuestion(Retriever):
    """A first stage whose ranking depends on the query: the chunks its words name, in order, then
    the rest. Records every query it was asked."""

    name = "hybrid"

    def __init__(self, n: int):
        self.chunks = [chunk(i, (("bm25", i),)) for i in range(1, n + 1)]
        self.queries: list[str] = []

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        self.queries.append(question)
        named = [int(w) for w in re.findall(r"\d+", question) if 0 < int(w) <= len(self.chunks)]
        order = [self.chunks[i - 1] for i in dict.fromkeys(named)] + [c for c in self.chunks if int(c.text.split()[1]) not in named]
        return Retrieval(tuple(order[:k]), Trace(note="first note", timings_ms={"hybrid": 1.0}))


class Says(LLM):
    """A model that writes ``replies`` in turn, the last one again after that (the hop's own logic
    is under test, not a model)."""

    def __init__(self, *replies: str):
        super().__init__("says")
        self.replies = list(replies)
        self.asked: list = []

    def _generate(self, request):
        self.asked.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return Completion(reply, Usage(), False, "says")


# --- pure parts --------------------------------------------------------------------------------


def test_messages_number_the_passages_cut_to_their_words():
    messages = hop_messages("  Who founded it? ", ["## Alpha\nA B C D E F", "G H"], words=3)
    assert messages[0]["role"] == "system" and "description" in messages[0]["content"]
    assert messages[1]["content"] == "Passages:\n[1] Alpha A B\n\n[2] G H\n\nQuestion: Who founded it?\nFacts:"


def test_merge_keeps_the_first_round_head_then_the_second_round_without_repeats():
    first = [chunk(1), chunk(2), chunk(3), chunk(4)]
    second = [chunk(7), chunk(1), chunk(3), chunk(8)]
    merged = merge_rounds(first, second, keep=2, k=5)
    assert [e.text for e in merged] == ["passage 1", "passage 2", "passage 7", "passage 3", "passage 8"]
    assert merged[0].ranks == () and merged[2].ranks == (("hop", 1),) and merged[3].ranks == (("hop", 3),)
    # a second round shorter than k: the first round fills up
    assert [e.text for e in merge_rounds(first, [chunk(9)], keep=1, k=4)] == ["passage 1", "passage 9", "passage 2", "passage 3"]
    assert [e.text for e in merge_rounds(first, second, keep=0, k=2)] == ["passage 7", "passage 1"]


def test_the_sentence_the_model_writes_is_the_second_query():
    first = ByQuestion(10)
    llm = Says("Passage 6 names 9.")
    got = LLMHopRetriever(first, llm, passages=3, keep=1).search("What about 2?", 4)
    assert first.queries == ["What about 2?", "What about 2? Passage 6 names 9."]
    assert "[1] passage 2\n\n[2] passage 1\n\n[3] passage 3" in llm.asked[0].messages[1][1]
    assert [e.text for e in got.evidence] == ["passage 2", "passage 6", "passage 9", "passage 1"]
    assert [e.ranks[-1] for e in got.evidence[1:]] == [("hop", 2), ("hop", 3), ("hop", 4)]  # 2 kept from round one
    assert got.trace.note == "first note; LLM hop: Passage 6 names 9."
    assert {"hybrid", "hop", "second round"} <= set(got.trace.timings_ms)


def test_a_second_hop_reads_the_new_ranking_and_searches_with_both_sentences():
    first = ByQuestion(10)
    llm = Says("Two leads to 5.", "Five leads to 8.")
    got = LLMHopRetriever(first, llm, hops=2, passages=2, keep=1).search("What about 2?", 4)
    assert first.queries == ["What about 2?", "What about 2? Two leads to 5.", "What about 2? Two leads to 5. Five leads to 8."]
    assert "[1] passage 2\n\n[2] passage 5" in llm.asked[1].messages[1][1]  # the hop's ranking, not the first round's
    assert [e.text for e in got.evidence] == ["passage 2", "passage 5", "passage 8", "passage 1"]
    assert got.trace.note == "first note; LLM hop 1: Two leads to 5.; LLM hop 2: Five leads to 8."
    assert {"second round", "round 3"} <= set(got.trace.timings_ms)


def test_an_empty_reply_keeps_the_first_round():
    first = ByQuestion(5)
    got = LLMHopRetriever(first, Says("   "), passages=2).search("What about 3?", 2)
    assert [e.text for e in got.evidence] == ["passage 3", "passage 1"] and len(first.queries) == 1
    assert got.trace.note == "first note; LLM hop: the model wrote nothing, first round kept"


def test_a_down_model_keeps_the_first_round_with_a_note():
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    llm = OpenAICompatLLM(url, "m", retries=0, timeout_s=2)
    first = ByQuestion(6)
    got = LLMHopRetriever(first, lambda: llm, passages=5).search("What about 4?", 3)
    assert [e.text for e in got.evidence] == ["passage 4", "passage 1", "passage 2"]
    assert got.trace.note == f"first note; LLM hop skipped, first round kept: LLM endpoint {url} unreachable after 0 retries: connection refused"


def test_bad_settings_are_refused():
    for bad in ({"passages": 0}, {"hops": 0}, {"keep": -1}):
        with pytest.raises(ValueError):
            LLMHopRetriever(ByQuestion(1), Says("x"), **bad)
    for bad in ({"llm_hop_passages": 21}, {"llm_hops": 4}):
        with pytest.raises(ValueError):
            RetrievalConfig(**bad)


def test_registry_wraps_hybrid_only_when_hops_are_on():
    config = Config()
    config.retrieval = RetrievalConfig(choices=False, bridges=False)  # the searches per option and bridge are tests/test_choices.py's and tests/test_bridges.py's
    services = SimpleNamespace(config=config, store=None, embedder=None, llm=Says("x"), language="en")
    assert isinstance(_hybrid(services), OfflineReranker)
    config.retrieval = RetrievalConfig(llm_hops=2, llm_hop_passages=4, llm_hop_keep=0, choices=False, bridges=False)
    hop = _hybrid(services)
    assert isinstance(hop, LLMHopRetriever) and isinstance(hop.inner, OfflineReranker)
    assert hop.name == "hybrid" and (hop.hops, hop.passages, hop.keep) == (2, 4, 0)
    config.retrieval = RetrievalConfig(llm_hops=1, rerank=True, choices=False, bridges=False)  # the reranker orders what the hop found
    both = _hybrid(services)
    assert isinstance(both, LLMReranker) and isinstance(both.inner, LLMHopRetriever)


# --- the whole path: a real KB, the real embedded model ----------------------------------------


@pytest.mark.slow
def test_a_kb_with_the_hop_on_asks_the_model_and_searches_twice(tmp_path_factory):
    from core.config import load_config
    from spr.qa import KnowledgeBase

    kb_dir = corpus_kb(tmp_path_factory)
    question = "What does the plan named in the Westmark notice on distributed photovoltaics aim for?"
    config = load_config(kb_dir=kb_dir)
    config.llm.cache = False
    with KnowledgeBase.open(config) as base:
        plain = base.retriever("hybrid").search(question, 5)
    config.retrieval.llm_hops = 1
    with KnowledgeBase.open(config) as base:
        hopped = base.retriever("hybrid").search(question, 5)
        answer = base.ask(question, mode="hybrid", k=5)
    sentence = hopped.trace.note.rsplit("LLM hop: ", 1)[1]
    assert sentence.strip() and hopped.trace.timings_ms["hop"] > 0
    assert hopped.evidence[0].key == plain.evidence[0].key  # the first round's best, kept
    assert len(hopped.evidence) == 5 and any(("hop", r) in e.ranks for e in hopped.evidence for r in range(1, 6))
    assert answer.evidence and answer.text
