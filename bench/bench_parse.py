"""Parse latency of the LoRA parser's greedy draft-and-verify decoder, baseline and current settings
side by side in one run, on held-out PathQuestion questions (the split of
``bench/eval_pathquestion.py``: paths never trained on).

    .venv/bin/python bench/bench_parse.py --adapter ADAPTERS/pq-2h [--variant pq-2h] [--n 100] [--threads 2]

Configurations (each decodes every question once after one warm-up question; outputs compared
with the first configuration's, token for token; ``--paired`` takes the configurations in turn per
question instead of one after the other):

- ``before``: the decoder before this wave — float32 weights; the drafter stops where fewer than
  half the training targets continue alike, drafts nothing with the prompt pass, and prefers a
  longer memory match over copying from the question even after a rare token;
- ``float32, drafts``: this wave's drafter (``NgramDrafter`` defaults: guesses on at a share of
  0.2, drafts the opening with the prompt pass, copies the question after a rare token);
- ``bfloat16, drafts``: the same in bfloat16, the default on CPUs with native bfloat16
  (``[spr] parser_dtype = "auto"``);
- ``bfloat16, drafts, int8 narrow passes``: passes of at most 4 tokens read int8 copies of the
  weights (``[spr] parser_int8_rows = 4``, the default; :mod:`spr.parsing.int8`);
- ``float32, drafts, int8 narrow passes``: the same on float32 weights, forced on here (the parser
  adds them in bfloat16 only: with float32 activations they were slower);
- ``bfloat16, drafts, int8 narrow passes, KB labels, grammar closings``: the parser's defaults —
  also drafting the rest of a relation label that the KB's labels complete one way
  (:class:`spr.parsing.decode.LabelDrafter`) and writing the closing brackets the grammar forces
  instead of decoding them (:func:`spr.parsing.grammar.forced_closing`); ``float32, drafts, KB
  labels, grammar closings``: the same defaults where the CPU has no native bfloat16 (the parser
  decodes in float32 there, without int8 copies). The other rows turn both off.

Every parser gets the KB's relation labels, as the product's parser factory gives them.

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
from spr.eval.pathquestion_kbqa import files, load_questions, relation_labels, split_by_path  # noqa: E402

# name, dtype, this wave's drafting, int8 copies for passes of at most this many tokens, KB label drafts and grammar closings
CONFIGS = (
    ("before", "float32", False, 0, False), ("float32, drafts", "float32", True, 0, False),
    ("bfloat16, drafts", "bfloat16", True, 0, False), ("bfloat16, drafts, int8 narrow passes", "bfloat16", True, 4, False),
    ("float32, drafts, int8 narrow passes", "float32", True, 4, False),
    ("bfloat16, drafts, int8 narrow passes, KB labels, grammar closings", "bfloat16", True, 4, True),
    ("float32, drafts, KB labels, grammar closings", "float32", True, 0, True),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--adapter", type=Path, required=True, help="a trained parser adapter folder")
    ap.add_argument("--variant", default="pq-2h", help="the PathQuestion variant it was trained on")
    ap.add_argument("--n", type=int, default=100, help="held-out questions decoded per configuration")
    ap.add_argument("--seed", type=int, default=13, help="the split and sample seed of eval_pathquestion")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    ap.add_argument("--config", action="append", choices=[c[0] for c in CONFIGS],
                    help="run only this configuration (repeatable; default all; outputs compare with the first run)")
    ap.add_argument("--paired", action="store_true",
                    help="alternate the configurations question by question (drift and load hit all alike)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import torch

    from spr.parsing.int8 import add_int8_copies
    from spr.parsing.lora import LoRAParser

    if args.threads:
        torch.set_num_threads(args.threads)
    q_file, kb_file = files(DATA, args.variant)
    _, held = split_by_path(load_questions(q_file), args.seed)
    labels = relation_labels(kb_file)
    questions = [q.question for q in random.Random(args.seed).sample(held, min(args.n, len(held)))]
    parsers = []
    for name, dtype, drafts, int8_rows, shortcuts in (c for c in CONFIGS if not args.config or c[0] in args.config):
        parser = LoRAParser(args.adapter, beams=1, max_new_tokens=64, labels=labels, dtype=dtype, int8_rows=int8_rows)
        parser.draft_labels = parser.close_by_grammar = shortcuts
        if int8_rows and parser.dtype != "bfloat16":  # the parser adds them in bfloat16 only: forced, to show why
            add_int8_copies(parser._load()[0], int8_rows)
        if not drafts:  # the earlier drafter: same n-gram table, the older rules
            drafter = parser.drafter()
            drafter.min_share, drafter.common = 0.5, drafter.vocab
            drafter.table.pop((), None)
        parser.decode(questions[0])  # load and warm up
        parsers.append((name, parser))
    lat: dict[str, list[float]] = {name: [] for name, _ in parsers}
    passes: dict[str, list[int]] = {name: [] for name, _ in parsers}
    outputs: dict[str, list[list[int]]] = {name: [] for name, _ in parsers}

    def decode(name: str, parser: LoRAParser, question: str) -> None:
        t0 = time.perf_counter()
        out = parser.decode(question)
        lat[name].append((time.perf_counter() - t0) * 1000)
        passes[name].append(out.forward_passes)
        outputs[name].append(out.tokens)

    if args.paired:  # question by question, the configurations in turn, the order rotating
        for i, q in enumerate(questions):
            for name, parser in parsers[i % len(parsers) :] + parsers[: i % len(parsers)]:
                decode(name, parser, q)
    else:
        for name, parser in parsers:
            for q in questions:
                decode(name, parser, q)
    rows, base = [], parsers[0][0]
    for name, _ in parsers:
        row = {
            "config": name, "n": len(questions), "p50_ms": statistics.median(lat[name]),
            "p95_ms": sorted(lat[name])[int(0.95 * (len(lat[name]) - 1))], "passes": statistics.mean(passes[name]),
            "tokens": statistics.mean(len(o) for o in outputs[name]),
            "same_output": sum(a == b for a, b in zip(outputs[name], outputs[base])) / len(questions),
            "median_ratio_to_first": statistics.median(x / y for x, y in zip(lat[name], lat[base])),
        }
        rows.append(row)
        print(f"{row['config']:22s} p50 {row['p50_ms']:6.0f} ms  p95 {row['p95_ms']:6.0f}  passes {row['passes']:.2f}  "
              f"tokens {row['tokens']:.1f}  same output {row['same_output']:.0%}  "
              f"per-question median ratio to the first {row['median_ratio_to_first']:.3f}", flush=True)  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"threads": torch.get_num_threads(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
