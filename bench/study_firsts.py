"""A study, not kept: the default pipeline vs "each first-stage signal's best chunk kept in the top k".

    .venv/bin/python bench/study_firsts.py dev-eu     # or hotpotqa, dev-de-native, squad2, ...

Uses the same cached evaluation KB as bench/eval_retrieval.py (MiniLM). docs/retrieval.md "Questions in
another language" lists what it measured.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.eval_retrieval import ChunkTexts, gold_scores, load  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.eval.runner import document_ids, prepare_kb, resolve_contexts  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.retrieval.fusion import is_second_stage  # noqa: E402
from spr.retrieval.registry import signals  # noqa: E402


def main(name: str) -> None:
    dataset = load(name, default_data_dir(), None)
    config = Config()
    config = config.model_copy(update={"embed": config.embed.model_copy(update={"model": "all-MiniLM-L6-v2"})})
    kc, note = prepare_kb(dataset, config, user_cache_dir() / "retrieval-all-MiniLM-L6-v2", ingest_summary, reindex=reindex_summary)
    with KnowledgeBase.open(kc) as kb:
        doc_of = document_ids(kb.store)
        texts = ChunkTexts.read(kb.store, doc_of)
        qs = [q for q in resolve_contexts(kb.store, dataset.questions, doc_of) if q.answerable]
        W = kb.config.retrieval.weights
        sigs = [s for s in signals(kb) if W.get(s.name, 0) > 0 and not is_second_stage(s)]
        hyb = kb.retriever("hybrid")
        acc = {}
        for q in qs:
            base = [e.chunk.iri for e in hyb.search(q.question, 20).evidence if e.chunk]
            firsts = []
            for s in sigs:
                r = s.rank(q.question, 1)
                if r and r[0].chunk not in firsts:
                    firsts.append(r[0].chunk)
            variants = {"default": base}
            for k in (5, 10):
                keep = base[:k]
                missing = [c for c in firsts if c not in keep]
                if missing:
                    keep = keep[: k - len(missing)] + missing
                variants[f"firsts kept in top {k}"] = keep + [c for c in base if c not in keep]
            for label, lst in variants.items():
                for key, v in gold_scores(name, q, lst, texts).items():
                    acc.setdefault(label, {}).setdefault(key, []).append(v)
        for label, d in acc.items():
            print(f"{name:10s} {label:22s}", "  ".join(f"{k} {sum(v)/len(v):.3f}" for k, v in d.items()))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "dev-eu")
