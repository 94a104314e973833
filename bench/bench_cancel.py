"""Runaway SPARQL queries: how soon after its deadline does a query stop using the CPU?

Three shapes that no serializer check can interrupt, because their evaluation blocks before the
first row: a cartesian product counted, a sort of a large join, a GROUP BY over it. Each is sent
alone to a server with ``query_timeout_s = --deadline``:

- ``policykb /sparql`` (default ``query_isolation = "process"``: the query's child process is killed),
- ``policykb threads`` (``query_isolation = "thread"``: the query is abandoned, keeps running),
- ``oxigraph serve --timeout-s`` (its own engine timeout), as the reference.

The CPU use of the server and its children is sampled every 50 ms; "CPU freed" is the first moment
after the deadline from which it stays under 10% of a core for 0.5 s. Observation ends
``--observe`` seconds after the deadline; a query still burning CPU then is reported as ">N s".
Between runs a server that still burns CPU is restarted, so runs do not overlap.

Usage: .venv/bin/python bench/bench_cancel.py [--quads 30000] [--deadline 2] [--observe 20]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_sparql_endpoint import generate, start, stop  # noqa: E402
from support.servers import free_port, oxigraph_binary  # noqa: E402

SHAPES = {
    "cartesian count": "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
    "sort of a join": "SELECT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f LIMIT 1",
    "group by a join": "SELECT ?c (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f } GROUP BY ?c ?f LIMIT 1",
}
IDLE_SHARE, IDLE_FOR, EVERY = 0.10, 0.5, 0.05


def tree(pid: int) -> list[int]:
    """``pid`` and its live descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def cpu_of(pids: list[int]) -> float:
    """CPU seconds of those of ``pids`` still alive (a killed one stops counting, as it stops using CPU)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields[0] != "Z":  # a zombie's CPU is final
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def run_one(url: str, pid: int, query: str, deadline: float, observe: float) -> tuple[str, float, float | None]:
    """(HTTP status, seconds to the response, seconds from the deadline until the CPU was freed)."""
    answer: dict[str, object] = {}
    started = time.monotonic()

    def send() -> None:
        try:
            r = httpx.get(url + "?" + urlencode({"query": query}), timeout=deadline + observe + 10)
            answer["status"] = str(r.status_code)
        except httpx.HTTPError as exc:
            answer["status"] = type(exc).__name__
        answer["at"] = time.monotonic() - started

    client = threading.Thread(target=send, daemon=True)
    client.start()
    # The processes that exist now (the server, its query children): a replacement child started
    # after a kill is not the runaway query, and its start-up must not count as the query's CPU.
    time.sleep(EVERY)
    watched = tree(pid)
    last_cpu, last_t = cpu_of(watched), time.monotonic()
    idle_since: float | None = None
    freed: float | None = None
    while time.monotonic() - started < deadline + observe:
        time.sleep(EVERY)
        cpu, now = cpu_of(watched), time.monotonic()
        share = max(cpu - last_cpu, 0.0) / (now - last_t)
        last_cpu, last_t = cpu, now
        if share < IDLE_SHARE:
            idle_since = idle_since or now
            if now - idle_since >= IDLE_FOR and now - started > deadline:
                freed = max(idle_since - started - deadline, 0.0)
                break
        else:
            idle_since = None
    client.join(timeout=observe)
    return str(answer.get("status", "no answer")), float(answer.get("at", float("nan"))), freed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quads", type=int, default=30_000)
    parser.add_argument("--deadline", type=float, default=2.0, help="query_timeout_s / --timeout-s")
    parser.add_argument("--observe", type=float, default=20.0, help="seconds watched after the deadline")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-cancel-") as tmp:
        work = Path(tmp)
        data = work / "data.nq"
        generate(data, args.quads)
        servers: dict[str, tuple[list[str], str, str]] = {}  # name -> (command, health URL, query URL)
        for name, isolation in (("policykb /sparql", "process"), ("policykb threads", "thread")):
            kb = work / isolation
            kb.mkdir()
            subprocess.run([oxigraph_binary(), "load", "--location", str(kb / "store"), "--file", str(data)], check=True)
            (kb / "policykb.toml").write_text(
                f'[server]\nquery_timeout_s = {args.deadline}\nquery_isolation = "{isolation}"\n', encoding="utf-8"
            )
            port = free_port()
            command = [sys.executable, "-c", "from policykb.cli import main; main()", "--kb", str(kb)]
            servers[name] = (
                [*command, "serve", "--port", str(port)],
                f"http://127.0.0.1:{port}/health",
                f"http://127.0.0.1:{port}/sparql",
            )
        oxi_dir = work / "oxigraph"
        subprocess.run([oxigraph_binary(), "load", "--location", str(oxi_dir), "--file", str(data)], check=True)
        port = free_port()
        servers[f"oxigraph serve --timeout-s {args.deadline:g}"] = (
            [oxigraph_binary(), "serve", "--location", str(oxi_dir), "--bind", f"127.0.0.1:{port}"]
            + ["--union-default-graph", "--timeout-s", f"{args.deadline:g}"],
            f"http://127.0.0.1:{port}/",
            f"http://127.0.0.1:{port}/query",
        )

        rows = []
        for server, (command, health, url) in servers.items():
            proc = start(command, health)
            try:
                for shape, query in SHAPES.items():
                    status, at, freed = run_one(url, proc.pid, query, args.deadline, args.observe)
                    rows.append((server, shape, status, at, freed))
                    print(f"  {server} / {shape}: {status} after {at:.2f} s, CPU freed {_freed(freed, args)}")
                    if freed is None:  # still burning: restart so that the next run starts clean
                        stop(proc)
                        proc = start(command, health)
            finally:
                stop(proc)

    print(
        f"\nRunaway queries, deadline {args.deadline:g} s, {args.quads:,} quads, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'server':<32}{'query':<18}{'answer':>8}{'after s':>9}{'CPU freed after the deadline':>30}")
    for server, shape, status, at, freed in rows:
        print(f"{server:<32}{shape:<18}{status:>8}{at:>9.2f}{_freed(freed, args):>30}")


def _freed(freed: float | None, args: argparse.Namespace) -> str:
    return f"{freed:.2f} s" if freed is not None else f"> {args.observe:g} s (still running)"


if __name__ == "__main__":
    main()
