"""Verify the hand-checked retrieval dev set in ``bench/devset/*.jsonl`` against the policy corpora.

One JSONL file per corpus; the file name picks the corpus (``CORPORA``). Every line is one question:
``id``, ``question``, ``answer``, ``contexts`` (gold quotes), ``kind`` and, optionally, ``answerable``
and ``source`` (the articles / files the quotes come from). For each question the check asserts:

- the required fields are there with the right types, and ``kind`` is one of ``KINDS``;
- every quote is at most ``MAX_QUOTE`` characters and an exact substring of the raw source text of
  the file's corpus (eu_regulations: one article's ``text`` in ``articles.jsonl``; necp: one ``.txt``
  under ``national_objectives_and_targets``; de_energy_laws: one ``.md`` file); where ``source`` is
  given, every named source exists and every quote is in one of the named sources;
- answerable items have at least one quote and a non-empty answer (multi-hop and cross-document ones
  at least two quotes); unanswerable ones have ``answerable: false``, an empty answer and no quotes;
- ids are unique across all files.

The corpora stay outside the project (``../shared/data`` beside the checkout); ``egd_regulations``
is deliberately not one of them. Usage:

    .venv/bin/python bench/check_devset.py [--data-dir ../shared/data] [--devset-dir bench/devset]

Prints one summary line per file and exits 1 with one line per problem when anything fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

KINDS = ("lookup", "numeric", "multi-hop", "cross-document", "unanswerable")
MAX_QUOTE = 300
REQUIRED = {"id": str, "question": str, "answer": str, "contexts": list, "kind": str}

# devset file stem -> corpus folder under <data-dir>/policy_corpora
CORPORA = {
    "eu_regulations": "eu_regulations_pypi",
    "necp": "necp_national_energy_climate_plans/national_objectives_and_targets",
    "de_energy_laws": "de_energy_laws",
    "de_energy_laws_de": "de_energy_laws",  # the same questions asked in German
    # Probe sets: questions written after the dev sets had shaped the answer checks, to measure
    # how those checks hold on questions they were never tuned on (bench/devset/README.md).
    "eu_regulations_probe": "eu_regulations_pypi",
    "necp_probe": "necp_national_energy_climate_plans/national_objectives_and_targets",
    # Question-style probes (stop 51): one kind of question each, written by a helper who had not
    # seen the answer checks, to measure a check built for that kind on questions it never saw.
    "eu_regulations_durations": "eu_regulations_pypi",
    "eu_regulations_yesno": "eu_regulations_pypi",
    "eu_regulations_actors": "eu_regulations_pypi",
    "eu_regulations_obligations": "eu_regulations_pypi",
    # Stop 52: conditions and exceptions; plain-language questions that name no act or term of art.
    "eu_regulations_conditions": "eu_regulations_pypi",
    "eu_regulations_lay": "eu_regulations_pypi",
}
# What the ingest reads of each corpus (the EU folder also holds a SQLite copy of the same articles).
INGESTED = {name: "articles.jsonl" for name, folder in CORPORA.items() if folder == "eu_regulations_pypi"}
# Evaluation names (bench/eval_retrieval.py, bench/calibrate_facts.py) -> devset file stem
DEV_SETS = {
    "dev-eu": "eu_regulations", "dev-necp": "necp", "dev-de": "de_energy_laws", "dev-de-native": "de_energy_laws_de",
    "probe-eu": "eu_regulations_probe", "probe-necp": "necp_probe",
    "durations-eu": "eu_regulations_durations", "yesno-eu": "eu_regulations_yesno", "actors-eu": "eu_regulations_actors",
    "obligations-eu": "eu_regulations_obligations", "conditions-eu": "eu_regulations_conditions",
    "lay-eu": "eu_regulations_lay",
}
# Sets over one corpus share its evaluation KB (named after the first set's file stem).
SHARED_KB = {
    "de_energy_laws_de": "de_energy_laws", "eu_regulations_probe": "eu_regulations", "necp_probe": "necp",
    "eu_regulations_durations": "eu_regulations", "eu_regulations_yesno": "eu_regulations",
    "eu_regulations_actors": "eu_regulations", "eu_regulations_obligations": "eu_regulations",
    "eu_regulations_conditions": "eu_regulations", "eu_regulations_lay": "eu_regulations",
}


def corpus_path(name: str, data_dir: Path) -> Path:
    """The files of devset ``name``'s corpus as the ingest takes them."""
    return data_dir / "policy_corpora" / CORPORA[name] / INGESTED.get(name, "")


def default_data_dir() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def default_devset_dir() -> Path:
    return Path(__file__).resolve().parent / "devset"


def load_corpus(name: str, data_dir: Path) -> dict[str, str]:
    """Source name -> raw text: ``celex:article_id`` for the EU articles, the file name otherwise."""
    folder = data_dir / "policy_corpora" / CORPORA[name]
    if not folder.is_dir():
        raise FileNotFoundError(f"corpus folder not found: {folder}")
    texts: dict[str, str] = {}
    if CORPORA[name] == CORPORA["eu_regulations"]:
        path = folder / "articles.jsonl"
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    row = json.loads(line)
                    key = f"{row['celex']}:{row['article_id']}"
                    if key in texts:  # keep both texts if a key repeats
                        key = f"{key}#{n}"
                    texts[key] = row["text"]
    else:
        pattern = "*.txt" if CORPORA[name] == CORPORA["necp"] else "*.md"
        for path in sorted(folder.glob(pattern)):
            texts[path.name] = path.read_text(encoding="utf-8")
    if not texts:
        raise FileNotFoundError(f"no source texts in {folder}")
    return texts


def read_rows(path: Path) -> list[tuple[int, object]]:
    """[(line number, parsed JSON or the JSONDecodeError)] for the non-blank lines of ``path``."""
    rows: list[tuple[int, object]] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            rows.append((n, exc))
    return rows


def read_devset(devset_dir: Path) -> dict[str, list[tuple[int, object]]]:
    """File name -> :func:`read_rows` for every ``*.jsonl`` file."""
    return {path.name: read_rows(path) for path in sorted(devset_dir.glob("*.jsonl"))}


def check_rows(fname: str, rows: list[tuple[int, object]], seen: dict[str, str],
               check_row: Callable[[str, dict], list[str]]) -> list[str]:  # fmt: skip
    """The problems of one file's rows: JSON errors, non-objects, ids already in ``seen`` (which
    records where each id was first seen), then ``check_row(where, row)`` for each object row."""
    problems: list[str] = []
    for n, row in rows:
        where = f"{fname}:{n}"
        if isinstance(row, json.JSONDecodeError):
            problems.append(f"{where}: not valid JSON ({row})")
            continue
        if not isinstance(row, dict):
            problems.append(f"{where}: expected a JSON object")
            continue
        qid = row.get("id")
        if isinstance(qid, str):
            where = f"{fname}:{n} [{qid}]"
            if qid in seen:
                problems.append(f"{where}: duplicate id (first at {seen[qid]})")
            else:
                seen[qid] = f"{fname}:{n}"
        problems.extend(check_row(where, row))
    return problems


def _check_row(where: str, row: dict, texts: dict[str, str]) -> list[str]:
    problems = []
    for field, typ in REQUIRED.items():
        if field not in row:
            problems.append(f"{where}: missing field {field!r}")
        elif not isinstance(row[field], typ):
            problems.append(f"{where}: field {field!r} must be {typ.__name__}, got {type(row[field]).__name__}")
    if problems:
        return problems
    if not row["question"].strip():
        problems.append(f"{where}: empty question")
    kind = row["kind"]
    if kind not in KINDS:
        problems.append(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
    answerable = row.get("answerable", kind != "unanswerable")
    if not isinstance(answerable, bool):
        problems.append(f"{where}: 'answerable' must be true or false, got {answerable!r}")
        answerable = kind != "unanswerable"
    sources = row.get("source", [])
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        problems.append(f"{where}: 'source' must be a list of strings")
        sources = []
    contexts = row["contexts"]

    if kind == "unanswerable" or not answerable:
        if kind != "unanswerable":
            problems.append(f"{where}: answerable is false but kind is {kind!r} (expected 'unanswerable')")
        if answerable:
            problems.append(f"{where}: kind 'unanswerable' needs \"answerable\": false")
        if row["answer"].strip():
            problems.append(f"{where}: unanswerable item has a non-empty answer {row['answer']!r}")
        if contexts:
            problems.append(f"{where}: unanswerable item has {len(contexts)} quote(s); expected none")
        return problems

    if not row["answer"].strip():
        problems.append(f"{where}: answerable item has an empty answer")
    if not contexts:
        problems.append(f"{where}: answerable item has no gold quote")
    if kind in ("multi-hop", "cross-document") and len(contexts) < 2:
        problems.append(f"{where}: {kind} item needs at least 2 quotes, has {len(contexts)}")
    unknown = [s for s in sources if s not in texts]
    for s in unknown:
        problems.append(f"{where}: source {s!r} is not in the corpus")
    named = [texts[s] for s in sources if s in texts]
    for i, quote in enumerate(contexts):
        if not isinstance(quote, str) or not quote.strip():
            problems.append(f"{where}: quote {i} is empty or not a string")
            continue
        if len(quote) > MAX_QUOTE:
            problems.append(f"{where}: quote {i} has {len(quote)} characters (max {MAX_QUOTE}): {quote[:60]!r}...")
        if not any(quote in t for t in texts.values()):
            problems.append(f"{where}: quote {i} is not an exact substring of any source text: {quote[:80]!r}")
        elif named and not any(quote in t for t in named):
            problems.append(f"{where}: quote {i} is in the corpus but not in its named source(s) {sources}: {quote[:80]!r}")
    return problems


def check(devset_dir: Path, data_dir: Path) -> list[str]:
    """Every problem found in ``devset_dir/*.jsonl`` checked against the corpora in ``data_dir``."""
    devset_dir, data_dir = Path(devset_dir), Path(data_dir)
    files = read_devset(devset_dir)
    if not files:
        return [f"{devset_dir}: no *.jsonl files"]
    problems: list[str] = []
    seen: dict[str, str] = {}
    for fname, rows in files.items():
        corpus = Path(fname).stem
        if corpus not in CORPORA:
            problems.append(f"{fname}: unknown corpus {corpus!r} (expected one of {', '.join(CORPORA)})")
            continue
        try:
            texts = load_corpus(corpus, data_dir)
        except (OSError, KeyError, json.JSONDecodeError) as exc:
            problems.append(f"{fname}: cannot load corpus {corpus!r}: {exc}")
            continue
        if not rows:
            problems.append(f"{fname}: no questions")
        problems += check_rows(fname, rows, seen, lambda where, row, texts=texts: _check_row(where, row, texts))
    return problems


def summarize(devset_dir: Path) -> dict[str, dict]:
    """File name -> {questions, quotes, kinds: Counter} (parseable object rows only)."""
    out = {}
    for fname, rows in read_devset(Path(devset_dir)).items():
        objs = [r for _, r in rows if isinstance(r, dict)]
        out[fname] = {
            "questions": len(objs),
            "quotes": sum(len(r.get("contexts") or []) for r in objs),
            "kinds": Counter(str(r.get("kind")) for r in objs),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="folder holding policy_corpora/ (default: %(default)s)"
    )
    ap.add_argument(
        "--devset-dir", type=Path, default=default_devset_dir(), help="folder of the dev set JSONL files (default: %(default)s)"
    )
    args = ap.parse_args(argv)

    total = 0
    for fname, s in summarize(args.devset_dir).items():
        total += s["questions"]
        kinds = ", ".join(f"{k} {s['kinds'].get(k, 0)}" for k in KINDS)
        print(f"{fname}: {s['questions']} questions, {s['quotes']} quotes ({kinds})")
    problems = check(args.devset_dir, args.data_dir)
    for p in problems:
        print(f"FAIL {p}", file=sys.stderr)
    print(f"total: {total} questions, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
