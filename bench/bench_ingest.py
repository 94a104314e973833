"""Ingest throughput and peak memory with the deterministic lexicon extractor.

Runs the whole pipeline (preprocess, classify, segment, extract, SHACL validation, write to an
embedded Oxigraph store) over a real corpus and prints pages/s (a page = 3,000 characters) with a
per-stage breakdown; the same run first times preprocess + segment alone as the baseline. Derived
index stages (weights, question bank, vectors) are timed separately. Peak memory is the process's
maximum resident set size.

Usage: .venv/bin/python bench/bench_ingest.py [CORPUS ...]
       (default: ../shared/data/policy_corpora/egd_regulations)
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import load_config  # noqa: E402
from kgpipeline.pipeline import build_controller  # noqa: E402
from kgpipeline.preprocess import discover_files, load_documents  # noqa: E402
from kgpipeline.records import CHARS_PER_PAGE  # noqa: E402
from kgpipeline.segment import segment  # noqa: E402
from store.layout import KBLayout
from store.oxigraph_store import OxigraphStore  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "policy_corpora" / "egd_regulations"


def main() -> None:
    corpora = [Path(p) for p in sys.argv[1:]] or [DEFAULT]
    files = [f for c in corpora for f in discover_files(c) if f.name != "SOURCES.md"]

    started = time.perf_counter()
    chars = chunks = 0
    for f in files:
        for doc in load_documents(f).documents:
            chars += len(doc.text)
            chunks += len(segment(doc).chunks)
    base_s = time.perf_counter() - started
    pages = chars / CHARS_PER_PAGE
    print(f"corpus: {len(files)} files, {pages:.0f} pages, {chunks} chunks")
    print(f"baseline preprocess+segment   {base_s:6.2f} s  {pages / base_s:8.1f} pages/s")

    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(kb_dir=Path(tmp) / "kb")
        store = OxigraphStore(KBLayout(Path(tmp) / "kb").store)
        controller = build_controller(config, store)
        controller.stages = []  # time the document pipeline alone first
        cpu = time.process_time()
        summary = controller.ingest(files)
        cpu = time.process_time() - cpu
        print(f"full pipeline (no indexes)    {summary.seconds:6.2f} s  {summary.pages / summary.seconds:8.1f} pages/s "
              f"(target >= 50); CPU {cpu:.2f} s = {summary.pages / cpu:.1f} pages per CPU-second")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        for stage, seconds in sorted(summary.timings.items(), key=lambda kv: -kv[1]):
            print(f"  {stage:<14} {seconds:6.2f} s")
        print(f"documents {summary.documents}, chunks {summary.chunks}, entities {summary.entities}, "
              f"triples {summary.triples}, conflicts {summary.conflicts}, skipped {len(summary.skipped)}")
        from kgpipeline.pipeline import derived_stages

        controller.stages = derived_stages(config)
        for line in controller.run_stages():
            print(f"  index {line}")
        for name, seconds in controller.last_stage_seconds.items():
            print(f"  index {name:<10} {seconds:6.2f} s")
        controller.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS)         {peak_mb:8.0f} MB (target <= 2048)")


if __name__ == "__main__":
    main()
