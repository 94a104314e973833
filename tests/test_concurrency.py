"""Concurrency: per-request usage under concurrent questions, and a KB held by another process.

- Each of 8 concurrent questions (the real server app on uvicorn, the real SmolLM2 model) reports
  the usage of its own model call, not its neighbours'; so does ``KnowledgeBase.ask`` called from
  8 threads at once.
- A writing command against a KB whose store another process holds open read-write fails with
  one line naming the KB, and leaves the store as it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from support.kbs import CORPUS, ROOT, build_sample_kb
from support.servers import free_port, uvicorn_server

from core.llm.base import LLM, Completion, Request
from core.usage import Usage, UsageScope, UsageTracker

CLIENTS = 8
# Distinct questions (distinct prompts, so distinct token counts): one set for the server, one
# for direct calls. Each is asked once concurrently (a model call) and once more alone afterwards
# (answered from the response cache, which keeps that call's own token counts).
SERVER_QUESTIONS = [
    "Who supports rooftop photovoltaic projects?",
    "What must installers of rooftop solar panels report?",
    "Which agency monitors the electricity grid?",
    "What does the hydrogen strategy aim for?",
    "What efficiency must a heat pump reach?",
    "When does the Renewable Energy Act take effect?",
    "What does the Westmark climate plan require from municipalities?",
    "Which rules apply to wind turbines near homes?",
]
DIRECT_QUESTIONS = [
    "Who issues the National Solar Plan?",
    "What must a grid operator do before connecting a generator?",
    "How is distributed photovoltaic capacity reported in Westmark?",
    "Which buildings fall under the energy efficiency regulation?",
    "What tasks does the monitoring center have?",
    "What did the bureau say about energy prices?",
    "How much hydrogen should be produced by 2030?",
    "What permits does a wind farm need?",
]


# --- the tracker's bookkeeping (no model needed) --------------------------------------------------
class CountingLLM(LLM):
    """A backend whose usage is the prompt's length: each call's figures are known in advance."""

    def _generate(self, request: Request) -> Completion:
        return Completion("ok", Usage(len(request.messages[-1][1]), 1), False, self.model_id)


def test_usage_scopes_keep_concurrent_calls_apart():
    tracker = UsageTracker()
    llm = CountingLLM("counting", tracker=tracker)
    barrier = threading.Barrier(CLIENTS)  # every thread's calls interleave with the others'

    def work(i: int) -> UsageScope:
        scope = UsageScope()
        for _ in range(3):
            barrier.wait()
            with scope.active():
                llm.complete("x" * (10 * (i + 1)))
        return scope

    with ThreadPoolExecutor(CLIENTS) as pool:
        scopes = list(pool.map(work, range(CLIENTS)))
    for i, scope in enumerate(scopes):
        assert (scope.totals.calls, scope.totals.usage) == (3, Usage(30 * (i + 1), 3))
    # Nothing lost or counted twice: the shared tracker holds exactly the sum.
    assert tracker.totals.usage == sum((s.totals.usage for s in scopes), Usage())
    assert tracker.totals.calls == 3 * CLIENTS


def test_usage_scopes_nest_and_count_cache_hits_apart(tmp_path):
    from core.cache import ResponseCache

    llm = CountingLLM("counting", cache=ResponseCache(tmp_path / "llm.sqlite"))
    outer, inner = UsageScope(), UsageScope()
    with outer.active():
        llm.complete("abcd")
        with inner.active():
            llm.complete("abcd")  # the same request: a cache hit
    llm.complete("outside every scope")
    assert (outer.totals.calls, outer.totals.cache_hits) == (1, 1)
    assert (inner.totals.calls, inner.totals.cache_hits, inner.totals.saved) == (0, 1, Usage(4, 1))
    assert llm.tracker.totals.requests == 3


# --- per-request usage with the real model ---------------------------------------------------------
@pytest.fixture(scope="module")
def answering(tmp_path_factory):
    """examples/sample-kb.trig and a KnowledgeBase over its store: retrieval 'naive-kg' (it needs no
    derived index), SmolLM2 answers of at most 16 tokens over 160 tokens of evidence (quick)."""
    from core.config import load_config
    from spr.qa import KnowledgeBase
    from store.layout import KBLayout
    from store.open import open_store

    kb = build_sample_kb(tmp_path_factory.mktemp("concurrency") / "kb")
    # check_answerable off: every question must reach the model, whose usage these tests account
    (kb / "policykb.toml").write_text(
        '[answer]\nmode = "naive-kg"\nanswer_tokens = 16\ncontext_tokens = 160\ncheck_answerable = false\n', encoding="utf-8"
    )
    config = load_config(kb_dir=kb)  # the test models (conftest.py)
    store = open_store(config.store, KBLayout(kb), config.kb.base_iri)
    base = KnowledgeBase(config, store)
    yield config, store, base
    store.close()


def _post(base: str, question: str, stream: bool) -> dict:
    body = {"question": question, "answer": "llm"}
    with httpx.Client(base_url=base, timeout=600) as client:
        if not stream:
            response = client.post("/ask", json=body)
            assert response.status_code == 200, response.text
            return response.json()
        with client.stream("POST", "/ask/stream", json=body) as response:
            assert response.status_code == 200, response.read()
            done = [line for line in response.iter_lines() if line.startswith("data:")][-1]
        return json.loads(done[5:])


def _figures(usage: dict) -> tuple[int, int, int]:
    return usage["llm_calls"], usage["prompt_tokens"], usage["completion_tokens"]


def test_concurrent_asks_report_their_own_usage(answering):
    """8 clients at once, half streaming: each answer's usage is its own call's, and together they
    add up to exactly what the model was asked for during the batch."""
    from policykb.server.app import create_app

    config, store, base = answering
    before = base.tracker.totals
    barrier = threading.Barrier(CLIENTS)  # all requests in flight together

    with uvicorn_server(create_app(config, store, qa_opener=lambda: base)) as url:

        def client(i: int) -> dict:
            barrier.wait()
            return _post(url, SERVER_QUESTIONS[i], stream=i % 2 == 1)

        with ThreadPoolExecutor(CLIENTS) as pool:
            answers = list(pool.map(client, range(CLIENTS)))
    after = base.tracker.totals
    for question, answer in zip(SERVER_QUESTIONS, answers, strict=True):
        assert answer["question"] == question
        assert answer["usage"]["llm_calls"] == 1 and answer["usage"]["llm_cache_hits"] == 0, answer["usage"]
        alone = base.ask(question, answer="llm").usage  # the cache replays this question's own call
        assert alone.llm_cache_hits == 1
        assert _figures(answer["usage"]) == (alone.llm_calls, alone.prompt_tokens, alone.completion_tokens), question
    spent = (after.usage.prompt_tokens - before.usage.prompt_tokens, after.calls - before.calls)
    assert spent == (sum(a["usage"]["prompt_tokens"] for a in answers), CLIENTS)


def test_asks_from_threads_without_a_lock_report_their_own_usage(answering):
    """KnowledgeBase.ask from 8 threads at once (no server lock: the model's own lock is what
    serializes the calls, so each question's retrieval overlaps other questions' calls)."""
    _, _, base = answering
    barrier = threading.Barrier(CLIENTS)

    def ask(question: str):
        barrier.wait()
        return base.ask(question, answer="llm").usage

    with ThreadPoolExecutor(CLIENTS) as pool:
        together = list(pool.map(ask, DIRECT_QUESTIONS))
    for question, usage in zip(DIRECT_QUESTIONS, together, strict=True):
        assert (usage.llm_calls, usage.llm_cache_hits) == (1, 0), (question, usage)
        alone = base.ask(question, answer="llm").usage
        assert (usage.prompt_tokens, usage.completion_tokens) == (alone.prompt_tokens, alone.completion_tokens), question


# --- a KB held by another process -----------------------------------------------------------------
# A second process holding the store read-write, as `policykb serve` does; "ready" once it has it.
_HOLDER = (
    "import sys\n"
    "from store.oxigraph_store import OxigraphStore\n"
    "store = OxigraphStore(sys.argv[1])\n"
    "print('ready', flush=True)\n"
    "sys.stdin.read()\n"  # until the test closes the pipe
    "store.close()\n"
)


@contextmanager
def held(kb: Path) -> Iterator[None]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(kb / "store")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0


def _cli(kb: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "policykb", "--kb", str(kb), *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_writing_to_a_kb_held_by_a_server_fails_with_one_line(tmp_path):
    from store.oxigraph_store import OxigraphStore

    kb = build_sample_kb(tmp_path / "kb")
    quads = _count(kb)
    expected = f"error: the knowledge base at {kb} is in use by another process (a running policykb serve?)"
    with held(kb):
        for args in (
            ("ingest", str(CORPUS / "hydrogen-strategy.txt")),
            ("load", str(ROOT / "examples" / "sample-kb.trig")),
            ("serve", "--port", str(free_port())),
        ):
            done = _cli(kb, *args)
            assert done.returncode == 3, (args, done.stderr)
            assert "Traceback" not in done.stderr and done.stdout == "", (args, done.stderr)
            lines = [line for line in done.stderr.splitlines() if line.strip() and line.strip() != "ingesting"]
            assert len(lines) == 1 and lines[0].startswith(expected), (args, done.stderr)
        # Readers are not writers: a read-only command still works while the server runs.
        assert _cli(kb, "sparql", "ASK { ?s ?p ?o }").returncode == 0
    # Released, the store opens read-write and holds what it held.
    assert _count(kb) == quads
    OxigraphStore(kb / "store").close()


def test_regression_opening_a_store_twice_in_one_process_names_the_kb(tmp_path):
    from store.errors import StoreInUseError
    from store.oxigraph_store import OxigraphStore

    first = OxigraphStore(tmp_path / "kb" / "store")
    try:
        with pytest.raises(StoreInUseError, match="in use by another process") as caught:
            OxigraphStore(tmp_path / "kb" / "store")
        assert caught.value.kb == tmp_path / "kb"
    finally:
        first.close()


def _count(kb: Path) -> int:
    from store.oxigraph_store import OxigraphStore

    store = OxigraphStore(kb / "store", read_only=True)
    try:
        return store.count()
    finally:
        store.close()
