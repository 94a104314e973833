"""Model-layer benchmark: embedded LLM speed, embedder speed, and what the response cache saves.

Run: ``.venv/bin/python bench/bench_models.py`` (about a minute on 2 cores). Prints:

- tokens/s of the embedded GGUF model, prompt processing and generation measured separately
  (prompt: one batch evaluated from an empty context; generation: per-token decode steps after it);
- sentences/s of the embedder, raw (no cache);
- the same N LLM requests run twice against one response cache: time, tokens and model calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # runnable from a plain checkout

from core.cache import ResponseCache  # noqa: E402
from core.embed import SentenceTransformerEmbedder  # noqa: E402
from core.llm import LlamaCppLLM  # noqa: E402
from core.usage import UsageTracker  # noqa: E402

TOPICS = ["wind farms", "solar parks", "grid access", "heat pumps", "building renovation",
          "electricity tariffs", "hydrogen storage", "emission permits", "biofuel quotas", "energy audits"]
ACTORS = ["Member States", "the Commission", "network operators", "municipalities", "suppliers",
          "the regulator", "large enterprises", "households"]
VERBS = ["shall report on", "may subsidise", "must register", "shall assess", "are exempt from rules on",
         "shall publish data on", "may restrict", "shall promote"]


def sentences(n: int) -> list[str]:
    """Distinct policy-like sentences (no two equal, so no de-duplication helps)."""
    out = []
    for i in range(n):
        t, a, v = TOPICS[i % len(TOPICS)], ACTORS[(i // 10) % len(ACTORS)], VERBS[(i // 80) % len(VERBS)]
        out.append(f"{a.capitalize()} {v} {t} under Article {i + 1} of the regulation.")
    return out


def bench_llm_speed(llm: LlamaCppLLM, prompt_tokens: int, gen_tokens: int, repeats: int) -> None:
    llama = llm.llama
    text = " ".join(sentences(200))
    tokens = llama.tokenize(text.encode())[:prompt_tokens]
    pp, tg = [], []
    for _ in range(repeats):
        llama.reset()  # empty context, so no prefix reuse flatters the figure
        start = time.perf_counter()
        llama.eval(tokens)
        pp.append(len(tokens) / (time.perf_counter() - start))

        llama.reset()
        stamps = []
        for i, _tok in enumerate(llama.generate(tokens[:32], temp=0.0)):
            stamps.append(time.perf_counter())  # each yield after the first is one decode step
            if i + 1 >= gen_tokens:
                break
        tg.append((len(stamps) - 1) / (stamps[-1] - stamps[0]))
    print(f"embedded LLM ({llm.model_path.name}, {llm.threads} threads)")
    print(f"  prompt processing : {statistics.median(pp):7.1f} tokens/s  ({len(tokens)}-token prompt, median of {repeats})")
    print(f"  generation        : {statistics.median(tg):7.1f} tokens/s  ({gen_tokens} tokens, median of {repeats})")


def bench_embedder(n: int, batch_size: int) -> None:
    emb = SentenceTransformerEmbedder(batch_size=batch_size)  # no cache: raw speed
    emb.embed_batch(sentences(16))  # load and warm up
    texts = sentences(n)
    start = time.perf_counter()
    vectors = emb.embed_many(texts)
    seconds = time.perf_counter() - start
    print(f"embedder ({emb.model_id.split(':')[1]}, dim {vectors.shape[1]}, batch {batch_size})")
    print(f"  raw, uncached     : {n / seconds:7.1f} sentences/s  ({n} sentences in {seconds:.2f} s)")


def bench_cache(llm_kwargs: dict, n: int) -> None:
    prompts = [f"In one sentence, what does a policy on {t} regulate?" for t in TOPICS[:n]]
    with tempfile.TemporaryDirectory() as tmp:
        cache = ResponseCache(Path(tmp) / "llm.sqlite")
        rows = []
        for label in ("uncached (1st run)", "cached (2nd run)"):
            tracker = UsageTracker()
            llm = LlamaCppLLM(cache=cache, tracker=tracker, **llm_kwargs)
            if label.startswith("uncached"):
                _ = llm.llama  # load outside the timing; the cached run never loads it
            start = time.perf_counter()
            for p in prompts:
                llm.complete(p)
            seconds = time.perf_counter() - start
            rows.append((label, seconds, tracker.totals, tracker.summary()))
        cache.close()
    print(f"response cache: the same {n} requests (max_tokens {llm_kwargs['max_tokens']}) twice")
    for label, seconds, t, summary in rows:
        print(
            f"  {label:<19}: {seconds:7.2f} s, model calls {t.calls}, cache hits {t.cache_hits}, "
            f"tokens processed {t.usage.total_tokens}, tokens saved {t.saved.total_tokens}"
        )
        print(f"  {'':<19}  {summary}")
    speedup = rows[0][1] / max(rows[1][1], 1e-9)
    print(f"  cached run is {speedup:,.0f}x faster and costs 0 model tokens")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompt-tokens", type=int, default=384)
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--cache-requests", type=int, default=6)
    parser.add_argument("--threads", type=int, default=0, help="0 = LlamaCppLLM default")
    args = parser.parse_args()

    started = time.perf_counter()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    llm = LlamaCppLLM(cache=False, threads=args.threads)
    t0 = time.perf_counter()
    _ = llm.llama
    print(f"embedded LLM load: {time.perf_counter() - t0:.2f} s")
    bench_llm_speed(llm, args.prompt_tokens, args.gen_tokens, args.repeats)
    bench_embedder(args.sentences, args.batch_size)
    bench_cache({"max_tokens": 32, "threads": args.threads}, args.cache_requests)
    print(f"total bench time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
