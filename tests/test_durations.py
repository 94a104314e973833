"""Kinds of duration (spr/durations.py) and the answerability check that reads them: a question
asking how long something lasts is not answered by when it must happen or how often."""

from __future__ import annotations

import pytest

from spr import answerable
from spr.durations import asked_duration, stated_durations, states_duration


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("If the supervisor publishes the penalty, how long can that notice stay on its website?", "period"),
        ("How many days am I allowed to keep the recordings of my security camera?", "period"),
        ("Once a patch is released, how long must the manufacturer keep it available to users?", "period"),
        ("How many years in prison does the GDPR foresee for managers?", "period"),
        ("For how long is the certificate valid?", "period"),
        ("A company finds out that records were leaked. How long does it have, at most, to tell the authority?", "deadline"),
        ("How many days after a major incident does a bank have to send the final report?", "deadline"),
        ("Within how many days must a manufacturer ship a security update?", "deadline"),
        ("How quickly must we tell the authority that our contact details changed?", "deadline"),
        ("I asked for a copy of my data. How long can it take to answer?", "deadline"),
        ("How often do the selected financial entities have to run threat-led penetration tests?", "frequency"),
        ("How often does an essential entity have to undergo an audit — every year, or every two years?", "frequency"),
        ("How long is the assessment procedure?", None),
        ("How many hours of security training must each employee complete per year?", None),  # an amount of time
        ("How long did Western Europe control Cyprus?", None),
    ],
)
def test_the_kind_of_duration_a_question_asks_for(question, kind):
    assert asked_duration(question) == kind


def test_the_words_before_a_length_say_its_kind():
    assert stated_durations("The notice shall remain on the website for a period of at least five years.") == ["period"]
    assert stated_durations("The processor shall notify the controller without undue delay.") == ["deadline"]
    assert stated_durations("A final report not later than one month after the notification.") == ["deadline"]
    assert stated_durations("Entities shall carry out testing at least every 3 years.") == ["frequency"]
    assert stated_durations("Each year the Board reports annually.") == ["frequency"]
    assert stated_durations("The 72-hour notification comes first.") == [None]  # its words do not say
    assert stated_durations("Member States shall apply it from 2 August 2026.") == []
    assert not states_duration("period", "Member States shall apply it from 2 August 2026.")  # a date is no length
    assert states_duration("deadline", "The 72-hour notification comes first.")  # unknown kinds are not ruled out


def _passage(*sentences: str) -> answerable.Passage:
    return answerable.Passage(("Publication of administrative penalties", "DORA Article 54"), sentences)


def test_a_question_about_what_lasts_is_not_answered_by_a_deadline():
    # probe-eu: "How many years in prison …?" was answered by the 72-hour breach notification
    breach = answerable.Passage(
        ("Notification of a personal data breach", "GDPR Article 33"),
        ("In the case of a personal data breach, the controller shall not later than 72 hours after having become aware of it notify the breach.",),
    )
    verdict = answerable.check("How many years in prison does the GDPR foresee for managers responsible for a data breach?", [breach])
    assert not verdict.answerable and verdict.reason == "no sentence stating a duration states a period"


def test_the_sentence_of_the_asked_kind_answers():
    publish = "Competent authorities shall publish on their official websites, without undue delay, any decision imposing an administrative penalty."
    period = "This period shall not exceed five years after its publication."
    verdict = answerable.check("If the supervisor publishes the DORA penalty, how long can that notice stay on its website?",
                               [_passage(publish, period)])
    assert verdict.answerable and verdict.answers == (period,)
    # a question that does not say which kind it asks for keeps every duration
    plain = answerable.check("How long is the DORA penalty procedure?", [_passage(publish, period)])
    assert plain.answerable and plain.answers == (publish, period)


def test_a_validity_period_answers_how_often_a_thing_is_renewed():
    certified = answerable.Passage(("Certification", "GDPR Article 42"),
                                   ("Certification shall be issued to a controller for a maximum period of three years and may be renewed.",))
    verdict = answerable.check("How often must a controller renew its GDPR certification?", [certified])
    assert verdict.answerable
    evaluated = answerable.Passage(("Evaluation and review", "AI Act Article 112"),
                                   ("By 2 August 2028 and every three years thereafter, the Commission shall evaluate the codes of conduct.",))
    kept = answerable.check("For how many years does the AI Act require codes of conduct to be kept on file?", [evaluated])
    assert not kept.answerable  # how often the Commission evaluates is not how long anything is kept
