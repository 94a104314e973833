"""A stratified sample of the policy facts of ``kgpipeline.extract.policy_facts``, for hand-checking.

Runs ``PolicyFactExtractor(lexicon, lexicon)`` (no KB, no model) over the EU regulation articles
(category "legal-regulation") and the NECP "national objectives and targets" folder (category
"general-policy"), collects every policy fact (:data:`RELATIONS`, :data:`ATTRIBUTES`) as
``{fact_id, corpus, doc_id, fact_type, subject, object_or_value, evidence}`` (one record per
document, type, subject, object and position: the chunks' overlap states a sentence twice) and
writes a seeded sample, at least :data:`PER_TYPE` per fact type (all where fewer exist), split
over both corpora, at least :data:`TOTAL` in all. Labels: ``bench/facts/labels.jsonl``; scores:
``bench/count_facts.py``. Usage:

    .venv/bin/python bench/sample_facts.py [--data ../shared/data] [--out bench/facts/sample.jsonl]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.resources import resource_dir  # noqa: E402
from core.text import sentence_spans  # noqa: E402
from kgpipeline.extract.lexicon_extractor import LexiconExtractor  # noqa: E402
from kgpipeline.extract.policy_facts import PROVISION, PolicyFactExtractor  # noqa: E402
from kgpipeline.ontology import read_ontologies  # noqa: E402
from kgpipeline.preprocess.load import discover_files, load_documents  # noqa: E402
from kgpipeline.segment import segment  # noqa: E402

CORPORA = {  # name -> (path under the data folder, category)
    "eu_regulations": ("policy_corpora/eu_regulations_pypi/articles.jsonl", "legal-regulation"),
    "necp": ("policy_corpora/necp_national_energy_climate_plans/national_objectives_and_targets", "general-policy"),
}
RELATIONS = ("amends", "repeals", "cites", "definedIn", "addressee", "hasDeadline", "hasDate", "issues")
ATTRIBUTES = ("definition", "timeLimit", "amount", "percentage", "targetQuantity", "baseYear", "targetScope")
PER_TYPE, TOTAL, SEED, MAX_EVIDENCE, SHORT = 15, 160, 13, 500, 80


def documents(path: Path):
    for file in discover_files(path):
        yield from load_documents(file).documents


def _evidence(doc_text: str, start: int, end: int, anchor: int) -> str:
    """The evidence span, widened to its sentence when short, clipped around ``anchor``."""
    if end - start < SHORT:
        for s0, s1 in sentence_spans(doc_text, require_capital=False):
            if s0 <= start < s1 or s0 < end <= s1:
                start, end = min(start, s0), max(end, s1)
    if end - start > MAX_EVIDENCE:
        start = max(start, min(anchor - MAX_EVIDENCE // 2, end - MAX_EVIDENCE))
        end = start + MAX_EVIDENCE
    return " ".join(doc_text[start:end].split())


def _name(mention) -> str:
    return mention.label or mention.text


def facts(corpus: str, path: Path, category: str, extractor: PolicyFactExtractor) -> Iterator[dict]:
    """Every policy fact of the corpus, one record per (document, type, subject, object, position)."""
    seen = set()
    for doc in documents(path):
        for chunk in segment(doc).chunks:
            out = extractor.extract(chunk, doc, category)
            items = [(r, r.property_iri.rsplit("#", 1)[1], _name(r.object), r.object.start) for r in out.relations]
            items += [(a, a.property_iri.rsplit("#", 1)[1], _target_value(a, out.attributes), None) for a in out.attributes]
            for item, kind, value, obj_start in items:
                if kind not in RELATIONS + ATTRIBUTES or (kind == "hasDeadline" and item.subject.class_iri != PROVISION):
                    continue
                if kind == "issues" and not item.cue.startswith("metadata"):
                    continue
                s, e = item.evidence
                if s == e:  # stated by metadata or title, not by the chunk's text
                    evidence = f"[{item.cue}] title: {doc.title} | metadata: {json.dumps(_meta(doc), ensure_ascii=False)}"
                    pos = -1
                else:
                    anchor = obj_start if obj_start else s
                    evidence = _evidence(doc.text, chunk.start + s, chunk.start + e, chunk.start + anchor)
                    pos = chunk.start + s  # the sentence's offset in the document: one provision per sentence
                subject = _name(item.subject)
                key = (doc.doc_id, kind, subject, value, pos)
                if key in seen:
                    continue
                seen.add(key)
                digest = hashlib.sha1(json.dumps(key).encode()).hexdigest()[:10]
                yield {"fact_id": f"{corpus}:{kind}:{digest}", "corpus": corpus, "doc_id": doc.doc_id, "fact_type": kind,
                       "subject": subject, "object_or_value": value, "evidence": evidence}  # fmt: skip


def _target_value(attr, attributes) -> str:
    """A target's quantity is checked with its unit and year ("40 % by 2030"): one fact, as read."""
    if not attr.property_iri.endswith("#targetQuantity"):
        return attr.value
    parts = {a.property_iri.rsplit("#", 1)[1]: a.value for a in attributes if a.subject == attr.subject}
    return f"{attr.value} {parts.get('targetUnit', '')} by {parts.get('targetYear', '')}"


def _meta(doc) -> dict:
    return {k: v for k, v in (doc.metadata or {}).items() if k in ("department", "issuer", "issued_by", "author", "publisher")}


def all_facts(data: Path) -> list[dict]:
    onto = read_ontologies(resource_dir("ontologies"))
    lex = LexiconExtractor(onto)
    extractor = PolicyFactExtractor(lex, lex)
    records = [f for name, (rel, cat) in CORPORA.items() for f in facts(name, data / rel, cat, extractor)]
    return sorted(records, key=lambda r: r["fact_id"])


def _rank(seed: int, fact_id: str) -> str:
    return hashlib.sha1(f"{seed}:{fact_id}".encode()).hexdigest()


def stratified(records: list[dict], per_type: int, total: int, seed: int) -> list[dict]:
    """``per_type`` per fact type, half from each corpus where both have enough, topped up to ``total``.

    Facts are drawn in the order of a hash of their id, so a fact that an extractor change leaves
    in place keeps its place in the sample (and its label); only new facts need checking."""
    groups: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        groups[r["fact_type"]][r["corpus"]].append(r)
    chosen: list[dict] = []
    for kind in sorted(groups):
        pools = {c: sorted(v, key=lambda r: _rank(seed, r["fact_id"])) for c, v in sorted(groups[kind].items())}
        take = {c: 0 for c in pools}
        while sum(take.values()) < per_type and any(take[c] < len(pools[c]) for c in pools):
            for c in pools:  # round robin over the corpora
                if take[c] < len(pools[c]) and sum(take.values()) < per_type:
                    take[c] += 1
        chosen += [r for c in pools for r in pools[c][: take[c]]]
    picked = {r["fact_id"] for r in chosen}
    rest = [r for r in records if r["fact_id"] not in picked]
    chosen += sorted(rest, key=lambda r: _rank(seed, r["fact_id"]))[: max(0, total - len(chosen))]
    return sorted(chosen, key=lambda r: (r["fact_type"], r["fact_id"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "facts" / "sample.jsonl")
    args = ap.parse_args()
    records = all_facts(args.data)
    sample = stratified(records, PER_TYPE, TOTAL, SEED)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in sample)
    counts = defaultdict(lambda: defaultdict(int))
    for r in records:
        counts[r["fact_type"]][r["corpus"]] += 1
    for kind in sorted(counts):
        print(f"{kind:12} " + "  ".join(f"{c}={n}" for c, n in sorted(counts[kind].items())))
    print(f"{len(records)} facts; sampled {len(sample)} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
