"""Structured QA on policy facts: Hits@1 of SPR alone, of ``dual`` and of ``vector``, per fact type.

The set is ``bench/structured/eu_regulations.jsonl`` (hand-checked, gold answers read from the
text of ``eu_regulations_pypi``; ``bench/check_structured.py`` verifies it), or ``necp.jsonl``
(20 target questions over the NECP "national objectives and targets" files). The KB is the one
``bench/eval_retrieval.py --set dev-eu`` builds over the same corpus, without the stages no mode
here reads (communities, precomputed sentences), in its own cache folder.

Hits@1 (:func:`hit`), one question at a time:

* **spr**: SPR's first answer (an entity's label or a literal) matches a gold answer;
* **dual** / **vector**: the first item of the mode's context (a fact sentence, else a chunk) holds
  a gold answer — so a fused context is credited only when what it puts first answers.

"Matches": after casefolding and collapsing whitespace and quotes, the gold string is contained
in the answer, or the answer (at least half the gold's length) in the gold; amounts compare by
their digits ("EUR 20 000 000" = "20000000"); dates in ISO and written form are the same. The
precision of SPR's answers is Hits@1 over the questions where SPR answered at all. Usage:

    .venv/bin/python bench/eval_structured.py [--embed all-mpnet-base-v2] [--show 12] [--json out.json]
    .venv/bin/python bench/eval_structured.py --file bench/structured/necp.jsonl   # targets over the NECP files
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from check_devset import corpus_path, default_data_dir  # noqa: E402

from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval.datasets import load_jsonl  # noqa: E402
from spr.eval.runner import prepare_kb  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.verbalize import format_literal  # noqa: E402

DEFAULT_SET = ROOT / "bench" / "structured" / "eu_regulations.jsonl"
_MONTHS = "january february march april may june july august september october november december".split()


def norm(text: str) -> str:
    text = re.sub(r"[‘’“”\"'`]", "", text.casefold())
    return " ".join(text.replace("\u00a0", " ").split()).strip(" .,;:")


def _dates(text: str) -> set[str]:
    """ISO forms of the dates in ``text`` ("25 May 2018", "2018-05-25")."""
    out = set(re.findall(r"\b\d{4}-\d{2}-\d{2}\b", text))
    for d, mon, y in re.findall(r"\b(\d{1,2})\s+([A-Za-z]+)\s+(\d{4})\b", text):
        if mon.lower() in _MONTHS:
            out.add(f"{y}-{_MONTHS.index(mon.lower()) + 1:02d}-{int(d):02d}")
    return out


_NUMBER_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


def _numbers(text: str) -> list[float]:
    words = " ".join(_NUMBER_WORDS.get(w, w) for w in text.split())
    return [float(n.replace(" ", "").replace(",", ".")) for n in re.findall(r"\d+(?:[ ,.]\d+)*", words)]


def hit(answer: str, golds: list[str]) -> bool:
    a = " ".join(_NUMBER_WORDS.get(w, w) for w in norm(answer).split())
    if not a:
        return False
    for gold in golds:
        g = " ".join(_NUMBER_WORDS.get(w, w) for w in norm(gold).split())
        if not g:
            continue
        if g in a or (a in g and len(a) >= 0.5 * len(g)):
            return True
        digits_a, digits_g = re.sub(r"\D", "", a), re.sub(r"\D", "", g)
        if len(digits_g) >= 4 and digits_g == digits_a and not _dates(g):
            return True  # an amount in another spelling
        if _dates(gold) and _dates(gold) & _dates(answer):
            return True
        if re.fullmatch(r"\d+(?:[.,]\d+)?", a) and re.fullmatch(r"\d+(?:[.,]\d+)?\s?%", g) and _numbers(a) == _numbers(g):
            return True  # a percentage value (4) against its written form (4 %)
    return False


def first_item(retrieval) -> str:
    """What a context puts first: the first fact's sentence, else the first chunk's text."""
    if not retrieval.evidence:
        return ""
    return retrieval.evidence[0].text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_SET)
    ap.add_argument("--embed", default="all-mpnet-base-v2", help="embedder name or model folder")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None, help="KB cache folder (default: the user cache)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--rebuild", action="store_true", help="rebuild the KB even if its settings are unchanged (after extractor changes)")
    ap.add_argument("--show", type=int, default=0, help="print this many parses (right and wrong)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--set-config", action="append", default=[], metavar="section.key=value",
                    help="override a setting of the KB's answering config, e.g. spr.constrained_k=0 (repeatable)")
    args = ap.parse_args()

    data_dir = args.data_dir or default_data_dir()
    items = [json.loads(line) for line in args.file.read_text(encoding="utf-8").splitlines() if line.strip()][: args.limit]
    corpus = "necp" if args.file.stem == "necp" else "eu_regulations"  # the set's corpus, ingested as its dev set's
    dataset = load_jsonl(ROOT / "bench" / "devset" / f"{corpus}.jsonl", corpus_path(corpus, data_dir))
    config = Config()
    config = config.model_copy(update={
        "embed": config.embed.model_copy(update={"model": args.embed}),
        "questions": config.questions.model_copy(update={"build": False}),
        "communities": config.communities.model_copy(update={"build": False}),
    })  # fmt: skip
    # Its own cache: no stage here reads keywords, communities or precomputed sentences.
    config = config.model_copy(update={"answer": config.answer.model_copy(update={"precompute_sentences": False}),
                                       "docgraph": config.docgraph.model_copy(update={"keywords": False})})  # fmt: skip
    cache = (args.cache or user_cache_dir()) / f"structured-{Path(args.embed).name}"
    t0 = time.perf_counter()
    kb_config, note = prepare_kb(dataset, config, cache, ingest_summary, rebuild=args.rebuild, reindex=reindex_summary)
    print(note, f"({time.perf_counter() - t0:.0f} s)", flush=True)
    for spec in args.set_config:
        key, value = spec.split("=", 1)
        section, name = key.split(".", 1)
        part = getattr(kb_config, section)
        kind = type(getattr(part, name))
        typed = value.strip().lower() in ("1", "true", "yes", "on") if kind is bool else kind(value)  # bool("false") is True
        kb_config = kb_config.model_copy(update={section: part.model_copy(update={name: typed})})

    rows = []
    with KnowledgeBase.open(kb_config) as kb:
        spr, dual, vector = kb.retriever("spr"), kb.retriever("dual"), kb.retriever("vector")
        k = kb.config.answer.k
        for item in items:
            golds = item["answers"]
            t = time.perf_counter()
            found = spr.search(item["question"], k)
            spr_ms = (time.perf_counter() - t) * 1000
            answers = [format_literal(a) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", a) else a for a in found.trace.answers]
            spr_answer = answers[0] if answers else ""
            d = dual.search(item["question"], k)
            v = vector.search(item["question"], k)
            rows.append({
                "id": item["id"], "fact_type": item["fact_type"], "question": item["question"], "gold": golds[0],
                "parse": found.trace.parse, "grounded": found.trace.sexpr, "spr_answer": spr_answer[:200],
                "spr": hit(spr_answer, golds) or hit(found.trace.answers[0] if found.trace.answers else "", golds),
                "spr_answered": bool(answers), "dual": hit(first_item(d), golds), "dual_facts": sum(e.kind == "triple" for e in d.evidence),
                "vector": hit(first_item(v), golds), "spr_ms": spr_ms,
                "confidence": max((e.confidence or 0.0 for e in found.evidence), default=0.0), "parse_ms": found.trace.timings_ms.get("spr.parse", 0.0),
            })  # fmt: skip

    by_type: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_type[r["fact_type"]].append(r)
    print("\n| fact type | questions | SPR Hits@1 | dual Hits@1 | vector Hits@1 | SPR answered |")
    print("|---|---|---|---|---|---|")
    for name, rs in [*sorted(by_type.items()), ("all", rows)]:
        n = len(rs)
        print(f"| {name} | {n} | {sum(r['spr'] for r in rs) / n:.3f} | {sum(r['dual'] for r in rs) / n:.3f} | "
              f"{sum(r['vector'] for r in rs) / n:.3f} | {sum(r['spr_answered'] for r in rs)} |")  # fmt: skip
    answered = [r for r in rows if r["spr_answered"]]
    precision = sum(r["spr"] for r in answered) / len(answered) if answered else 0.0
    with_facts = [r for r in rows if r["dual_facts"]]
    print(f"\nSPR answered {len(answered)}/{len(rows)}; precision of its first answers {precision:.3f}; "
          f"dual put facts first on {len(with_facts)} questions, right on {sum(r['dual'] for r in with_facts)}")
    print("\n| facts_min_confidence | questions with facts | precision |\n|---|---|---|")
    for t in (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        kept = [r for r in answered if r["confidence"] >= t]
        print(f"| {t:.1f} | {len(kept)} | {sum(r['spr'] for r in kept) / len(kept) if kept else 0.0:.3f} |")
    lat = sorted(r["spr_ms"] for r in rows)
    print(f"SPR latency p50 {statistics.median(lat):.0f} ms, p95 {lat[int(0.95 * (len(lat) - 1))]:.0f} ms; "
          f"parse p50 {statistics.median(r['parse_ms'] for r in rows):.1f} ms")
    for r in rows[: args.show]:
        mark = "right" if r["spr"] else "wrong"
        print(f"- [{mark}] {r['question']}\n    parse {r['parse']}\n    → {r['spr_answer'][:120]!r} (gold {r['gold'][:60]!r})")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "precision": precision}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
