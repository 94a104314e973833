"""Benchmark: the BM25 keyword index (store.keyword_index, bm25s) vs rank_bm25.BM25Okapi.

Corpus: ~2,000 chunk-sized texts (~150 words) from real legislation — the EU regulation articles
in shared/data/policy_corpora/eu_regulations_pypi/articles.jsonl (English, ~1,000 pieces), topped
up with the German energy laws in de_energy_laws/*.md, as the KB holds both languages. Queries:
200 word windows (3-10 words) drawn from random pieces, seeded. Both engines get the same tokens
(store.keyword_index.tokenize) and tokenization is timed inside each, so the ratio is the engine's.
Same run, same process; machines are noisy, compare the ratios. Also reported: save/load time and
top-10 overlap (BM25Okapi's idf differs slightly, so rankings agree mostly, not exactly).

    .venv/bin/python bench/bench_bm25.py [--chunks 2000 --words 150 --queries 200 --k 10]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rank_bm25 import BM25Okapi  # noqa: E402

from store.keyword_index import KeywordIndex, tokenize  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "policy_corpora"
if not DATA.is_dir():
    DATA = Path("/work/shared/data/policy_corpora")


def pieces(text: str, words: int) -> list[str]:
    tokens = text.split()
    return [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words) if len(tokens[i : i + words]) >= words // 3]


def corpus(n: int, words: int) -> tuple[list[str], int]:
    """``n`` texts: English articles first, then German laws; and how many are English."""
    texts: list[str] = []
    with open(DATA / "eu_regulations_pypi" / "articles.jsonl", encoding="utf-8") as f:
        for line in f:
            texts.extend(pieces(json.loads(line)["text"], words))
    english = min(len(texts), n)
    for path in sorted((DATA / "de_energy_laws").glob("*.md")):
        if len(texts) >= n:
            break
        body = path.read_text(encoding="utf-8")
        if body.startswith("---"):
            body = body.split("---", 2)[-1]  # YAML front matter
        texts.extend(pieces(body, words))
    return texts[:n], english


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


class Okapi:
    """rank_bm25 with the same tokenizer and a top-k selection, as a retriever would use it."""

    def __init__(self, texts: list[str]):
        self.bm25 = BM25Okapi([tokenize(t) for t in texts])

    def search(self, query: str, k: int) -> list[int]:
        scores = self.bm25.get_scores(tokenize(query))
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        return [int(i) for i in top[np.argsort(-scores[top])] if scores[i] > 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    texts, english = corpus(args.chunks, args.words)
    ids = [f"chunk/{i}" for i in range(len(texts))]
    rng = random.Random(7)
    queries = []
    for _ in range(args.queries):
        words = rng.choice(texts).split()
        size = rng.randint(3, 10)
        start = rng.randrange(max(1, len(words) - size))
        queries.append(" ".join(words[start : start + size]))
    print(f"corpus: {len(texts)} texts ({english} English, {len(texts) - english} German), "
          f"{sum(len(t.split()) for t in texts)} words; {len(queries)} queries, k={args.k}")  # fmt: skip

    started = time.perf_counter()
    ours = KeywordIndex(ids, texts)
    ours_build = time.perf_counter() - started
    started = time.perf_counter()
    okapi = Okapi(texts)
    okapi_build = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        ours.save(Path(tmp) / "bm25")
        save_s = time.perf_counter() - started
        started = time.perf_counter()
        loaded = KeywordIndex.load(Path(tmp) / "bm25")
        load_s = time.perf_counter() - started
    assert all(loaded.search(q, args.k) == ours.search(q, args.k) for q in queries[:20])

    for q in queries[:5]:  # warm-up
        ours.search(q, args.k)
        okapi.search(q, args.k)
    ours_ms, okapi_ms, overlap = [], [], []
    for q in queries:
        started = time.perf_counter()
        hits = ours.search(q, args.k)
        ours_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        rows = okapi.search(q, args.k)
        okapi_ms.append((time.perf_counter() - started) * 1000)
        a, b = {h.id for h in hits}, {ids[r] for r in rows}
        overlap.append(len(a & b) / max(1, len(a | b)))

    print(
        f"index: {len(ours)} docs, {ours.terms} terms, {ours.tokens} tokens; save {save_s * 1000:.1f} ms, load {load_s * 1000:.1f} ms"
    )
    print(f"{'':24}{'build s':>10}{'query p50 ms':>15}{'query p95 ms':>15}")
    rows = [
        ("KeywordIndex (bm25s)", ours_build, ours_ms),
        ("rank_bm25.BM25Okapi", okapi_build, okapi_ms),
    ]
    for name, build, ms in rows:
        print(f"{name:<24}{build:>10.3f}{statistics.median(ms):>15.3f}{percentile(ms, 95):>15.3f}")
    print(
        f"ratio (BM25Okapi / KeywordIndex): build {okapi_build / ours_build:.2f}x, "
        f"query p50 {statistics.median(okapi_ms) / statistics.median(ours_ms):.1f}x, "
        f"p95 {percentile(okapi_ms, 95) / percentile(ours_ms, 95):.1f}x"
    )
    print(f"top-{args.k} overlap (Jaccard) with BM25Okapi: mean {statistics.mean(overlap):.2f}")


if __name__ == "__main__":
    main()
