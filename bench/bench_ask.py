"""`ask` latency per retrieval mode, side by side in one run: extractive answers in every mode, and
a few answers by the embedded LLM. Reports p50/p95 of the whole ask and of the ask without the
semantic parse (the budget the design sets: extractive p50 <= 150 ms excluding the parse), and LLM
calls per answer.

    .venv/bin/python bench/bench_ask.py                 # builds a KB from examples/corpus in a temp dir
    .venv/bin/python bench/bench_ask.py --kb demo-kb --repeat 5 --llm 3

The embedding and LLM caches are off unless asked for, so every ask embeds its question and
candidate sentences and every LLM answer is a real model call (the honest, uncached figure).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Questions about examples/corpus: answerable ones of several shapes, and two it cannot answer.
QUESTIONS = [
    "Who issues the National Solar Plan?",
    "What did the National Energy Bureau establish?",
    "How much is the fine for an operator who fails to register an installation?",
    "Where will the National Energy Monitoring Center be established?",
    "What sound power level must the outdoor unit of a heat pump not exceed?",
    "How far must wind turbines be from homes?",
    "What does the Notice on Distributed Photovoltaics support?",
    "How many documents does the National Energy Bureau issue?",
    "When must public bodies report their energy consumption?",
    "How much will the government provide for the hydrogen strategy?",
    "What is the capital of France?",
    "How many nuclear power plants does Nordland operate?",
]
MODES = ("dual", "spr", "questions", "vector")


def build_kb(folder: Path) -> Path:
    from core.config import load_config
    from kgpipeline.pipeline import ingest_paths

    kb = folder / "kb"
    config = load_config(kb_dir=kb)
    ingest_paths(config, [ROOT / "examples" / "corpus"])
    return kb


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run(kb, mode: str, kind: str, questions: list[str], repeat: int) -> dict:
    totals, no_parse, calls, abstained = [], [], 0, 0
    before = kb.tracker.totals.requests
    for _ in range(repeat):
        for q in questions:
            started = time.perf_counter()
            answer = kb.ask(q, mode=mode, answer=kind)
            ms = (time.perf_counter() - started) * 1000
            totals.append(ms)
            no_parse.append(ms - answer.timings_ms.get("spr.parse", 0.0))
            abstained += answer.abstained
    calls = kb.tracker.totals.requests - before
    n = len(totals)
    return {
        "mode": mode, "kind": kind, "n": n, "p50": statistics.median(totals), "p95": pct(totals, 0.95),
        "p50x": statistics.median(no_parse), "p95x": pct(no_parse, 0.95), "calls": calls / n, "abstained": abstained,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, help="an existing KB (default: build one from examples/corpus)")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions per mode")
    parser.add_argument("--llm", type=int, default=3, help="questions answered by the embedded LLM (0 = none)")
    parser.add_argument("--cache", action="store_true", help="keep the embedding and LLM caches on")
    args = parser.parse_args()

    from core.config import load_config
    from spr.qa import KnowledgeBase

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        kb_dir = args.kb or build_kb(Path(tmp))
        built = "" if args.kb else f" (built from examples/corpus in {time.perf_counter() - started:.1f} s)"
        config = load_config(kb_dir=kb_dir)
        config.embed.cache = config.llm.cache = args.cache
        with KnowledgeBase.open(config) as kb:
            started = time.perf_counter()
            for mode in MODES:  # load models and indexes outside the timings
                kb.ask(QUESTIONS[0], mode=mode)
            print(f"KB {kb_dir}{built}; warm-up (model loads) {time.perf_counter() - started:.1f} s; "
                  f"caches {'on' if args.cache else 'off'}; {len(QUESTIONS)} questions x {args.repeat}")
            rows = [run(kb, mode, "extractive", QUESTIONS, args.repeat) for mode in MODES]
            if args.llm:
                kb.ask(QUESTIONS[0], answer="llm")  # loads the GGUF
                rows.append(run(kb, "dual", "llm", QUESTIONS[1 : 1 + args.llm], 1))
    print(f"{'mode':<7} {'answer':<11} {'n':>3} {'p50 ms':>9} {'p95 ms':>9} {'p50 -parse':>11} {'p95 -parse':>11} "
          f"{'LLM calls/ans':>14} {'abstained':>10}")
    for r in rows:
        print(f"{r['mode']:<7} {r['kind']:<11} {r['n']:>3} {r['p50']:>9.1f} {r['p95']:>9.1f} {r['p50x']:>11.1f} "
              f"{r['p95x']:>11.1f} {r['calls']:>14.2f} {r['abstained']:>10}")
    target = next(r for r in rows if r["mode"] == "dual" and r["kind"] == "extractive")["p50x"]
    print(f"target: extractive dual p50 excluding the parse <= 150 ms: {target:.1f} ms "
          f"({'met' if target <= 150 else 'NOT met'})")


if __name__ == "__main__":
    main()
