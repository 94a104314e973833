"""float32 vs bfloat16 embeddings on the same chunks: dense retrieval quality, agreement and time.

    .venv/bin/python bench/bench_embed_dtype.py --set dev-eu --set rag-eurlex --embed all-mpnet-base-v2

For each set the cached eval KB of ``bench/eval_retrieval.py`` (MiniLM, float32) supplies the
retrieval units — the chunks are the same whatever the embedder — and each number format embeds
them afresh with the product's own chunk stage (windows included; embedding cache off), then
answers every question by its best window. Reported per format: embedding seconds (same run,
same cores), dense R@5 / QR@5, and between the two formats the share of top-5 chunks in common
and the mean cosine of the question vectors. The question is whether ``[embed] dtype = "auto"``
(bfloat16 where the CPU computes it natively) loses anything that a retrieval user would see.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_retrieval import ChunkTexts, gold_scores, load  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from core.embed import SentenceTransformerEmbedder  # noqa: E402
from kgpipeline.derived.chunk_vectors import ChunkVectorStage  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.eval.runner import document_ids, prepare_kb, resolve_contexts  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from store.layout import KBLayout  # noqa: E402
from store.vectors import VectorIndex  # noqa: E402

K = 5


def best_windows(index: VectorIndex, query: np.ndarray, k: int) -> list[str]:
    """Distinct chunk IRIs by their best window, best first."""
    out: list[str] = []
    for hit in index.search(query[None, :], 20 * k)[0]:
        if hit.id not in out:
            out.append(hit.id)
        if len(out) == k:
            break
    return out


def run_set(name: str, embed: str, data_dir: Path) -> dict:
    dataset = load(name, data_dir, None)
    config = Config()
    config = config.model_copy(update={
        "embed": config.embed.model_copy(update={"model": "all-MiniLM-L6-v2", "dtype": "float32"}),
        "questions": config.questions.model_copy(update={"build": False}),
        "communities": config.communities.model_copy(update={"build": False}),
    })
    kb_config, note = prepare_kb(dataset, config, user_cache_dir() / "retrieval-all-MiniLM-L6-v2", ingest_summary, reindex=reindex_summary)
    print(note, flush=True)
    with KnowledgeBase.open(kb_config) as kb:
        doc_of = document_ids(kb.store)
        texts = ChunkTexts.read(kb.store, doc_of)
        questions = [q for q in resolve_contexts(kb.store, dataset.questions, doc_of) if q.answerable]
        formats: dict[str, dict] = {}
        tops: dict[str, list[list[str]]] = {}
        qvecs: dict[str, np.ndarray] = {}
        for dtype in ("float32", "bfloat16"):
            embedder = SentenceTransformerEmbedder(embed, dtype=dtype)
            embedder.embed_many(["warm-up"])  # model load outside the timing
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                summary = ChunkVectorStage(embedder, kb.config.retrieval.window_overlap).run(kb.store, Path(tmp))
                seconds = time.perf_counter() - t
                index = VectorIndex.load(KBLayout(Path(tmp)).index("chunks"))
            qvecs[dtype] = embedder.embed_many([q.question for q in questions])
            tops[dtype] = [best_windows(index, v, K) for v in qvecs[dtype]]
            scores: dict[str, list[float]] = {}
            for q, top in zip(questions, tops[dtype], strict=True):
                for key, v in gold_scores(name, q, top, texts, (K,)).items():
                    scores.setdefault(key, []).append(v)
            formats[dtype] = {"embed_s": round(seconds, 1), "index": summary,
                              **{key: round(float(np.mean(v)), 3) for key, v in scores.items()}}
            print(name, dtype, json.dumps(formats[dtype]), flush=True)
        overlap = np.mean([len(set(a) & set(b)) / K for a, b in zip(tops["float32"], tops["bfloat16"], strict=True)])
        cos = np.mean(np.sum(qvecs["float32"] * qvecs["bfloat16"], axis=1))
        result = {"set": name, "embed": embed, "questions": len(questions), "chunks": len(texts.doc_id), "formats": formats,
                  "top5_overlap": round(float(overlap), 3), "question_cosine": round(float(cos), 4),
                  "speedup": round(formats["float32"]["embed_s"] / max(formats["bfloat16"]["embed_s"], 1e-9), 2)}
        print(name, embed, json.dumps({k: result[k] for k in ("top5_overlap", "question_cosine", "speedup")}), flush=True)
        return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", required=True, help="dev-eu, dev-necp, dev-de, rag-eurlex, hotpotqa, musique")
    ap.add_argument("--embed", action="append", default=None, help="embedder (repeatable; default all-MiniLM-L6-v2)")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    data_dir = args.data_dir or default_data_dir()
    results = [run_set(s, e, data_dir) for e in (args.embed or ["all-MiniLM-L6-v2"]) for s in args.set]
    print(f"\n{'set':<12}{'embedder':<20}{'metric':>8}{'fp32':>8}{'bf16':>8}{'top5 same':>11}{'q cos':>8}{'embed s fp32/bf16':>20}")
    for r in results:
        f, b = r["formats"]["float32"], r["formats"]["bfloat16"]
        key = f"QR@{K}" if f"QR@{K}" in f else f"R@{K}"
        print(f"{r['set']:<12}{r['embed']:<20}{key:>8}{f[key]:>8.3f}{b[key]:>8.3f}{r['top5_overlap']:>11.3f}"
              f"{r['question_cosine']:>8.4f}{f['embed_s']:>11.0f} / {b['embed_s']:<5.0f}({r['speedup']}x)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
