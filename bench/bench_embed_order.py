"""Embedding many texts: batches in the callers' order vs batches of like lengths, same run.

    .venv/bin/python bench/bench_embed_order.py --embed all-mpnet-base-v2 --n 800 --rounds 2

A batch is padded to its longest text, and the sentences of legal text run from four words to
hundreds. :meth:`core.embed.Embedder.embed_many` sorts the texts it must embed by length before
cutting them into ``[embed] batch_size`` batches; before, it cut them in the order it was given
(document order, as the ingest stages pass them). This times both on the same sample of real
sentences (EU regulations in English, German energy laws; cut and cleaned as the ``sentences``
stage does), rounds alternating so load hits both alike, and checks the vectors agree. Cache off.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import Config  # noqa: E402
from core.embed import SentenceTransformerEmbedder  # noqa: E402
from core.text import reading_text, sentence_spans  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402


def corpus_sentences(data_dir: Path) -> list[str]:
    """Distinct sentences of the EU regulation articles and the German energy laws."""
    corpora = data_dir / "policy_corpora"
    texts = [json.loads(line)["text"] for line in (corpora / "eu_regulations_pypi" / "articles.jsonl").open(encoding="utf-8")]
    texts += [path.read_text(encoding="utf-8") for path in sorted((corpora / "de_energy_laws").glob("*.md"))]
    out = (reading_text(text[a:b]) for text in texts for a, b in sentence_spans(text))
    return list(dict.fromkeys(s for s in out if s.strip()))


def timed(label: str, work) -> tuple[float, np.ndarray]:
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    vectors = work()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)
    print(f"  {label:28s} {wall:6.1f} s wall, CPU user {cpu[0]:6.1f} s, system {cpu[1]:5.1f} s", flush=True)
    return wall, vectors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embed", default=Config().embed.model)
    ap.add_argument("--dtype", default=Config().embed.dtype, choices=("float32", "bfloat16", "auto"))
    ap.add_argument("--n", type=int, default=800, help="sentences sampled (seeded)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    sentences = corpus_sentences(default_data_dir())
    sample = random.Random(args.seed).sample(sentences, min(args.n, len(sentences)))
    batch = Config().embed.batch_size
    embedder = SentenceTransformerEmbedder(args.embed, dtype=args.dtype, batch_size=batch)  # no cache
    embedder.embed_batch(["warm up"] * 8)
    tokens = embedder.token_counts(sample)
    print(f"{args.embed} ({embedder.dtype}), {len(sample)} of {len(sentences)} sentences, batches of {batch}; "
          f"tokens per sentence median {int(np.median(tokens))}, p90 {int(np.percentile(tokens, 90))}, max {max(tokens)}")

    def in_given_order() -> np.ndarray:  # the before: batches cut in the order given
        return np.concatenate([embedder.embed_batch(sample[i : i + batch]) for i in range(0, len(sample), batch)])

    walls: dict[str, list[float]] = {"given": [], "sorted": []}
    for r in range(args.rounds):
        print(f"round {r + 1}")
        wall, given = timed("batches in the given order", in_given_order)
        walls["given"].append(wall)
        embedder._recent.clear()  # its in-memory cache of recent vectors: embed them again
        wall, ours = timed("embed_many (like lengths)", lambda: embedder.embed_many(sample))
        walls["sorted"].append(wall)
    cosines = (given * ours).sum(axis=1)
    best = {k: min(v) for k, v in walls.items()}
    print(f"best of {args.rounds}: given order {best['given']:.1f} s ({len(sample) / best['given']:.1f} texts/s), "
          f"like lengths {best['sorted']:.1f} s ({len(sample) / best['sorted']:.1f} texts/s), "
          f"{best['given'] / best['sorted']:.2f}x faster; vectors agree to cosine >= {cosines.min():.5f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
