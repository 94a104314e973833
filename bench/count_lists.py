"""How many lists (a lead-in and its items, spr/lists.py) the policy corpora hold, and samples to read.

Splits every document of each corpus into sentences as answers do (``spr.fuse.sentences``) and
finds the list blocks: per corpus the documents, sentences, lists, sentences inside lists (the ones
an extractive answer would otherwise quote without their lead-in or items), the lists whose lead-in
has no colon, and ``--samples`` random lists (their first 300 characters as an answer shows them)
for reading by hand. Reads raw files only; builds no KB.

    .venv/bin/python bench/count_lists.py [--data-dir ../shared/data] [--samples 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path

from spr.lists import Lines, list_block, list_unit

CORPORA = ("eu_regulations_pypi", "necp_national_energy_climate_plans", "de_energy_laws", "egd_regulations")


def documents(folder: Path) -> Iterator[str]:
    for path in sorted(folder.rglob("*")):
        if path.name == "SOURCES.md" or not path.is_file():
            continue
        if path.suffix in (".md", ".txt"):
            yield path.read_text(encoding="utf-8", errors="replace")
        elif path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                yield json.loads(line).get("text", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print("| corpus | documents | sentences | lists | sentences in lists | lead-ins without ':' |")
    print("|---|---|---|---|---|---|")
    samples: dict[str, list[str]] = {}
    for name in CORPORA:
        docs = n_sent = n_lists = n_in = no_colon = 0
        found: list[str] = []
        for text in documents(args.data_dir / "policy_corpora" / name):
            docs += 1
            lines = Lines.of(text)
            n_sent += len(lines)
            k = 0
            while k < len(lines):
                block = list_block(lines, k)
                if block is None or block[0] != k:
                    k += 1
                    continue
                n_lists += 1
                n_in += block[1] - block[0] + 1
                no_colon += not lines.line(k).rstrip().endswith(":")
                found.append(list_unit(lines, k, 300).text)
                k = block[1] + 1
        samples[name] = rng.sample(found, min(args.samples, len(found)))
        print(f"| {name} | {docs} | {n_sent} | {n_lists} | {n_in} ({n_in / max(n_sent, 1):.1%}) | {no_colon} |")
    for name, texts in samples.items():
        for text in texts:
            print(f"\n[{name}] {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
