"""Parse latency of the LoRA parser's greedy draft-and-verify decoder, baseline and current settings
side by side in one run, on held-out PathQuestion questions (the split of
``bench/eval_pathquestion.py``: paths never trained on).

    .venv/bin/python bench/bench_parse.py --adapter ADAPTERS/pq-2h [--variant pq-2h] [--n 100] [--threads 2]

Configurations (each decodes every question once after one warm-up question; outputs compared
with the first configuration's, token for token):

- ``before``: the decoder before this wave — float32 weights; the drafter stops where fewer than
  half the training targets continue alike, drafts nothing with the prompt pass, and prefers a
  longer memory match over copying from the question even after a rare token;
- ``float32, drafts``: this wave's drafter (``NgramDrafter`` defaults: guesses on at a share of
  0.2, drafts the opening with the prompt pass, copies the question after a rare token);
- ``bfloat16, drafts``: the same in bfloat16, the default on CPUs with native bfloat16
  (``[spr] parser_dtype = "auto"``).

Prints p50/p95 ms, forward passes and generated tokens per parse; ``--json`` writes them.
An adapter comes from ``bench/eval_pathquestion.py --train-only --adapters DIR``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_pathquestion import DATA  # noqa: E402
from spr.eval.pathquestion_kbqa import files, load_questions, split_by_path  # noqa: E402

# name, dtype, this wave's drafting
CONFIGS = (("before", "float32", False), ("float32, drafts", "float32", True), ("bfloat16, drafts", "bfloat16", True))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adapter", type=Path, required=True, help="a trained parser adapter folder")
    ap.add_argument("--variant", default="pq-2h", help="the PathQuestion variant it was trained on")
    ap.add_argument("--n", type=int, default=100, help="held-out questions decoded per configuration")
    ap.add_argument("--seed", type=int, default=13, help="the split and sample seed of eval_pathquestion")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--config", action="append", choices=[c[0] for c in CONFIGS],
                    help="run only this configuration (repeatable; default all; outputs compare with the first run)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import torch

    from spr.parsing.lora import LoRAParser

    if args.threads:
        torch.set_num_threads(args.threads)
    _, held = split_by_path(load_questions(files(DATA, args.variant)[0]), args.seed)
    questions = [q.question for q in random.Random(args.seed).sample(held, min(args.n, len(held)))]
    rows, first = [], None
    for name, dtype, drafts in (c for c in CONFIGS if not args.config or c[0] in args.config):
        parser = LoRAParser(args.adapter, beams=1, max_new_tokens=64, dtype=dtype)
        if not drafts:  # the earlier drafter: same n-gram table, the older rules
            drafter = parser.drafter()
            drafter.min_share, drafter.common = 0.5, drafter.vocab
            drafter.table.pop((), None)
        parser.decode(questions[0])  # load and warm up
        lat, passes, outputs = [], [], []
        for q in questions:
            t0 = time.perf_counter()
            out = parser.decode(q)
            tokens, n = out.tokens, out.forward_passes
            lat.append((time.perf_counter() - t0) * 1000)
            passes.append(n)
            outputs.append(tokens)
        first = first or outputs
        row = {
            "config": name, "n": len(questions), "p50_ms": statistics.median(lat),
            "p95_ms": sorted(lat)[int(0.95 * (len(lat) - 1))], "passes": statistics.mean(passes),
            "tokens": statistics.mean(len(o) for o in outputs), "same_output": sum(a == b for a, b in zip(outputs, first)) / len(first),
        }
        rows.append(row)
        print(f"{row['config']:22s} p50 {row['p50_ms']:6.0f} ms  p95 {row['p95_ms']:6.0f}  passes {row['passes']:.2f}  "
              f"tokens {row['tokens']:.1f}  same output {row['same_output']:.0%}", flush=True)  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"threads": torch.get_num_threads(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
