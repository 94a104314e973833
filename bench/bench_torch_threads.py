"""PyTorch's thread count for the work policykb does with it: parsing, embedding a question,
embedding a batch of chunks — each at 1 and 2 (or ``--threads``) threads, taken in turn item by
item so that drift and load hit every setting alike.

    .venv/bin/python bench/bench_torch_threads.py [--adapter ADAPTERS/pql-2h --variant pql-2h] [--busy 1]

- ``parse``: the LoRA parser's greedy draft-and-verify decode of held-out PathQuestion questions
  (the split of ``bench/eval_pathquestion.py``), with the default settings (bfloat16 where native,
  int8 narrow passes); only with ``--adapter``;
- ``question``: one question embedded (no cache), MiniLM and, with ``--mpnet``, all-mpnet-base-v2;
- ``batch``: ``--batch`` chunk-sized texts embedded at once (what ingest does), as texts/s.

``--busy N`` runs N CPU-bound processes meanwhile (another job on the machine: a KB build, an LLM
answer). PyTorch's CPU threads meet at barriers after every operation, as llama.cpp's do, so one
competing process can slow the many small operations of a parse step by far more than it takes.
Prints medians; ``--json`` writes them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_llm import _burn  # noqa: E402

QUESTIONS = [
    "Which authority supervises the operators of essential services under the directive?",
    "By when must Member States transpose the new rules into national law?",
    "What is the maximum fine for breaching the obligations of providers of high-risk AI systems?",
    "How often must financial entities carry out threat-led penetration testing?",
    "Which regulation does the act amend, and which does it repeal?",
    "What share of renewable energy does the national plan target for 2030?",
]
CHUNK = (
    "Member States shall ensure that the competent authorities have the powers necessary to monitor "
    "compliance with the obligations laid down in this Regulation, including the power to request "
    "information, to carry out on-site inspections and to impose administrative fines where an operator "
    "fails to notify a significant incident within 24 hours of becoming aware of it. "
)


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="thread counts to compare")
    ap.add_argument("--adapter", type=Path, default=None, help="a parser adapter (bench/eval_pathquestion.py --train-only)")
    ap.add_argument("--variant", default="pq-2h", help="the PathQuestion variant the adapter was trained on")
    ap.add_argument("--n", type=int, default=40, help="items per measurement and thread count")
    ap.add_argument("--batch", type=int, default=64, help="texts per embedded batch")
    ap.add_argument("--mpnet", action="store_true", help="also all-mpnet-base-v2 questions")
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound competing processes during the run")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    import torch

    # The thread counts compared are set here, item by item: the product's own choice by the width
    # of the work (core.cpu.use_torch_threads) stands aside where OMP_NUM_THREADS is set.
    os.environ["OMP_NUM_THREADS"] = str(torch.get_num_threads())
    from core.config import EmbedConfig
    from core.embed import make_embedder

    counts = [int(t) for t in args.threads.split(",")]
    jobs: dict[str, Callable[[int], Callable[[], object]]] = {}
    if args.adapter is not None:
        from bench.eval_pathquestion import DATA
        from spr.eval.pathquestion_kbqa import files, load_questions, split_by_path
        from spr.parsing.lora import LoRAParser

        _, held = split_by_path(load_questions(files(DATA, args.variant)[0]), 13)
        parse_qs = [q.question for q in random.Random(13).sample(held, min(args.n, len(held)))]
        parser = LoRAParser(args.adapter, beams=1, max_new_tokens=64, dtype="auto", int8_rows=4)
        parser.decode(parse_qs[0])  # load and warm up
        jobs["parse"] = lambda i: lambda: parser.decode(parse_qs[i % len(parse_qs)])
    for name in ["all-MiniLM-L6-v2"] + (["all-mpnet-base-v2"] if args.mpnet else []):
        embedder = make_embedder(EmbedConfig(model=name), cache_path=None)
        embedder.embed_batch(["warm up"])
        short = name.split("-")[1].lower()
        jobs[f"question ({short})"] = lambda i, e=embedder: lambda: e.embed_batch([f"{QUESTIONS[i % len(QUESTIONS)]} ({i})"])
        texts = [f"{CHUNK} ({k})" for k in range(args.batch)]
        jobs[f"batch of {args.batch} ({short})"] = lambda i, e=embedder, t=texts: lambda: e.embed_batch(t)

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"cpus {os.cpu_count()}, torch default threads {torch.get_num_threads()}, load average {load}, busy {args.busy}")
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.busy)]
    for b in burners:
        b.start()
    rows = []
    try:
        for job, make in jobs.items():
            n = args.n if not job.startswith("batch") else max(3, args.n // 8)
            ms: dict[int, list[float]] = {t: [] for t in counts}
            for i in range(n):
                for t in counts[i % len(counts) :] + counts[: i % len(counts)]:  # the order rotates
                    torch.set_num_threads(t)
                    ms[t].append(timed(make(i)))
            for t in counts:
                p50 = statistics.median(ms[t])
                row = {"job": job, "threads": t, "n": n, "p50_ms": round(p50, 1),
                       "ratio_to_first": round(statistics.median(a / b for a, b in zip(ms[t], ms[counts[0]])), 3)}
                if job.startswith("batch"):
                    row["texts_per_s"] = round(args.batch / (p50 / 1000), 1)
                rows.append(row)
                extra = f"  {row['texts_per_s']:7.1f} texts/s" if "texts_per_s" in row else ""
                print(f"{job:24s} threads {t}  p50 {p50:8.1f} ms{extra}  ratio to {counts[0]} thread(s) {row['ratio_to_first']:.3f}",
                      flush=True)
    finally:
        for b in burners:
            b.terminate()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"busy": args.busy, "load": load, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
