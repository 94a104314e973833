"""The hand-checked structured-QA dev set (bench/structured/eu_regulations.jsonl) against the EU corpus.

The real-data test needs ``../shared/data/policy_corpora`` beside the checkout and skips without it;
the broken-quote tests build a one-article corpus in a temp folder, so they always run.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVSET = ROOT / "bench" / "structured" / "eu_regulations.jsonl"


def _load_check_module():
    spec = importlib.util.spec_from_file_location("check_structured", ROOT / "bench" / "check_structured.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cs = _load_check_module()


def test_structured_devset_matches_the_corpus():
    data_dir = cs.default_data_dir()
    if not (data_dir / cs.CORPUS).is_file():
        pytest.skip(f"EU articles not found at {data_dir / cs.CORPUS}")
    problems = cs.check(DEVSET, data_dir)
    assert problems == [], "\n".join(problems)


def test_necp_target_set_matches_the_corpus():
    data_dir = cs.default_data_dir()
    if not (data_dir / "policy_corpora" / "necp_national_energy_climate_plans").is_dir():
        pytest.skip("NECP corpus not found")
    problems = cs.check(DEVSET.with_name("necp.jsonl"), data_dir)
    assert problems == [], "\n".join(problems)
    assert cs.summarize(DEVSET.with_name("necp.jsonl"))["fact_types"] == {"target": 20}


def test_structured_devset_size_and_spread():
    summary = cs.summarize(DEVSET)
    assert summary["questions"] >= 60
    for act in cs.ACTS.values():
        assert summary["acts"][act] >= 6, f"{act}: only {summary['acts'][act]} questions"
    assert set(summary["fact_types"]) <= set(cs.FACT_TYPES)


TEXT = (
    "Notification of a personal data breach 1. In the case of a personal data breach, the controller shall "
    "notify the breach not later than 72 hours after having become aware of it. It shall apply from 25 May 2018."
)


def _tiny_corpus(tmp_path: Path) -> Path:
    data_dir = tmp_path / "data"
    path = data_dir / cs.CORPUS
    path.parent.mkdir(parents=True)
    article = {"celex": "32016R0679", "act": "GDPR", "article_id": "art_33", "article_number": 33, "text": TEXT}
    path.write_text(json.dumps(article) + "\n", encoding="utf-8")
    return data_dir


def _row(qid: str, quote: str, answers: list[str] | None = None, **extra) -> dict:
    row = {
        "id": qid,
        "question": "Within how many hours must a breach be notified?",
        "answers": answers or ["72 hours", "72"],
        "fact_type": "duration",
        "quote": quote,
        "source": "32016R0679:art_33",
        "act": "GDPR",
    }
    row.update(extra)
    return row


def _devset(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "structured.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_check_accepts_an_exact_quote(tmp_path):
    data_dir = _tiny_corpus(tmp_path)
    rows = [
        _row("st-1", "not later than 72 hours after having become aware of it"),
        _row("st-2", "It shall apply from 25 May 2018.", ["25 May 2018", "2018-05-25"], fact_type="deadline"),
    ]
    assert cs.check(_devset(tmp_path, rows), data_dir) == []


def test_check_catches_a_broken_quote(tmp_path):
    data_dir = _tiny_corpus(tmp_path)
    path = _devset(tmp_path, [_row("st-1", "not later than 48  72 hours after becoming aware of it")])
    problems = cs.check(path, data_dir)
    assert len(problems) == 1 and "not an exact substring" in problems[0]


def test_check_catches_answers_ids_and_fields(tmp_path):
    data_dir = _tiny_corpus(tmp_path)
    quote = "not later than 72 hours after having become aware of it"
    rows = [
        _row("st-1", quote, ["48 hours"]),  # primary answer not in the quote
        _row("st-2", quote, ["72 hours", "2018-05-26"]),  # ISO variant of no date in the quote
        _row("st-2", quote),  # duplicate id
        _row("st-3", quote, fact_type="speed"),
        _row("st-4", quote, act="NIS2"),
        _row("st-5", quote, source="32016R0679:art_99"),
        _row("st-6", "x" * 301),
        {"id": "st-7", "question": "?"},
    ]
    problems = cs.check(_devset(tmp_path, rows), data_dir)
    text = "\n".join(problems)
    assert "primary answer '48 hours'" in text
    assert "answer variant '2018-05-26'" in text
    assert "duplicate id" in text
    assert "fact_type 'speed'" in text
    assert "act 'NIS2' does not match" in text
    assert "'32016R0679:art_99' is not in the corpus" in text
    assert "301 characters" in text
    assert "missing field 'answers'" in text


def test_variants_in_date_and_number_forms():
    quote = "By 17 October 2024, fines up to 20 000 000 EUR or 1,4 % of turnover"
    for ok in ("2024-10-17", "20000000", "EUR 20 000 000", "1.4%", "17 october  2024"):
        assert cs.variant_ok(ok, quote), ok
    for bad in ("2024-10-18", "4%", "20 million", "2 %"):
        assert not cs.variant_ok(bad, quote), bad
