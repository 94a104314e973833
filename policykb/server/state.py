"""What one server process holds: the store, its query engine, the worker pools, auth, the QA API."""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import Request

from core.config import Config
from core.errors import ModelUnavailableError, PolicyKBError
from policykb.server.engine import Engine, OxigraphEngine, Payload, QueryRequest, engine_for
from policykb.server.errors import HTTPProblem
from policykb.server.pool import BoundedPool, Cancelled
from policykb.server.snapshots import Snapshots
from policykb.server.sse import Emit
from policykb.server.workers import ProcessQueryPool
from store.base import RDFStore
from store.freshness import mark_stale
from store.layout import KBLayout

log = logging.getLogger("policykb.server")

QAOpener = Callable[[], Any]  # returns an object with ask(question, mode=..., answer=...) -> Answer


class QAService:
    """The answering API, opened on first use (loading the models takes seconds) and then kept."""

    def __init__(self, opener: QAOpener | None):
        self._opener = opener
        self._kb: Any = None
        self._lock = threading.Lock()
        self.error = "" if opener else "no answering API is configured"
        self._warming = False
        self._warm_error = ""

    @property
    def status(self) -> str:
        if self._warming:
            return "warming up"
        if self._kb is not None:
            return f"ready (warm-up failed: {self._warm_error})" if self._warm_error else "ready"
        return f"unavailable: {self.error}" if self.error else "not loaded (opens on the first question)"

    def warm_up_in_background(self) -> None:
        """:meth:`warm_up` in a thread: the server takes requests (SPARQL, /health) meanwhile."""
        if self._opener is not None:
            self._warming = True  # before the thread runs: /health never reads "not loaded" at start
            threading.Thread(target=self.warm_up, name="policykb-warm-up", daemon=True).start()

    def warm_up(self) -> None:
        """Open the answering API and load what its first question would wait for (the server runs
        this in a thread at start; a question asked meanwhile waits for the lock, then finds all
        loaded). A failure is logged and shown in ``status``; the first question then tries again."""
        if self._opener is None:
            return
        with self._lock:
            self._warming = True
            started = time.perf_counter()
            try:
                kb = self._open()
                warm = getattr(kb, "warm_up", None)  # an answering API may have nothing to load
                spent = warm() if callable(warm) else {}
            except Exception as exc:  # noqa: BLE001 - an optimization failed: report it, keep serving
                message = " ".join(str(exc).split()) or type(exc).__name__
                if self._kb is None:
                    self.error = message
                else:
                    self._warm_error = message
                log.warning("warm-up of the answering API failed: %s", message)
            else:
                steps = ", ".join(f"{name} {ms / 1000:.1f} s" for name, ms in spent.items())
                log.info("answering API ready in %.1f s%s", time.perf_counter() - started, f" ({steps})" if steps else "")
            finally:
                self._warming = False

    def _open(self) -> Any:
        """The answering API, opened now if need be (the caller holds the lock)."""
        if self._kb is None:
            if self._opener is None:
                raise ModelUnavailableError(self.error)
            self._kb = self._opener()
            self.error = ""
            self._warm_error = ""
        return self._kb

    def ask(self, question: str, mode: str, answer: str) -> dict:
        with self._lock:  # one question at a time: the models are not safe to share across threads
            return self._open().ask(question, mode=mode, answer=answer).to_dict()

    def ask_stream(self, question: str, mode: str, answer: str, emit: Emit, cancel: threading.Event) -> None:
        """:meth:`ask`, calling ``emit("token", {"text": ...})`` for each piece an LLM writes and
        then ``emit("done", answer)`` with what :meth:`ask` returns. Errors before the first emit
        are the question's (bad input, no model); stops early, closing the model's stream, once
        ``cancel`` is set (the client left or the deadline passed)."""
        with self._lock:
            kb = self._open()
            stream = getattr(kb, "ask_stream", None)
            if stream is None:  # an answering API without streaming: one done event
                emit("done", kb.ask(question, mode=mode, answer=answer).to_dict())
                return
            events = stream(question, mode=mode, answer=answer)  # input errors are raised here
            try:
                for event in events:
                    if cancel.is_set():
                        raise Cancelled()
                    done = getattr(event, "answer", None)  # spr.records.AnswerDone | AnswerToken
                    if done is not None:
                        emit("done", done.to_dict())
                    else:
                        emit("token", {"text": event.text})
            finally:
                close = getattr(events, "close", None)
                if callable(close):
                    close()  # stops the model mid-reply when the loop ended early

    def close(self) -> None:
        close = getattr(self._kb, "close", None)
        if callable(close):
            close()


@dataclass
class ServerState:
    config: Config
    store: RDFStore
    qa: QAService
    engine: Engine = field(init=False)
    reads: BoundedPool = field(init=False)  # in-process reads: Graph Store GETs, queries in thread mode
    queries: ProcessQueryPool | None = field(init=False, default=None)  # killable query processes
    snapshots: Snapshots | None = field(init=False, default=None)
    writes: BoundedPool = field(init=False)
    asks: BoundedPool = field(init=False)
    token: str | None = field(init=False)
    started: float = field(default_factory=time.time)
    _counts: tuple[float, dict[str, int]] | None = None

    def __post_init__(self) -> None:
        server = self.config.server
        self.engine = engine_for(self.store)
        self.reads = BoundedPool("query", server.query_workers, server.query_queue, server.query_timeout_s)
        self.queries = self._query_processes()
        # One writer thread: updates and Graph Store writes are serialized. They run to completion
        # (an update cannot be interrupted without losing track of whether it committed).
        self.writes = BoundedPool("update", 1, server.query_queue, None)
        self.asks = BoundedPool("question", 1, 8, server.ask_timeout_s)
        self.token = None
        if server.update_token_env:
            self.token = os.environ.get(server.update_token_env) or None
            if self.token is None:
                log.warning("env var %s is empty or unset: updates stay disabled", server.update_token_env)

    def _query_processes(self) -> ProcessQueryPool | None:
        """Killable child processes over snapshots where the store allows it (else queries use threads)."""
        server = self.config.server
        path = getattr(self.store, "path", None)
        if server.query_isolation == "process" and isinstance(self.engine, OxigraphEngine) and path is not None:
            try:
                self.snapshots = Snapshots(self.engine.store, KBLayout(Path(path).parent).snapshots)
            except PolicyKBError as exc:
                log.warning("queries run in threads (no timeout can stop them): %s", exc)
            else:
                return ProcessQueryPool(self.snapshots, server.query_workers, server.query_queue, server.query_timeout_s)
        return None

    async def start(self) -> None:
        """Work to do on the server's event loop before it takes requests."""
        if self.queries is not None:
            await self.queries.start()
        if self.config.server.warm_up:
            self.qa.warm_up_in_background()

    async def query(self, request: QueryRequest, accept: str | None, limit: int) -> Payload:
        """Evaluate one read query on the query pool (503 when full, 504 past the deadline)."""
        if self.queries is not None:
            return await self.queries.query(request, accept, limit)
        return await self.reads.run(lambda cancel: self.engine.query(request, accept, limit, cancel))

    @property
    def max_body(self) -> int:
        return int(self.config.server.max_upload_mb * 1024 * 1024)

    def authorize(self, request: Request) -> None:
        """Writes need ``Authorization: Bearer <token>``; without a configured token they are off."""
        if self.token is None:
            raise HTTPProblem(
                403, "read_only", "this endpoint is read-only: set [server] update_token_env to enable updates"
            )
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        challenge = 'Bearer realm="policykb"'
        if scheme.lower() != "bearer" or not given.strip():
            raise HTTPProblem(401, "unauthorized", "a bearer token is required", {"WWW-Authenticate": challenge})
        if not hmac.compare_digest(given.strip().encode(), self.token.encode()):
            raise HTTPProblem(
                401, "unauthorized", "invalid bearer token", {"WWW-Authenticate": challenge + ', error="invalid_token"'}
            )

    def counts(self, max_age_s: float = 5.0) -> dict[str, int]:
        """Quads and named graphs, cached briefly: counting walks the whole store."""
        now = time.monotonic()
        if self._counts is None or now - self._counts[0] > max_age_s:
            self._counts = (now, {"quads": self.store.count(), "named_graphs": len(self.store.named_graphs())})
        return self._counts[1]

    def query_load(self) -> dict[str, int]:
        """For ``/health``: queries holding a slot, timed-out ones still evaluating, and kills."""
        pool = self.queries or self.reads
        killed = self.queries.killed if self.queries is not None else 0
        return {"queries_running": pool.running, "queries_abandoned": pool.abandoned, "queries_killed": killed}

    def changed(self) -> None:
        """After a write commits: later queries must see it (a new snapshot for the query processes);
        the derived indexes do not cover it until `policykb reindex` (:mod:`store.freshness`)."""
        self._counts = None
        if self.snapshots is not None:
            self.snapshots.publish()
        mark_stale(self.config.kb_dir, "a write through the server (SPARQL update or Graph Store)")

    def close(self) -> None:
        self.writes.shutdown(wait=True)
        self.reads.shutdown(wait=False)
        if self.queries is not None:
            self.queries.close()
        if self.snapshots is not None:
            self.snapshots.close()
        self.asks.shutdown(wait=False)
        self.qa.close()
