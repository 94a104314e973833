"""European countries named in questions, sentences and titles, by name or adjective.

One owner for what the answerability check (a premise named by its adjective) and the extractive
and LLM answers (a sentence about another country than the question's) read as a country.
"""

from __future__ import annotations

import re

# Adjectives of countries in questions name the country the text spells out ("French law" is
# found in "France's plan"): an adjective also matches its country's name.
COUNTRY_OF = {
    "austrian": "austria", "belgian": "belgium", "british": "united kingdom", "bulgarian": "bulgaria",
    "croatian": "croatia", "cypriot": "cyprus", "czech": "czech", "danish": "denmark", "dutch": "netherlands",
    "english": "england", "estonian": "estonia", "finnish": "finland", "french": "france", "german": "germany",
    "greek": "greece", "hungarian": "hungary", "irish": "ireland", "italian": "italy", "latvian": "latvia",
    "lithuanian": "lithuania", "luxembourgish": "luxembourg", "maltese": "malta", "norwegian": "norway",
    "polish": "poland", "portuguese": "portugal", "romanian": "romania", "slovak": "slovak",
    "slovenian": "sloven", "spanish": "spain", "swedish": "sweden", "swiss": "switzerland",
}  # fmt: skip

_COUNTRY_WORD = re.compile(
    r"\b(?:" + "|".join(sorted({*COUNTRY_OF, *COUNTRY_OF.values(), "netherlands", "dutch"}, key=len, reverse=True)) + r")\w*",
    re.IGNORECASE,
)


def countries(text: str) -> set[str]:
    """The European countries ``text`` names, by name or adjective ("Greek" is Greece's).

    >>> sorted(countries("The Greek government and Bulgaria's plan; the Czech Republic"))
    ['bulgaria', 'czech', 'greece']
    >>> countries("a germane, polished argument")
    set()
    """
    found = set()
    for match in _COUNTRY_WORD.finditer(text):
        word = match.group(0).lower()
        country = next((c for c in COUNTRY_OF.values() if word.startswith(c)), None) or COUNTRY_OF.get(word)
        if country:  # not "germane", "polished"
            found.add(country)
    return found


def other_countries(text: str, asked: set[str]) -> set[str]:
    """The countries ``text`` names when it names none of ``asked`` (else the empty set): a
    sentence about another country than the question's.

    >>> other_countries("The Greek government closes lignite plants by 2028.", {"bulgaria"})
    {'greece'}
    >>> other_countries("Bulgaria and Greece share a grid.", {"bulgaria"}), other_countries("Plants close.", {"bulgaria"})
    (set(), set())
    """
    named = countries(text)
    return set() if named & asked else named
