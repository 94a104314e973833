"""The SPARQL endpoint of `policykb serve` under concurrent load: readers during writes (each on its
snapshot), a write visible to the next query, and deadlines — a runaway query killed at its
deadline with its worker freed (process isolation), or abandoned (thread isolation). A real server
process over a KB of the sample data; the queries and the rest of the surface are in
tests/test_server_sparql.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.kbs import build_sample_kb
from support.servers import bindings, held_sparql_endpoint, policykb_server, wait_until

TOKEN = "s3cret-test-token"
TOKEN_ENV = "POLICYKB_TEST_UPDATE_TOKEN"
TITLES = "SELECT ?d ?t WHERE { ?d dcterms:title ?t } ORDER BY ?t"


@pytest.fixture(scope="module")
def server_kb(tmp_path_factory) -> Path:
    return build_sample_kb(tmp_path_factory.mktemp("sparql") / "kb", f'update_token_env = "{TOKEN_ENV}"\n')


@pytest.fixture(scope="module")
def server(server_kb) -> Iterator[str]:
    with policykb_server(server_kb, {TOKEN_ENV: TOKEN}) as base:
        yield base


# --- concurrency, deadlines, capacity -------------------------------------------------------------
def test_many_readers_one_writer(server, server_kb):
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}
    expected = bindings(httpx.get(f"{server}/sparql", params={"query": TITLES}))
    failures: list[str] = []

    def reader() -> None:
        with httpx.Client() as client:
            for _ in range(10):
                response = client.get(f"{server}/sparql", params={"query": TITLES})
                if response.status_code != 200 or bindings(response) != expected:
                    failures.append(f"{response.status_code} {response.text[:200]}")

    def writer() -> None:
        with httpx.Client() as client:
            for i in range(10):
                update = f"INSERT DATA {{ GRAPH <urn:test:w> {{ <urn:test:w{i}> <urn:test:p> {i} }} }}"
                if client.post(f"{server}/sparql", content=update, headers=auth).status_code != 204:
                    failures.append(f"update {i}")

    threads = [threading.Thread(target=reader) for _ in range(16)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not failures, failures[:3]
    count = bindings(
        httpx.get(
            f"{server}/sparql", params={"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH <urn:test:w> { ?s ?p ?o } }"}
        )
    )
    assert count == [{"n": "10"}]
    # Each write published a snapshot for the query processes; those nobody reads are gone.
    snapshots = list((server_kb / "store.snapshots").iterdir())
    assert 1 <= len(snapshots) <= 2 + 4 + 1, snapshots  # current + held by the workers (4 + standby)


def test_a_write_is_visible_to_the_next_query(server):
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}
    ask = "ASK { GRAPH <urn:test:rw> { <urn:test:rw> <urn:test:p> 1 } }"
    assert httpx.get(f"{server}/sparql", params={"query": ask}).json()["boolean"] is False
    update = "INSERT DATA { GRAPH <urn:test:rw> { <urn:test:rw> <urn:test:p> 1 } }"
    assert httpx.post(f"{server}/sparql", content=update, headers=auth).status_code == 204
    assert httpx.get(f"{server}/sparql", params={"query": ask}).json()["boolean"] is True


@pytest.fixture()
def tight_server(tmp_path) -> Iterator[str]:
    """Two query workers, no waiting slots, a 1 s deadline."""
    kb = build_sample_kb(tmp_path / "kb", "query_timeout_s = 1.0\nquery_workers = 2\nquery_queue = 0\n")
    with policykb_server(kb) as base:
        yield base


def test_slow_query_is_killed_at_its_deadline_and_frees_its_worker(tight_server):
    server = tight_server
    results: dict[str, httpx.Response] = {}

    def health() -> dict:
        return httpx.get(f"{server}/health").json()

    with held_sparql_endpoint() as held:  # each slow query would evaluate until held.release()
        slow_query = held.query

        def slow(name: str) -> None:
            results[name] = httpx.get(f"{server}/sparql", params={"query": slow_query}, timeout=120)

        first = threading.Thread(target=slow, args=("first",))
        started = time.monotonic()
        first.start()
        held.wait_arrived(1)  # the first query is evaluating in one worker process
        fast = httpx.get(f"{server}/sparql", params={"query": TITLES})  # the second worker serves it
        assert fast.status_code == 200 and held.held == 1
        first.join(timeout=120)
        assert results["first"].status_code == 504 and results["first"].json()["error"] == "timeout"
        assert 0.9 < time.monotonic() - started < 30  # the deadline answered, not the end of the query
        # Its process was killed before the 504 went out: nothing keeps evaluating, the slot is back.
        report = health()
        assert report["queries_killed"] == 1 and report["queries_running"] == 0 and report["queries_abandoned"] == 0

        # Both workers busy and no queue: the next client gets 503 at once instead of waiting.
        more = [threading.Thread(target=slow, args=(name,)) for name in ("second", "third")]
        for thread in more:
            thread.start()
        held.wait_arrived(3)
        busy = httpx.get(f"{server}/sparql", params={"query": TITLES})
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1" and busy.json()["error"] == "busy"
        for thread in more:
            thread.join(timeout=120)
        assert results["second"].status_code == results["third"].status_code == 504
        assert health()["queries_killed"] == 3
        # Fresh workers replaced the killed ones, while the held queries never ended.
        assert httpx.get(f"{server}/sparql", params={"query": TITLES}).status_code == 200 and held.held == 3
    assert health()["queries_running"] == 0


def test_thread_mode_abandons_a_slow_query_until_it_ends(tmp_path):
    """``query_isolation = "thread"``: the deadline answers, but the query keeps its worker."""
    kb = build_sample_kb(
        tmp_path / "kb", 'query_timeout_s = 1.0\nquery_workers = 1\nquery_queue = 0\nquery_isolation = "thread"\n'
    )
    with policykb_server(kb) as server, held_sparql_endpoint() as held:
        answer: dict[str, httpx.Response] = {}
        thread = threading.Thread(
            target=lambda: answer.setdefault("r", httpx.get(f"{server}/sparql", params={"query": held.query}))
        )
        thread.start()
        held.wait_arrived(1)
        thread.join(timeout=120)
        assert answer["r"].status_code == 504
        report = httpx.get(f"{server}/health").json()
        assert report["queries_abandoned"] == 1 and report["queries_running"] == 1 and report["queries_killed"] == 0
        assert httpx.get(f"{server}/sparql", params={"query": TITLES}).status_code == 503  # its one worker is held
        held.release()
        wait_until(lambda: httpx.get(f"{server}/health").json()["queries_running"] == 0, "the query ends")
