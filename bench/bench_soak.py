"""Soak test of `policykb serve`: sustained mixed load, zero errors, bounded memory.

Starts `policykb serve` on a KB (``--kb``, or the example corpus ingested into a temporary one),
then for ``--seconds`` runs ``--sparql-clients`` keep-alive SPARQL clients (a mix of SELECT, ASK,
CONSTRUCT, aggregates and text filters, in several result formats) and ``--ask-clients`` /ask
clients (extractive answers: no LLM). Every ``--sample`` seconds it reads the resident memory
(RSS) of the server and its child processes. It prints, per kind of request, the answers, the
errors and the p50/p99 latencies, and the memory series with its start, maximum and end.

Pass/fail (exit 1 on failure): no errors at all, and the largest RSS after warm-up (the first
``--warmup`` seconds) at most ``--bound`` times the RSS at the end of warm-up.

The machines here are shared and small: throughput and latencies are noisy; errors and memory
growth are the point.

Usage: .venv/bin/python bench/bench_soak.py [--kb KB] [--seconds 300] [--warmup 60] [--pause 0]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.servers import free_port, stop, wait_http  # noqa: E402

# The test models: a KB built here is embedded with the same model the server then loads.
MODELS = {"POLICYKB_EMBED__MODEL": "all-MiniLM-L6-v2", "POLICYKB_LLM__MODEL_PATH": "smollm2-135m-instruct"}
JSON_RESULTS, CSV, TURTLE = "application/sparql-results+json", "text/csv", "text/turtle"
QUERIES = [  # (name, query, Accept)
    ("titles", "SELECT ?d ?t WHERE { ?d dcterms:title ?t } ORDER BY ?t", JSON_RESULTS),
    ("count", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", JSON_RESULTS),
    ("ask", "ASK { ?s a ?type }", JSON_RESULTS),
    ("graphs", "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g ORDER BY DESC(?n)", CSV),
    ("text", 'SELECT ?c WHERE { ?c pkb:text ?t FILTER(CONTAINS(LCASE(?t), "solar")) } LIMIT 50', JSON_RESULTS),
    ("construct", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 200", TURTLE),
]
QUESTIONS = [
    "Who supports rooftop photovoltaic projects?",
    "What must installers of rooftop solar panels report?",
    "What does the hydrogen strategy aim for?",
    "Which rules apply to wind turbines near homes?",
]


# --- load generator --------------------------------------------------------------------------------
def _requests(kind: str) -> list[tuple[str, str, bytes, dict[str, str]]]:
    """(label, path, body, headers) that one client of ``kind`` cycles through."""
    if kind == "sparql":
        form = {"Content-Type": "application/x-www-form-urlencoded"}
        return [(f"sparql:{n}", "/sparql", urlencode({"query": q}).encode(), {**form, "Accept": a}) for n, q, a in QUERIES]
    body = [json.dumps({"question": q, "answer": "extractive"}).encode() for q in QUESTIONS]
    return [("ask", "/ask", b, {"Content-Type": "application/json"}) for b in body]


def _client_process(port: int, kind: str, threads: int, seconds: float, pause: float, out) -> None:
    """``threads`` keep-alive clients of one kind; reports {label: [latencies]} and {label: errors}."""
    latencies: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    samples: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    plan = _requests(kind)

    def client(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        i = index
        while time.monotonic() < stop:
            label, path, body, headers = plan[i % len(plan)]
            started = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=headers)
                response = conn.getresponse()
                payload = response.read()
                ok, why = response.status == 200, f"{response.status} {payload[:200]!r}"
            except (OSError, http.client.HTTPException) as exc:
                ok, why = False, f"{type(exc).__name__}: {exc}"
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            elapsed = time.perf_counter() - started
            with lock:
                if ok:
                    latencies.setdefault(label, []).append(elapsed)
                else:
                    errors[label] = errors.get(label, 0) + 1
                    if len(samples) < 5:
                        samples.append(f"{label}: {why}")
            i += 1
            if pause:
                time.sleep(pause)
        conn.close()

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.put((latencies, errors, samples))


# --- the server and its memory ------------------------------------------------------------------------
def rss_mib(pid: int) -> tuple[float, float]:
    """(RSS of ``pid``, RSS of it and all its live descendants) in MiB (Linux /proc)."""
    own, total, todo = 0.0, 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
        kib = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        total += kib / 1024
        if current == pid:
            own = kib / 1024
    return own, total


def build_kb(where: Path) -> Path:
    from support.kbs import build_ingested_kb

    print(f"building a KB from examples/corpus in {where} ...", flush=True)
    return build_ingested_kb(where)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=Path, help="a built KB directory (default: ingest examples/corpus)")
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before the memory baseline")
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between RSS samples")
    parser.add_argument("--sparql-clients", type=int, default=16)
    parser.add_argument("--ask-clients", type=int, default=4)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds each client waits between requests")
    parser.add_argument("--bound", type=float, default=1.25, help="max RSS after warm-up / RSS at the end of warm-up")
    args = parser.parse_args()
    for key, value in MODELS.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        kb = args.kb or build_kb(Path(tmp) / "kb")
        port = free_port()
        log = open(Path(tmp) / "server.log", "wb")  # noqa: SIM115 - closed below
        server = subprocess.Popen(
            [sys.executable, "-m", "policykb", "--kb", str(kb), "serve", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
        )
        try:
            wait_http(f"http://127.0.0.1:{port}/health", server, 120)
            prime(port)
            return soak(args, server, port)
        finally:
            stop(server, timeout=30)
            log.close()
            tail = (Path(tmp) / "server.log").read_text(errors="replace").splitlines()[-5:]
            if server.returncode not in (0, -15):
                print("server log:", *tail, sep="\n  ")


def prime(port: int) -> None:
    """One question before the clock starts: the first opens the answering API (loads the models)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    _, path, body, headers = _requests("ask")[0]
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"the first question failed: HTTP {response.status}")


def soak(args: argparse.Namespace, server: subprocess.Popen, port: int) -> int:
    queue: mp.Queue = mp.Queue()
    plan = [("sparql", n) for n in _split(args.sparql_clients, 2)] + [("ask", args.ask_clients)]
    procs = [
        mp.Process(target=_client_process, args=(port, kind, n, args.seconds, args.pause, queue)) for kind, n in plan if n
    ]
    started = time.monotonic()
    for p in procs:
        p.start()
    series: list[tuple[float, float, float]] = []  # (seconds, server RSS, with children)
    results: list = []
    # Read results while sampling: a client process cannot exit before its queued result is read.
    while len(results) < len(procs) and server.poll() is None:
        series.append((time.monotonic() - started, *rss_mib(server.pid)))
        deadline = time.monotonic() + args.sample
        while len(results) < len(procs) and (left := deadline - time.monotonic()) > 0:
            try:
                results.append(queue.get(timeout=left))
            except Empty:
                break
    for p in procs:
        p.join(timeout=60)
    series.append((time.monotonic() - started, *rss_mib(server.pid)))
    return report(args, results, series, server.poll())


def _split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def report(args, results, series, exit_code) -> int:
    latencies: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    samples: list[str] = []
    for lat, err, smp in results:
        for label, values in lat.items():
            latencies.setdefault(label, []).extend(values)
        for label, n in err.items():
            errors[label] = errors.get(label, 0) + n
        samples += smp
    elapsed = series[-1][0]
    print(f"\nsoak: {args.sparql_clients} SPARQL + {args.ask_clients} /ask clients for {args.seconds:g} s (pause {args.pause:g} s)")
    print(f"{'kind':<18}{'answers':>9}{'errors':>8}{'per s':>8}{'p50 ms':>9}{'p99 ms':>9}")
    for label in sorted(set(latencies) | set(errors)):
        values = latencies.get(label, [])
        print(
            f"{label:<18}{len(values):>9}{errors.get(label, 0):>8}{len(values) / elapsed:>8.1f}"
            f"{percentile(values, 0.5) * 1000:>9.1f}{percentile(values, 0.99) * 1000:>9.1f}"
        )
    total_errors = sum(errors.values())
    print(f"total: {sum(len(v) for v in latencies.values())} answers, {total_errors} errors")
    for line in samples:
        print(f"  error: {line}")

    print("\nRSS MiB (server / server + children) every", f"{args.sample:g} s:")
    print("  " + " ".join(f"{t:.0f}s:{own:.0f}/{tree:.0f}" for t, own, tree in series))
    warm = [s for s in series if s[0] <= args.warmup]
    after = [s for s in series if s[0] > args.warmup]
    base = warm[-1][2] if warm else series[0][2]
    peak = max((s[2] for s in after), default=base)
    print(
        f"RSS (server + children): start {series[0][2]:.0f}, end of warm-up ({args.warmup:g} s) {base:.0f}, "
        f"max after warm-up {peak:.0f}, end {series[-1][2]:.0f} MiB"
    )
    bounded = peak <= args.bound * base
    print(f"bound: max RSS after warm-up <= {args.bound:g} x RSS at the end of warm-up: "
          f"{peak:.0f} <= {args.bound * base:.0f} MiB -> {'ok' if bounded else 'EXCEEDED'}")
    alive = exit_code is None
    if not alive:
        print(f"the server exited during the soak (code {exit_code})")
    ok = total_errors == 0 and bounded and alive
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
