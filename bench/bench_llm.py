"""Embedded LLM speed by thread count: load time, first-token latency, prompt and generation tokens/s.

Run: ``.venv/bin/python bench/bench_llm.py --model qwen2.5-coder-1.5b-instruct --threads 1,2``
(about 4 minutes for Qwen on 2 idle cores; ``--threads 1/2`` = one thread generating, two reading the
prompt). For each thread setting the model is loaded afresh
(``LlamaCppLLM``, the code path ``policykb`` uses) and then:

- ``load s``: constructing ``llama_cpp.Llama`` (mmap of the GGUF, context allocation);
- ``warm-up s``: a 1-token generation right after the load (what a warm-up on load would cost);
- ``cold TTFT`` / ``TTFT``: time to the first streamed piece of a ~600-token chat prompt, the first
  request after the load (with ``--no-warmup``: without the 1-token warm-up before it) and the
  median of the repetitions; the KV cache is emptied before each, so no prefix reuse flatters it;
- ``prompt tok/s``: prompt tokens / TTFT (TTFT includes the first decode step, a few % here);
- ``gen tok/s``: (pieces - 1) / time from the first to the last piece, ``--gen`` tokens asked
  (``max_tokens``; the prompt asks for a long answer so generation runs to the limit).

``--busy N`` starts N CPU-bound processes for the measurement: llama.cpp's threads meet at
spinning barriers, so a thread count above the free cores collapses speed. ``--json FILE`` writes
the rows as JSON too. Run it on an idle machine (see ``uptime``); the figures are medians.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from core.llm import LlamaCppLLM  # noqa: E402
from core.usage import UsageTracker  # noqa: E402

SYSTEM = "You answer questions about policy documents. Use only the evidence given."
CLAUSES = [
    "Member States shall ensure that operators of wind farms obtain a permit before construction begins.",
    "The competent authority shall decide on a permit application within twelve months of its receipt.",
    "Network operators shall publish the conditions for grid access, including connection fees.",
    "Municipalities may designate acceleration areas for renewable energy projects in their spatial plans.",
    "Suppliers shall inform households of the share of renewable sources in the electricity they deliver.",
    "The regulator shall monitor electricity tariffs and report annually to the Commission.",
    "Large enterprises shall carry out an energy audit every four years, by independent experts.",
    "Heat pumps installed in new buildings shall meet the minimum efficiency levels of Annex II.",
]


QUESTION = (
    "\n\nQuestion: Explain in detail, clause by clause, what each piece of evidence requires, who must act"
    " and by when. Write at least 300 words."
)


def chat_prompt(llm: LlamaCppLLM, tokens: int, variant: int) -> list[dict[str, str]]:
    """A system and a user message of about ``tokens`` tokens: numbered evidence clauses, then a
    question asking for a long answer. ``variant`` changes the first words and the clause order."""

    def user(n: int) -> str:
        clauses = (f"[{i + 1}] {CLAUSES[(i + variant) % len(CLAUSES)]}" for i in range(n))
        return f"Request {variant}.\nEvidence:\n" + "\n".join(clauses) + QUESTION

    def size(n: int) -> int:  # + ~20 tokens of ChatML wrapping
        return len(llm.llama.tokenize((SYSTEM + "\n" + user(n)).encode(), add_bos=False)) + 20

    n = 1
    while size(n + 1) <= tokens:
        n += 1
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user(n)}]


def timed_stream(llm: LlamaCppLLM, messages: list[dict[str, str]], gen: int) -> dict[str, float]:
    llm.llama.reset()  # empty KV cache: the whole prompt is evaluated
    start = time.perf_counter()
    stamps = [time.perf_counter() for _piece in llm.stream(messages, max_tokens=gen, temperature=0.0)]
    usage = llm.tracker.records[-1].usage
    ttft = stamps[0] - start
    return {
        "ttft_s": ttft,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "prompt_tps": usage.prompt_tokens / ttft,
        "gen_tps": (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else float("nan"),
    }


def measure(model: str | None, threads: tuple[int, int], args: argparse.Namespace) -> dict[str, object]:
    llm = LlamaCppLLM(
        model, threads=threads[0], batch_threads=threads[1], context_size=args.context, cache=False, tracker=UsageTracker()
    )
    start = time.perf_counter()
    llm.llama  # noqa: B018 - loads the model
    load_s = time.perf_counter() - start
    warmup_s = float("nan")
    if not args.no_warmup:
        start = time.perf_counter()
        list(llm.stream("Hi", max_tokens=1))
        warmup_s = time.perf_counter() - start
    cold = timed_stream(llm, chat_prompt(llm, args.prompt, 0), args.gen)
    runs = [timed_stream(llm, chat_prompt(llm, args.prompt, rep + 1), args.gen) for rep in range(args.repeats)]
    row: dict[str, object] = {
        "model": llm.model_path.name,
        "threads": threads[0],
        "batch_threads": threads[1],
        "busy": args.busy,
        "load_s": load_s,
        "warmup_s": warmup_s,
        "cold_ttft_s": cold["ttft_s"],
        "repeats": args.repeats,
    }
    for key in ("ttft_s", "prompt_tokens", "completion_tokens", "prompt_tps", "gen_tps"):
        values = [r[key] for r in runs]
        row[key] = statistics.median(values)
        row[key + "_all"] = values
    del llm
    return row


def parse_threads(setting: str) -> tuple[int, int]:
    """"2" → (2, 2); "1/2" → 1 generating thread, 2 reading the prompt."""
    gen, _, batch = setting.strip().partition("/")
    return int(gen), int(batch or gen)


def _burn() -> None:  # pragma: no cover - a competing process
    while True:
        pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct", help="a model name or a GGUF path")
    ap.add_argument(
        "--threads", default="1,2",
        help="comma-separated thread settings: N (generation and prompt) or G/P (G generating, P reading the prompt)",
    )
    ap.add_argument("--prompt", type=int, default=600, help="prompt tokens (about)")
    ap.add_argument("--gen", type=int, default=64, help="tokens generated per request")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--context", type=int, default=2048, help="n_ctx for the measurement")
    ap.add_argument("--no-warmup", action="store_true", help="measure the first request with no 1-token warm-up")
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound competing processes during the run")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    threads = [parse_threads(t) for t in args.threads.split(",") if t.strip()]

    print(f"cpus {os.cpu_count()}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, busy {args.busy}")
    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.busy)]
    for proc in burners:
        proc.start()
    try:
        rows = [measure(args.model, t, args) for t in threads]
    finally:
        for proc in burners:
            proc.terminate()
            proc.join()

    head = (
        f"{'model':<44} {'thr':>5} {'load s':>7} {'warm-up s':>9} {'cold TTFT':>9} {'TTFT':>6} "
        f"{'prompt':>6} {'prompt tok/s':>12} {'gen tok/s':>9}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r['model']:<44} {str(r['threads']) + '/' + str(r['batch_threads']):>5} {r['load_s']:>7.2f} {r['warmup_s']:>9.2f} {r['cold_ttft_s']:>9.2f} "
            f"{r['ttft_s']:>6.2f} {r['prompt_tokens']:>6.0f} {r['prompt_tps']:>12.1f} {r['gen_tps']:>9.1f}"
        )
    print(f"(medians of {args.repeats}; {args.gen} tokens generated per request; per-run values in --json)")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
