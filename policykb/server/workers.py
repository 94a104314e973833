"""SPARQL queries evaluated in child processes that are killed at their deadline.

pyoxigraph cannot interrupt a running evaluation, so a thread pool can only *abandon* a query
past its deadline: a sort, an aggregate or a cartesian product keeps its core busy and its worker
slot until it ends, and a few of them take the endpoint down. Here each query runs in one of
``workers`` child processes (:mod:`policykb.server.query_worker`) over a read-only store snapshot
(:mod:`policykb.server.snapshots`). Past the deadline the client gets its 504 and the child is
SIGKILLed at once: its CPU is free within milliseconds and its slot returns to the pool. One child
more than ``workers`` is kept ready, so a kill never leaves the next query waiting for a child to
start (about half a second of imports); a fresh one is started in the background. A killed child
holds no lock and writes nothing, so nothing is lost.

Admission is :class:`~policykb.server.pool.BoundedPool`'s: ``workers + queue`` slots, 503 at once
when none is free. All bookkeeping runs on the event loop's thread (replies arrive through
``loop.add_reader``), so it needs no locks and no thread hand-off per query.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import socket
import subprocess
import sys
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import core.errors
from core.errors import PolicyKBError, StoreError
from policykb.server.engine import Payload, QueryRequest
from policykb.server.errors import HTTPProblem
from policykb.server.formats import GRAPH_FORMATS, RESULT_FORMATS
from policykb.server.query_worker import READY
from policykb.server.snapshots import Snapshots

log = logging.getLogger("policykb.server")

_FORMATS = {fmt.media_type: fmt for fmt in (*RESULT_FORMATS, *GRAPH_FORMATS)}
_START_FAILURES = 3  # children dying before they are ready, in a row, before the pool gives up


@dataclass(eq=False)
class _Job:
    request: tuple  # (query, default graphs, named graphs, accept, limit)
    future: asyncio.Future
    worker: _Worker | None = None
    released: bool = False


@dataclass(eq=False)
class _Worker:
    process: subprocess.Popen
    conn: Connection
    ready: bool = False
    job: _Job | None = None
    snapshot: str = ""  # the snapshot it has open (after its first job)


@dataclass
class ProcessQueryPool:
    """``await pool.query(request, accept, limit)`` -> :class:`Payload`, or raises the query's error."""

    snapshots: Snapshots
    workers: int
    queue: int
    timeout_s: float
    killed: int = 0  # children killed at a deadline, since start
    crashed: int = 0  # children that died on their own (e.g. out of memory)
    _pool: list[_Worker] = field(default_factory=list)
    _waiting: deque[_Job] = field(default_factory=deque)
    _admitted: int = 0
    _failures: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _started: asyncio.Future | None = None  # set when a child becomes ready or dies (for start())

    @property
    def running(self) -> int:
        """Queries holding a slot (evaluating or waiting for a child)."""
        return self._admitted

    @property
    def abandoned(self) -> int:
        """Timed-out queries still evaluating: none, they are killed (kept for ``/health``)."""
        return 0

    async def start(self) -> None:
        """Start the children on this loop and wait until each is ready (or failed to start)."""
        self._attach(asyncio.get_running_loop())
        while any(not w.ready for w in self._pool) and self._failures < _START_FAILURES:
            self._started = asyncio.get_running_loop().create_future()
            await self._started

    async def query(self, request: QueryRequest, accept: str | None, limit: int) -> Payload:
        if self._admitted >= self.workers + self.queue:
            raise HTTPProblem(503, "busy", "the query pool is full; retry shortly", {"Retry-After": "1"})
        if self._failures >= _START_FAILURES:
            raise StoreError("the query worker processes cannot start (see the server log)")
        loop = asyncio.get_running_loop()
        self._attach(loop)
        job = _Job((request.text, request.default_graphs, request.named_graphs, accept, limit), loop.create_future())
        self._admitted += 1
        timer = loop.call_later(self.timeout_s, self._expire, job)
        self._waiting.append(job)
        self._dispatch()
        try:
            reply = await job.future
        except asyncio.CancelledError:  # the request was cancelled: nobody waits for this query
            self._drop(job)
            raise
        finally:
            timer.cancel()
        return _payload(reply)

    # --- children -----------------------------------------------------------------------------
    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the children on first use, on the loop that will read their replies."""
        if self._loop is loop and self._pool:
            return
        self.close()
        self._loop = loop
        for _ in range(self.workers + 1):  # one on standby
            self._spawn()

    def _spawn(self) -> None:
        assert self._loop is not None
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        source_root = str(Path(__file__).resolve().parents[2])  # where policykb, core and store live
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH", "")) if p)
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "policykb.server.query_worker", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        except OSError as exc:
            ours.close()
            self._failures = _START_FAILURES
            log.error("cannot start a query worker process: %s", exc)
            return
        finally:
            theirs.close()
        worker = _Worker(process, Connection(ours.detach()))
        self._pool.append(worker)
        self._loop.add_reader(worker.conn.fileno(), self._readable, worker)
        # uvloop makes a watched fd non-blocking; a reply is read whole once its first byte is
        # there (the child writes it in one go), which needs blocking reads.
        os.set_blocking(worker.conn.fileno(), True)

    def _readable(self, worker: _Worker) -> None:
        try:
            data = worker.conn.recv_bytes()
        except (EOFError, OSError):
            self._lost(worker)
            return
        if data == READY:
            worker.ready, self._failures = True, 0
            self._wake()
        else:
            job, worker.job = worker.job, None
            if job is not None:
                self._release(job)
                if not job.future.done():
                    job.future.set_result(data)  # unpickled by the waiting request
            self.snapshots.collect(w.snapshot for w in self._pool)
        self._dispatch()

    def _dispatch(self) -> None:
        while self._waiting:
            if sum(w.job is not None for w in self._pool) >= self.workers:
                return
            worker = next((w for w in self._pool if w.ready and w.job is None), None)
            if worker is None:
                return
            job = self._waiting.popleft()
            snapshot = self.snapshots.current  # the newest, so a client reads its own writes
            try:
                worker.conn.send_bytes(pickle.dumps((snapshot, *job.request), protocol=pickle.HIGHEST_PROTOCOL))
            except OSError:
                self._waiting.appendleft(job)
                self._lost(worker)
                continue
            worker.job, job.worker, worker.snapshot = job, worker, snapshot

    def _expire(self, job: _Job) -> None:
        if not job.future.done():
            limit = f"{self.timeout_s:g} s"
            job.future.set_exception(HTTPProblem(504, "timeout", f"query did not finish within {limit} (server limit)"))
            self._drop(job)

    def _drop(self, job: _Job) -> None:
        """Nobody waits for ``job`` any more: unqueue it, or kill the child evaluating it."""
        if job.worker is None:
            if job in self._waiting:
                self._waiting.remove(job)
            self._release(job)
        elif job.worker.job is job:
            self.killed += 1
            self._remove(job.worker)
            self._release(job)
            self._spawn()
        self._dispatch()

    def _lost(self, worker: _Worker) -> None:
        """A child died on its own: fail its query, replace it (unless children cannot start)."""
        try:
            code = worker.process.wait(timeout=1)  # its socket closed: it is exiting, if not gone
        except subprocess.TimeoutExpired:
            code = None
        self._remove(worker)
        if worker.ready:
            self.crashed += 1
            log.error("a query worker process died (exit status %s)", code)
        else:
            self._failures += 1
            self._wake()
        job = worker.job
        if job is not None:
            self._release(job)
            if not job.future.done():
                job.future.set_exception(StoreError(f"the query's worker process died (exit status {code})"))
        if self._failures < _START_FAILURES:
            self._spawn()
        else:
            log.error("query worker processes exit before they are ready; queries now fail")
            while self._waiting:
                waiting = self._waiting.popleft()
                self._release(waiting)
                if not waiting.future.done():
                    waiting.future.set_exception(StoreError("the query worker processes cannot start"))
        self._dispatch()

    def _wake(self) -> None:
        if self._started is not None and not self._started.done():
            self._started.set_result(None)

    def _remove(self, worker: _Worker) -> None:
        if worker in self._pool:
            self._pool.remove(worker)
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(worker.conn.fileno())
        worker.process.kill()  # SIGKILL: nothing to flush, the child only reads a snapshot
        worker.conn.close()
        try:
            worker.process.wait(timeout=5)  # reaped at once after SIGKILL; no zombie stays
        except subprocess.TimeoutExpired:
            log.error("query worker %s did not exit after SIGKILL", worker.process.pid)

    def _release(self, job: _Job) -> None:
        if not job.released:
            job.released = True
            self._admitted -= 1

    @property
    def pids(self) -> list[int]:
        """The children's process ids (for tests and ``/health``)."""
        return [w.process.pid for w in self._pool]

    def close(self) -> None:
        for worker in list(self._pool):
            self._remove(worker)
        for job in self._waiting:
            if not job.future.done():
                job.future.cancel()
        self._waiting.clear()


def _payload(reply: bytes) -> Payload:
    message = pickle.loads(reply)
    if message[0] == "ok":
        _, body, media_type, truncated = message
        return Payload(body, _FORMATS[media_type], truncated)
    _, name, text, attrs = message
    raise _error(name, text, attrs)


def _error_classes() -> dict[str, type[Exception]]:
    found: dict[str, type[Exception]] = {HTTPProblem.__name__: HTTPProblem}
    todo: list[type[Exception]] = [PolicyKBError]
    while todo:
        cls = todo.pop()
        found[cls.__name__] = cls
        todo.extend(cls.__subclasses__())
    return found


def _error(name: str, text: str, attrs: dict) -> Exception:
    """The child's exception, rebuilt here with its message and attributes (line, column, status)."""
    cls = _error_classes().get(name, core.errors.StoreError)
    exc = cls.__new__(cls)
    Exception.__init__(exc, text)
    vars(exc).update(attrs)
    return exc
