"""Verify the hand-checked structured-QA dev sets (``bench/structured/eu_regulations.jsonl``, ``necp.jsonl``) against their corpora.

``necp.jsonl`` holds target questions over the NECP "national objectives and targets" files: its
``source`` is a file name, its ``act`` the country the file is about (the name's first part).

Every line is one question whose answer is a fact stated in one article of
``policy_corpora/eu_regulations_pypi/articles.jsonl``:
``id``, ``question``, ``answers`` (primary answer first, then acceptable variants), ``fact_type``,
``quote`` (the passage that states the answer), ``source`` (``celex:article_id``) and ``act`` (short name).
For each line the check asserts:

- the required fields are there with the right types, ``fact_type`` is one of ``FACT_TYPES`` and
  ``act`` is the short name of the source's CELEX number (``ACTS``);
- ids are unique;
- the quote is at most ``MAX_QUOTE`` characters and an exact substring of the named article's raw ``text``;
- the primary answer occurs in the quote, case- and whitespace-insensitively;
- every variant occurs in the quote the same way, or is a format variant of a fact in the quote:
  an ISO date (``2024-10-17``) of a date the quote writes out (``17 October 2024``), or a number written
  differently (``20000000``, ``EUR 20 000 000`` for ``20 000 000 EUR``, ``1.4%`` for ``1,4 %``).

The corpus stays outside the project (``../shared/data`` beside the checkout). Usage:

    .venv/bin/python bench/check_structured.py [--data-dir ../shared/data] [--file bench/structured/eu_regulations.jsonl]

Prints a summary (questions per fact type and per act) and exits 1 with one line per problem when anything fails.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_devset import check_rows, load_corpus, read_rows  # noqa: E402  (the row checks both dev sets share)

FACT_TYPES = ("definition", "cross-reference", "deadline", "amount", "percentage", "actor", "threshold", "duration", "target")
MAX_QUOTE = 300
REQUIRED = {"id": str, "question": str, "answers": list, "fact_type": str, "quote": str, "source": str, "act": str}
# CELEX number -> short act name used in the ``act`` field
ACTS = {
    "32016R0679": "GDPR",
    "32024R1689": "AI Act",
    "32024R2847": "CRA",
    "32022R2554": "DORA",
    "32022L2555": "NIS2",
    "32022L2464": "CSRD",
}
CORPUS = Path("policy_corpora") / "eu_regulations_pypi" / "articles.jsonl"

MONTHS = "january february march april may june july august september october november december".split()
_DATE = re.compile(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r") (\d{4})\b")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def default_data_dir() -> Path:
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


def default_file() -> Path:
    return Path(__file__).resolve().parent / "structured" / "eu_regulations.jsonl"


def norm(text: str) -> str:
    """Case-folded, whitespace collapsed to single spaces."""
    return " ".join(text.casefold().split())


def _compact(text: str) -> str:
    """A number's form without spacing, currency word or decimal-comma differences."""
    text = re.sub(r"\beur\b|€", " ", norm(text))
    return re.sub(r"\s+", "", text).replace(",", ".")


def _iso_dates(text: str) -> set[str]:
    """ISO forms of the ``17 October 2024`` style dates written in ``text``."""
    return {f"{y}-{MONTHS.index(m) + 1:02d}-{int(d):02d}" for d, m, y in _DATE.findall(norm(text))}


def variant_ok(variant: str, quote: str) -> bool:
    """Is ``variant`` in the quote (normalised), or an ISO date / reformatted number of a fact in it?"""
    if norm(variant) in norm(quote):
        return True
    if _ISO.fullmatch(variant.strip()):
        return variant.strip() in _iso_dates(quote)
    if re.search(r"\d", variant):
        compact = _compact(variant)  # a whole number: not part of a longer one ("4%" is not in "1,4 %")
        return bool(compact) and re.search(rf"(?<![\d.]){re.escape(compact)}(?![\d])", _compact(quote)) is not None
    return False


def load_articles(data_dir: Path) -> dict[str, list[str]]:
    """``celex:article_id`` -> raw article text(s) from ``articles.jsonl``."""
    path = Path(data_dir) / CORPUS
    if not path.is_file():
        raise FileNotFoundError(f"corpus file not found: {path}")
    texts: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                texts.setdefault(f"{row['celex']}:{row['article_id']}", []).append(row["text"])
    if not texts:
        raise FileNotFoundError(f"no articles in {path}")
    return texts


def _check_row(where: str, row: dict, texts: dict[str, list[str]]) -> list[str]:
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
    if row["fact_type"] not in FACT_TYPES:
        problems.append(f"{where}: fact_type {row['fact_type']!r} is not one of {', '.join(FACT_TYPES)}")
    answers = row["answers"]
    if not answers:
        problems.append(f"{where}: no answers")
    bad = [i for i, a in enumerate(answers) if not isinstance(a, str) or not a.strip()]
    for i in bad:
        problems.append(f"{where}: answer {i} is empty or not a string")
    source = row["source"]
    celex = source.split(":", 1)[0]
    if source.endswith(".txt"):  # a NECP file: "<Country>_National Objectives and Targets_<dimension>.txt"
        if not source.startswith(f"{row['act']}_"):
            problems.append(f"{where}: act {row['act']!r} is not the country of {source!r}")
    elif celex in ACTS and row["act"] != ACTS[celex]:
        problems.append(f"{where}: act {row['act']!r} does not match source {source!r} (expected {ACTS[celex]!r})")
    elif celex not in ACTS:
        problems.append(f"{where}: source {source!r} is not an article of {', '.join(ACTS)}")
    quote = row["quote"]
    if not quote.strip():
        problems.append(f"{where}: empty quote")
        return problems
    if len(quote) > MAX_QUOTE:
        problems.append(f"{where}: quote has {len(quote)} characters (max {MAX_QUOTE}): {quote[:60]!r}...")
    if source not in texts:
        problems.append(f"{where}: source {source!r} is not in the corpus")
    elif not any(quote in t for t in texts[source]):
        problems.append(f"{where}: quote is not an exact substring of {source}: {quote[:80]!r}")
    if answers and 0 not in bad and norm(answers[0]) not in norm(quote):
        problems.append(f"{where}: primary answer {answers[0]!r} is not in the quote")
    for i, a in enumerate(answers[1:], 1):
        if i not in bad and not variant_ok(a, quote):
            problems.append(f"{where}: answer variant {a!r} is neither in the quote nor a date/number form of it")
    return problems


def check(path: Path, data_dir: Path) -> list[str]:
    """Every problem found in the JSONL file ``path`` checked against the corpus in ``data_dir``."""
    path = Path(path)
    if not path.is_file():
        return [f"{path}: file not found"]
    try:
        if path.stem == "necp":
            texts = {name: [text] for name, text in load_corpus("necp", Path(data_dir)).items()}
        else:
            texts = load_articles(Path(data_dir))
    except (OSError, KeyError, json.JSONDecodeError) as exc:
        return [f"{path.name}: cannot load corpus: {exc}"]
    rows = read_rows(path)
    if not rows:
        return [f"{path.name}: no questions"]
    return check_rows(path.name, rows, {}, lambda where, row: _check_row(where, row, texts))


def summarize(path: Path) -> dict:
    """{questions, fact_types: Counter, acts: Counter} over the parseable object rows of ``path``."""
    objs = [r for _, r in read_rows(Path(path)) if isinstance(r, dict)]
    return {
        "questions": len(objs),
        "fact_types": Counter(str(r.get("fact_type")) for r in objs),
        "acts": Counter(str(r.get("act")) for r in objs),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data-dir", type=Path, default=default_data_dir(), help="folder holding policy_corpora/ (default: %(default)s)"
    )
    ap.add_argument("--file", type=Path, default=default_file(), help="the structured dev set JSONL (default: %(default)s)")
    args = ap.parse_args(argv)

    problems = check(args.file, args.data_dir)
    if args.file.is_file():
        s = summarize(args.file)
        print(f"{args.file.name}: {s['questions']} questions")
        print("  fact types: " + ", ".join(f"{k} {s['fact_types'].get(k, 0)}" for k in FACT_TYPES))
        others = sorted(set(s["acts"]) - set(ACTS.values()))
        print("  acts: " + ", ".join(f"{k} {s['acts'].get(k, 0)}" for k in [*ACTS.values(), *others]))
    for p in problems:
        print(f"FAIL {p}", file=sys.stderr)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
