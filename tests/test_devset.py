"""The hand-checked retrieval dev set (bench/devset/*.jsonl) against the policy corpora.

The real-data test needs ``../shared/data/policy_corpora`` beside the checkout and skips without it;
the broken-quote tests build a tiny corpus in a temp folder, so they always run.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVSET = ROOT / "bench" / "devset"


def _load_check_module():
    spec = importlib.util.spec_from_file_location("check_devset", ROOT / "bench" / "check_devset.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cd = _load_check_module()


def test_devset_quotes_match_the_corpora():
    data_dir = cd.default_data_dir()
    if not (data_dir / "policy_corpora").is_dir():
        pytest.skip(f"shared policy corpora not found at {data_dir / 'policy_corpora'}")
    problems = cd.check(DEVSET, data_dir)
    assert problems == [], "\n".join(problems)


def test_devset_size():
    summary = cd.summarize(DEVSET)
    assert set(summary) == {f"{name}.jsonl" for name in cd.CORPORA}
    assert sum(s["questions"] for s in summary.values()) >= 60
    for fname, s in summary.items():
        assert s["questions"] >= 15, f"{fname}: only {s['questions']} questions"
        assert s["kinds"]["unanswerable"] >= 1, f"{fname}: no unanswerable question"


def test_the_german_set_asks_the_same_items_in_german():
    from core.keywords import guess_language

    def rows(name):
        return [json.loads(line) for line in (DEVSET / name).read_text(encoding="utf-8").splitlines() if line.strip()]

    english, german = rows("de_energy_laws.jsonl"), rows("de_energy_laws_de.jsonl")
    assert [f"{r['id']}-de" for r in english] == [r["id"] for r in german]
    for en, de in zip(english, german, strict=True):
        assert (en["contexts"], en["source"], en["kind"], en["answerable"]) == (de["contexts"], de["source"], de["kind"], de["answerable"])
        assert guess_language(de["question"]) == "de", de["question"]
        assert bool(de["answer"]) == de["answerable"]
    assert cd.SHARED_KB["de_energy_laws_de"] == "de_energy_laws" and cd.CORPORA["de_energy_laws_de"] == cd.CORPORA["de_energy_laws"]


def _tiny_corpus(tmp_path: Path) -> Path:
    data_dir = tmp_path / "data"
    folder = data_dir / "policy_corpora" / "eu_regulations_pypi"
    folder.mkdir(parents=True)
    article = {
        "celex": "32016R0679",
        "act": "GDPR",
        "article_id": "art_33",
        "article_number": 33,
        "text": "Notification 1. The controller shall notify the breach not later than 72 hours after having become aware of it.",
    }
    (folder / "articles.jsonl").write_text(json.dumps(article) + "\n", encoding="utf-8")
    return data_dir


def _devset(tmp_path: Path, rows: list[dict]) -> Path:
    folder = tmp_path / "devset"
    folder.mkdir()
    (folder / "eu_regulations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def _row(qid: str, quote: str) -> dict:
    return {
        "id": qid,
        "question": "How long to report a breach?",
        "answer": "72 hours",
        "contexts": [quote],
        "kind": "numeric",
        "source": ["32016R0679:art_33"],
    }


def test_check_accepts_an_exact_quote(tmp_path):
    data_dir = _tiny_corpus(tmp_path)
    devset = _devset(tmp_path, [_row("q1", "not later than 72 hours after having become aware of it")])
    assert cd.check(devset, data_dir) == []


def test_check_reports_a_broken_quote(tmp_path):
    data_dir = _tiny_corpus(tmp_path)
    devset = _devset(tmp_path, [_row("q1", "not later than 48 hours after having become aware of it")])
    problems = cd.check(devset, data_dir)
    assert len(problems) == 1
    assert "eu_regulations.jsonl:1 [q1]" in problems[0] and "not an exact substring" in problems[0]


def test_check_reports_other_faults(tmp_path):
    data_dir = _tiny_corpus(tmp_path)
    long_quote = "x" * 301
    rows = [
        _row("q1", "not later than 72 hours"),
        _row("q1", "not later than 72 hours"),  # duplicate id
        {**_row("q2", long_quote)},  # too long (and not in the corpus)
        {**_row("q3", "72 hours"), "kind": "guess"},  # unknown kind
        {**_row("q4", "72 hours"), "answer": ""},  # answerable without an answer
        {
            "id": "q5",
            "question": "Fine for X?",
            "answer": "",
            "contexts": ["72 hours"],
            "kind": "unanswerable",
            "answerable": False,
        },
        {"id": "q6", "question": "No contexts field", "answer": "a", "kind": "lookup"},
        {**_row("q7", "72 hours"), "kind": "multi-hop"},  # multi-hop with one quote
    ]
    problems = "\n".join(cd.check(_devset(tmp_path, rows), data_dir))
    assert "[q1]: duplicate id" in problems
    assert "[q2]: quote 0 has 301 characters" in problems
    assert "[q3]: kind 'guess' is not one of" in problems
    assert "[q4]: answerable item has an empty answer" in problems
    assert "[q5]: unanswerable item has 1 quote(s)" in problems
    assert "[q6]: missing field 'contexts'" in problems
    assert "[q7]: multi-hop item needs at least 2 quotes" in problems


def test_main_exits_nonzero_on_a_broken_quote(tmp_path, capsys):
    data_dir = _tiny_corpus(tmp_path)
    devset = _devset(tmp_path, [_row("q1", "within 48 hours")])
    assert cd.main(["--data-dir", str(data_dir), "--devset-dir", str(devset)]) == 1
    captured = capsys.readouterr()
    assert "eu_regulations.jsonl: 1 questions, 1 quotes" in captured.out
    assert "FAIL eu_regulations.jsonl:1 [q1]" in captured.err
