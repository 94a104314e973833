"""Three kinds of duration that legal text keeps apart: a **deadline** ("within 72 hours",
"without undue delay", "no later than one month after"), a **period** something lasts ("for a
period of five years", "valid for three years", "shall not exceed five years") and a
**frequency** ("every three years", "annually").

"How long can the notice stay on the website?" asks for a period; "without undue delay" — when the
notice goes up — does not answer it, nor does "every three years" answer "For how many years do we
have to keep it on file?". :func:`asked_duration` reads which kind a question asks for,
:func:`stated_durations` which kinds a sentence states, and :func:`states_duration` whether a
sentence states the asked kind; :mod:`spr.answerable` asks them. Pure functions, English only.
"""

from __future__ import annotations

import re
from typing import Literal

from spr.values import DURATION

DurationKind = Literal["deadline", "period", "frequency"]

_FREQUENCY_ASKED = re.compile(r"\bhow (?:often|frequently)\b|\bhow many times\b|\bat what intervals?\b|\bevery how many\b")
# What lasts: a thing kept, stored or held on to, or one that stays, remains, lasts or is valid —
# whatever else the question says ("How long does it stay valid before we have to renew it?").
_LASTS = re.compile(
    r"\b(?:keep|kept|retain|retained|store|stored|hold on to|hang on to|stay|stays|remain|remains|lasts|valid|"
    r"in force|suspended|banned)\b|\blast(?=\s*\?)|\bfor how (?:long|many)\b|\bhow many \w+ in (?:prison|jail)\b"
)
_WAIT = re.compile(r"\bwait\b")  # "the longest we can wait": a deadline, though "longest"
# Until when to act: "How long does it have to tell …?", "How long can it take …?", "How soon …?",
# "What is the longest we can wait …?"
_DEADLINE_ASKED = re.compile(
    r"\bwithin (?:how|what)\b|\bhow (?:quickly|soon|fast)\b|\bhow long after\b|\bafter how long\b|\bwait\b"
    r"|\bhow (?:long|many \w+|much time) (?:does|do|did|will|would|can|may|must|should) [^?]*?"
    r"\b(?:take|have to|has to|need to|have|has)\b(?:,? at (?:most|the latest),?)? to\b"
    r"|\bhow many \w+ (?:after|before|from)\b"  # not "how many hours of training …": an amount of time
)


def asked_duration(question: str) -> DurationKind | None:
    """The kind of duration ``question`` asks for, if it says (None: "How long is the procedure?").

    >>> asked_duration("How long can that notice stay on its website?")
    'period'
    >>> asked_duration("How many years do we have to keep it on file?")
    'period'
    >>> asked_duration("How long does it have, at most, to tell the authority?")
    'deadline'
    >>> asked_duration("How often must the entity run the tests?"), asked_duration("How long is the procedure?")
    ('frequency', None)
    """
    text = question.lower()
    if _FREQUENCY_ASKED.search(text):
        return "frequency"
    if _LASTS.search(text) and not _WAIT.search(text):
        return "period"
    if _DEADLINE_ASKED.search(text):
        return "deadline"
    if re.search(r"\b(?:longest|maximum period)\b", text):
        return "period"
    return None


# a length told in one word or phrase, whatever stands before it
_WORDED: dict[str, DurationKind] = {
    "without undue delay": "deadline", "immediately": "deadline",
    **dict.fromkeys(("annually", "yearly", "monthly", "weekly", "daily", "hourly", "biennially", "once a"), "frequency"),
}
# the words before a length say what it is ("every", "within", "for a period of"); one word may sit between
_BEFORE = r"\s+(?:\w+\s+)?$"
_FREQUENCY_BEFORE = re.compile(rf"\b(?:every|each|once every|once in){_BEFORE}")
_DEADLINE_BEFORE = re.compile(rf"\b(?:within|later than|latest|before the end of|before){_BEFORE}")
_PERIOD_BEFORE = re.compile(
    r"\b(?:for|period of|periods of|duration of|term of|valid for|lasting|up to|maximum of|minimum of|at least|"
    r"no more than|not more than|not exceed(?:ing)?)\s+(?:a |an |the )?(?:maximum |minimum |further |period of |total of )?"
    r"(?:\w+\s+)?$"
)


def stated_durations(sentence: str) -> list[DurationKind | None]:
    """The kind of each duration ``sentence`` states, in order; None where its words do not say
    ("the 72-hour notification").

    >>> stated_durations("It shall notify without undue delay and within 72 hours.")
    ['deadline', 'deadline']
    >>> stated_durations("By 2 August 2028 and every three years thereafter, the Commission shall evaluate it.")
    ['frequency']
    >>> stated_durations("Certification shall be issued for a maximum period of three years; the 30-day rule applies.")
    ['period', None]
    """
    kinds: list[DurationKind | None] = []
    for match in DURATION.finditer(sentence.lower()):
        said = match.group(0)
        before = sentence[max(0, match.start() - 40) : match.start()].lower()
        if said in _WORDED:
            kinds.append(_WORDED[said])
        elif _FREQUENCY_BEFORE.search(before):
            kinds.append("frequency")
        elif _DEADLINE_BEFORE.search(before):
            kinds.append("deadline")
        elif _PERIOD_BEFORE.search(before):
            kinds.append("period")
        else:
            kinds.append(None)
    return kinds


# A validity period answers how often a thing is renewed ("issued for a maximum period of three
# years and may be renewed"); otherwise each kind answers only itself.
_ANSWERS: dict[DurationKind, frozenset[DurationKind]] = {
    "deadline": frozenset({"deadline"}),
    "period": frozenset({"period"}),
    "frequency": frozenset({"frequency", "period"}),
}


def states_duration(kind: DurationKind, sentence: str) -> bool:
    """Whether ``sentence`` states a duration that can be of ``kind``: one of that kind, or one
    whose words do not say. A sentence stating none (a date) states none of any kind.

    >>> states_duration("period", "This period shall not exceed five years after its publication.")
    True
    >>> states_duration("period", "Authorities shall publish the decision without undue delay.")
    False
    >>> states_duration("frequency", "It is issued for a maximum period of three years and may be renewed.")
    True
    """
    return any(said is None or said in _ANSWERS[kind] for said in stated_durations(sentence))
