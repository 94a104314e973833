"""Questions that name what they ask about only by a description: bridge questions.

"What is the usual average snowfall in the city where the performers of Brother were formed?"
asks about a city the question never names; "The Member State whose government programme targets
carbon neutrality by 2035 — what final energy consumption does it aim for in 2030?" about a
country. The passage that answers shares few words with the question; the passage the
description leads to names the bridge ("Brother are a rock band formed in Sydney …").
:func:`bridge` reads the description and the rest of the question apart, so that retrieval can
search the description first, and the question once more with what that search found
(:mod:`spr.retrieval.bridges`).

Three forms are read, common in multi-hop questions and rare elsewhere:

- **a leading description**, then the question about it after a dash, colon or comma: "The
  country that wants to cut … — what … does it aim for?", "In the year in which the EEG expects
  … , what is the interim target …?";
- **"Which X …, and what … it …?"**: the first part asks for the bridge, the second about it;
- **a trailing description**: "… in the city where …?", "… of the association which published
  …?" — a definite noun phrase of at most three words, then a relative word; the rest of the
  question must hold words of its own and not end in "is"/"are" ("How much is the annual fee
  that …?", "Under the GDPR, what are the conditions under which …?" describe their own answer,
  not a bridge).

Pure functions over strings; English only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spr.lexical import content_words

# A head noun phrase: up to three words, none of them a preposition or article ("the waterfall in
# the country where …" is read at "the country where …").
_WORD = r"(?!(?:in|of|for|on|at|by|from|with|to|a|an|the|and|or)\b)[\w'’-]+"
_HEAD = rf"(?:{_WORD}\s+){{0,2}}{_WORD}"
_RELATIVE = r"(?:whose|where|in which|at which|of which|for which|by which|from which|which|that|who|when)"
_LEAD = re.compile(
    rf"^(?P<d>(?:(?:in|for|at|by|from|of|on)\s+)?the\s+{_HEAD}\s+{_RELATIVE}\b[^—–:;?]+?)\s*(?:—|–|--|:|;|,)\s*"
    r"(?P<m>(?:what|which|who|whom|how|when|where|why|is|are|does|do|did|in|by|for)\b.+)$",
    re.IGNORECASE,
)
_AND = re.compile(
    r"^(?P<d>(?:which|what)\s+(?:country|member state|state|city|act|law|regulation|directive|plan|company|organi[sz]ation)\b.+?),?\s+"
    r"and\s+(?P<m>(?:what|which|who|how|when|where|by|in)\b.+\b(?:it|its|they|their|there)\b.*)$",
    re.IGNORECASE,
)
_TRAIL = re.compile(rf"^(?P<m>.+?)\s(?P<d>the\s+{_HEAD}\s+(?:whose|where|in which|at which|of which|which|that|who)\b.+?)\s*\??$", re.IGNORECASE)
_COPULA_END = re.compile(r"\b(?:is|are|was|were)\s*$", re.IGNORECASE)
# Words that ask, not what the rest of the question is about.
_ASKING = frozenset("what which who whom whose how when where why much many is are was were does do did the a an of in name called term way kind type sort".split())


@dataclass(frozen=True)
class Bridge:
    """A bridge question read apart: ``description`` names the bridge ("the city where the
    performers of Brother were formed"), ``rest`` asks about it ("What is the usual average
    snowfall in"); ``form`` is "lead", "and" or "trail"."""

    question: str
    description: str
    rest: str
    form: str


def bridge(question: str) -> Bridge | None:
    """The description and the rest of a bridge question, or None.

    >>> b = bridge("What is the usual average snowfall in the city where the performers of Brother were formed?")
    >>> b.form, b.description, b.rest
    ('trail', 'the city where the performers of Brother were formed', 'What is the usual average snowfall in')
    >>> bridge("The country that wants to cut its non-ETS emissions by 55% — what renewable share does it aim for?").description
    'The country that wants to cut its non-ETS emissions by 55%'
    >>> bridge("Which country wants to end lignite by 2028, and what renewables share does it target?").rest
    'what renewables share does it target?'
    >>> bridge("How much is the annual fee that essential entities must pay?") is None  # describes its own answer
    True
    >>> bridge("What is the maximum fine under the CSRD for a company that fails to publish?") is None
    True
    >>> bridge("Under the GDPR, what are the conditions under which a controller is exempted?") is None
    True
    """
    text = " ".join(question.split())
    for form, pattern in (("lead", _LEAD), ("and", _AND), ("trail", _TRAIL)):
        match = pattern.match(text)
        if match is None:
            continue
        rest = match.group("m")
        if not [w for w in re.findall(r"[\w'’-]+", rest.lower()) if w not in _ASKING and content_words(w)]:
            return None
        if form == "trail" and _COPULA_END.search(rest):
            return None  # "Under GDPR, what are the conditions under which …?": the description is what is asked
        return Bridge(question, match.group("d").strip(), rest.strip(), form)
    return None
