"""Start real servers for integration tests on a free loopback port, and stop them."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


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
