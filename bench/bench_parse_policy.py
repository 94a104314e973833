"""The greedy parser's two decoding shortcuts (KB label drafts, grammar closings) on a policy KB,
paired question by question: the hand-written sample questions (``examples/eval/sample-parses.jsonl``)
and the KB's synthesized dev questions, each decoded with the shortcuts off and on, the order
alternating. Prints passes, p50/p95 latency, the per-question median ratio and whether every output
is the same. ``bench/bench_parse.py`` does the same on PathQuestion.

    policykb --kb KB ingest examples/corpus && policykb --kb KB train-parser --steps 300
    .venv/bin/python bench/bench_parse_policy.py --kb KB
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.config import load_config  # noqa: E402
from core.jsonl import read_jsonl  # noqa: E402
from spr.parsing.factory import load_parser  # noqa: E402
from spr.parsing.refresh import training_examples  # noqa: E402
from store.layout import KBLayout  # noqa: E402
from store.open import open_store  # noqa: E402
from store.vocabulary import read_terms  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True, help="a KB with a trained parser adapter")
    ap.add_argument("--samples", type=Path, default=ROOT / "examples" / "eval" / "sample-parses.jsonl")
    args = ap.parse_args()
    config = load_config(kb_dir=args.kb)
    store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri, read_only=True)
    properties = read_terms(store, "property")
    _, dev = training_examples(store, config.spr)
    questions = [row["question"] for _, row in read_jsonl(args.samples)] + [e.question for e in dev]
    parsers = [load_parser("lora", config.kb_dir, properties, 1, config.spr.max_new_tokens, shapes_first=False,
                           dtype=config.spr.parser_dtype, int8_rows=config.spr.parser_int8_rows) for _ in range(2)]  # fmt: skip
    parsers[0].draft_labels = parsers[0].close_by_grammar = False  # the decoder before the shortcuts
    for parser in parsers:
        parser.decode(questions[0])  # load and warm up
    lat: list[list[float]] = [[], []]
    passes: list[list[int]] = [[], []]
    same = 0
    for i, question in enumerate(questions):
        texts = {}
        for k in (0, 1) if i % 2 == 0 else (1, 0):
            t0 = time.perf_counter()
            out = parsers[k].decode(question)
            lat[k].append((time.perf_counter() - t0) * 1000)
            passes[k].append(out.forward_passes)
            texts[k] = parsers[k]._load()[1].decode(out.tokens, skip_special_tokens=True)
        same += texts[0] == texts[1]
        if texts[0] != texts[1]:
            print(f"different: {question!r}: {texts[0]!r} / {texts[1]!r}")
    print(f"{len(questions)} questions, {len(parsers[1].labels)} relation labels, {parsers[1].dtype}")
    for k, name in ((0, "before"), (1, "KB labels, grammar closings")):
        print(f"{name:28s} passes {statistics.mean(passes[k]):.2f}  p50 {statistics.median(lat[k]):.0f} ms  "
              f"p95 {sorted(lat[k])[int(0.95 * (len(lat[k]) - 1))]:.0f} ms")  # fmt: skip
    ratio = statistics.median(b / a for a, b in zip(lat[0], lat[1]))
    print(f"same output {same}/{len(questions)}, per-question median ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
