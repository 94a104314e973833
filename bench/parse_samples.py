"""Hand-written questions on a policy KB: the parse next to a gold S-expression, and the answers.

The questions in ``examples/eval/sample-parses.jsonl`` were written by hand for the sample corpus
(``examples/corpus``), in phrasings the synthesizer does not use, so they show how a parser trained
on synthesized questions carries over. A parse counts as correct when it equals the gold
S-expression canonically; answers are printed so a wrong parse that still answers can be seen.

Usage (after `policykb --kb KB ingest examples/corpus` and, for the LoRA parser, `train-parser`):
    .venv/bin/python bench/parse_samples.py --kb KB [--parser lora|fallback]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import load_config  # noqa: E402
from core.embed import make_embedder  # noqa: E402
from core.jsonl import read_jsonl  # noqa: E402
from spr.grounding.sexpr import to_text  # noqa: E402
from spr.grounding.sexpr_reader import parse  # noqa: E402
from spr.retrieval.semantic_parsing import SemanticParsingRetriever  # noqa: E402
from store.layout import KBLayout
from store.open import open_store  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "examples" / "eval" / "sample-parses.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True)
    ap.add_argument("--parser", choices=["auto", "rules", "lora"], default="auto")
    ap.add_argument("--samples", type=Path, default=SAMPLES)
    args = ap.parse_args()
    config = load_config(kb_dir=args.kb)
    store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri, read_only=True)
    spr_config = config.spr.model_copy(update={"parser": args.parser})
    retriever = SemanticParsingRetriever(store, make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache), config.kb_dir, spr_config)
    rows = [row for _, row in read_jsonl(args.samples)]
    correct = 0
    for row in rows:
        t = time.perf_counter()
        result = retriever.retrieve(row["question"])
        ms = (time.perf_counter() - t) * 1000
        gold = to_text(parse(row["sexpr"]))
        ok = result.parses[:1] == (gold,)
        correct += ok
        answers = [a.label for a in result.answers][:3] or ([f"count {result.count}"] if result.count else [result.note])
        print(f"{'RIGHT' if ok else 'WRONG'}  {row['question']}")
        print(f"       parse  {result.parses[0] if result.parses else '(none)'}")
        if not ok:
            print(f"       gold   {gold}")
        print(f"       answer {'; '.join(answers)}  ({ms:.0f} ms, parser {result.parser})")
    print(f"{correct}/{len(rows)} parses equal the gold S-expression")


if __name__ == "__main__":
    main()
