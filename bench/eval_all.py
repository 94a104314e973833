"""The real-data evaluation: every system on HotpotQA, MuSiQue, rag-eurlex-eval and PathQuestion.

Each run is exactly ``policykb eval`` (same API call); outputs go to ``bench/out/eval/<run>/`` and
all reports are concatenated into ``bench/out/eval/REPORT.md``. KBs are cached (see ``--cache-dir``)
so a second run only asks questions.

Usage: .venv/bin/python bench/eval_all.py [--only NAME ...] [--answer extractive|llm]
The defaults below (limits, corpus scopes) keep the whole set within about 20 minutes on a loaded
2-core machine; change them with --limit NAME=N and --scope NAME=full|pool.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import load_config  # noqa: E402
from kgpipeline.pipeline import ingest_summary  # noqa: E402
from spr.eval.harness import evaluate, settings_from, summary_lines  # noqa: E402
from spr.eval.records import EvalRequest  # noqa: E402

# name -> (questions limit, corpus scope)
RUNS = {
    "hotpotqa": (100, "full"),
    "musique": (30, "pool"),
    "rag-eurlex": (None, "full"),
    "pathquestion": (150, "full"),
}


def _progress(system: str, done: int, total: int) -> None:
    if done == total or done % 25 == 0:
        print(f"  {system}: {done}/{total} ({time.strftime('%H:%M:%S')})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=list(RUNS), help="datasets to run")
    ap.add_argument("--answer", default="extractive", choices=["extractive", "llm"])
    ap.add_argument("--systems", default=None, help="comma-separated modes (default: [eval] systems)")
    ap.add_argument("--limit", action="append", default=[], help="NAME=N questions")
    ap.add_argument("--scope", action="append", default=[], help="NAME=full|pool corpus")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path("bench/out/eval"))
    args = ap.parse_args()
    runs = dict(RUNS)
    for item in args.limit:
        name, _, n = item.partition("=")
        runs[name] = (int(n) if n else None, runs.get(name, (None, "full"))[1])
    for item in args.scope:
        name, _, scope = item.partition("=")
        runs[name] = (runs.get(name, (None, "full"))[0], scope)

    config = load_config()
    reports = []
    started = time.perf_counter()
    for name in args.only:
        limit, scope = runs[name]
        request = EvalRequest(
            dataset=name, out_dir=args.out / name, settings=settings_from(config, args.systems, args.answer),
            limit=limit, seed=config.eval.seed, corpus_scope=scope, cache_dir=args.cache_dir,
        )
        t = time.perf_counter()
        outcome = evaluate(config, request, ingest_summary, progress=_progress, log=lambda line: print(line, flush=True))
        print("\n".join(summary_lines(outcome)), f"({time.perf_counter() - t:.0f} s)", flush=True)
        reports.append(outcome.files["report"].read_text(encoding="utf-8"))
    (args.out / "REPORT.md").write_text("\n".join(reports), encoding="utf-8")
    print(f"all runs: {time.perf_counter() - started:.0f} s; {args.out / 'REPORT.md'}")


if __name__ == "__main__":
    main()
