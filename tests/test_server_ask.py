"""The QA API of `policykb serve` (POST /ask) on a KB ingested from examples/corpus/.

The server and its KB are session-scoped (the ``ask_server`` fixture in conftest.py): the browser
test (test_web_browser.py) asks the same server, so the corpus is ingested and the models are
loaded once per test run.
"""

from __future__ import annotations

import httpx
import pytest
from support.kbs import QUESTION


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
