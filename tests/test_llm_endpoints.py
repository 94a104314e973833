"""The model layer's OpenAI-compatible client: against a real llama.cpp server (``llama_cpp.server``
with the SmolLM2 GGUF), and its failure paths — an endpoint that is down, misconfigured, or
misbehaving. The only fake is a tiny HTTP server standing in for a misbehaving endpoint (non-JSON
output, 429/503 answers, streams that break off), which no real server produces on demand.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.models import ASK_TRIPLE, TRIPLE
from support.servers import free_port, stop, wait_http

from core.cache import ResponseCache
from core.config import LLMConfig
from core.errors import ConfigError, ModelError, ModelNotFoundError, ModelOutputError, ModelUnavailableError
from core.llm import (
    OpenAICompatLLM,
    default_gguf_path,
    make_llm,
)
from core.usage import Usage, UsageTracker
from store.layout import KBLayout

# --- OpenAI-compatible: a real llama.cpp server --------------------------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """A real llama-cpp-python server on a free port, serving the SmolLM2 GGUF; always stopped."""
    port = free_port()
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
        try:
            wait_http(base_url + "/models", proc, timeout=90)
        except RuntimeError as exc:
            fail(str(exc))
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
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
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
