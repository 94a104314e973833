"""Bounded worker pools with deadlines, so that one slow or hostile request cannot block the rest.

The event loop never runs a query: each request takes a *slot* (workers + queue); when none is
free the client gets 503 at once. Past the deadline the client gets 504 and the job's cancel flag is
set. pyoxigraph cannot interrupt a running evaluation, so an abandoned job keeps its thread and
slot until the store hands control back: our serializer checks the flag at every output chunk
(stopping streaming queries quickly), while a blocking step (sorting, grouping, a hash join build)
runs to its end. The slot bound is what keeps such zombies from piling up without limit.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from policykb.server.errors import HTTPProblem

T = TypeVar("T")


class Cancelled(Exception):
    """Raised inside a job whose client is gone or whose deadline passed."""


class BoundedPool:
    """A thread pool with admission control (``workers + queue`` slots) and a per-job deadline."""

    def __init__(self, name: str, workers: int, queue: int, timeout_s: float | None):
        self.name = name
        self.timeout_s = timeout_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._slots = threading.BoundedSemaphore(workers + queue)
        self._lock = threading.Lock()
        self.running = 0  # jobs holding a slot, abandoned ones included
        self.abandoned = 0  # jobs whose client got a 504 and that still run

    async def run(self, job: Callable[[threading.Event], T]) -> T:
        """Run ``job(cancel)`` on a worker; 503 when full, 504 past the deadline."""
        if not self._slots.acquire(blocking=False):
            raise HTTPProblem(503, "busy", f"the {self.name} pool is full; retry shortly", {"Retry-After": "1"})
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future = loop.create_future()
        cancel = threading.Event()
        abandoned = [False]  # set under the lock when the client stops waiting for a running job
        with self._lock:
            self.running += 1

        def finished(future: Future) -> None:  # on the worker thread (or here, if cancelled early)
            self._release(abandoned)
            if not cancel.is_set():
                try:
                    loop.call_soon_threadsafe(_settle, waiter, future)
                except RuntimeError:  # the loop closed while the job ran (server shutdown)
                    pass

        # A bare future and a timer instead of asyncio.wait_for(wrap_future(...)): this path runs
        # once per query, and the lighter hand-off is measurable on small queries.
        timer = loop.call_later(self.timeout_s, _expire, waiter) if self.timeout_s else None
        future = self._executor.submit(job, cancel)
        future.add_done_callback(finished)
        try:
            return await waiter
        except TimeoutError:
            if not future.cancel():  # it is running (a queued job is simply dropped)
                with self._lock:
                    if not future.done():
                        abandoned[0] = True
                        self.abandoned += 1
            raise HTTPProblem(
                504, "timeout", f"{self.name} did not finish within {self.timeout_s:g} s (server limit)"
            ) from None
        finally:
            if timer is not None:
                timer.cancel()
            cancel.set()  # no-op for a finished job; stops a running one at its next check

    def _release(self, abandoned: list[bool]) -> None:
        with self._lock:
            self.running -= 1
            if abandoned[0]:
                self.abandoned -= 1
        self._slots.release()

    def shutdown(self, wait: bool) -> None:
        """Drop queued jobs; ``wait`` for running ones (writes must commit, abandoned reads need not)."""
        self._executor.shutdown(wait=wait, cancel_futures=True)


def _settle(waiter: asyncio.Future, future: Future) -> None:
    if waiter.done():
        return
    if future.cancelled():
        waiter.cancel()
    elif future.exception() is not None:
        waiter.set_exception(future.exception())  # type: ignore[arg-type]
    else:
        waiter.set_result(future.result())


def _expire(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())
