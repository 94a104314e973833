"""Server-sent events: ``POST /ask/stream`` sends an answer as the model writes it.

Each event is ``event: <name>`` and one ``data:`` line of JSON, then a blank line:

- ``token`` ``{"text": "..."}``: the next piece of the LLM's draft (extractive answers send none);
- ``done``: the checked answer, the same JSON object ``POST /ask`` returns; the last event. Its
  ``text`` may differ from the streamed draft (sentences the citation check rejects are dropped),
  so a reader replaces the draft with it;
- ``error`` ``{"error": "<one line>", "kind": "...", "status": n}``: the answer failed after the
  stream began (model failure, the deadline); the last event.

A failure before the first event (bad input, no model, a full pool) is the plain JSON error body
and status of ``POST /ask``: the response only starts once the first event exists.

The question runs on the ask pool's worker thread, which hands events to the event loop; the
loop writes each one as it comes. A client that leaves mid-stream sets the job's cancel flag, which
stops the model at its next piece and frees the worker.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi.responses import Response, StreamingResponse

from policykb.server.errors import logged_error_body
from policykb.server.pool import BoundedPool

# no-cache: every ask is new; X-Accel-Buffering: a reverse proxy (nginx) must not hold events back.
SSE_HEADERS = {"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"}

Emit = Callable[[str, dict], None]
StreamJob = Callable[[Emit, threading.Event], None]  # job(emit, cancel): emits token* done

_END = "end"  # the job returned (queue item, not an event)
_FAILED = "failed"  # the job or the pool raised (queue item carrying the exception)
_POLL_S = 0.5  # how often a client's disconnect is checked before the first event


def sse_event(event: str, data: Any) -> bytes:
    """One event in the text/event-stream format (JSON on one line: no raw newlines inside)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def error_data(exc: BaseException) -> dict:
    body = logged_error_body(exc)
    return {"error": body.message, "kind": body.error, "status": body.status}


async def stream_response(
    pool: BoundedPool, job: StreamJob, disconnected: Callable[[], Awaitable[bool]] | None = None
) -> Response:
    """Run ``job`` on ``pool`` and stream what it emits; raise what fails before its first event.

    ``disconnected`` (``Request.is_disconnected``) is polled until the first event: a client that
    leaves during retrieval cancels the job then (later, the response notices it by itself)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def emit(event: str, data: dict) -> None:  # on the worker thread
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (event, data))
        except RuntimeError:  # the loop closed (server shutdown)
            pass

    async def pump() -> None:
        # The job's emits are scheduled on the loop before the pool settles its result, so the
        # queue holds every event before the end (or failure) marker.
        try:
            await pool.run(lambda cancel: job(emit, cancel))
        except Exception as exc:  # noqa: BLE001 - delivered to the client, as JSON or an error event
            queue.put_nowait((_FAILED, exc))
        else:
            queue.put_nowait((_END, None))

    task = asyncio.create_task(pump())
    getter = asyncio.ensure_future(queue.get())
    try:
        while not (await asyncio.wait({getter}, timeout=_POLL_S))[0]:
            if disconnected is not None and await disconnected():
                task.cancel()
                return Response(status_code=204)  # nobody reads it
        first = getter.result()
    except BaseException:
        getter.cancel()
        task.cancel()
        raise
    if first[0] == _FAILED:
        raise first[1]
    return StreamingResponse(_events(first, queue, task), media_type="text/event-stream", headers=SSE_HEADERS)


async def _events(first: tuple[str, Any], queue: asyncio.Queue, task: asyncio.Task) -> AsyncIterator[bytes]:
    item = first
    try:
        while True:
            kind, data = item
            if kind == _FAILED:
                yield sse_event("error", error_data(data))
                return
            if kind == _END:  # the job returned without its done event
                yield sse_event("error", {"error": "the answer stream ended without an answer", "kind": "internal", "status": 500})
                return
            yield sse_event(kind, data)
            if kind == "done":
                await task  # the worker is free before the client sees the stream end
                return
            item = await queue.get()
    finally:
        if not task.done():  # the client left (or the server stops): cancel sets the job's flag
            task.cancel()
