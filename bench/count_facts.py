"""Precision and recall of the policy-fact extractor, from the hand-checked files of ``bench/facts``.

* **Precision**: ``sample.jsonl`` (``bench/sample_facts.py``) joined with ``labels.jsonl`` (one
  ``{"fact_id", "correct", "note"}`` per sampled fact, checked by reading its evidence).
* **Recall**: ``recall.jsonl``, facts a reader expects from provisions, definitions and
  amend/repeal statements (``{"doc_id", "fact_type", "subject_hint", "expected", "quote"}``). The
  extractor runs on those documents; an expected fact is found when a fact of its type in its
  document has a subject (label, text, canonical, or a provision's action) containing
  ``subject_hint`` and an object or value matching ``expected``: casefolded containment either
  way, equal digits for amounts, equal numbers for percentages, equal ISO dates.
* **Counts**: every policy fact of both corpora, per type (as ``sample_facts.py`` collects them).

Usage (from the repository root):

    .venv/bin/python bench/count_facts.py [--data ../shared/data] [--dir bench/facts] [--misses]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from sample_facts import ATTRIBUTES, CORPORA, RELATIONS, _target_value, all_facts, documents  # noqa: E402

from core.resources import resource_dir  # noqa: E402
from kgpipeline.extract.lexicon_extractor import LexiconExtractor  # noqa: E402
from kgpipeline.extract.policy_facts import ACTION, AMOUNT_VALUE, PROVISION, PolicyFactExtractor  # noqa: E402
from kgpipeline.ontology import read_ontologies  # noqa: E402
from kgpipeline.segment import segment  # noqa: E402


def norm(text: str) -> str:
    return " ".join(re.sub(r"[‘’“”\"']", "", str(text).casefold()).split())


def _number(text: str) -> float | None:
    m = re.search(r"\d+(?:[.,]\d+)?", text)
    return float(m.group().replace(",", ".")) if m else None


def value_matches(kind: str, values: list[str], expected: str) -> bool:
    exp = norm(expected)
    for value in map(norm, values):
        if not value:
            continue
        if kind == "amount":
            if re.sub(r"\D", "", value) == re.sub(r"\D", "", exp):
                return True
        elif kind == "percentage":
            if _number(value) is not None and _number(value) == _number(exp):
                return True
        elif kind in ("hasDeadline", "hasDate") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", exp):
            if value == exp:
                return True
        elif exp in value or value in exp:
            return True
    return False


def _names(mention, actions) -> list[str]:
    """What a subject may be recognised by: its label, text, canonical and (a provision) its action."""
    return [mention.label, mention.text, mention.canonical, *actions[(mention, ACTION)]]


def doc_facts(doc, category: str, extractor: PolicyFactExtractor) -> list[tuple[str, list[str], list[str]]]:
    """(fact type, subject strings, object/value strings) of every policy fact of ``doc``."""
    out = []
    for chunk in segment(doc).chunks:
        ext = extractor.extract(chunk, doc, category)
        actions = defaultdict(list)
        for a in ext.attributes:
            if a.property_iri in (ACTION, AMOUNT_VALUE):
                actions[(a.subject, a.property_iri)].append(a.value)

        for r in ext.relations:
            kind = r.property_iri.rsplit("#", 1)[1]
            if kind in RELATIONS and not (kind == "hasDeadline" and r.subject.class_iri != PROVISION):
                out.append((kind, _names(r.subject, actions), [r.object.label, r.object.text, r.object.canonical]))
        for a in ext.attributes:
            kind = a.property_iri.rsplit("#", 1)[1]
            if kind in ATTRIBUTES:
                extra = actions[(a.subject, AMOUNT_VALUE)] if kind == "amount" else []
                out.append((kind, _names(a.subject, actions), [_target_value(a, ext.attributes), *extra]))
    return out


def table(rows: list[tuple], header: tuple[str, ...]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def precision(folder: Path) -> str:
    sample = [json.loads(line) for line in (folder / "sample.jsonl").open(encoding="utf-8")]
    labels = {(r := json.loads(line))["fact_id"]: r for line in (folder / "labels.jsonl").open(encoding="utf-8")}
    missing = [s["fact_id"] for s in sample if s["fact_id"] not in labels]
    if missing:
        raise SystemExit(f"{len(missing)} sampled facts have no label, e.g. {missing[0]}")
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in sample:
        per[s["fact_type"]][0] += 1
        per[s["fact_type"]][1] += bool(labels[s["fact_id"]]["correct"])
    rows = [(k, n, c, f"{c / n:.2f}") for k, (n, c) in sorted(per.items())]
    n, c = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    return table([*rows, ("**all**", n, c, f"{c / n:.2f}")], ("fact type", "sampled", "correct", "precision"))


def recall(folder: Path, data: Path, show_misses: bool) -> str:
    expected = [json.loads(line) for line in (folder / "recall.jsonl").open(encoding="utf-8")]
    wanted = {e["doc_id"] for e in expected}
    lex = LexiconExtractor(read_ontologies(resource_dir("ontologies")))
    extractor = PolicyFactExtractor(lex, lex)
    facts = {}
    for rel, category in CORPORA.values():
        for doc in documents(data / rel):
            if doc.doc_id in wanted:
                facts[doc.doc_id] = doc_facts(doc, category, extractor)
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e in expected:
        hint = norm(e["subject_hint"])
        found = any(kind == e["fact_type"] and any(hint in norm(s) for s in subj if s) and value_matches(kind, vals, e["expected"])
                    for kind, subj, vals in facts.get(e["doc_id"], []))  # fmt: skip
        per[e["fact_type"]][0] += 1
        per[e["fact_type"]][1] += found
        if show_misses and not found:
            print(f"  miss {e['doc_id']} {e['fact_type']} [{e['subject_hint']}] -> {e['expected']}")
    rows = [(k, n, f, f"{f / n:.2f}") for k, (n, f) in sorted(per.items())]
    n, f = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
    return table([*rows, ("**all**", n, f, f"{f / n:.2f}")], ("fact type", "expected", "found", "recall"))


def counts(data: Path) -> str:
    by = Counter((r["fact_type"], r["corpus"]) for r in all_facts(data))
    kinds = sorted({k for k, _ in by})
    rows = [(k, by[k, "eu_regulations"], by[k, "necp"], by[k, "eu_regulations"] + by[k, "necp"]) for k in kinds]
    return table(rows, ("fact type", "eu_regulations", "necp", "total"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--dir", type=Path, default=ROOT / "bench" / "facts")
    ap.add_argument("--misses", action="store_true", help="list the expected facts not found")
    args = ap.parse_args()
    print("## Precision (hand-checked sample)\n\n" + precision(args.dir) + "\n")
    print("## Recall (hand-read provisions)\n\n" + recall(args.dir, args.data, args.misses) + "\n")
    print("## Policy facts over both corpora\n\n" + counts(args.data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
