"""What a question presupposes and asks for, found by the probe sets (bench/devset/*_probe.jsonl):
identifiers matched whole, generic names made adjectives, sums asked for by a verb of paying."""

from __future__ import annotations

import pytest

from spr import answerable, asking


def test_regression_an_identifier_is_not_matched_by_a_look_alike_word():
    """probe-necp: "What EU-wide renewables target for 2030 does the REPowerEU plan propose?"
    (unanswerable: no plan mentions REPowerEU) was answered; "repowereu" less its last two
    letters matched "repowering" of power plants, and "EU-wide" was a second name, found."""
    question = "What EU-wide renewables target for 2030 does the REPowerEU plan propose?"
    plan = answerable.Passage(
        ("Repowering of wind farms counts towards the EU-wide target of 32 % in 2030.", "Spain_NECP"),
        ("Repowering of wind farms counts towards the EU-wide target of 32 % in 2030.",),
    )
    assert answerable.premise_names(question) == ["repowereu"]
    verdict = answerable.check(question, [plan])
    assert not verdict.answerable and verdict.reason == "the evidence never mentions: repowereu"
    named = answerable.Passage(("The REPowerEU plan proposes 45 % by 2030.",), ("The REPowerEU plan proposes 45 % by 2030.",))
    assert answerable.check(question, [named]).answerable


def test_identifiers_are_coined_names_and_ordinary_names_still_inflect():
    assert answerable.identifiers("Does NIS2 or the ePrivacy rule cover Germany's NECPs and CO2-free power?") == {
        "nis2", "eprivacy", "necp"}  # fmt: skip
    # an ordinary long name still matches inflected or misspelt ("Raouliii" for "Raoulii")
    assert answerable.missing_premises("What did the Normans build?", ["Norman castles were built."]) == []


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How much does Cyprus pay per kilogram of green hydrogen under its support scheme?", "money"),
        ("How much did Austria spend on heat pumps in 2022?", "money"),
        ("How much does Denmark invest in offshore wind?", "money"),
        ("How high is the fine for a gatekeeper?", "money"),  # a sum's noun still decides
        ("How long may a sandbox test last?", "duration"),
        ("How did the Commission decide?", None),
    ],
)
def test_sums_asked_for_by_a_verb_of_paying(question, kind):
    assert asking.asked_value(question) == kind



def test_regression_a_decade_is_matched_by_its_full_years():
    """HotpotQA: "What author was more popular in the 70's, Richard Wright or Richard Bach?" was
    declined because no passage wrote "70"; they write "the 1970s" and "1970's"."""
    question = "What author was more popular in the 70's, Richard Wright or Richard Bach?"
    bach = "Richard Bach's novel was the bestseller of the 1970s, and Richard Wright wrote earlier."
    assert answerable.missing_premises(question, [bach]) == []
    assert answerable.missing_premises(question.replace("70's", "80's"), [bach]) == ["80"]
