"""Benchmark: German analysis in the BM25 index (store.analysis) vs the English-only analysis before it.

Corpus: the ten German energy laws (shared/data/policy_corpora/de_energy_laws/*.md) cut into
chunk-sized pieces (~150 words). Queries: word windows (3-10 words) of random pieces, seeded. The
same texts are indexed twice in one process — every piece analyzed as English (the index before
this analysis existed) and as German (Snowball German stems, compound parts) — and the build time,
the vocabulary, the query latency and the share of queries whose top hit is the piece they were
drawn from are printed side by side. Machines are noisy: compare the ratios.

    .venv/bin/python bench/bench_analysis.py [--words 150 --queries 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from store.keyword_index import KeywordIndex  # noqa: E402


def pieces(folder: Path, words: int) -> list[str]:
    out = []
    for path in sorted(folder.glob("*.md")):
        tokens = path.read_text(encoding="utf-8").split()
        out += [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--words", type=int, default=150)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    texts = pieces(args.data_dir / "policy_corpora" / "de_energy_laws", args.words)
    ids = [f"p{i}" for i in range(len(texts))]
    rng = random.Random(args.seed)
    queries = []
    for _ in range(args.queries):
        i = rng.randrange(len(texts))
        tokens = texts[i].split()
        n = rng.randint(3, 10)
        start = rng.randrange(max(1, len(tokens) - n))
        queries.append((ids[i], " ".join(tokens[start : start + n])))
    print(f"{len(texts)} pieces of ~{args.words} words, {len(queries)} queries")
    print(f"{'analysis':10s} {'build s':>8s} {'terms':>7s} {'query p50 ms':>13s} {'p95 ms':>7s} {'own piece first':>16s}")
    rows = {}
    for label, language in (("english", "en"), ("german", "de")):
        started = time.perf_counter()
        index = KeywordIndex(ids, texts, [language] * len(texts))
        build = time.perf_counter() - started
        times, first = [], 0
        for own, query in queries:
            t = time.perf_counter()
            hits = index.search(query, 10)
            times.append((time.perf_counter() - t) * 1000)
            first += bool(hits) and hits[0].id == own
        p95 = statistics.quantiles(times, n=20)[18]
        rows[label] = (build, statistics.median(times))
        print(f"{label:10s} {build:8.2f} {index.terms:7d} {statistics.median(times):13.2f} {p95:7.2f} {first / len(queries):16.3f}")
    (eb, eq), (gb, gq) = rows["english"], rows["german"]
    print(f"german / english: build {gb / eb:.2f}x, query p50 {gq / eq:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
