"""Start real servers for integration tests on a free loopback port, and stop them."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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


def wait_http(
    url: str, proc: subprocess.Popen, timeout: float = 30.0, ok: Callable[[httpx.Response], bool] | None = None
) -> None:
    """Poll ``url`` until it answers (and ``ok`` accepts the answer); fail if the server exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited early with code {proc.returncode}")
        try:
            response = httpx.get(url, timeout=1.0)
            if ok is None or ok(response):
                return
        except httpx.HTTPError:
            pass
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


def virtuoso_binary() -> str | None:
    """``virtuoso-t`` (Debian package virtuoso-opensource-7-bin, installed by scripts/setup.sh), or None."""
    return shutil.which("virtuoso-t")


@dataclass(frozen=True)
class Virtuoso:
    """A running private Virtuoso: its base URL and the SPARQL-Update user (digest auth)."""

    base: str
    user: str
    password: str

    def store(self):
        """A SparqlEndpointStore as a deployment configures it: reads on the public /sparql,
        writes on the digest-authenticated /sparql-auth and /sparql-graph-crud-auth."""
        from store.remote import SparqlEndpointStore

        return SparqlEndpointStore(
            self.base + "/sparql",
            self.base + "/sparql-auth",
            self.base + "/sparql-graph-crud-auth",
            auth_user=self.user,
            auth_password=self.password,
            dialect="virtuoso",
        )


# The smallest virtuoso.ini that runs the SPARQL endpoints: loopback ports, files in one folder,
# modest buffers (the machine is shared), a low ResultSetMaxRows so the contract suite can see the
# row cap that every Virtuoso has (10000 in Debian's default virtuoso.ini).
VIRTUOSO_INI = """\
[Database]
DatabaseFile = {dir}/virtuoso.db
ErrorLogFile = {dir}/virtuoso.log
LockFile = {dir}/virtuoso.lck
TransactionFile = {dir}/virtuoso.trx
xa_persistent_file = {dir}/virtuoso.pxa
Striping = 0
TempStorage = TempDatabase

[TempDatabase]
DatabaseFile = {dir}/virtuoso-temp.db
TransactionFile = {dir}/virtuoso-temp.trx
Striping = 0

[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DirsAllowed = ., {dir}
NumberOfBuffers = 4000
MaxDirtyBuffers = 3000
ServerThreads = 10
CheckpointInterval = 60

[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
ServerRoot = {dir}
ServerThreads = 10
MaxClientConnections = 10

[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryExecutionTime = 120
"""


ATTEMPTS = 3  # Virtuoso starts, each on fresh ports, before a fixture gives up


def _tail(path: Path, chars: int = 400) -> str:
    return " ".join(path.read_text(errors="replace")[-chars:].split()) if path.is_file() else ""


@contextmanager
def virtuoso_server(folder: Path, max_rows: int = 1000, timeout: float = 120.0) -> Iterator[Virtuoso]:
    """A private ``virtuoso-t +foreground`` on a fresh database in ``folder``, on free loopback ports.

    Writes go through a dedicated user with the SPARQL_UPDATE role on the digest-authenticated
    endpoints, as a deployment does it (granting SPARQL_UPDATE to the anonymous ``SPARQL`` user
    would open /sparql to writes from anyone). The default ``dba`` password is replaced too.
    """
    binary = virtuoso_binary()
    if binary is None:
        raise RuntimeError("virtuoso-t is not installed (scripts/setup.sh installs virtuoso-opensource-7-bin)")
    folder.mkdir(parents=True, exist_ok=True)
    ini = folder / "virtuoso.ini"
    for attempt in range(1, ATTEMPTS + 1):
        # A free port can be taken by another process before Virtuoso binds it; it then exits at
        # once: start again, on other ports and a new database.
        for old in folder.glob("virtuoso*"):
            if old.name != "virtuoso.ini":
                old.unlink()
        sql_port, http_port = free_port(), free_port()
        ini.write_text(VIRTUOSO_INI.format(dir=folder, sql_port=sql_port, http_port=http_port, max_rows=max_rows))
        log = open(folder / "server.log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen([binary, "+foreground", "+configfile", str(ini)], stdout=log, stderr=subprocess.STDOUT, cwd=folder)
        base = f"http://127.0.0.1:{http_port}"
        try:
            # The HTTP port opens before the SPARQL pages are registered: wait for a real answer.
            wait_http(base + "/sparql?query=ASK%7B%7D", proc, timeout, ok=lambda r: r.status_code == 200)
            break
        except RuntimeError as exc:
            exited = proc.poll() is not None
            stop(proc, 30)
            log.close()
            if not exited or attempt == ATTEMPTS:
                raise RuntimeError(f"{exc} (attempt {attempt}); its logs end: {_tail(folder / 'server.log')} {_tail(folder / 'virtuoso.log')}") from exc
    try:
        user, password, dba = "policykb", secrets.token_hex(8), secrets.token_hex(8)
        sql = (
            f"DB.DBA.USER_CREATE('{user}', '{password}'); GRANT SPARQL_UPDATE TO \"{user}\"; "
            f"DB.DBA.USER_SET_PASSWORD('dba', '{dba}');"
        )
        isql = shutil.which("isql-vt") or "isql-vt"
        subprocess.run([isql, f"127.0.0.1:{sql_port}", "dba", "dba", f"exec={sql}"], check=True, capture_output=True, timeout=60)
        yield Virtuoso(base, user, password)
    finally:
        stop(proc, 30)  # SIGTERM: Virtuoso checkpoints and exits ("quick shutdown")
        log.close()


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

    @property
    def query(self) -> str:
        """A query that evaluates until the test releases this endpoint: pyoxigraph waits for the
        SERVICE answer inside the evaluation, so the query outlives its 504 (as a long sort or
        aggregate does)."""
        return f"SELECT ?x WHERE {{ SERVICE <{self.url}> {{ ?x ?p ?o }} }}"

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


@contextmanager
def uvicorn_server(app) -> Iterator[str]:
    """The app on a real uvicorn in a thread of this process, on a free loopback port."""
    import uvicorn  # here: only the tests that run an app in-process need it

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, "uvicorn to start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()


def bindings(response: httpx.Response) -> list[dict[str, str]]:
    """The rows of a 200 SPARQL JSON results response, each variable to its value."""
    assert response.status_code == 200, response.text
    return [{k: v["value"] for k, v in row.items()} for row in response.json()["results"]["bindings"]]
