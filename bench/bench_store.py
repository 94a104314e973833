"""Store benchmark: bulk load of generated triples and a 2-hop query, embedded vs remote.

Baselines run in the same process on the same file (machines here are noisy; compare ratios):
- embedded: policykb's OxigraphStore.load vs raw pyoxigraph ``bulk_load``;
- remote: policykb's SparqlEndpointStore.load (Graph Store Protocol POST to ``oxigraph serve``)
  vs ``oxigraph load`` (the server's own offline bulk loader) into an equal fresh store.

Usage: .venv/bin/python bench/bench_store.py [--triples 1000000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import pyoxigraph as ox  # noqa: E402
from support.servers import oxigraph_binary, oxigraph_server  # noqa: E402

from store.oxigraph_store import OxigraphStore  # noqa: E402
from store.remote import SparqlEndpointStore  # noqa: E402

EX = "http://example.org/"
GRAPH = ox.NamedNode(EX + "bench")


def generate(path: Path, triples: int, seed: int = 7) -> None:
    """A policy-like graph: entities linked by a few relations, with labels (≈ 1/4 literals)."""
    rng = random.Random(seed)
    entities = max(triples // 8, 10)
    relations = ["supports", "issues", "implements", "establishes", "appliesTo"]
    with open(path, "w", encoding="utf-8") as out:
        for i in range(triples):
            s = rng.randrange(entities)
            if i % 4 == 0:
                out.write(f'<{EX}e{s}> <http://www.w3.org/2000/01/rdf-schema#label> "Entity {s} of {i}" .\n')
            else:
                out.write(f"<{EX}e{s}> <{EX}{rng.choice(relations)}> <{EX}e{rng.randrange(entities)}> .\n")


TWO_HOP = f"""SELECT ?mid ?end WHERE {{
  <{EX}e1> <{EX}supports> ?mid . ?mid ?p ?end . FILTER(isIRI(?end))
}}"""


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        data = tmpdir / "data.nt"
        t_gen, _ = timed(lambda: generate(data, args.triples))
        print(f"generated {args.triples:,} triples ({data.stat().st_size / 1e6:.0f} MB) in {t_gen:.1f} s")

        # Embedded: baseline raw pyoxigraph bulk_load, then policykb (which also pre-checks syntax).
        raw = ox.Store(str(tmpdir / "raw"))
        t_raw, _ = timed(lambda: raw.bulk_load(path=str(data), format=ox.RdfFormat.N_TRIPLES, to_graph=GRAPH))
        ours = OxigraphStore(tmpdir / "ours")
        t_ours, n = timed(lambda: ours.load(data, graph=GRAPH))
        stored = len(raw)  # generated duplicates collapse
        assert ours.count() == stored, (ours.count(), stored)
        print(f"embedded bulk load   pyoxigraph.bulk_load {t_raw:6.2f} s | policykb {t_ours:6.2f} s "
              f"({args.triples / t_ours:,.0f} triples/s, ratio {t_ours / t_raw:.2f}x)")

        # Remote: baseline `oxigraph load` offline, then policykb over HTTP (GSP) to `oxigraph serve`.
        cli_loc = tmpdir / "cli"
        cmd = [oxigraph_binary(), "load", "--location", str(cli_loc), "--file", str(data), "--graph", GRAPH.value]
        t_cli, _ = timed(lambda: subprocess.run(cmd, check=True, capture_output=True))
        with oxigraph_server(tmpdir / "served") as base:
            remote = SparqlEndpointStore(
                base + "/query", base + "/update", base + "/store", timeout_s=600, bulk_load_param="no_transaction"
            )
            t_remote, _ = timed(lambda: remote.load(data, graph=GRAPH))
            assert remote.count() == stored
            print(f"remote bulk load     oxigraph load        {t_cli:6.2f} s | policykb via GSP {t_remote:6.2f} s "
                  f"(ratio {t_remote / t_cli:.2f}x)")

            t_q_emb, rows_emb = timed(lambda: ours.query(TWO_HOP), repeat=20)
            t_q_rem, rows_rem = timed(lambda: remote.query(TWO_HOP), repeat=20)
            assert len(rows_emb) == len(rows_rem)  # type: ignore[arg-type]
            print(f"2-hop query ({len(rows_emb)} rows, median of 20)  embedded {t_q_emb * 1e3:6.2f} ms | "  # type: ignore[arg-type]
                  f"remote {t_q_rem * 1e3:6.2f} ms (ratio {t_q_rem / t_q_emb:.1f}x)")
            remote.close()
        ours.close()


if __name__ == "__main__":
    main()
