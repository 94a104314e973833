"""The QA API of `policykb serve` (POST /ask, POST /ask/stream) on a KB ingested from examples/corpus/.

The server and its KB are session-scoped (the ``ask_server`` fixture in conftest.py): the browser
test (test_web_browser.py) asks the same server, so the corpus is ingested and the models are
loaded once per test run.
"""

from __future__ import annotations

import json

import httpx
import pytest
from support.kbs import QUESTION

from policykb.server.app import AnswerOut


def sparql_ask(server: str, query: str) -> bool:
    response = httpx.post(
        f"{server}/sparql", data={"query": query}, headers={"Accept": "application/sparql-results+json"}
    )
    assert response.status_code == 200, response.text
    return response.json()["boolean"]


def test_ask_returns_a_cited_answer_backed_by_the_store(ask_server):
    response = httpx.post(f"{ask_server}/ask", json={"question": QUESTION, "answer": "extractive"}, timeout=180)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["question"] == QUESTION and answer["kind"] == "extractive"
    assert answer["text"] and not answer["abstained"]
    assert answer["citations"], answer
    for citation in answer["citations"]:
        # Each quote is verbatim from its chunk as the store holds it: check through /sparql.
        quote = citation["quote"].replace("\\", "\\\\").replace('"', '\\"')
        assert sparql_ask(ask_server, f'ASK {{ <{citation["chunk"]}> pkb:text ?t FILTER(CONTAINS(?t, "{quote}")) }}')
        assert f"[{citation['id']}]" in answer["text"]
    # dual admits facts only at full confidence; the structured mode shows what the store backs
    facts = httpx.post(f"{ask_server}/ask", json={"question": QUESTION, "mode": "spr"}, timeout=180).json()
    assert facts["triples"], "the structured retriever found no facts"
    for fact in facts["triples"]:
        obj = f'?o FILTER(STR(?o) = "{fact["object"]}")' if fact["object_is_literal"] else f"<{fact['object']}>"
        assert sparql_ask(ask_server, f"ASK {{ <{fact['subject']}> <{fact['predicate']}> {obj} }}")
    assert answer["timings_ms"]["total"] > 0


def test_ask_options_and_health(ask_server):
    options = httpx.get(f"{ask_server}/ask/options").json()
    assert "dual" in options["modes"] and options["default_mode"] in options["modes"]
    assert options["answers"] == ["extractive", "llm"]
    health = httpx.get(f"{ask_server}/health").json()
    assert health["status"] == "ok" and health["store"]["quads"] > 1000
    assert health["updates_enabled"] is False


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"question": ""}, 422, "bad_request"),
        ({"question": QUESTION, "answer": "poem"}, 422, "bad_request"),
        ({"question": QUESTION, "colour": "red"}, 422, "bad_request"),
        ({"question": QUESTION, "mode": "telepathy"}, 400, "bad_input"),
    ],
)
def test_ask_rejects_bad_requests_as_json(ask_server, body, status, error):
    response = httpx.post(f"{ask_server}/ask", json=body, timeout=180)
    assert response.status_code == status and response.json()["error"] == error, response.text
    assert response.json()["message"]


def test_ask_body_must_be_json(ask_server):
    response = httpx.post(f"{ask_server}/ask", content="question=hi", headers={"Content-Type": "text/plain"})
    assert response.status_code == 422 and response.json()["status"] == 422


# --- POST /ask/stream: server-sent events ---------------------------------------------------------
def sse_events(response: httpx.Response) -> list[tuple[str, dict]]:
    """(event, data) of a text/event-stream response, read as it arrives."""
    events: list[tuple[str, dict]] = []
    name, data = "message", []
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
    return events


def stream_ask(server: str, body: dict) -> tuple[httpx.Response, list[tuple[str, dict]]]:
    with httpx.stream("POST", f"{server}/ask/stream", json=body, timeout=180) as response:
        if response.status_code != 200:
            response.read()
            return response, []
        events = sse_events(response)
    return response, events


def assert_sse_headers(response: httpx.Response) -> None:
    assert response.status_code == 200, response.status_code
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "no-cache" in response.headers["cache-control"]


def test_ask_stream_sends_llm_tokens_then_the_checked_answer(ask_server):
    response, events = stream_ask(ask_server, {"question": QUESTION, "answer": "llm"})
    assert_sse_headers(response)
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("done") == 1, names
    tokens = [data for name, data in events if name == "token"]
    assert len(tokens) >= 1 and names[: len(tokens)] == ["token"] * len(tokens), names
    assert all(isinstance(t["text"], str) and t["text"] for t in tokens)
    done = events[-1][1]
    answer = AnswerOut.model_validate(done)  # the schema of POST /ask
    assert answer.kind == "llm" and answer.question == QUESTION and answer.text
    assert all(f"[{c.id}]" in answer.text for c in answer.citations)
    # /ask answers the same question the same way (the stream stored the reply in the LLM cache).
    whole = httpx.post(f"{ask_server}/ask", json={"question": QUESTION, "answer": "llm"}, timeout=180).json()
    assert set(whole) == set(done)
    assert (whole["text"], whole["citations"], whole["abstained"]) == (done["text"], done["citations"], done["abstained"])


def test_ask_stream_of_an_extractive_answer_is_one_done_event(ask_server):
    response, events = stream_ask(ask_server, {"question": QUESTION})
    assert_sse_headers(response)
    assert [name for name, _ in events] == ["done"]
    done = events[0][1]
    assert done["kind"] == "extractive" and done["citations"], done
    whole = httpx.post(f"{ask_server}/ask", json={"question": QUESTION}, timeout=180).json()
    assert done["text"] == whole["text"]


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"question": ""}, 422, "bad_request"),
        ({"question": QUESTION, "answer": "poem"}, 422, "bad_request"),
        ({"question": QUESTION, "mode": "telepathy"}, 400, "bad_input"),
    ],
)
def test_ask_stream_rejects_bad_requests_as_json(ask_server, body, status, error):
    response = httpx.post(f"{ask_server}/ask/stream", json=body, timeout=180)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["error"] == error and response.json()["message"]


def test_a_client_leaving_mid_stream_does_not_break_the_server(ask_server):
    body = {"question": "What must installers of rooftop solar panels report?", "answer": "llm"}
    with httpx.stream("POST", f"{ask_server}/ask/stream", json=body, timeout=180) as response:
        assert_sse_headers(response)
        first = next(line for line in response.iter_lines() if line)
        assert first.startswith("event:")
    # The connection is closed after the first event: the server stops that answer, then serves on.
    response, events = stream_ask(ask_server, {"question": QUESTION})
    assert [name for name, _ in events] == ["done"]
    assert httpx.get(f"{ask_server}/health").json()["status"] == "ok"


# The event machinery without models: an answering API that streams as told, in-process.
class ScriptedKB:
    """``ask_stream`` yields two tokens, then fails (question "fail") or finishes."""

    def ask(self, question, mode=None, answer=None):
        from spr.records import Answer

        return Answer(question=question, text="Solar [1].", mode="dual", kind=answer or "extractive")

    def ask_stream(self, question, mode=None, answer=None):
        from core.errors import InputError, ModelError
        from spr.records import AnswerDone, AnswerToken

        if mode == "telepathy":
            raise InputError("unknown retrieval mode 'telepathy'")

        def events():
            yield AnswerToken("Solar panels\n")
            yield AnswerToken(" and wind [1] [2].")
            if question == "fail":
                raise ModelError("the model\ncrashed")
            yield AnswerDone(self.ask(question, mode, answer))

        return events()


@pytest.fixture
def scripted_client(tmp_path):
    from fastapi.testclient import TestClient

    from core.config import load_config
    from policykb.server.app import create_app
    from store.oxigraph_store import OxigraphStore

    with TestClient(create_app(load_config(kb_dir=tmp_path, environ={}), OxigraphStore(), qa_opener=ScriptedKB)) as client:
        yield client


def test_stream_events_are_one_json_line_each(scripted_client):
    response = scripted_client.post("/ask/stream", json={"question": "q", "answer": "llm"})
    assert response.status_code == 200
    assert response.text.startswith('event: token\ndata: {"text": "Solar panels\\n"}\n\nevent: token\n')
    events = [block.split("\n") for block in response.text.split("\n\n") if block]
    assert [len(lines) for lines in events] == [2, 2, 2]  # a newline in a token stays inside its JSON
    done = json.loads(events[-1][1].removeprefix("data: "))
    assert events[-1][0] == "event: done" and done["text"] == "Solar [1]." and done["kind"] == "llm"


def test_a_failure_mid_stream_is_an_error_event(scripted_client):
    response = scripted_client.post("/ask/stream", json={"question": "fail", "answer": "llm"})
    assert response.status_code == 200
    last = response.text.strip().split("\n\n")[-1].split("\n")
    assert last[0] == "event: error"
    assert json.loads(last[1].removeprefix("data: ")) == {"error": "the model crashed", "kind": "model", "status": 500}
    assert scripted_client.post("/ask/stream", json={"question": "q"}).status_code == 200  # the next one works


def test_a_failure_before_the_first_event_is_the_json_error_of_ask(scripted_client, tmp_path):
    from fastapi.testclient import TestClient

    from core.config import load_config
    from policykb.server.app import create_app
    from store.oxigraph_store import OxigraphStore

    bad = scripted_client.post("/ask/stream", json={"question": "q", "mode": "telepathy"})
    assert bad.status_code == 400 and bad.json()["error"] == "bad_input"
    with TestClient(create_app(load_config(kb_dir=tmp_path, environ={}), OxigraphStore(), qa_opener=None)) as client:
        missing = client.post("/ask/stream", json={"question": "q"})
    assert missing.status_code == 503 and missing.json()["error"] == "model_unavailable"


# --- warm-up: the models load at start, in the background -------------------------------------------
@pytest.fixture
def corpus_app(tmp_path_factory):
    """An app factory over the example corpus KB, opened read-only (other tests share it)."""
    from support.kbs import corpus_kb

    from core.config import load_config
    from policykb.server.app import create_app
    from store.layout import KBLayout
    from store.open import open_store

    config = load_config(kb_dir=corpus_kb(tmp_path_factory))
    store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri, read_only=True)

    def make(warm_up: bool, **kwargs):
        config.server.warm_up = warm_up
        config.server.query_isolation = "thread"  # a read-only store has no snapshots to hand out
        return create_app(config, store, **kwargs)

    yield make
    store.close()


def qa_status(client) -> str:
    return client.get("/health").json()["qa"]


def test_the_server_loads_the_answering_models_before_the_first_question(corpus_app):
    from fastapi.testclient import TestClient
    from support.servers import wait_until

    app = corpus_app(warm_up=True)
    with TestClient(app) as client:
        assert qa_status(client) in {"warming up", "ready"}  # the server answers while it loads
        assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).json()["boolean"] is True
        wait_until(lambda: qa_status(client) == "ready", "the warm-up", timeout=300)
        kb = app.state.policykb.qa._kb
        assert kb._embedder is not None and "dual" in kb._retrievers  # loaded without a question
        answer = client.post("/ask", json={"question": QUESTION}).json()
        assert answer["citations"] and not answer["abstained"]


def test_without_warm_up_the_models_load_on_the_first_question(corpus_app):
    from fastapi.testclient import TestClient

    with TestClient(corpus_app(warm_up=False)) as client:
        assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200
        assert qa_status(client) == "not loaded (opens on the first question)"
        assert client.post("/ask", json={"question": QUESTION}).json()["citations"]
        assert qa_status(client) == "ready"


def test_a_failed_warm_up_is_reported_and_the_endpoint_keeps_serving(corpus_app):
    from fastapi.testclient import TestClient
    from support.servers import wait_until

    from core.errors import ModelUnavailableError

    def broken():
        raise ModelUnavailableError("embedder folder missing: /nowhere")

    with TestClient(corpus_app(warm_up=True, qa_opener=broken)) as client:
        status = wait_until(lambda: (s := qa_status(client)) != "warming up" and s, "the warm-up's end")
        assert status == "unavailable: embedder folder missing: /nowhere"
        assert client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).json()["boolean"] is True
        failed = client.post("/ask", json={"question": QUESTION})  # tries again, fails the same way
        assert failed.status_code == 503 and failed.json()["error"] == "model_unavailable"
