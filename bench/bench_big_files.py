"""Big-file ingest: real policy text vs. one unbroken token of the same size, time and peak RSS.

    .venv/bin/python bench/bench_big_files.py --mb 30            # both files, 30 MB each
    .venv/bin/python bench/bench_big_files.py --mb 10 --stages   # with the derived stages too

(a) real text: the EGD regulations and German energy laws of /work/shared/data/policy_corpora
(Markdown) concatenated and repeated up to the size; (b) "a" repeated to the same size, no space.
Each file is ingested in its own child process into a fresh temporary KB with the default
``[ingest]`` settings (preprocess, classify, segment, lexicon + policy-fact extraction, SHACL
validation, write), so each peak RSS is that file's alone. The derived indexes (embeddings,
BM25, communities, ...) are rebuilt from the whole KB after an ingest and are not per-file work:
they are off unless ``--stages``. The per-file time budget is lifted (``file_timeout_s = 0``) so
that a slow file is measured, not skipped.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path("/work/shared/data/policy_corpora")
SOURCES = ["egd_regulations/*.md", "de_energy_laws/*.md"]


def real_text(size: int) -> str:
    parts = [p.read_text(encoding="utf-8") for g in SOURCES for p in sorted(DATA.glob(g)) if p.name != "SOURCES.md"]
    if not parts:
        raise SystemExit(f"no policy text under {DATA}")
    text = "\n\n".join(parts)
    return (text * (size // len(text) + 1))[:size]


def ingest_one(path: Path, stages: bool) -> dict:
    from core.config import load_config
    from kgpipeline.pipeline import build_controller
    from store.layout import KBLayout
    from store.open import open_store

    kb = Path(tempfile.mkdtemp(prefix="bench-big-")) / "kb"
    kb.mkdir()
    config = load_config(kb_dir=kb)
    config.ingest.file_timeout_s = 0
    store = open_store(config.store, KBLayout(kb), config.kb.base_iri)
    controller = build_controller(config, store)
    if not stages:
        controller.stages = []
    started = time.perf_counter()
    try:
        summary = controller.ingest([path])
    finally:
        controller.close()
        store.close()
    return {
        "seconds": time.perf_counter() - started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "summary": summary.lines()[:2] + [f"skipped {r}" for _, r in summary.skipped],
        "timings": {k: round(v, 1) for k, v in summary.timings.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=30.0, help="size of each file in MB (default 30)")
    ap.add_argument("--stages", action="store_true", help="also rebuild the derived indexes after the ingest")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # child mode: ingest this file, print JSON
    args = ap.parse_args()
    if args.one:
        print(json.dumps(ingest_one(args.one, args.stages)))
        return
    size = int(args.mb * 1024 * 1024)
    work = Path(tempfile.mkdtemp(prefix="bench-big-files-"))
    files = {"real text": work / "real.md", "one token": work / "one-token.txt"}
    files["real text"].write_text(real_text(size), encoding="utf-8")
    files["one token"].write_text("a" * size, encoding="utf-8")
    rows = {}
    for name, path in files.items():
        cmd = [sys.executable, __file__, "--one", str(path)] + (["--stages"] if args.stages else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout
        rows[name] = json.loads(out.strip().splitlines()[-1])
        print(f"{name}: {json.dumps(rows[name])}", file=sys.stderr)
    print(f"\n{args.mb:g} MB per file{' (with derived stages)' if args.stages else ''}")
    print(f"{'file':<10} {'seconds':>9} {'peak RSS MB':>12}  summary")
    for name, r in rows.items():
        print(f"{name:<10} {r['seconds']:9.1f} {r['peak_rss_mb']:12.0f}  {' | '.join(r['summary'])}")
        print(f"{'':<10} stage seconds: {r['timings']}")


if __name__ == "__main__":
    main()
