"""SPARQL endpoint throughput: policykb's /sparql vs `oxigraph serve`, plus direct in-process queries.

One run, same generated dataset loaded into both servers, same queries, same load generator:
``--clients`` concurrent keep-alive HTTP clients on loopback (spread over worker processes so the
client side is not GIL-bound), each sending its query as fast as answers come back, for
``--seconds`` per query and round (rounds interleave the targets). "direct" runs the same queries
with the same number of threads straight
on a pyoxigraph Store (evaluation + JSON serialization, no HTTP): the ceiling for both servers.

The machines here are shared and small (2 cores, which the clients share with the server): read
the ratio, not the absolute figures.

``--ceiling`` adds the least any Python front could do (:mod:`bench.lean_sparql_app`: a bare ASGI
app under uvicorn that evaluates on its event loop, with none of the endpoint's safeguards): what
ratio to ``oxigraph serve`` is within reach of a uvicorn front at all.

Usage: .venv/bin/python bench/bench_sparql_endpoint.py [--quads 200000] [--clients 16] [--seconds 4] [--ceiling]
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing as mp
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import pyoxigraph as ox  # noqa: E402
from support.servers import free_port, oxigraph_binary, wait_http  # noqa: E402

ID = "https://w3id.org/policykb/id/"
PKB = "https://w3id.org/policykb/ontology#"
DCT = "http://purl.org/dc/terms/"
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"
TYPES = ["Actor", "Policy", "Solution", "Programme", "GeographicalArea", "Funds"]
RELATIONS = ["supports", "issues", "implements", "establishes", "appliesTo", "funds"]
WORDS = "energy solar wind grid hydrogen heat pump target capacity province municipality permit subsidy".split()


def generate(path: Path, quads: int, seed: int = 11) -> None:
    """A policykb-shaped dataset: documents → chunks (text) and entities; relations in chunk graphs."""
    rng = random.Random(seed)
    chunks = max(quads // 25, 10)
    docs = max(chunks // 10, 1)
    entities = max(chunks // 2, 10)
    meta = f"<{ID}graph/meta>"
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for d in range(docs):
            out.write(f'<{ID}doc/d{d}> <{DCT}title> "Policy document {d}" {meta} .\n')
            out.write(f'<{ID}doc/d{d}> <{DCT}issued> "20{10 + d % 15}-0{1 + d % 9}-15"^^<{XSD}date> {meta} .\n')
            written += 2
        for e in range(entities):
            kind = TYPES[e % len(TYPES)]
            out.write(f"<{ID}entity/e{e}> <{RDF_TYPE}> <{PKB}{kind}> {meta} .\n")
            out.write(f'<{ID}entity/e{e}> <{SKOS}prefLabel> "{kind} {e}"@en {meta} .\n')
            written += 2
        c = 0
        while written < quads:
            chunk = f"<{ID}chunk/c{c}>"
            graph = chunk
            text = " ".join(rng.choice(WORDS) for _ in range(30))
            out.write(f"{chunk} <{RDF_TYPE}> <{PKB}Chunk> {meta} .\n")
            out.write(f"{chunk} <{PKB}partOfDocument> <{ID}doc/d{c % docs}> {meta} .\n")
            out.write(f'{chunk} <{PKB}text> "{text}" {meta} .\n')
            written += 3
            for _ in range(5):
                s, o = rng.randrange(entities), rng.randrange(entities)
                out.write(f"<{ID}entity/e{s}> <{PKB}{rng.choice(RELATIONS)}> <{ID}entity/e{o}> {graph} .\n")
                out.write(f"<{ID}entity/e{s}> <{PKB}mentionedIn> {chunk} {meta} .\n")
                written += 2
            c += 1


QUERIES: dict[str, str] = {
    "lookup": f"SELECT ?title WHERE {{ <{ID}doc/d3> <{DCT}title> ?title }}",
    "chunks of a doc": f"""SELECT ?chunk ?text WHERE {{
  ?chunk <{PKB}partOfDocument> <{ID}doc/d7> ; <{PKB}text> ?text }} LIMIT 20""",
    "2-hop relations": f"""SELECT ?mid ?p2 ?end WHERE {{
  <{ID}entity/e5> <{PKB}supports>|<{PKB}funds> ?mid . ?mid ?p2 ?end . ?end a <{PKB}Policy> }} LIMIT 100""",
    "actors in a doc": f"""SELECT DISTINCT ?e ?label WHERE {{
  ?c <{PKB}partOfDocument> <{ID}doc/d11> . ?e <{PKB}mentionedIn> ?c ; a <{PKB}Actor> ; <{SKOS}prefLabel> ?label }}""",
    "relations per doc (agg)": f"""SELECT ?p (COUNT(*) AS ?n) WHERE {{
  ?c <{PKB}partOfDocument> <{ID}doc/d2> . GRAPH ?c {{ ?s ?p ?o }} }} GROUP BY ?p ORDER BY DESC(?n)""",
    "1,000 labels": f"""SELECT ?e ?label WHERE {{ ?e <{SKOS}prefLabel> ?label }} LIMIT 1000""",
    "text search": f"""SELECT ?chunk WHERE {{
  ?chunk <{PKB}text> ?t FILTER(CONTAINS(?t, "hydrogen subsidy")) }} LIMIT 20""",
}
MIX = "mix (all queries in turn)"
TARGETS = ("direct (in-process)", "oxigraph serve", "policykb /sparql", "policykb threads")
CEILING = "uvicorn ceiling"


# --- load generator --------------------------------------------------------------------------------
def _client_process(host: str, port: int, path: str, queries: list[str], threads: int, seconds: float, out) -> None:
    """``threads`` keep-alive clients in one process; reports (answers, errors)."""
    counts = [0] * threads
    errors = [0] * threads
    stop = time.monotonic() + seconds

    def client(index: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        headers = {"Accept": "application/sparql-results+json", "Content-Type": "application/x-www-form-urlencoded"}
        bodies = [urlencode({"query": q}) for q in queries]
        i = index
        while time.monotonic() < stop:
            try:
                conn.request("POST", path, body=bodies[i % len(bodies)], headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status == 200:
                    counts[index] += 1
                else:
                    errors[index] += 1
            except (OSError, http.client.HTTPException):
                errors[index] += 1
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=120)
            i += 1
        conn.close()

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.put((sum(counts), sum(errors), time.monotonic() - started))


def http_throughput(url: str, queries: list[str], clients: int, seconds: float) -> tuple[float, int, int]:
    """(answers per second, answers, errors) of ``clients`` keep-alive clients over ``seconds``."""
    host_port, _, path = url.removeprefix("http://").partition("/")
    host, _, port = host_port.partition(":")
    procs = min(4, clients)
    per = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    queue: mp.Queue = mp.Queue()
    workers = [
        mp.Process(target=_client_process, args=(host, int(port), "/" + path, queries, n, seconds, queue)) for n in per
    ]
    for w in workers:
        w.start()
    results = [queue.get() for _ in workers]
    for w in workers:
        w.join()
    answered = sum(r[0] for r in results)
    return answered / max(r[2] for r in results), answered, sum(r[1] for r in results)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its live descendants (the query processes), all
    their threads (Linux /proc). A killed child's CPU drops out; none is killed in this benchmark."""
    total = 0.0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            for task in Path(f"/proc/{current}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def direct_throughput(store: ox.Store, queries: list[str], threads: int, seconds: float) -> float:
    stop = time.monotonic() + seconds
    counts = [0] * threads

    def worker(index: int) -> None:
        i = index
        while time.monotonic() < stop:
            result = store.query(queries[i % len(queries)], use_default_graph_as_union=True)
            result.serialize(format=ox.QueryResultsFormat.JSON)
            counts[index] += 1
            i += 1

    started = time.monotonic()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(counts) / (time.monotonic() - started)


# --- servers -----------------------------------------------------------------------------------------
def start(command: list[str], url: str, env: dict | None = None) -> subprocess.Popen:
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}
    )
    wait_http(url, proc, 120)
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quads", type=int, default=200_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=2.0, help="measurement time per query, target and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; each cell reports the median")
    parser.add_argument("--only", action="append", help="run only these queries (by name; repeatable)")
    parser.add_argument("--ceiling", action="store_true", help="also measure bench/lean_sparql_app.py (see above)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-sparql-") as tmp:
        work = Path(tmp)
        data = work / "data.nq"
        generate(data, args.quads)
        oxi_dir, kb_dir, threads_dir, direct_dir = work / "oxigraph", work / "kb", work / "kb-threads", work / "direct"
        lean_dir = work / "lean"
        kb_dir.mkdir()
        threads_dir.mkdir()
        stores = (oxi_dir, kb_dir / "store", threads_dir / "store", direct_dir, *((lean_dir,) if args.ceiling else ()))
        for location in stores:  # the same bulk loader
            subprocess.run(
                [oxigraph_binary(), "load", "--location", str(location), "--file", str(data)],
                check=True,
                capture_output=True,
            )
        # The endpoint's own limits must not cut this benchmark's results.
        for folder, isolation in ((kb_dir, "process"), (threads_dir, "thread")):
            (folder / "policykb.toml").write_text(
                f'[server]\nresult_limit = 0\nquery_timeout_s = 120\nquery_isolation = "{isolation}"\n', encoding="utf-8"
            )

        names = args.only or [*QUERIES, MIX]
        query_sets = {name: [QUERIES[name]] for name in QUERIES} | {MIX: list(QUERIES.values())}
        targets = (*TARGETS, CEILING) if args.ceiling else TARGETS
        samples: dict[str, dict[str, list[float]]] = {name: {t: [] for t in targets} for name in names}
        errors = {t: 0 for t in targets[1:]}
        cpu: dict[str, dict[str, list[float]]] = {name: {t: [] for t in targets[1:]} for name in names}

        oxi_port, kb_port, threads_port = free_port(), free_port(), free_port()
        oxi = start(
            [
                oxigraph_binary(),
                "serve",
                "--location",
                str(oxi_dir),
                "--bind",
                f"127.0.0.1:{oxi_port}",
                "--union-default-graph",
            ],
            f"http://127.0.0.1:{oxi_port}/",
        )
        kb, kb_threads = (
            start(
                [sys.executable, "-c", "from policykb.cli import main; main()", "--kb", str(d), "serve", "--port", str(port)],
                f"http://127.0.0.1:{port}/health",
            )
            for d, port in ((kb_dir, kb_port), (threads_dir, threads_port))
        )
        store = ox.Store(str(direct_dir))
        urls = {
            "oxigraph serve": f"http://127.0.0.1:{oxi_port}/query",
            "policykb /sparql": f"http://127.0.0.1:{kb_port}/sparql",
            "policykb threads": f"http://127.0.0.1:{threads_port}/sparql",
        }
        pids = {"oxigraph serve": oxi.pid, "policykb /sparql": kb.pid, "policykb threads": kb_threads.pid}
        lean = None
        if args.ceiling:
            lean_port = free_port()
            lean = start([sys.executable, str(ROOT / "bench" / "lean_sparql_app.py"), str(lean_dir), str(lean_port)],
                         f"http://127.0.0.1:{lean_port}/health")
            urls[CEILING] = f"http://127.0.0.1:{lean_port}/sparql"
            pids[CEILING] = lean.pid
        try:
            # Rounds alternate the targets, so that a burst of load from elsewhere on a shared
            # machine hits all of them; each cell reports its median round.
            for _ in range(args.rounds):
                for name in names:
                    queries = query_sets[name]
                    direct_throughput(store, queries, args.clients, 0.3)
                    samples[name]["direct (in-process)"].append(
                        direct_throughput(store, queries, args.clients, args.seconds)
                    )
                    for target, url in urls.items():
                        http_throughput(url, queries, args.clients, 0.3)  # warm-up: connections, caches
                        before = cpu_seconds(pids[target])
                        rate, answered, failed = http_throughput(url, queries, args.clients, args.seconds)
                        cpu[name][target].append((cpu_seconds(pids[target]) - before) / max(answered, 1))
                        samples[name][target].append(rate)
                        errors[target] += failed
        finally:
            stop(oxi)
            stop(kb)
            stop(kb_threads)
            if lean is not None:
                stop(lean)
            del store
        rows = {name: {t: statistics.median(v) for t, v in cells.items()} for name, cells in samples.items()}
        cpu_us = {name: {t: statistics.median(v) * 1e6 for t, v in cells.items()} for name, cells in cpu.items()}

    print(
        f"SPARQL endpoint throughput: {args.quads:,} quads, {args.clients} concurrent clients, "
        f"median of {args.rounds} x {args.seconds:g} s, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    # Throughput on a shared machine depends on what else runs; the servers' own CPU time per
    # answered query does much less, and bounds the throughput of a dedicated machine.
    print(
        f"{'query':<26}{'direct':>9}{'oxigraph':>10}{'policykb':>10}{'ratio':>7}{'threads':>9}{'ratio':>7}"
        f"{'oxigraph':>11}{'policykb':>10}{'ratio':>7}{'threads':>9}{'ratio':>7}"
    )
    print(f"{'':<26}{'q/s':>9}{'q/s':>10}{'q/s':>10}{'':>7}{'q/s':>9}{'':>7}{'CPU us/q':>11}{'CPU us/q':>10}{'':>7}")
    for name in names:
        r, c = rows[name], cpu_us[name]

        def ratio(target: str, r=r) -> float:
            return r[target] / r["oxigraph serve"] if r["oxigraph serve"] else float("nan")

        def efficiency(target: str, c=c) -> float:
            return c["oxigraph serve"] / c[target] if c[target] else float("nan")

        print(
            f"{name:<26}{r['direct (in-process)']:>9,.0f}{r['oxigraph serve']:>10,.0f}"
            f"{r['policykb /sparql']:>10,.0f}{ratio('policykb /sparql'):>7.0%}"
            f"{r['policykb threads']:>9,.0f}{ratio('policykb threads'):>7.0%}{c['oxigraph serve']:>11,.0f}"
            f"{c['policykb /sparql']:>10,.0f}{efficiency('policykb /sparql'):>7.0%}"
            f"{c['policykb threads']:>9,.0f}{efficiency('policykb threads'):>7.0%}"
        )
    print(
        "ratio = policykb relative to oxigraph serve (throughput; CPU efficiency = oxigraph CPU / policykb CPU); "
        "policykb = query processes (the default), threads = query_isolation \"thread\""
    )
    if args.ceiling:
        print(f"\n{'query':<26}{CEILING + ' q/s':>22}{'ratio':>7}{'CPU us/q':>10}   policykb /sparql as a share of it")
        for name in names:
            r, c = rows[name], cpu_us[name]
            print(
                f"{name:<26}{r[CEILING]:>22,.0f}{r[CEILING] / r['oxigraph serve']:>7.0%}{c[CEILING]:>10,.0f}"
                f"   {r['policykb /sparql'] / r[CEILING]:>6.0%}"
            )
    print(f"errors: {errors}")


if __name__ == "__main__":
    main()
