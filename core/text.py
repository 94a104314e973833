"""English text helpers shared by indexing and answering: sentence splitting and crude morphology.

Both are rule-based and deterministic. The morphology is just enough for matching policy text
against ontology labels ("issues", "issued", "issuing" against "issue"); it is not a lemmatizer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

# --- sentences ----------------------------------------------------------------------------------

# Words that end in a full stop without ending a sentence: legal references ("Art. 5",
# "Regulation (EU) No. 2021/1119", "p. 12") and Latin ("e.g.", "i.e.", "cf.", "vs."). Case matters:
# "no." at the end of a sentence is a word, "No. 5" a number.
ABBREVIATIONS = ("No.", "Nos.", "Art.", "Arts.", "para.", "p.", "pp.", "cf.", "e.g.", "i.e.", "vs.")
# The lookbehinds come after the punctuation so that they run only there, not at every position.
_NOT_ABBREVIATION = "".join(rf"(?<!\b{re.escape(a)})" for a in ABBREVIATIONS)
# A cut falls after a line break, or after . ! ? ; followed by a blank (";" too: legal sub-clauses
# read as sentences). With a capital required, the next word must start with a capital or a digit,
# optionally after an opening quote or bracket: a full stop before a lower-case word is more likely
# an abbreviation nobody listed ("approx. the") than a sentence end.
_CUT_ANY = re.compile(r"\n(?:[ \t]*\n)*|[.!?;](?=\s)" + _NOT_ABBREVIATION)
_CUT_CAPITAL = re.compile(r"\n(?:[ \t]*\n)*|[.!?;](?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])" + _NOT_ABBREVIATION)
# A line that a hard-wrapped text (German laws at 72 columns, PDF text) broke mid-sentence: the line
# before ends no clause and is not short (a heading), or the next goes on in lower case. A new
# block never continues one: a Markdown heading, table row or bullet.
_CLAUSE_END = (".", "!", "?", ":", ";")
# An inline list, "… shall be prohibited: (a) …; (b) …; and (c) …" on one line as EUR-Lex plain
# text writes them, is cut before each item (after the lead-in's colon, after each item's ";",
# "; and", "; or"), as a list on separate lines is cut at its line breaks.
_CUT_ITEM = re.compile(r":(?=\s+\((?:a|i|1)\)\s)|;(?:\s+(?:and/or|and|or))?(?=\s+\((?:[a-z]{1,4}|\d{1,3})\)\s)")
_NEW_BLOCK = re.compile(r"[ \t]*(?:#|\||[-*\u2022]\s)")
WRAPPED_LINE_MIN = 40  # characters of the line before; shorter lines are headings ("Article 5")
# "bis zum 31. März", "on 1. January": a day, not a sentence end.
_MONTHS = re.compile(
    r"\s+(?:Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember|"
    r"January|February|March|May|June|July|October|December)\b"
)
_DAY = re.compile(r"(?<![\d.])\d{1,2}$")


def _continues(text: str, cut: re.Match[str]) -> bool:
    """Whether the sentence goes on across ``cut``: a single line break inside a wrapped sentence,
    or a day's full stop before a month."""
    a, b = cut.start(), cut.end()
    if text[a] == ".":
        return bool(_DAY.search(text, max(0, a - 3), a)) and bool(_MONTHS.match(text, b))
    if text[a] != "\n" or text.count("\n", a, b) > 1:
        return False  # a sentence end, or a blank line
    before = text[text.rfind("\n", 0, a) + 1 : a].strip()
    end = text.find("\n", b)
    after = text[b : end if end >= 0 else len(text)]
    if before.endswith(".") and _DAY.search(before[:-1][-3:]) and _MONTHS.match(" " + after):
        return True  # "bis zum 31." / "März"
    if not before or before.endswith(_CLAUSE_END) or before.startswith(("#", "|")) or not after.strip():
        return False
    if _NEW_BLOCK.match(after):
        return False
    return after.lstrip()[:1].islower() or len(before) >= WRAPPED_LINE_MIN


def sentence_spans(text: str, *, require_capital: bool = True, trim: bool = True, items: bool = False) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the sentences and lines of ``text``, in order.

    A sentence ends at a line break and at . ! ? or ; before a blank, except after the
    :data:`ABBREVIATIONS` and a day before a month ("31. März"); with ``require_capital`` (the
    default) only when the next word starts with a capital or a digit. A single line break inside a
    hard-wrapped sentence is no end: the line before ends no clause and is at least
    :data:`WRAPPED_LINE_MIN` characters long (shorter: a heading), or the next line goes on in
    lower case; a Markdown heading, table row or bullet always starts anew. With ``items`` the
    lead-in and the items of an inline list are apart too. With ``trim`` (the default) the spans exclude surrounding blanks and
    blank lines are no sentence; without it the spans tile the text from its first sentence on:
    each runs from the end of the one before, and blank lines join the sentence before them.

    >>> wrapped = "(1) Die Emissionen werden im Vergleich zum Jahr 1990\\nschrittweise gemindert.\\nArticle 5\\nPenalties"
    >>> [wrapped[a:b] for a, b in sentence_spans(wrapped)]
    ['(1) Die Emissionen werden im Vergleich zum Jahr 1990\\nschrittweise gemindert.', 'Article 5', 'Penalties']
    >>> text = "See Art. 5. It applies; e.g. to grids.\\n\\nNext"
    >>> [text[a:b] for a, b in sentence_spans(text)]
    ['See Art. 5.', 'It applies; e.g. to grids.', 'Next']
    >>> [text[a:b] for a, b in sentence_spans(text, require_capital=False, trim=False)]
    ['See Art. 5.', ' It applies;', ' e.g. to grids.\\n\\n', 'Next']
    >>> inline = "It shall not support: (a) nuclear power stations; (b) tobacco; and (c) fossil fuels. Next."
    >>> [inline[a:b] for a, b in sentence_spans(inline, items=True)]
    ['It shall not support:', '(a) nuclear power stations;', '(b) tobacco; and', '(c) fossil fuels.', 'Next.']
    """
    cut = _CUT_CAPITAL if require_capital else _CUT_ANY
    ends = [m.end() for m in cut.finditer(text) if not _continues(text, m)]
    if items:
        ends = sorted({*ends, *(m.end() for m in _CUT_ITEM.finditer(text))})
    spans: list[tuple[int, int]] = []
    start = 0
    for end in [*ends, len(text)]:
        if text[start:end].strip():
            spans.append((start, end))
        elif spans:
            spans[-1] = (spans[-1][0], end)
        start = end
    if not trim:
        return spans
    out = []
    for a, b in spans:
        piece = text[a:b]
        a += len(piece) - len(piece.lstrip())
        out.append((a, a + len(piece.strip())))
    return out


# How an inline list's items are read (:func:`item_readings`); a new value makes cached
# evaluation KBs embed them again (``spr.eval.runner``).
INLINE_ITEMS = "lead-in + item"
_ENUMERATED = re.compile(r"\((?:[a-z]{1,4}|\d{1,3})\)\s")


def inline_list(sentence: str) -> tuple[tuple[int, int], list[tuple[int, int]]] | None:
    """The lead-in and item spans of ``sentence`` when it is an inline list of at least two items
    (":" before "(a)", ";" before each next item), else None.

    >>> s = "It shall not support: (a) nuclear power stations; (b) tobacco; and (c) fossil fuels."
    >>> lead, items = inline_list(s)
    >>> s[lead[0]:lead[1]], [s[a:b] for a, b in items]
    ('It shall not support:', ['(a) nuclear power stations;', '(b) tobacco; and', '(c) fossil fuels.'])
    >>> inline_list("Point (a) of Article 5 applies."), inline_list("Two: (a) one.")
    (None, None)
    """
    if not _CUT_ITEM.search(sentence):  # most sentences: no list, no splitting (the stage asks of every one)
        return None
    spans = sentence_spans(sentence, items=True)
    if len(spans) < 3 or not sentence[spans[0][0] : spans[0][1]].endswith(":"):
        return None
    items = spans[1:]
    if not all(_ENUMERATED.match(sentence, a) for a, _ in items):
        return None
    return spans[0], items


def item_readings(sentence: str) -> list[str]:
    """How each item of an inline list sentence is read when it is scored on its own: the lead-in,
    then the item (an item alone loses what it is: "(a) the processing is carried out by a public
    authority" says nothing of a data protection officer). Empty for any other sentence.

    >>> item_readings("It shall not support: (a) nuclear power stations; (b) tobacco.")
    ['It shall not support: (a) nuclear power stations;', 'It shall not support: (b) tobacco.']
    """
    found = inline_list(sentence)
    if found is None:
        return []
    (a, b), items = found
    return [f"{sentence[a:b]} {sentence[s:e]}" for s, e in items]


def split_sentences(text: str, *, require_capital: bool = True) -> list[str]:
    """The sentences of ``text`` (see :func:`sentence_spans`), blanks trimmed.

    >>> split_sentences("Regulation (EU) No. 2021/1119 applies. Targets: 12 GW; see p. 4.")
    ['Regulation (EU) No. 2021/1119 applies.', 'Targets: 12 GW; see p. 4.']
    """
    return [text[a:b] for a, b in sentence_spans(text, require_capital=require_capital)]


# --- morphology ---------------------------------------------------------------------------------

# The one irregular-verb table: base → (simple past, past participle). Verbs of the ontologies'
# labels ("build", "set up", "lay down", "undertake") and of policy prose. "find" is left out on
# purpose: its past "found" is also a verb of the ontologies ("found" = establish, regular).
IRREGULAR_VERBS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "bear": ("bore", "borne"), "bring": ("brought", "brought"), "build": ("built", "built"),
    "choose": ("chose", "chosen"), "draw": ("drew", "drawn"), "give": ("gave", "given"), "have": ("had", "had"),
    "hold": ("held", "held"), "keep": ("kept", "kept"), "lay": ("laid", "laid"), "lead": ("led", "led"),
    "make": ("made", "made"), "meet": ("met", "met"), "pay": ("paid", "paid"), "put": ("put", "put"),
    "seek": ("sought", "sought"), "send": ("sent", "sent"), "set": ("set", "set"), "show": ("showed", "shown"),
    "spend": ("spent", "spent"), "strive": ("strove", "striven"), "take": ("took", "taken"),
    "undertake": ("undertook", "undertaken"), "withdraw": ("withdrew", "withdrawn"), "write": ("wrote", "written"),
})  # fmt: skip
_IRREGULAR_THIRD = MappingProxyType({"be": "is", "have": "has", "do": "does", "go": "goes"})
_THIRD_TO_BASE = MappingProxyType({third: base for base, third in _IRREGULAR_THIRD.items()})
_PAST_TO_BASE = MappingProxyType({form: base for base, forms in IRREGULAR_VERBS.items() for form in forms})
_VOWELS = "aeiou"
# One syllable ending consonant-vowel-consonant doubles its consonant: "set" → "setting", "ban" →
# "banned" (not w, x, y: "fix" → "fixing"; "y" is a vowel before that: "system"). Longer verbs
# stressed at the end ("submit") are not caught: "refer" → "refered" is a known miss, but a rule
# that doubled them would double "offer" too.
_DOUBLES = re.compile(r"[^aeiouy]+[aeiou][^aeiouwxy]")


def _consonant_y(word: str) -> bool:
    return word.endswith("y") and word[-2:-1] not in _VOWELS


def _add_s(word: str) -> str:
    """The -s form, the same spelling for plural nouns and third-person verbs."""
    if _consonant_y(word):
        return word[:-1] + "ies"
    if word.endswith(("s", "sh", "ch", "x", "z")):
        return word + "es"
    return word + "s"


def _strip_s(word: str) -> str:
    """Undo :func:`_add_s` where that is safe; any other word is returned as it is. "-us" and "-is"
    are kept ("bus", "status", "analysis") unless they are "-aus"/"-eus" ("bureaus")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and (word.endswith(("aus", "eus")) or not word.endswith(("ss", "us", "is"))):
        return word[:-1]
    return word


@lru_cache(maxsize=65536)
def singular(noun: str) -> str:
    """The lower-cased singular of a noun, for matching head nouns against cue words.

    >>> [singular(w) for w in ("Bureaus", "authorities", "taxes", "bus", "analysis", "children")]
    ['bureau', 'authority', 'tax', 'bus', 'analysis', 'children']
    """
    return _strip_s(noun.lower())


def plural(noun: str) -> str:
    """The plural of a noun (regular nouns only).

    >>> [plural(w) for w in ("policy", "agency", "tax", "branch", "plan", "day")]
    ['policies', 'agencies', 'taxes', 'branches', 'plans', 'days']
    """
    return _add_s(noun)


def third_person(verb: str) -> str:
    """The third person singular of a base verb.

    >>> [third_person(v) for v in ("issue", "apply", "establish", "focus", "have", "deploy")]
    ['issues', 'applies', 'establishes', 'focuses', 'has', 'deploys']
    """
    return _IRREGULAR_THIRD.get(verb) or _add_s(verb)


def verb_base(verb: str) -> str:
    """The base of a third-person verb (the inverse of :func:`third_person`); any other word is
    returned as it is, so ``verb_base(w) != w`` tells a third person. "-ses" is read as "-se" +
    "s" ("uses", "imposes"), so a base ending in "-s" does not come back ("focuses" → "focuse").

    >>> [verb_base(v) for v in ("issues", "applies", "establishes", "has", "set", "children")]
    ['issue', 'apply', 'establish', 'have', 'set', 'children']
    """
    return _THIRD_TO_BASE.get(verb) or _strip_s(verb)


def _regular_ed(verb: str) -> str:
    if _consonant_y(verb):
        return verb[:-1] + "ied"
    if verb.endswith("e"):
        return verb + "d"
    return verb + verb[-1] + "ed" if _DOUBLES.fullmatch(verb) else verb + "ed"


def past_tense(verb: str) -> str:
    """The simple past of a base verb ("Who gave ...?").

    >>> [past_tense(v) for v in ("issue", "apply", "give", "found", "ban")]
    ['issued', 'applied', 'gave', 'founded', 'banned']
    """
    return IRREGULAR_VERBS[verb][0] if verb in IRREGULAR_VERBS else _regular_ed(verb)


def past_participle(verb: str) -> str:
    """The past participle of a base verb ("... is given by ...").

    >>> [past_participle(v) for v in ("issue", "apply", "give", "set", "undertake")]
    ['issued', 'applied', 'given', 'set', 'undertaken']
    """
    return IRREGULAR_VERBS[verb][1] if verb in IRREGULAR_VERBS else _regular_ed(verb)


def present_participle(verb: str) -> str:
    """The -ing form of a base verb.

    >>> [present_participle(v) for v in ("issue", "set", "aim", "see", "tie", "establish")]
    ['issuing', 'setting', 'aiming', 'seeing', 'tying', 'establishing']
    """
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith("ee"):
        return verb[:-1] + "ing"
    return verb + verb[-1] + "ing" if _DOUBLES.fullmatch(verb) else verb + "ing"


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude lower-cased stem: inflections of one word meet ("issue", "issues", "issued",
    "issuing" → "issu"), irregular past forms meet their base ("built" → "build"). For matching
    only; the stem is often not a word.

    >>> [stem(w) for w in ("issue", "issues", "issued", "issuing", "Policies", "policy", "built")]
    ['issu', 'issu', 'issu', 'issu', 'polici', 'polici', 'build']
    >>> {stem(w) for w in ("exceed", "exceeds", "exceeded", "exceeding")}
    {'exceed'}
    >>> [stem(w) for w in ("2000", "50,000", "submitted", "submits")]
    ['2000', '50,000', 'submit', 'submit']
    """
    w = word.lower()
    w = _PAST_TO_BASE.get(w, w)
    if len(w) <= 3 or any(c.isdigit() for c in w):
        return w  # "2000" is not "200" doubled
    if w.endswith(("ies", "ied")):
        w = w[:-3] + "i"
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif w.endswith("ed") and not w.endswith("eed") and len(w) > 4:  # "exceed" is no past tense
        w = w[:-2]
    elif w.endswith("es") and len(w) > 4:
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    if w.endswith("y"):
        w = w[:-1] + "i"
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "submitt" → "submit"
    return w


# --- text as readers and indexes see it -----------------------------------------------------------------
_MD_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.M)
_MD_HEADING_INLINE = re.compile(r"(?<=\S)[ \t]+#{1,6}[ \t]+(?=\S)")  # lines the source joined
# Labels run to 40 characters in EUR-Lex and gesetze-im-internet exports
# ("[^ntr14-L_2021172EN.01005301-E0014]", "[^F807051_1_BJNR197010005BJNE005007118]").
_FOOTNOTE_REF = re.compile(r"\s?\(\[\^[^\]\s]{1,64}\]\)|\s?\[\^[^\]\s]{1,64}\](?!:)")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_SPACES = re.compile(r"[ \t]{2,}")


def reading_text(text: str) -> str:
    """``text`` without source markup: Markdown heading marks ("#### Article 1 ##### Subject
    matter"), footnote references ("([^E0001])", "[^3]") and bold marks. What embedders, BM25 and
    readers see; the stored text (and every character offset) stays the source's.

    >>> reading_text("#### Article 1 ##### Subject matter\\nRegulation (EU) 2018/1999 ([^E0001]) applies.")
    'Article 1 Subject matter\\nRegulation (EU) 2018/1999 applies.'
    >>> reading_text("the Council [^ntr14-L_2021172EN.01005301-E0014]. Gesetz [^F807051_1_BJNR197010005BJNE005007118] gilt.")
    'the Council. Gesetz gilt.'
    """
    out = _FOOTNOTE_REF.sub("", text)
    out = _MD_HEADING_INLINE.sub(" ", _MD_HEADING_LINE.sub("", out))
    out = _EMPHASIS.sub(r"\2", out)
    return _SPACES.sub(" ", out).strip()


def word_windows(text: str, max_words: int, overlap: int = 0) -> list[str]:
    """``text`` cut into windows of at most ``max_words`` whitespace-separated words, each
    starting ``max_words - overlap`` words after the previous: so an embedder with a token limit
    sees the whole text, not just its head. A text that fits is one window.

    >>> word_windows("a b c d e", 2, 1)
    ['a b', 'b c', 'c d', 'd e']
    >>> word_windows("a b", 5)
    ['a b']
    """
    if max_words <= 0 or overlap < 0 or overlap >= max_words:
        raise ValueError("need 0 <= overlap < max_words")
    words = text.split()
    if len(words) <= max_words:
        return [" ".join(words)] if words else []
    step = max_words - overlap
    out = []
    for start in range(0, len(words), step):
        out.append(" ".join(words[start : start + max_words]))
        if start + max_words >= len(words):
            break
    return out
