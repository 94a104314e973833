"""Calibrating the model's check (spr/eval/calibration.py, bench/calibrate_model_check.py): the
replay of a threshold over answers made without the check, the threshold rule, and the judge's
P(yes) read with the product's prompt by a real model (the test LLM, SmolLM2-135M)."""

from __future__ import annotations

import pytest

from core.config import LLMConfig
from core.llm import make_llm
from spr.eval.calibration import Replay, auc, checked, highest_threshold, replay, score_rows
from spr.model_check import check_prompt


def row(id_, answerable, abstained=False, recall=None, question="What must the operator report?", text="The operator shall report. [1]", translated=False):
    return {"id": id_, "question": question, "answerable": answerable, "abstained": abstained, "text": text,
            "token_recall": recall, "translated": translated}


ROWS = [
    row("a1", True, recall=1.0), row("a2", True, recall=0.5), row("a3", True, abstained=True, recall=0.0),
    row("u1", False), row("u2", False), row("u3", False, abstained=True),
]
SCORES = {"a1": 0.9, "a2": 0.35, "u1": 0.2, "u2": 0.6}


def test_a_declined_answer_abstains_and_counts_no_recall():
    r = replay(ROWS, SCORES, 0.4)
    assert r == Replay(0.4, 0.667, 0.667, 0.333, declined_answerable=1, declined_unanswerable=1)


def test_without_a_threshold_the_answers_stand_as_made():
    assert replay(ROWS, SCORES, None) == Replay(None, 0.333, 0.333, 0.5, 0, 0)


def test_an_answer_the_judge_did_not_read_is_never_declined():
    assert replay([row("x", True, recall=1.0)], {}, 0.99).false_abstention == 0.0


def test_the_check_reads_neither_abstentions_nor_yes_no_nor_translated_questions():
    assert checked(row("a", True))
    assert not checked(row("a", True, abstained=True))
    assert not checked(row("a", True, question="We run a plant. Can the Fund support it?"))
    assert not checked(row("a", True, translated=True))


def test_the_highest_threshold_within_the_added_false_abstention_of_every_calibration_set():
    def replays(fas):
        return {t: Replay(t, fa, None, 0.0, 0, 0) for t, fa in fas.items()}

    runs = {
        "squad2": replays({None: 0.014, 0.3: 0.017, 0.4: 0.024, 0.45: 0.044}),
        "dev-eu": replays({None: 0.0, 0.3: 0.0, 0.4: 0.0, 0.45: 0.065}),
        "other": replays({None: 0.0, 0.3: 0.5, 0.4: 0.5, 0.45: 0.5}),  # not a calibration set: not read
    }
    assert highest_threshold(runs, ["squad2", "dev-eu"]) == 0.4
    assert highest_threshold(runs, ["squad2", "dev-eu"], max_added=0.05) == 0.4  # dev-eu's +0.065 at 0.45
    assert highest_threshold(runs, ["other"]) is None


def test_auc_counts_ties_half():
    assert auc([(True, 0.5), (False, 0.5)]) == 0.5
    assert auc([(True, 0.9), (False, 0.1), (False, 0.2)]) == 1.0
    assert auc([(False, 0.1)]) is None


@pytest.mark.slow  # loads a model
def test_the_judge_reads_each_checked_answer_once_with_the_products_prompt():
    llm = make_llm(LLMConfig(model_path="smollm2-135m-instruct"), None, cache=False)
    rows = [row("a", True, text="Wind turbines shall be sited 800 metres from homes. [1]", question="How far from homes must turbines be?"),
            row("b", False, abstained=True), row("c", True, question="Can the Fund support nuclear power?")]
    scores = score_rows(llm, rows)
    assert list(scores) == ["a"]
    assert scores["a"] == pytest.approx(llm.yes_probability(check_prompt(rows[0]["question"], rows[0]["text"]), max_tokens=1))
    assert 0.0 <= scores["a"] <= 1.0
