"""The LLM reranker and the yes/no score under it, with the real SmolLM2 GGUF (in-process and behind
a real llama.cpp server). The first stage is a fixed candidate list: what is tested is the
reranking, not the fused retrieval (tests/test_fusion.py and the bench cover that)."""

from __future__ import annotations

import math
import subprocess
import sys
from types import SimpleNamespace

import pytest
from support.servers import free_port, stop, wait_http

from core.cache import ResponseCache
from core.config import Config, RetrievalConfig
from core.llm import LLM, LlamaCppLLM, OpenAICompatLLM, default_gguf_path
from core.llm.base import yes_share
from core.usage import UsageTracker
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever
from spr.retrieval.fusion import FusedRetriever
from spr.retrieval.registry import _hybrid
from spr.retrieval.rerank import LLMReranker, rerank_prompt
from spr.retrieval.rescore import OfflineReranker

QUESTION = "How long does a company have to notify a personal data breach to the supervisory authority?"
RELEVANT = (
    "The controller shall without undue delay and, where feasible, not later than 72 hours after having "
    "become aware of it, notify the personal data breach to the supervisory authority."
)
IN_FORCE = "This Regulation shall enter into force on the twentieth day following that of its publication in the Official Journal of the European Union."
UNRELATED = "Photosynthesis converts light energy into chemical energy in green plants."


class FixedRetriever(Retriever):
    """A first stage that always returns the same chunks, in order, as the fused stage would."""

    name = "hybrid"

    def __init__(self, texts: list[str]):
        self.evidence = tuple(
            Evidence(
                "chunk", t, 1.0 / i, "hybrid",
                chunk=ChunkRef(f"urn:chunk:{i}", "urn:doc", "Doc", 0, len(t), t),
                ranks=(("bm25", i),),
            )
            for i, t in enumerate(texts, 1)
        )
        self.asked: list[int] = []

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        self.asked.append(k)
        return Retrieval(self.evidence[:k], Trace(note="first note", timings_ms={"bm25": 1.0, "hybrid": 2.0}))


class NoLogprobsLLM(LLM):
    """A backend that can complete but not return log-probabilities (the base class default)."""

    def _generate(self, request):  # pragma: no cover - never called here
        raise AssertionError("not used")


@pytest.fixture(scope="module")
def smol() -> LlamaCppLLM:
    return LlamaCppLLM(cache=False)


# --- pure parts --------------------------------------------------------------------------------


def test_yes_share_sums_variants_and_defaults_to_half():
    logprobs = {" Yes": math.log(0.2), "yes": math.log(0.1), "YES": math.log(0.1), "No": math.log(0.1), " no": math.log(0.1)}
    assert yes_share(logprobs) == pytest.approx(0.4 / 0.6)
    assert yes_share({"The": -0.1, "I": -2.0}) == 0.5
    assert yes_share({"no": -0.5}) == 0.0 and yes_share({" yes": -3.0}) == 1.0


def test_prompt_cuts_the_passage_to_its_word_budget():
    prompt = rerank_prompt("Q?", " ".join(f"w{i}" for i in range(500)), max_words=300)
    assert prompt.startswith("Question: Q?\nPassage: w0 w1 ") and "w299 …" in prompt and "w300" not in prompt
    assert prompt.endswith("Does the passage help answer the question? Answer yes or no.")


def test_backend_without_logprobs_falls_back_with_a_note():
    first = FixedRetriever([IN_FORCE, RELEVANT])
    got = LLMReranker(first, NoLogprobsLLM("m"), top_n=2).search(QUESTION, 2)
    assert [e.text for e in got.evidence] == [IN_FORCE, RELEVANT]
    assert "rerank skipped" in got.trace.note and "cannot return token log-probabilities" in got.trace.note


def test_registry_wraps_hybrid_only_when_rerank_is_on(tmp_path):
    llm = NoLogprobsLLM("m")
    config = Config()
    services = SimpleNamespace(config=config, store=None, embedder=None, llm=llm, language="en")
    default = _hybrid(services).inner.inner  # the offline rescoring is on by default (inside the bridge and per-option searches), the LLM reranker is not
    assert isinstance(default, OfflineReranker) and isinstance(default.inner, FusedRetriever)
    config.retrieval = RetrievalConfig(rescore=False, choices=False, bridges=False)
    assert isinstance(_hybrid(services), FusedRetriever)
    config.retrieval = RetrievalConfig(rerank=True, rerank_top_n=7, choices=False, bridges=False)
    wrapped = _hybrid(services)
    assert isinstance(wrapped, LLMReranker) and isinstance(wrapped.inner, OfflineReranker)
    assert wrapped.name == "hybrid" and wrapped.top_n == 7
    with pytest.raises(ValueError):
        RetrievalConfig(rerank_top_n=51)


# --- a down endpoint ----------------------------------------------------------------------------


def test_down_model_keeps_first_stage_order_with_a_note():
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    llm = OpenAICompatLLM(url, "m", retries=0, timeout_s=2)
    first = FixedRetriever([IN_FORCE, UNRELATED, RELEVANT])
    got = LLMReranker(first, lambda: llm, top_n=3).search(QUESTION, 2)
    assert first.asked == [3]
    assert [e.text for e in got.evidence] == [IN_FORCE, UNRELATED]
    assert all(e.ranks == (("bm25", i),) for i, e in enumerate(got.evidence, 1))
    assert got.trace.note == f"first note; rerank skipped, first-stage order kept: LLM endpoint {url} unreachable after 0 retries: connection refused"
    assert {"bm25", "hybrid", "rerank"} <= set(got.trace.timings_ms)


# --- the embedded model ------------------------------------------------------------------------


@pytest.mark.slow
def test_yes_probability_prefers_the_relevant_passage(smol):
    relevant = smol.yes_probability(rerank_prompt(QUESTION, RELEVANT))
    unrelated = smol.yes_probability(rerank_prompt(QUESTION, UNRELATED))
    assert 0.0 <= unrelated < relevant <= 1.0
    assert relevant > 2 * unrelated  # SmolLM2-135M: ~0.16 against ~0.04


@pytest.mark.slow
def test_yes_probability_is_cached(tmp_path):
    tracker = UsageTracker()
    llm = LlamaCppLLM(cache=ResponseCache(tmp_path / "llm.sqlite"), tracker=tracker)
    prompt = rerank_prompt("What is the capital of France?", "Paris is the capital of France.")
    first, second = llm.yes_probability(prompt), llm.yes_probability(prompt)
    assert first == second
    t = tracker.totals
    assert (t.calls, t.cache_hits) == (1, 1) and t.usage.prompt_tokens > 20 and t.usage.completion_tokens == 1


@pytest.mark.slow
def test_reranker_reorders_and_appends_rerank_ranks(smol):
    first = FixedRetriever([IN_FORCE, UNRELATED, RELEVANT])
    reranker = LLMReranker(first, smol, top_n=3)
    got = reranker.search(QUESTION, 2)
    assert first.asked == [3]  # top_n candidates, though k is 2
    assert [e.text for e in got.evidence] == [RELEVANT, IN_FORCE]
    assert [e.ranks for e in got.evidence] == [(("bm25", 3), ("rerank", 1)), (("bm25", 1), ("rerank", 2))]
    assert got.evidence[0].score == pytest.approx(smol.yes_probability(rerank_prompt(QUESTION, RELEVANT)))
    assert got.evidence[0].score > got.evidence[1].score
    assert got.trace.note == "first note" and got.trace.timings_ms["rerank"] > 0
    assert "hybrid" in got.trace.timings_ms


# --- the same model behind a real llama.cpp server (the OpenAI-compatible path) ------------------


@pytest.mark.slow
def test_openai_compat_yes_probability_matches_the_embedded_model(smol, tmp_path):
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(default_gguf_path()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/v1/models", proc, timeout=90)
        remote = OpenAICompatLLM(f"http://127.0.0.1:{port}/v1", "smollm2", retries=0)
        prompt = rerank_prompt(QUESTION, RELEVANT)
        assert remote.yes_probability(prompt) == pytest.approx(smol.yes_probability(prompt), abs=0.02)
        assert remote.tracker.totals.usage.completion_tokens == 1
    finally:
        stop(proc)
        log.close()
