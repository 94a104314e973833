"""Does the LLM reranker pay? ``hybrid`` top-5 against ``hybrid`` + rerank (top_n 10) top-5.

    .venv/bin/python bench/bench_rerank.py [--limit 15] [--threads 2] [--json bench/out/rerank/eu.json]
    .venv/bin/python bench/bench_rerank.py --model qwen2.5-coder-1.5b-instruct --threads 1 --limit 20 --passage-words 150

On the hand-checked dev set ``bench/devset/eu_regulations.jsonl`` (answerable questions, exact gold
quotes in ``contexts``) over the KB ``bench/eval_retrieval.py --set dev-eu`` built under the user
cache (``<cache>/retrieval-all-MiniLM-L6-v2/eval/eu_regulations/kb``). Quality: gold-quote
recall@k (:func:`spr.eval.metrics.quote_recall_at_k`) over the chunk texts, k = 1, 3, 5, and the
first stage's recall@``top_n``, the ceiling a reranker of those candidates can reach at any k.
``--model qwen2.5-coder-1.5b-instruct`` measures the embedded 1.5B model (docs/retrieval.md "Retrieval").
Cost: the rerank stage's seconds per question (the trace's "rerank" timing; the model is loaded
and warmed before), LLM calls and tokens (the tracker, response cache off). Default model: the
embedded SmolLM2-135M-Instruct.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from core.jsonl import read_jsonl  # noqa: E402
from core.llm import LlamaCppLLM  # noqa: E402
from core.usage import UsageTracker  # noqa: E402
from spr.eval.metrics import quote_recall_at_k  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.retrieval.rerank import LLMReranker, rerank_prompt  # noqa: E402

DEVSET = ROOT / "bench" / "devset" / "eu_regulations.jsonl"
KS = (1, 3, 5)


def mean(xs: list[float]) -> float:
    return statistics.fmean(xs) if xs else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, default=None, help="the built KB (default: the user cache's dev-eu KB)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N answerable questions")
    ap.add_argument("--top-n", type=int, default=10, help="candidates the LLM scores")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    ap.add_argument("--model", default=None, help="GGUF path or name (default: SmolLM2; e.g. qwen2.5-coder-1.5b-instruct)")
    ap.add_argument("--passage-words", type=int, default=300, help="words of each passage the model reads")
    ap.add_argument("--embed", default="all-MiniLM-L6-v2", help="the KB's embedder (its retrieval-<embed> cache folder)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = ap.parse_args()

    kb_dir = args.kb or user_cache_dir() / f"retrieval-{args.embed}" / "eval" / "eu_regulations" / "kb"
    rows = [row for _, row in read_jsonl(DEVSET) if row.get("answerable", True) and row.get("contexts")]
    rows = rows[: args.limit] if args.limit else rows

    config = Config()
    config = config.model_copy(update={
        "kb": config.kb.model_copy(update={"dir": kb_dir}),
        "embed": config.embed.model_copy(update={"model": args.embed}),
        "retrieval": config.retrieval.model_copy(update={"rerank": True, "rerank_top_n": args.top_n}),
    })
    tracker = UsageTracker()
    llm = LlamaCppLLM(args.model, threads=args.threads, cache=False, tracker=tracker)
    with KnowledgeBase.open(config, llm=llm, tracker=tracker) as kb:
        reranker = kb.retriever("hybrid")
        assert isinstance(reranker, LLMReranker), "[retrieval] rerank did not wrap hybrid"
        reranker.passage_words = args.passage_words
        t = time.perf_counter()
        llm.yes_probability(rerank_prompt("warm-up?", "A warm-up passage."))  # loads the model
        load_s = time.perf_counter() - t
        reranker.inner.search("warm-up question", args.k)  # loads indexes and the embedder
        warm = tracker.totals

        per_q = []
        for n, row in enumerate(rows, 1):
            quotes = row["contexts"]
            base = reranker.inner.search(row["question"], args.top_n)
            if "reindex" in base.trace.note:  # a signal's index is missing: the comparison would not be hybrid's
                print(f"first stage incomplete: {base.trace.note}", file=sys.stderr)
                return 1
            before = tracker.totals
            got = reranker.search(row["question"], args.k)
            after = tracker.totals
            if got.trace.note:
                print(f"  note: {got.trace.note}", flush=True)
            base_texts = [e.chunk.text if e.chunk else e.text for e in base.evidence]
            rr_texts = [e.chunk.text if e.chunk else e.text for e in got.evidence]
            q = {
                "id": row["id"],
                "hybrid": {k: quote_recall_at_k(base_texts, quotes, k) for k in KS},
                "rerank": {k: quote_recall_at_k(rr_texts, quotes, k) for k in KS},
                "ceiling": quote_recall_at_k(base_texts, quotes, args.top_n),
                "hybrid_s": base.trace.timings_ms.get("hybrid", 0.0) / 1000,
                "rerank_s": got.trace.timings_ms.get("rerank", 0.0) / 1000,
                "calls": after.calls - before.calls,
                "prompt_tokens": after.usage.prompt_tokens - before.usage.prompt_tokens,
                "completion_tokens": after.usage.completion_tokens - before.usage.completion_tokens,
            }
            per_q.append(q)
            print(f"{n:>3} {row['id']}  hybrid@{args.k} {q['hybrid'][args.k]:.2f}  rerank@{args.k} {q['rerank'][args.k]:.2f}"
                  f"  ceiling {q['ceiling']:.2f}  rerank {q['rerank_s']:.1f}s {q['prompt_tokens']} tok", flush=True)

    total = tracker.totals
    out = {
        "set": "dev-eu (eu_regulations.jsonl)", "questions": len(per_q), "top_n": args.top_n, "k": args.k,
        "model": llm.model_id, "threads": args.threads, "passage_words": args.passage_words, "embed": args.embed, "model_load_s": round(load_s, 2),
        "recall": {
            "hybrid": {k: round(mean([q["hybrid"][k] for q in per_q]), 4) for k in KS},
            "hybrid+rerank": {k: round(mean([q["rerank"][k] for q in per_q]), 4) for k in KS},
            f"ceiling@{args.top_n}": round(mean([q["ceiling"] for q in per_q]), 4),
        },
        "paired@k": {
            "better": sum(q["rerank"][args.k] > q["hybrid"][args.k] for q in per_q),
            "worse": sum(q["rerank"][args.k] < q["hybrid"][args.k] for q in per_q),
            "same": sum(q["rerank"][args.k] == q["hybrid"][args.k] for q in per_q),
        },
        "cost_per_question": {
            "hybrid_s": round(mean([q["hybrid_s"] for q in per_q]), 3),
            "rerank_s_mean": round(mean([q["rerank_s"] for q in per_q]), 2),
            "rerank_s_median": round(statistics.median([q["rerank_s"] for q in per_q]), 2) if per_q else 0.0,
            "llm_calls": round(mean([q["calls"] for q in per_q]), 1),
            "prompt_tokens": round(mean([q["prompt_tokens"] for q in per_q]), 1),
            "completion_tokens": round(mean([q["completion_tokens"] for q in per_q]), 1),
        },
        "llm_seconds_total": round(total.seconds - warm.seconds, 1),
        "per_question": per_q,
    }
    print(json.dumps({k: v for k, v in out.items() if k != "per_question"}, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
