"""Start real servers for integration tests on a free loopback port, and stop them."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypeVar

import httpx

from support.kbs import ROOT

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def oxigraph_binary() -> str:
    found = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not Path(found).exists():
        raise RuntimeError("the `oxigraph` server binary (PyPI package oxigraph) is not installed")
    return found


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"server at {url} not ready after {timeout} s")


def stop(proc: subprocess.Popen, timeout: float = 10.0) -> None:
    """Terminate a server process, killing it if it does not exit within ``timeout``."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def oxigraph_server(location: Path) -> Iterator[str]:
    """`oxigraph serve` on a fresh store; yields the base URL (``/query``, ``/update``, ``/store``)."""
    port = free_port()
    proc = subprocess.Popen(
        [oxigraph_binary(), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}", "--union-default-graph"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(base + "/", proc)
        yield base
    finally:
        stop(proc)


@contextmanager
def policykb_server(kb: Path, env: dict[str, str] | None = None, timeout: float = 60.0) -> Iterator[str]:
    """`policykb --kb KB serve` on a free loopback port; yields its base URL."""
    port = free_port()
    command = [
        sys.executable,
        "-c",
        "from policykb.cli import main; main()",
        "--kb",
        str(kb),
        "serve",
        "--port",
        str(port),
    ]
    log = open(kb / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(base + "/health", proc, timeout)
        yield base
    finally:
        stop(proc, 15)
        log.close()


def wait_until(probe: Callable[[], T], what: str, timeout: float = 60.0, every: float = 0.05) -> T:
    """Poll ``probe`` until it returns something truthy and return that; fail after ``timeout`` s.

    For waiting on an observable state (a count in /health, a request that arrived) instead of
    sleeping for a guessed duration: the deadline is generous because only a failure waits it out.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout:g} s: {what}")
        time.sleep(every)


class HeldEndpoint:
    """A SPARQL endpoint that holds every request until :meth:`release` is called.

    Used as the ``SERVICE`` of a query sent to the server under test, it makes that query's
    evaluation last exactly as long as the test wants: pyoxigraph waits for the service's answer
    inside the evaluation, where nothing can interrupt it (like a long sort or aggregate, but with
    no guess about how long that takes on a loaded machine).
    """

    ANSWER = json.dumps(
        {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "held"}}]}}
    ).encode()

    def __init__(self, url: str, hold_limit: float):
        self.url = url
        self.hold_limit = hold_limit  # a safety net: a broken test does not leave threads held forever
        self._released = threading.Event()
        self._changed = threading.Condition()
        self.arrived = 0  # requests received so far
        self.answered = 0  # requests answered (after the release)

    @property
    def held(self) -> int:
        """Requests received and not answered yet."""
        with self._changed:
            return self.arrived - self.answered

    def wait_arrived(self, n: int, timeout: float = 60.0) -> None:
        """Block until ``n`` requests have arrived in total."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.arrived >= n, timeout):
                raise AssertionError(f"{self.arrived} of {n} requests reached the held endpoint in {timeout:g} s")

    def release(self) -> None:
        self._released.set()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        handler.rfile.read(length)
        with self._changed:
            self.arrived += 1
            self._changed.notify_all()
        self._released.wait(self.hold_limit)
        handler.send_response(200)
        handler.send_header("Content-Type", "application/sparql-results+json")
        handler.send_header("Content-Length", str(len(self.ANSWER)))
        handler.end_headers()
        handler.wfile.write(self.ANSWER)
        with self._changed:
            self.answered += 1
            self._changed.notify_all()


@contextmanager
def held_sparql_endpoint(hold_limit: float = 300.0) -> Iterator[HeldEndpoint]:
    """A :class:`HeldEndpoint` on a free loopback port; released and stopped on exit."""
    endpoint: HeldEndpoint

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            endpoint._handle(self)

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    endpoint = HeldEndpoint(f"http://127.0.0.1:{server.server_address[1]}/sparql", hold_limit)
    thread = threading.Thread(target=server.serve_forever, name="held-endpoint", daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        endpoint.release()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
