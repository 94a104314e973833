"""Does the question say the opposite of the sentences that match it?

An unanswerable question is often a near copy of a sentence with one thing turned round: "What is
one of the *least* important open questions …?" over "… is one of the *most* important open
questions …"; "deciding whether the input has a factor *more* than k" over "… *less* than k";
"bounds *dependent* of the model" over "bounds *independent* of …"; "What does *not* often yield
…" over "… often yields …"; "three finite graphs" over "two finite graphs". Word overlap and
embeddings score such a sentence as a near-perfect match, so the answer quotes it. Recognizing
textual entailment systems checked for exactly these contrasts (antonyms, negation, numbers)
between the aligned words of two texts; this module does so between a question and each
candidate sentence that holds most of its content words (:data:`ALIGNED`):

- an **antonym**: a word of the question whose opposite (:data:`_OPPOSITES`, or the word with or
  without a negating prefix: "dependent" / "independent", "common" / "uncommon") the sentence has
  instead;
- a **negation** the question makes and the sentence does not (nor says any other way: "except",
  "prohibited", "without", "only" …), or one the sentence makes right before a word of a
  wh-question that makes none;
- a **number** the question states where the sentence states another one of the same kind.

:func:`contradicted` is the verdict: every aligned sentence says the opposite (one aligned
sentence free of contrasts answers, whatever the others say), with the reason for the first.
Pure functions over strings; English only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from spr.lexical import content_words
from spr.references import without_references

ALIGNED = 0.75  # share of the question's content words a sentence holds to count as its near copy
MIN_WORDS = 4  # a question of fewer content words aligns with too much by chance, unless held whole

_PAIRS = (
    "most least", "more less", "more fewer", "many few", "maximum minimum", "highest lowest", "higher lower",
    "largest smallest", "larger smaller", "biggest smallest", "greatest least", "best worst", "better worse",
    "first last", "earliest latest", "earlier later", "before after", "increase decrease", "increased decreased",
    "increases decreases", "increasing decreasing", "rise fall", "rose fell", "gain loss", "won lost", "win lose",
    "finite infinite", "limited infinite", "single multiple", "positive negative", "north south", "east west",
    "northern southern", "eastern western", "upper lower", "inner outer", "internal external", "male female",
    "men women", "older younger", "oldest youngest", "longer shorter", "longest shortest", "stronger weaker",
    "strongest weakest", "rich poor", "richest poorest", "large small", "big small", "high low", "hot cold",
    "warm cold", "wet dry", "easy difficult", "easier harder", "success failure", "accept reject", "accepted rejected",
    "public private", "same different", "similar different", "include exclude", "included excluded",
    "import export", "imports exports", "imported exported", "buy sell", "bought sold", "top bottom", "above below",
    "inside outside", "always never", "true false", "slow fast", "slower faster", "heavy light", "deep shallow",
    "wide narrow", "ancient modern", "major minor", "majority minority", "superior inferior", "forward backward",
    "victory defeat", "birth death", "born died", "entered left", "enter leave", "start end", "started ended",
    "beginning end", "open closed", "opened closed", "allowed prohibited", "allowed forbidden", "legal illegal",
    "same opposite", "lowest highest", "lower upper", "decline increase", "declined increased", "strengthen weaken",
    "expand reduce", "expanded reduced", "add remove", "added removed",
    "fixed flexible", "fixed variable", "rigid flexible", "permanent temporary", "mandatory optional",
    "mandatory voluntary", "compulsory voluntary", "explicit implicit", "primary secondary", "urban rural",
    "domestic foreign", "supply demand", "cheap expensive", "strict lenient", "surplus deficit", "profit loss",
    "absolute relative", "active passive", "past future", "online offline", "theoretical practical",
    "abstract concrete", "simple complex", "simplest hardest", "full partial", "whole partial", "sufficient insufficient",
)
_OPPOSITES: dict[str, set[str]] = {}
for _pair in _PAIRS:
    _a, _b = _pair.split()
    _OPPOSITES.setdefault(_a, set()).add(_b)
    _OPPOSITES.setdefault(_b, set()).add(_a)

_NEGATING_PREFIXES = ("un", "non", "in", "im", "ir", "il", "dis")
_MIN_STEM = 5  # "import" is not "port" negated; "independent" is "dependent" negated
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|\d+(?:[.,]\d+)?(?:st|nd|rd|th)?")
_NEGATION = re.compile(r"\b(?:not|never|n't|no longer|cannot)\b|n't\b")
_WH = re.compile(r"\s*(?:what|which|who|whom|whose|where|when|why|how)\b")
# Ways a sentence says "not" without "not": a question's negation matches any of them.
_NEGATIVE = re.compile(
    r"\b(?:not|never|no|none|nor|neither|without|cannot|unless|except\w*|exclud\w*|exempt\w*|prohibit\w*|forbid\w*|ban(?:s|ned)?|"
    r"refrain\w*|fail\w*|lack\w*|refus\w*|unable|den(?:y|ies|ied)|absen\w*|only|other than|instead|rather|outside|beyond)\b|n't\b"
)
_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
    "ten": "10", "eleven": "11", "twelve": "12", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th",
    "seventh": "7th", "eighth": "8th", "ninth": "9th", "tenth": "10th",
}  # not "first" ("first recorded"; an opposite of "last" above) nor "second" (a unit of time)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower().replace("’", "'")))


def _stated_numbers(text: str) -> dict[str, set[str]]:
    return _numbers(_words(without_references(text)))  # "Article 58" states no number


def _numbers(words: set[str]) -> dict[str, set[str]]:
    """The numbers among ``words`` by kind: "year" (1000–2199), "ordinal" ("10th", "third"),
    "count" (other digits and number words "one" … "twelve"; "one" only as a count of its own
    is too common: "one of the …")."""
    out: dict[str, set[str]] = {"year": set(), "ordinal": set(), "count": set()}
    for word in words:
        value = _NUMBER_WORDS.get(word, word) if word != "one" else ""
        if re.fullmatch(r"\d+(?:st|nd|rd|th)", value):
            out["ordinal"].add(re.sub(r"\D", "", value))
        elif re.fullmatch(r"\d{4}", value) and 1000 <= int(value) < 2200:
            out["year"].add(value)
        elif re.fullmatch(r"\d+(?:[.,]\d+)?", value):
            out["count"].add(value)
    return out


def alignment(question: str, sentence: str) -> float:
    """The share of ``question``'s content words (stemmed) that ``sentence`` holds, itself or
    turned round (an opposite, a negating prefix added or taken away). A question of three (one
    fewer than :data:`MIN_WORDS`) aligns only when the sentence holds all three; of fewer, never.

    >>> alignment("What is one of the least important open questions?", "It is one of the most important open questions.")
    1.0
    >>> alignment("What algorithm is always practical?", "An algorithm is not always practical."), alignment("What algorithm is always fast?", "An algorithm is always practical.")
    (1.0, 0.0)
    """
    terms = set(content_words(question))
    if len(terms) < MIN_WORDS - 1:
        return 0.0
    held = terms & set(content_words(sentence))
    # A word the sentence turns round is aligned too: in "… an informal language … whose input is
    # yes" over "… a formal language … whose output is yes" the swaps are what would keep the
    # sentence from counting as a near copy.
    q, s = _words(question), _words(sentence)
    for word in q - s:
        if (_OPPOSITES.get(word, set()) & s) or _negated(word, s):
            held |= set(content_words(word)) & terms
    # Three words held at random are likelier than four: a short question must be held whole.
    return len(held) / len(terms) if len(terms) >= MIN_WORDS or held == terms else 0.0


def contrast(question: str, sentence: str) -> str | None:
    """How ``sentence`` says the opposite of ``question``, or None.

    >>> contrast("What is one of the least important open questions?", "It is one of the most important open questions.")
    "the sentence says 'most', not 'least'"
    >>> contrast("What makes the bounds dependent of the model?", "This makes the bounds independent of the model.")
    "the sentence says 'independent', not 'dependent'"
    >>> contrast("What does not often yield classes?", "Bounding time often yields classes.")
    "the question says 'not', the sentence does not"
    >>> contrast("What is decided for three finite graphs?", "Whether two finite graphs are isomorphic is decided.")
    "the sentence says '2', not '3'"
    >>> contrast("Which products are not covered?", "This Regulation shall not apply to products for defence.") is None
    True
    >>> contrast("What are intended as a practical computing technology?", "Turing machines are not intended as a practical computing technology.")
    "the sentence says 'not', the question does not"
    >>> contrast("Which machines are intended as a practical computing technology?", "Turing machines aren't intended as a practical computing technology.")
    "the sentence says 'not', the question does not"
    >>> contrast("Can the Fund support nuclear power stations?", "The Fund shall not support nuclear power stations.") is None
    True
    >>> contrast("What is the longest validity of provisional measures?", "Provisional measures shall not exceed three months.") is None
    True
    >>> contrast("What powers does Article 58 give?", "The powers of Article 16 are given to authorities.") is None
    True
    >>> contrast("What states that only problems that cannot be solved fast are feasible?", "The thesis states that only problems that can be solved fast are feasible.")
    "the question says 'not', the sentence does not"
    """
    q, s = _words(question), _words(sentence)
    for word in sorted(q - s):
        opposite = sorted((_OPPOSITES.get(word, set()) & s) - q) or sorted(_negated(word, s) - q)
        if opposite:
            return f"the sentence says '{opposite[0]}', not '{word}'"
    asked, said = question.lower().replace("’", "'"), sentence.lower().replace("’", "'")
    # A word both use other than the negation itself ("only" in "only problems that cannot …" and
    # in "only problems that can …") says nothing about the question's "not".
    own = {m.group(0) for m in _NEGATIVE.finditer(asked) if not _NEGATION.fullmatch(m.group(0))}
    if _NEGATION.search(asked) and not any(m.group(0) not in own for m in _NEGATIVE.finditer(said)):
        return "the question says 'not', the sentence does not"
    if _WH.match(asked) and not _NEGATIVE.search(asked) and _negates_asked(said, set(content_words(question))):
        # "What are intended as a practical computing technology?" over "Turing machines are not
        # intended as …": the sentence denies what the question asks about. Not for a yes/no
        # question, which a "not" may answer ("Can the Fund support nuclear power?" / "The Fund
        # shall not support: (a) nuclear …"); nor a "not" before other words, such as the
        # bounds of legal text ("shall not exceed three months", "not later than").
        return "the sentence says 'not', the question does not"
    qn, sn = _stated_numbers(question), _stated_numbers(sentence)
    for kind in qn:
        stated = sorted(qn[kind] - sn[kind])
        if stated and sn[kind] - qn[kind]:
            return f"the sentence says '{sorted(sn[kind] - qn[kind])[0]}', not '{stated[0]}'"
    return None


_NEGATED_WORDS = re.compile(r"(?:\b(?:not|never|cannot)|n't)\s+(?:(?:be|been|being|have|has|had|yet|all|always|only|so|very|as)\s+)?([a-z]+)")


def _negates_asked(sentence: str, asked: set[str]) -> bool:
    """Whether ``sentence`` (lower-cased) says "not" right before a word of the question's own
    (stemmed alike; one auxiliary or adverb between them allowed: "not be used")."""
    return any(set(content_words(m.group(1))) & asked for m in _NEGATED_WORDS.finditer(sentence))


# Besides "un-" and "non-", the prefixes negate adjectives and adverbs ("independent", "illegal",
# "incorrectly"); before a noun or verb they are part of the word ("information", "instance",
# "discover", "interest").
_ADJECTIVE = re.compile(r"(?:able|ible|ent|ant|ive|al|ite|ete|ect|ar|ic|ous|ful|ate|ed)(?:ly)?$")


def _negates(prefix: str, stem: str) -> bool:
    return len(stem) >= _MIN_STEM and (prefix in ("un", "non") or bool(_ADJECTIVE.search(stem)))


def _negated(word: str, sentence: set[str]) -> set[str]:
    """The words of ``sentence`` that are ``word`` with a negating prefix added or taken away."""
    out = {p + word for p in _NEGATING_PREFIXES if _negates(p, word) and p + word in sentence}
    for p in _NEGATING_PREFIXES:
        if word.startswith(p) and _negates(p, word[len(p) :]) and word[len(p) :] in sentence:
            out.add(word[len(p) :])
    return out


def contradicted(question: str, sentences: Sequence[str]) -> str | None:
    """Why the sentences do not answer ``question``: the candidate sentences that align with it
    (:func:`alignment` ≥ :data:`ALIGNED`) all say the opposite of it (:func:`contrast`); the reason
    is the best-aligned one's. None when no sentence aligns or one aligned sentence has no contrast.

    >>> contradicted("What is one of the least important open questions in science?",
    ...              ["P versus NP is one of the most important open questions in science.", "Other text."])
    "the sentence says 'most', not 'least'"
    """
    aligned = sorted(((alignment(question, s), i) for i, s in enumerate(sentences)), key=lambda pair: (-pair[0], pair[1]))
    reasons = []
    for share, i in aligned:
        if share < ALIGNED:
            break
        reason = contrast(question, sentences[i])
        if reason is None:
            return None
        reasons.append(reason)
    return reasons[0] if reasons else None
