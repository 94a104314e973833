"""CPU of policykb's ``/sparql`` front per request, without HTTP: where a lookup's time goes.

The ASGI app is called in-process (no sockets, no uvicorn) with a form POST of the single-lookup
query of ``bench/bench_sparql_endpoint.py`` over a generated store; per request it reports the wall
time, the CPU of the event loop's thread (the front's own Python: protocol, negotiation, the hand-off)
and of the whole process (thread isolation: the worker thread too), beside the engine's own
evaluation and JSON serialization on the same store.

Usage: .venv/bin/python bench/bench_sparql_front.py [--quads 20000] [--n 3000] [--isolation thread|process]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pyoxigraph as ox  # noqa: E402
from support.servers import oxigraph_binary  # noqa: E402

from bench.bench_sparql_endpoint import QUERIES, generate  # noqa: E402
from core.config import load_config  # noqa: E402
from policykb.server.app import create_app  # noqa: E402


def scope_for(body: bytes) -> dict:
    headers = [
        (b"host", b"127.0.0.1"),
        (b"accept", b"application/sparql-results+json"),
        (b"content-type", b"application/x-www-form-urlencoded"),
        (b"content-length", str(len(body)).encode()),
    ]
    return {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/sparql", "raw_path": b"/sparql", "query_string": b"", "root_path": "", "headers": headers,
        "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 80),
    }


async def measure(app, query: str, n: int) -> tuple[float, float, float]:
    """(wall, loop-thread CPU, process CPU) per request, in seconds."""
    body = urlencode({"query": query}).encode()
    scope = scope_for(body)

    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    async def one() -> None:
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        await app(dict(scope), receive, send)
        if sent[0]["status"] != 200:
            raise SystemExit(f"status {sent[0]['status']}: {sent[-1].get('body', b'')[:200]!r}")

    await app.state.policykb.start()
    for _ in range(200):  # warm-up: children started, caches filled
        await one()
    wall, thread, process = time.perf_counter(), time.thread_time(), time.process_time()
    for _ in range(n):
        await one()
    return (
        (time.perf_counter() - wall) / n,
        (time.thread_time() - thread) / n,
        (time.process_time() - process) / n,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quads", type=int, default=20_000)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--isolation", choices=("thread", "process"), default="thread")
    args = parser.parse_args()
    query = QUERIES["lookup"]
    with tempfile.TemporaryDirectory(prefix="bench-front-") as tmp:
        data, kb = Path(tmp) / "data.nq", Path(tmp) / "kb"
        generate(data, args.quads)
        kb.mkdir()
        subprocess.run(
            [oxigraph_binary(), "load", "--location", str(kb / "store"), "--file", str(data)], check=True, capture_output=True
        )
        (kb / "policykb.toml").write_text(
            f'[server]\nresult_limit = 0\nquery_timeout_s = 120\nquery_isolation = "{args.isolation}"\nwarm_up = false\n',
            encoding="utf-8",
        )
        app = create_app(load_config(kb_dir=kb), qa_opener=None)
        try:
            wall, loop_cpu, process_cpu = asyncio.run(measure(app, query, args.n))
            store = app.state.policykb.engine.store
            started = time.perf_counter()
            for _ in range(args.n):
                store.query(query, use_default_graph_as_union=True).serialize(format=ox.QueryResultsFormat.JSON)
            engine = (time.perf_counter() - started) / args.n
        finally:
            app.state.policykb.close()
            app.state.policykb.store.close()
    print(
        f"single lookup, {args.quads:,} quads, isolation {args.isolation}, {args.n} requests in-process: "
        f"wall {wall * 1e6:.0f} us, event-loop thread CPU {loop_cpu * 1e6:.0f} us, process CPU {process_cpu * 1e6:.0f} us "
        f"(query processes not counted); the engine alone {engine * 1e6:.0f} us"
    )


if __name__ == "__main__":
    main()
