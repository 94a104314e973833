"""Choose ``[retrieval] facts_min_confidence``: how confident structured facts must be to enter ``dual``.

    .venv/bin/python bench/calibrate_facts.py --sets dev-eu,dev-necp,dev-de,sample

For every question of the visible sets (the hand-checked dev sets over eu_regulations_pypi, NECP
and the German laws, and the example corpus's sample-qa — never egd_regulations), the structured
retriever runs once; its facts are *relevant* when a fact's value or provenance chunk holds the
gold answer or a gold quote. The printed table gives, per threshold, how many questions would get
facts and the precision of those facts; the chosen threshold is the lowest one whose admitted
facts are relevant at least ``--precision`` of the time (1.0 = no facts, when none is). KBs come
from the same cache as ``bench/eval_retrieval.py`` (run that first, or this builds them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.eval_retrieval import load_dev  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval.datasets import default_data_dir, load_jsonl  # noqa: E402
from spr.eval.metrics import word_key  # noqa: E402
from spr.eval.runner import prepare_kb  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402

THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def dataset(name: str, data_dir: Path):
    if name == "sample":
        return load_jsonl(ROOT / "examples/eval/sample-qa.jsonl", ROOT / "examples/corpus")
    return load_dev(name, data_dir)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="dev-eu,dev-necp,dev-de,sample")
    ap.add_argument("--embed", default="all-MiniLM-L6-v2")
    ap.add_argument("--precision", type=float, default=0.5, help="least share of admitted facts that are relevant")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    data_dir = default_data_dir()
    base = Config()
    base = base.model_copy(update={"embed": base.embed.model_copy(update={"model": args.embed})})
    cache = user_cache_dir() / f"retrieval-{Path(args.embed).name}"
    points: list[tuple[float, bool, str]] = []  # (confidence, relevant, set)
    for name in args.sets.split(","):
        data = dataset(name, data_dir)
        kb_config, _ = prepare_kb(data, base, cache, ingest_summary, reindex=reindex_summary)
        with KnowledgeBase.open(kb_config) as kb:
            spr = kb.retriever("spr")
            for q in data.questions:
                facts = spr.retrieve(q.question, 5)
                if not facts:
                    continue
                gold = [word_key(a) for a in q.answers] + [word_key(c) for c in q.gold_contexts]
                texts = [word_key(e.text) for e in facts] + [word_key(e.chunk.text) for e in facts if e.chunk]
                relevant = q.answerable and any(g.strip() and g in t for g in gold for t in texts)
                points.append((facts[0].confidence or 0.0, relevant, name))
    rows = []
    chosen = 1.0
    for t in THRESHOLDS:
        admitted = [p for p in points if p[0] >= t]
        precision = sum(p[1] for p in admitted) / len(admitted) if admitted else None
        rows.append({"threshold": t, "questions_with_facts": len(admitted), "relevant": sum(p[1] for p in admitted), "precision": precision})
        if precision is not None and precision >= args.precision and chosen == 1.0:
            chosen = t
    print(f"{len(points)} questions got facts from the structured retriever ({args.sets})")
    print(f"{'threshold':>9} {'questions':>9} {'relevant':>8} {'precision':>9}")
    for r in rows:
        p = f"{r['precision']:.2f}" if r["precision"] is not None else "-"
        print(f"{r['threshold']:>9.1f} {r['questions_with_facts']:>9} {r['relevant']:>8} {p:>9}")
    print(f"chosen facts_min_confidence = {chosen} (lowest threshold with precision >= {args.precision})")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"points": points, "rows": rows, "chosen": chosen}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
