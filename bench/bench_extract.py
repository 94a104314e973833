"""Throughput of the lexicon extractor: preprocess + segment + extract, in pages/s (3,000 chars).

Runs preprocess+segment alone first (the baseline) and then with extraction, in the same process
over the same files, so the difference is what extraction costs. Documents are classified by
their metadata or the rule classifier (not timed separately; it is part of both runs).

    .venv/bin/python bench/bench_extract.py [CORPUS_DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgpipeline.classify import classify  # noqa: E402
from kgpipeline.extract.lexicon_extractor import LexiconExtractor  # noqa: E402
from kgpipeline.ontology import read_ontologies  # noqa: E402
from kgpipeline.preprocess import discover_files, load_documents  # noqa: E402
from kgpipeline.records import CHARS_PER_PAGE  # noqa: E402
from kgpipeline.segment import segment  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "policy_corpora" / "egd_regulations"


def run(files: list[Path], extractor: LexiconExtractor | None) -> tuple[float, float, dict[str, int]]:
    """Wall seconds, CPU seconds of this process, and counts for one pass over ``files``."""
    counts = {"documents": 0, "chars": 0, "chunks": 0, "mentions": 0, "relations": 0, "attributes": 0}
    started, cpu_started = time.perf_counter(), time.process_time()
    for path in files:
        for doc in load_documents(path).documents:
            category = doc.category or classify(doc).category
            counts["documents"] += 1
            counts["chars"] += len(doc.text)
            for chunk in segment(doc).chunks:
                counts["chunks"] += 1
                if extractor is not None:
                    out = extractor.extract(chunk, doc, category)
                    counts["mentions"] += len(out.mentions)
                    counts["relations"] += len(out.relations)
                    counts["attributes"] += len(out.attributes)
    return time.perf_counter() - started, time.process_time() - cpu_started, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3, help="passes per variant; the best is reported")
    args = parser.parse_args(argv)
    files = [p for p in discover_files(args.corpus) if p.name != "SOURCES.md"]
    if not files:
        print(f"no documents in {args.corpus}", file=sys.stderr)
        return 2
    extractor = LexiconExtractor(read_ontologies(ROOT / "ontologies"))
    run(files[:1], extractor)  # warm-up: compiles the lexicons, imports lazily loaded modules
    base = min((run(files, None) for _ in range(args.repeat)), key=lambda r: r[0])
    full = min((run(files, extractor) for _ in range(args.repeat)), key=lambda r: r[0])
    counts = full[2]
    pages = counts["chars"] / CHARS_PER_PAGE
    print(f"corpus: {args.corpus} ({len(files)} files, {counts['documents']} documents, {pages:.1f} pages)")
    print(f"counts: chunks={counts['chunks']} mentions={counts['mentions']} relations={counts['relations']} "
          f"attributes={counts['attributes']}")  # fmt: skip
    # CPU time is reported too: on a shared machine wall time mostly measures the neighbours.
    print(f"{'':28}{'wall s':>8} {'pages/s':>9} {'CPU s':>8} {'pages/CPU-s':>12}")
    extract = (max(full[0] - base[0], 1e-9), max(full[1] - base[1], 1e-9))
    for label, (wall, cpu) in (("preprocess+segment", base[:2]), ("preprocess+segment+extract", full[:2]),
                               ("extract alone (difference)", extract)):  # fmt: skip
        print(f"{label:28}{wall:8.3f} {pages / wall:9.1f} {cpu:8.3f} {pages / cpu:12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
