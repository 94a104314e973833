"""The LLM extractor next to the lexicon extractor on the same chunks, for hand-checking.

Draws ``--chunks`` chunks in a stable hash order from the EU regulation articles and the NECP
"national objectives and targets" files (half each), runs both extractors on each (the LLM one
with the ``[llm]`` model: by default the embedded Qwen2.5-Coder-1.5B, response cache off) and
writes every relation either extractor states as ``{relation_id, extractor, corpus, doc_id,
subject, property, object, evidence}`` for labelling; ``--score LABELS`` prints precision per
extractor from a labels file (``{relation_id, correct, note}`` per line). The policy-fact
patterns wrap both extractors alike and are measured by ``bench/sample_facts.py``; this compares
what each extractor adds on its own. Usage:

    .venv/bin/python bench/sample_llm_relations.py [--chunks 12] [--out bench/facts/llm-relations.jsonl]
    .venv/bin/python bench/sample_llm_relations.py --score bench/facts/llm-labels.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sample_facts import CORPORA, documents  # noqa: E402

from core.config import LLMConfig  # noqa: E402
from core.llm import make_llm  # noqa: E402
from core.resources import resource_dir  # noqa: E402
from kgpipeline.extract.lexicon_extractor import LexiconExtractor  # noqa: E402
from kgpipeline.extract.llm_extractor import LLMExtractor  # noqa: E402
from kgpipeline.ontology import read_ontologies  # noqa: E402
from kgpipeline.segment import segment  # noqa: E402

SEED = 13
OUT = ROOT / "bench" / "facts" / "llm-relations.jsonl"


def _rank(key: str) -> str:
    return hashlib.sha1(f"{SEED}:{key}".encode()).hexdigest()


def pick_chunks(data: Path, n: int) -> list[tuple[str, str, object, object]]:
    """(corpus, category, document, chunk): ``n`` chunks, half per corpus, in hash order."""
    picked = []
    for name, (rel, category) in CORPORA.items():
        pool = [(name, category, doc, chunk) for doc in documents(data / rel) for chunk in segment(doc).chunks
                if len(chunk.text) > 300]  # fmt: skip
        pool.sort(key=lambda x: _rank(x[3].chunk_id))
        picked += pool[: n // 2]
    return picked


def relations(extractor, corpus: str, category: str, doc, chunk) -> list[dict]:
    out = extractor.extract(chunk, doc, category)
    rows = []
    for r in out.relations:
        s, e = r.evidence
        row = {"extractor": extractor.name, "corpus": corpus, "doc_id": doc.doc_id, "subject": r.subject.label or r.subject.text,
               "property": r.property_iri.rsplit("#", 1)[1], "object": r.object.label or r.object.text,
               "evidence": " ".join(chunk.text[s:e].split())[:400]}  # fmt: skip
        row["relation_id"] = hashlib.sha1(json.dumps([row[k] for k in ("extractor", "doc_id", "subject", "property", "object")]).encode()).hexdigest()[:10]
        rows.append(row)
    return rows


def score(path: Path, labels: Path) -> None:
    rows = {json.loads(line)["relation_id"]: json.loads(line) for line in path.open(encoding="utf-8")}
    marks = {json.loads(line)["relation_id"]: json.loads(line)["correct"] for line in labels.open(encoding="utf-8")}
    total, right = Counter(), Counter()
    for rid, row in rows.items():
        if rid in marks:
            total[row["extractor"]] += 1
            right[row["extractor"]] += bool(marks[rid])
    print("| extractor | relations | correct | precision |\n|---|---|---|---|")
    for name in sorted(total):
        print(f"| {name} | {total[name]} | {right[name]} | {right[name] / total[name]:.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--chunks", type=int, default=12)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--score", type=Path, default=None, help="a labels file: print precision per extractor")
    args = ap.parse_args()
    if args.score:
        score(args.out, args.score)
        return 0
    onto = read_ontologies(resource_dir("ontologies"))
    lexicon = LexiconExtractor(onto)
    llm = LLMExtractor(onto, make_llm(LLMConfig(), None, cache=False))
    rows, seconds = [], []
    for corpus, category, doc, chunk in pick_chunks(args.data, args.chunks):
        rows += relations(lexicon, corpus, category, doc, chunk)
        t = time.perf_counter()
        rows += relations(llm, corpus, category, doc, chunk)
        seconds.append(time.perf_counter() - t)
        print(f"{doc.doc_id} #{chunk.ordinal}: {seconds[-1]:.1f} s", flush=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(json.dumps({"chunks": len(seconds), "llm_seconds_per_chunk": round(sum(seconds) / max(len(seconds), 1), 1),
                      "relations": dict(Counter(r["extractor"] for r in rows)), "dropped": dict(llm.dropped)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
