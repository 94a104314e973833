"""Benchmark: question-bank build (embed + per-chunk de-duplication + FAISS index + save) against
the embedder's raw speed on the same sentences, in the same run.

Generation is excluded: the questions are made up front. "Raw" is ``embed_batch`` over all the
texts at once (sentence-transformers sorts them by length itself), no cache; "build" is
:func:`kgpipeline.derived.questions.build_question_bank` + save with the stage's embedder as configured by
default (persistent cache on, in a fresh KB folder). Target: build >= 90% of raw sentences/s.
Rounds alternate raw and build so machine load hits both alike; the best round of each is reported.

    .venv/bin/python bench/bench_questions.py [--questions 1500 --rounds 2]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import EmbedConfig, QuestionsConfig  # noqa: E402
from core.embed import make_embedder  # noqa: E402
from kgpipeline.derived.questions import build_question_bank  # noqa: E402
from store.layout import KBLayout
from store.question_index import save_question_bank  # noqa: E402

ACTORS = ["National Energy Bureau", "Ministry of Climate", "Energy Bureau of Westmark Province", "grid operators",
          "municipalities", "the Commission", "Member States", "installers", "public bodies", "the Monitoring Center"]
THINGS = ["a monitoring center", "the annual progress report", "grants for rooftop systems", "access fees",
          "a contact person for solar permits", "energy audits for small firms", "the national energy plan",
          "storage services", "district heating", "the renovation obligation"]
PATTERNS = ["Who must {v} {t}?", "When must {a} {v} {t}?", "What does {a} {v}?", "Which body {v}s {t}?",
            "What is the deadline for {a} to {v} {t}?", "What must {a} do about {t} in {y}?"]
VERBS = ["establish", "publish", "provide", "review", "designate", "fund", "report", "tender", "expand", "monitor"]


def make_questions(n: int, per_chunk: int, rng: random.Random) -> dict[str, list[tuple[str, str]]]:
    generated: dict[str, list[tuple[str, str]]] = {}
    for i in range(n):
        q = rng.choice(PATTERNS).format(a=rng.choice(ACTORS), v=rng.choice(VERBS), t=rng.choice(THINGS), y=2024 + i % 9)
        q = q[:-1] + f" (item {i})?"  # every text distinct, so no cache hit inside one build
        generated.setdefault(f"https://w3id.org/policykb/id/chunk/c{i // per_chunk}", []).append((q, "sentence"))
    return generated


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=1500)
    ap.add_argument("--per-chunk", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    config = QuestionsConfig()
    with tempfile.TemporaryDirectory() as kb:
        # The stage's embedder as configured by default: persistent cache in the KB folder. Every
        # round's texts are new, so the cache only costs (writes), never helps.
        embedder = make_embedder(EmbedConfig(), KBLayout(kb).embed_cache)
        embedder.embed_batch(["warm up the model"] * 64)
        print(f"embedder {embedder.model_id}, batch {embedder.batch_size}; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
        raw_best, build_best, raw_cpu, build_cpu = 0.0, 0.0, 0.0, 0.0
        for round_ in range(args.rounds):
            texts = [q for qs in make_questions(args.questions, args.per_chunk, random.Random(round_)).values() for q, _ in qs]
            started, cpu = time.perf_counter(), time.process_time()
            embedder.embed_batch(texts)  # raw: the model alone, no cache
            raw = len(texts) / (time.perf_counter() - started)
            raw_cpu = max(raw_cpu, len(texts) / (time.process_time() - cpu))
            generated = make_questions(args.questions, args.per_chunk, random.Random(100 + round_))
            started, cpu = time.perf_counter(), time.process_time()
            index, questions = build_question_bank(generated, embedder, config)
            save_question_bank(Path(kb) / "indexes" / "questions", index, questions, embedder.model_id)
            build = args.questions / (time.perf_counter() - started)
            build_cpu = max(build_cpu, args.questions / (time.process_time() - cpu))
            raw_best, build_best = max(raw_best, raw), max(build_best, build)
            print(f"round {round_ + 1}: raw {raw:6.1f} sentences/s   build {build:6.1f} sentences/s   "
                  f"({len(questions)} kept of {args.questions})")  # fmt: skip
    ratio = build_best / raw_best
    print(f"per cpu-second (robust to machine load): raw {raw_cpu:.1f}, build {build_cpu:.1f} = {build_cpu / raw_cpu:.1%}")
    print(f"best: raw {raw_best:.1f} sentences/s, build {build_best:.1f} sentences/s = {ratio:.1%} of raw "
          f"[target >= 90%: {'PASS' if ratio >= 0.9 else 'FAIL'}]")  # fmt: skip


if __name__ == "__main__":
    main()
