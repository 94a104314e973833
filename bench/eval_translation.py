"""Questions in another language than the KB: quote recall@k of each retrieval mode for the
question as asked, its translation into the KB's language (spr/translate.py), and the two rankings
fused by reciprocal-rank fusion (the first version, measured worse than the translation alone).

    .venv/bin/python bench/eval_translation.py --set dev-de --embed all-MiniLM-L6-v2

Only questions that :func:`spr.translate.needs_translation` selects count (dev-de: the English
ones); a set whose questions are all in the KB's language (dev-de-native: the same questions in
German) is scored as asked, through the product's retrieval modes. Translations come from the configured [llm] model (the embedded Qwen2.5-Coder-1.5B by
default) through the KB's response cache, so a second run costs no model time; the time of the
first is printed per question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_retrieval import load  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval import metrics as m  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.eval.runner import prepare_kb  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.retrieval.fusion import Ranked, reciprocal_rank_fusion  # noqa: E402
from spr.translate import Translator, needs_translation  # noqa: E402
from store.vocab import PKB  # noqa: E402

KS = (3, 5, 10)
DEPTH = 20  # chunks of each ranking that the fused variant fuses


def fused(retriever, question: str, translation: str, k: int) -> list[str]:
    """Chunk IRIs of the RRF of the rankings of the question as asked and of its translation."""
    rankings = {
        name: [Ranked(e.chunk.iri, e.score) for e in retriever.search(text, DEPTH).evidence if e.chunk is not None]
        for name, text in (("asked", question), ("translated", translation))
    }
    return [f.chunk for f in reciprocal_rank_fusion(rankings, {"asked": 1.0, "translated": 1.0}, 60)][:k]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="dev-de")
    ap.add_argument("--embed", default=Config().embed.model)
    ap.add_argument("--modes", default="hybrid,bm25,vector")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    dataset = load(args.set, default_data_dir(), None)
    config = Config()
    config = config.model_copy(update={"embed": config.embed.model_copy(update={"model": args.embed})})
    kb_config, note = prepare_kb(dataset, config, user_cache_dir() / f"retrieval-{Path(args.embed).name}", ingest_summary, reindex=reindex_summary)
    print(note, flush=True)
    with KnowledgeBase.open(kb_config) as kb:
        raw = {r["c"].value: r["t"].value for r in kb.store.select(f"SELECT ?c ?t WHERE {{ ?c <{PKB}text> ?t }}").rows}
        language = kb.language
        translator = Translator(kb.llm)
        answerable = [q for q in dataset.questions if q.answerable and q.gold_contexts]
        questions = [q for q in answerable if needs_translation(q.question, language)]
        native = not questions  # every question in the KB's language (dev-de-native): as asked only
        if native:
            questions = answerable
        translations = {}
        for q in [] if native else questions:
            started = time.perf_counter()
            translations[q.id] = translator.translate(q.question, language) or q.question
            print(f"{time.perf_counter() - started:5.1f} s  {q.question[:60]!r} -> {translations[q.id][:70]!r}", flush=True)
        report: dict[str, dict[str, float]] = {}
        for mode in args.modes.split(","):
            retriever = kb.retriever(mode)
            for variant in ("asked",) if native else ("asked", "translated", "merged"):
                scores: dict[int, list[float]] = {k: [] for k in KS}
                for q in questions:
                    if variant == "merged":
                        iris = fused(retriever, q.question, translations[q.id], max(KS))
                    else:
                        text = q.question if variant == "asked" else translations[q.id]
                        iris = [e.chunk.iri for e in retriever.search(text, max(KS)).evidence if e.chunk is not None]
                    chunks = [raw.get(iri, "") for iri in iris]
                    for k in KS:
                        scores[k].append(m.quote_recall_at_k(chunks, q.gold_contexts, k) or 0.0)
                report[f"{mode} {variant}"] = {f"QR@{k}": round(sum(v) / len(v), 3) for k, v in scores.items()}
                print(f"{mode:8s} {variant:10s} " + "  ".join(f"QR@{k} {sum(v) / len(v):.3f}" for k, v in scores.items()), flush=True)
    result = {"set": args.set, "embed": args.embed, "language": language, "questions": len(questions), "systems": report}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
