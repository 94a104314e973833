"""What a question asks for: the kind of value (:func:`asked_value`), a lower bound
(:func:`asks_minimum`), the kind of sum (:func:`money_kinds`) and the years it states
(:func:`question_years`) — what :mod:`spr.answerable` checks the evidence against.

Pure functions over strings; English, and German through :mod:`spr.gloss`.
"""

from __future__ import annotations

import re

from spr.lexical import content_words
from spr.values import ValueKind

_TIME_UNIT = r"(?:hours?|days?|weeks?|months?|years?|minutes?|decades?|time)"
_ASKS: tuple[tuple[ValueKind, re.Pattern[str]], ...] = (
    ("duration", re.compile(rf"\bhow (?:long|soon|quickly|fast|often)\b|\bhow (?:many|much) {_TIME_UNIT}\b")),
    ("money", re.compile(
        r"\b(?:how much|what|which|how (?:high|large|big))\b[^?]{0,60}?\b(?:fines?|fees?|penalt(?:y|ies)|price|costs?|capital|"
        r"budget|funding|subsid(?:y|ies)|tax(?:es)?|levy|surcharge|allowance|payments?|charges?|euros?|cents?|money)\b|"
        # "How much does Cyprus pay per kilogram …?": a sum, though no noun of money is named
        r"\bhow much\b[^?]{0,40}?\b(?:pay|pays|paid|paying|spend|spends|spent|spending|invest|invests|invested|investing|earn|earns|earned)\b"
    )),
    ("percent", re.compile(
        r"\b(?:what|which|how (?:big|large|high|much))\b[^?]{0,60}?\b(?:percentage|per ?cent|share|proportion|portion|fraction)\b"
    )),
    ("time", re.compile(
        r"\b(?:what|which) (?:year|date|day)\b|\b(?:by|until|since|from|till) when\b|^when\b|"
        r"\bwhen (?:does|did|do|will|must|is|are|was|were|should|can|could|has|have|had)\b|"
        # "What was the deadline for …?": a date or a time limit (both state a time)
        r"\b(?:what|which)\b[^?]{0,40}?\b(?:deadlines?|(?:due |end |cut-off )?dates?|time limits?)\b"
    )),
    ("number", re.compile(r"\bhow (?:many|much)\b|\bby how much\b")),
)


# A question that opens with a condition ("When adopting implementing acts …, what requirements …?")
# asks what its main clause asks.
_CONDITION = re.compile(
    r"^(?:when|if|where|once|after|before|while)\b[^,?]*,\s*"
    r"(?=(?:what|which|who|whom|whose|how|when|is|are|does|do|did|must|may|can|could|should|shall|will)\b)"
)


# A question that asks for a lower bound ("the minimum fine", "at least how many days") is not
# answered by sentences that only set upper bounds ("fines up to EUR 10 000 000"): there is no
# minimum to quote. A question that names a maximum too ("the maximum fine must be at least …")
# asks for a bound on a maximum, which such sentences do state.
_ASKS_MINIMUM = re.compile(r"\b(?:minimum|minimal|lowest|at least|mindest\w*)\b")
_NAMES_MAXIMUM = re.compile(r"\b(?:maximum|highest|ceiling|h(?:ö|oe)chst\w*)\b")
_UPPER_BOUND = re.compile(r"\bup to\b|\bmaximum\b|\bnot (?:to )?exceed|\bat most\b|\bno more than\b|\bh(?:ö|oe)chstens\b|\bbis zu\b")
_LOWER_BOUND = re.compile(r"\bminimum\b|\bat least\b|\bnot less than\b|\bno less than\b|\bmindestens\b|\bnot below\b")


def asks_minimum(question: str) -> bool:
    """Whether ``question`` asks for a lower bound of a value (and names no maximum).

    >>> asks_minimum("What is the minimum fine a data protection authority has to impose?")
    True
    >>> asks_minimum("At least how high must the maximum fine be?"), asks_minimum("What is the fine?")
    (False, False)
    """
    text = question.lower()
    return bool(_ASKS_MINIMUM.search(text)) and not _NAMES_MAXIMUM.search(text)


def only_upper_bounds(sentence: str) -> bool:
    """Whether ``sentence`` sets an upper bound and no lower one.

    >>> only_upper_bounds("Infringements shall be subject to administrative fines up to 10 000 000 EUR.")
    True
    >>> only_upper_bounds("fines of a maximum of at least EUR 10 000 000"), only_upper_bounds("The fee is EUR 50.")
    (False, False)
    """
    text = sentence.lower()
    return bool(_UPPER_BOUND.search(text)) and not _LOWER_BOUND.search(text)


# What a sum of money is paid as. A question asking for a fee is not answered by sentences that
# state fines: the evidence of an act that sets fines and no fee holds no fee (English only).
_MONEY_KINDS: dict[str, re.Pattern[str]] = {
    "fine": re.compile(r"\b(?:fines?|penalt(?:y|ies)|sanctions?)\b"),
    "fee": re.compile(r"\b(?:fees?|charges?|lev(?:y|ies)|tolls?)\b"),
    "tax": re.compile(r"\b(?:tax(?:es|ation)?|dut(?:y|ies)|excise)\b"),
    # money given: funding acts word the same sums as budgets, resources, envelopes, allocations
    "funding": re.compile(
        r"\b(?:subsid(?:y|ies|ised|ized|ises|izes)|grants?|aid|funding|financing|support|allowances?|budgets?|"
        r"allocations?|allocated|envelopes?|appropriations?|resources|contributions?)\b"
    ),
    "capital": re.compile(r"\b(?:capital|own funds)\b"),
}


# A question may open with the asker's case in sentences of its own ("My gas boiler was installed
# in 1995. Can I keep running it …?"): a full stop after a word or number of three characters or
# more, or after a two-letter acronym ("… all over the EU. Which …"), but not "Art. 5", "z. B.",
# "1. Januar"; then a word — of any case: the German gloss lower-cases.
_SENTENCE_BREAK = re.compile(r"(?:(?<=\w{3}[.!])|(?<=\b[A-Z]{2}[.!]))\s+(?=[\"“‘']?[^\W\d_])")


def asked_part(question: str) -> str:
    """The sentences of ``question`` that ask (end in "?"; else its last sentence), without the
    sentences before them that describe the asker's case. The case's numbers are the asker's
    ("installed in 1995", "for its 2023 emissions"), which the law covers by a rule ("boilers
    installed after 1 January 1991 …"), so they are not premises the evidence must state.

    >>> asked_part("My standard gas boiler was installed in 1995. Can I keep running it indefinitely?")
    'Can I keep running it indefinitely?'
    >>> asked_part("What share of renewables does Greece aim for in 2040?")
    'What share of renewables does Greece aim for in 2040?'
    >>> asked_part("mein gaskessel wurde 1995 eingebaut. darf ich ihn nach art. 5 vom 1. januar 2024 betreiben?")
    'darf ich ihn nach art. 5 vom 1. januar 2024 betreiben?'
    """
    parts = _SENTENCE_BREAK.split(question.strip())
    return " ".join([p for p in parts if p.rstrip().endswith("?")] or parts[-1:])


# A question that asks whether (its asking sentence opens with an auxiliary or modal verb), in
# English and German: "Can the Fund support nuclear power?", "Darf ich ihn weiter betreiben?".
_YES_NO = re.compile(
    r"\s*(?:is|are|was|were|am|can|could|may|might|must|does|do|did|should|shall|will|would|has|have|had|"
    r"ist|sind|war|waren|kann|können|darf|dürfen|muss|müssen|soll|sollen|gilt|gelten|hat|haben|wird|werden|gibt)\b",
    re.IGNORECASE,
)


def asks_yes_no(question: str) -> bool:
    """Whether ``question`` asks yes or no, read in its asking part (:func:`asked_part`).

    >>> asks_yes_no("We're a charity. Are non-profit organisations exempt from the AI Act?")
    True
    >>> asks_yes_no("Which authority decides the appeal?"), asks_yes_no("Is there a fee, and how much is it")
    (False, True)
    """
    return bool(_YES_NO.match(asked_part(question)))


# A question that asks what a thing must hold ("What must the instructions for use contain?",
# "Which measures does our risk management have to include?", "What has to be in the contract?")
# asks for a list whole: every item of "… shall contain at least: (a) …; (b) …" answers it.
_CONTENTS_VERB = r"(?:contain|includ|cover|compris|consist\w* of|set\w* out|specif(?:y|ies|ied))\w*"
_AUXILIARY = r"(?:must|shall|should|does|do|did|will|would|can|has|have|need|needs|is|are|be)"
_ASKS_CONTENTS = re.compile(
    # an auxiliary before the verb: "Which document contains the goal?" asks for the container
    # and no clause of its own between them: "What is the best case, unless specified otherwise?"
    rf"\b(?:what|which)\b[^?.]{{0,120}}?\b{_AUXILIARY}\b(?:(?!\b(?:which|who|unless|if|when|where)\b)[^?.]){{0,80}}?"
    rf"\b{_CONTENTS_VERB}\b"
    r"|\bwhat\b[^?.]{0,60}?\b(?:be|go|goes|belong|belongs)\s+in(?:to)?\s+(?:the|a|an|each|every|its|their|our|your|this|that|such)\b"
)


def asks_contents(question: str) -> bool:
    """Whether the asking part of ``question`` asks what something must contain or include.

    >>> asks_contents("We build a screening tool. What must the instructions for use we give them contain?")
    True
    >>> asks_contents("What has to be in the contract with them?"), asks_contents("Which points does it have to cover?")
    (True, True)
    >>> asks_contents("What is the maximum fine?"), asks_contents("Does the strategy include hydrogen?")
    (False, False)
    >>> asks_contents("What share of renewables does the plan include for 2030?")  # a value, not a list
    False
    >>> asks_contents("Which AI systems listed in Annex III are exempt?")  # "listed", "specific" describe
    False
    >>> asks_contents("Which document contains the goal?"), asks_contents("What has to be in place first?")
    (False, False)
    >>> asks_contents("What is the best case, unless specified otherwise?")
    False
    """
    return bool(_ASKS_CONTENTS.search(asked_part(question).lower())) and asked_value(question) is None


def case_words(question: str) -> set[str]:
    """The content words (:func:`spr.lexical.content_words`) of the asker's case only: in the
    sentences before the asking ones (:func:`asked_part`) and not in those.

    >>> sorted(case_words("A former customer sued our firm. Must personal data be erased?"))
    ['customer', 'firm', 'former', 'our', 'sued']
    """
    asked = asked_part(question)
    return set(content_words(question)) - set(content_words(asked)) if asked != question.strip() else set()


_YEAR = re.compile(r"(?<![\w/.,-])(?:19|20)\d\d(?![\w/.,-]*\d)")


def question_years(text: str) -> set[str]:
    """The years ``text`` states (1900–2099), not numbers of acts or dates inside other numbers.

    >>> sorted(question_years("By how much does Latvia cut emissions by 2040 compared with 1990?"))
    ['1990', '2040']
    >>> question_years("Regulation (EU) 2018/1999 and 20301 tonnes"), question_years("in the 2030s")
    (set(), set())
    """
    return set(_YEAR.findall(text)) - set(re.findall(r"(?:19|20)\d\d(?=s\b)", text))


def money_kinds(text: str) -> set[str]:
    """The kinds of sum ``text`` names ("fine", "fee", "tax", "funding", "capital").

    >>> sorted(money_kinds("How much is the annual fee that essential entities pay to their CSIRT?"))
    ['fee']
    >>> sorted(money_kinds("Administrative fines of up to EUR 10 000 000")), money_kinds("What does it cost?")
    (['fine'], set())
    """
    lowered = text.lower()
    return {kind for kind, pattern in _MONEY_KINDS.items() if pattern.search(lowered)}


# "which" or "what" after a preposition and before a clause's subject relates a clause, it asks
# nothing: "Is there any situation in which the supervisor will not publish the penalty?" asks no sum.
_RELATIVE = re.compile(
    r"\b(?:in|under|for|by|on|at|to|from|with|of|through|during|after|before) (?:which|what)\b"
    r"(?= (?:the|a|an|our|your|their|its|his|her|we|you|they|it|he|she|i|this|that|these|those|such)\b)"
)


def asked_value(question: str) -> ValueKind | None:
    """The kind of value ``question`` asks for, or None when it asks for something else (a body,
    a reason, yes or no).

    >>> asked_value("Within how many days must the report be sent?")
    'duration'
    >>> asked_value("What is the maximum fine for a gatekeeper?")
    'money'
    >>> asked_value("What share of renewables does Greece aim for in 2040?")
    'percent'
    >>> asked_value("By which year does Estonia stop burning oil shale?"), asked_value("Who issues it?")
    ('time', None)
    >>> asked_value("What was the deadline for Member States to transpose the Directive?")
    'time'
    >>> asked_value("When adopting implementing acts under the AI Act, what requirements must be met?") is None  # a condition
    True
    >>> asked_value("Is there a case in which the supervisor does not publish the penalty?"), asked_value("By which year?")
    (None, 'time')
    """
    text = _RELATIVE.sub(" ", _CONDITION.sub("", " ".join(question.lower().split()), count=1))
    for kind, pattern in _ASKS:
        if pattern.search(text):
            return kind
    return None


# The unit a question asks in: "how many (million) gigawatts", "how much … capacity". A unit after
# "per" is a rate's ("the tax per MWh"), not what is asked.
_ASKED_UNITS: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = (
    (frozenset({"energy"}), re.compile(r"\bhow many (?:\w+ )?(?:(?:kilo|mega|giga|tera)?watt[- ]?hours|[kmgt]wh|toe|[kmg]toe|(?:peta|tera|giga)?joules)\b")),
    (frozenset({"power"}), re.compile(r"\bhow many (?:\w+ )?(?:(?:kilo|mega|giga|tera)?watts|[kmgt]w)\b")),
    (frozenset({"mass"}), re.compile(r"\bhow many (?:\w+ )?(?:tonnes|tons)\b")),
    (frozenset({"area"}), re.compile(r"\bhow many (?:\w+ )?(?:hectares|square kilomet(?:re|er)s)\b")),
    (frozenset({"power", "energy"}), re.compile(r"\b(?:how much|what)\b[^?]*\bcapacity\b")),
)


def asked_dimensions(question: str) -> frozenset[str]:
    """The dimensions of the unit an (English) question asks its value in; empty for none.

    >>> sorted(asked_dimensions("How many gigawatts of offshore wind does Hungary plan to install by 2030?"))
    ['power']
    >>> sorted(asked_dimensions("How much offshore wind capacity does Sweden's plan aim to have by 2030?"))
    ['energy', 'power']
    >>> asked_dimensions("How much less electricity tax per MWh do railways pay?"), asked_dimensions("How many heat pumps?")
    (frozenset(), frozenset())
    """
    text = re.sub(r"\bper \S+", " ", " ".join(question.lower().split()))
    for dimensions, pattern in _ASKED_UNITS:
        if pattern.search(text):
            return dimensions
    return frozenset()


# When something ends: "When will Estonia stop producing electricity from oil shale?" asks for the
# date of an end, and a year in a table of the plan's 2040 fuel shares does not answer it.
_ASKS_END = re.compile(
    r"\b(?:stop\w*|end|ends|ending|ended|phase[sd]? out|phasing out|phase-out|close|closes|closed|closing|closure|"
    r"shut\w*|cease\w*|exit|quit|abandon\w*|retire\w*|decommission\w*|terminat\w*|abolish\w*|expire\w*)\b"
)
_SAYS_END = re.compile(
    r"\b(?:stop\w*|end|ends|ending|ended|phase[sd]?[- ]?out|phasing[- ]?out|clos\w*|shut\w*|cease\w*|cessation|exit\w*|"
    r"quit\w*|abandon\w*|retire\w*|retirement|decommission\w*|terminat\w*|abolish\w*|expir\w*|withdraw\w*|dismantl\w*|"
    r"no longer|until|"
    r"beend\w*|ende|endet|ausstieg\w*|stilleg\w*|stillgelegt\w*|abschalt\w*|einstell\w*|auslauf\w*|ablauf\w*|au(?:ß|ss)er betrieb)\b"
)


def asks_end(question: str) -> bool:
    """Whether an (English) question asks when something ends or stops.

    >>> asks_end("When will Estonia stop producing electricity from oil shale?"), asks_end("By when must the plan be submitted?")
    (True, False)
    """
    return bool(_ASKS_END.search(question.lower()))


def says_end(text: str) -> bool:
    """Whether ``text`` speaks of an end: "phase-out … by 2038", "shut down by 2023", "until 2030",
    German "Beendigung", "Stilllegung".

    >>> says_end("the gradual phase-out of coal-fired power generation by no later than 2038"), says_end("Coal 40 % in 2040")
    (True, False)
    """
    return bool(_SAYS_END.search(text.lower()))

