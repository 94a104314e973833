"""Questions that choose between named options: "…, Germany or Greece?", "… between the AI Act
and the Cyber Resilience Act?"

A comparison asks about things that stand in different passages, often in different documents
(two national plans, two acts). One search for the whole question finds the option its words
favour and misses the other; the extractive answer then quotes one side. :func:`choice` reads the
options, and :meth:`Choice.asking` writes the question about one option alone ("Which country
plans to stop burning coal earlier, Greece, and by how many years?"), which the retrieval
searches with (:mod:`spr.retrieval.choices`) and the extractive answer scores each option's
sentences against (:mod:`spr.generate`).

Two forms are read, both common in comparison questions and rare elsewhere:

- **a choice after a comma or colon**: "…, A or B?", "…: A, or B?", "…, A, B or C, and …" —
  the options are noun phrases (an option may not open with a verb, a pronoun or "not": "…, or
  must it stay in the EU?" is no choice); without the comma, only when both options are
  capitalized names in a question asking which or who ("Which band formed first The Exies or
  Circus Diablo?"; not "What machine does not define BQP or QMA?");
- **"between A and B"** in a question that compares ("Between A and B, which …?", "how do … compare
  between A and B?"), where both hold a letter ("between 2021 and 2030" is a period).

Pure functions over strings; English only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_WORDS = 14  # an option longer than this is a clause, not an option
_NOT_AN_OPTION = re.compile(
    r"^(?:not|no|must|may|might|can|could|should|shall|will|would|does|do|did|is|are|was|were|has|have|had|it|they|he|she|we|you|"
    r"i|there|which|what|who|whom|whose|when|where|why|how|if|whether|else|otherwise|vice|even|also|just|only|such|like|including|e\.g)\b",
    re.IGNORECASE,
)
_OR = re.compile(r",?\s+or\s+", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(?P<a>[^,;:?()]+?)\s+and\s+(?P<b>[^,;:?()]+?)(?=\s*(?:[,;:?.]|$))", re.IGNORECASE)
# "between A and B" compares only where the question says so (else: "the relationship between P and NP").
_COMPARING = re.compile(r"^\W*between\b|\b(?:compar\w*|differ\w*|contrast\w*)\b", re.IGNORECASE)
_CHOOSING = re.compile(r"\b(?:which|who|whom|whose)\b", re.IGNORECASE)  # two bare names choose only in such a question
# What ends the right-hand option: punctuation, or "and" opening a further question part ("…, and by how many years?").
_RIGHT_END = re.compile(r"[,;:?()]|\s+and\s+(?=(?:what|which|who|how|by|when|why|where|is|are|does|do)\b)|$", re.IGNORECASE)
_CAPITALIZED = re.compile(r"^(?:(?:[A-Z][\w’'.&-]*|of|the|de|la|von|van|and|for|on)\s+)*[A-Z][\w’'.&-]*$")
_NAME_RUN = re.compile(r"(?:[A-Z][\w’'.&-]*\s+)*[A-Z][\w’'.&-]*$")


@dataclass(frozen=True)
class Choice:
    """The options a question chooses between, where they stand in it (``start``–``end`` covers
    "A or B", or "between A and B")."""

    question: str
    options: tuple[str, ...]
    start: int
    end: int
    between: bool = False

    def about(self, i: int) -> str:
        """What to search for option ``i``: the option, then the question's other words less those
        that ask or compare.

        >>> choice("Which country plans to stop burning coal earlier, Germany or Greece, and by how many years?").about(1)
        'Greece country plans to stop burning coal years'
        """
        return _query(self, i)

    def asking(self, i: int) -> str:
        """The question about option ``i`` alone: the choice replaced by the option.

        >>> c = choice("Which plan aims higher, Spain's or Portugal's?")
        >>> c.asking(0), c.asking(1)
        ("Which plan aims higher, Spain's?", "Which plan aims higher, Portugal's?")
        >>> choice("How do the fines compare between the AI Act and the GDPR?").asking(1)
        'How do the fines compare for the GDPR?'
        """
        option = ("for " if self.between else "") + self.options[i]
        return self.question[: self.start] + option + self.question[self.end :]


# Words that ask or compare: once the question is about one option they only pull in passages
# that share them ("Which country plans … earlier …?" finds other countries' plans).
_ASKING = frozenset(
    "which who whom whose what when where why how many much is are was were has have had does do did will would can could "
    "should shall may might must be been the a an and or by on than as more most less least fewer fewest first last "
    "earlier earliest sooner soonest later latest higher highest lower lowest larger largest smaller smallest bigger biggest "
    "greater greatest shorter shortest longer longest older oldest younger youngest newer newest faster fastest slower "
    "slowest better best worse worst stronger strongest weaker weakest stricter strictest cheaper cheapest wider widest".split()
)
_TOKEN = re.compile(r"[\w’'-]+")


def _words(text: str) -> int:
    return len(text.split())


def _query(choice_: Choice, i: int) -> str:
    rest = choice_.question[: choice_.start] + " " + choice_.question[choice_.end :]
    return " ".join([choice_.options[i], *(w for w in _TOKEN.findall(rest) if w.lower() not in _ASKING)])


def _option(text: str) -> bool:
    text = text.strip()
    return bool(text) and _words(text) <= MAX_WORDS and not _NOT_AN_OPTION.match(text) and any(ch.isalpha() for ch in text)


def choice(question: str) -> Choice | None:
    """The options ``question`` chooses between, or ``None``.

    >>> choice("Which country plans to stop burning coal or lignite earlier, Germany or Greece, and by how many years?").options
    ('Germany', 'Greece')
    >>> choice("Which started to apply first: the national measures implementing NIS2 or the DORA regulation?").options
    ('the national measures implementing NIS2', 'the DORA regulation')
    >>> choice("Which is oldest, Sid Haig, Vic Darchinyan or Mark King?").options
    ('Sid Haig', 'Vic Darchinyan', 'Mark King')
    >>> choice("Which band was formed first The Exies or Circus Diablo ?").options
    ('The Exies', 'Circus Diablo')
    >>> choice("Giving false answers: how do the fines compare between the AI Act and the Cyber Resilience Act?").options
    ('the AI Act', 'the Cyber Resilience Act')
    >>> [choice(q) for q in ("Can a company keep the data in the US, or must it stay in the EU?",
    ...                      "Is the output characterized by a simple or complex answer?",
    ...                      "May an employer read workers' feelings from their faces or voices?",
    ...                      "How much will emissions fall between 2021 and 2030?",
    ...                      "What is the relationship between P and co-NP?",
    ...                      "What machine does not define BQP or QMA?",
    ...                      "What is the fine for breaches such as a breach-notification or design obligations?")]
    [None, None, None, None, None, None, None]
    """
    text = question.rstrip()
    for match in _OR.finditer(text):
        found = _or_choice(text, match)
        if found is not None:
            return found
    between = _BETWEEN.search(text) if _COMPARING.search(text) else None
    if between and _option(between["a"]) and _option(between["b"]) and all(re.search(r"[A-Za-z]", between[g]) for g in "ab"):
        return Choice(text, (between["a"].strip(), between["b"].strip()), between.start(), between.end(), between=True)
    return None


def _or_choice(text: str, match: re.Match[str]) -> Choice | None:
    """The choice around one "or" of ``text``: after a comma or colon, or between two names."""
    tail = _RIGHT_END.search(text, match.end())
    right_end = tail.start() if tail else len(text)
    right = text[match.end() : right_end].strip()
    head = text[: match.start()]
    cut = max(head.rfind(","), head.rfind(":"), head.rfind(";"))
    if cut >= 0:
        # "…, A, B or C": earlier options stand between commas after the clause's last colon
        lead = head[: cut + 1]
        left = [head[cut + 1 :].strip()]
        while lead.endswith(","):
            before = lead[:-1]
            prev = max(before.rfind(","), before.rfind(":"), before.rfind(";"))
            candidate = before[prev + 1 :].strip()
            if prev < 0 or not _option(candidate) or _words(candidate) > 4 or not _CAPITALIZED.match(candidate):
                break
            left.insert(0, candidate)
            lead = before[: prev + 1]
        options = (*left, right)
        if all(_option(o) for o in options):
            start = len(lead) + (len(head[len(lead) :]) - len(head[len(lead) :].lstrip()))
            return Choice(text, tuple(o.strip() for o in options), start, match.end() + len(text[match.end() : right_end].rstrip()))
    names = _NAME_RUN.search(head)
    if names and names.start() > 0 and _CHOOSING.search(text) and _CAPITALIZED.match(right) and _option(names.group()) and _option(right):
        return Choice(text, (names.group(), right), names.start(), match.end() + len(text[match.end() : right_end].rstrip()))
    return None


# "Which of the two tornado outbreaks killed the most people?": a comparison whose options the
# question does not name.
_UNNAMED_OPTIONS = re.compile(r"\bwhich (?:one )?of (?:the|these|those) (?:two|three|four|both)\b|\bwhich of (?:these|those|them)\b", re.I)


def compares(question: str) -> bool:
    """Whether ``question`` compares options, named (:func:`choice`) or not ("Which of the two
    outbreaks …?"). Its evidence says the opposite of it for the option it does not pick.

    >>> compares("Which of the two tornado outbreaks killed the most people?"), compares("Which is first, Germany or Greece?")
    (True, True)
    >>> compares("Which country killed the most people?")
    False
    """
    return bool(_UNNAMED_OPTIONS.search(question)) or choice(question) is not None
