"""The ``sections`` signal: a question of a kind that legal texts answer in a section of a fixed
kind is pointed to the sections of that kind.

Acts put some answers in predictable places: when an act applies or must be transposed in its
final article ("Entry into force and application", "Transposition"; German "Inkrafttreten"),
what a breach costs under "Penalties" / "Administrative fines" ("Bußgeldvorschriften"), what a
term means under "Definitions" ("Begriffsbestimmungen"), what it repeals or amends under
"Repeal" / "Amendments to …". A question such as "From which date do the AI Act's bans take
effect?" shares few words and little meaning with "This Regulation shall apply from 2 August
2026. However: (a) Chapters I and II shall apply from 2 February 2025", so the other signals often
rank that article below the act's articles about the bans themselves.

When a question asks one of these kinds (:data:`KINDS`, English and German cues), the signal
ranks the chunks whose section label names that kind by their cosine with the question (the
dense index's best window), among the acts of the other signals' top chunks: it runs after them
(``second_stage``), and a penalty question about one act is not pointed to another act's
penalties. A chunk's section label is its innermost heading, or in a document without headings
the start of its text, where corpora of one article per record carry the article's title. A
question of no such kind gets an empty ranking: the signal then adds nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spr.retrieval.fusion import Fused, Ranked
from store.base import RDFStore
from store.units import Unit, read_units
from store.vocab import PKB

LABEL_CHARS = 60  # of a chunk's text that count as its title (one-article-per-record corpora)
MAX_MATCHED = 2000  # section chunks scored per question (a KB of many acts has one per act and kind)

Cosines = Callable[[str, list[str]], dict[str, float]]  # (question, chunk IRIs) -> cosine per chunk


@dataclass(frozen=True)
class Kind:
    """A kind of section: the questions that ask for it and the section labels that name it."""

    name: str
    question: re.Pattern[str]
    section: re.Pattern[str]


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


# "apply to" / "applicable to" ask about scope (whom an act covers), not about dates
_APPLY = r"(?:apply|applies|applied|applicable)(?! to\b)|take effect|takes effect|took effect|in force|transpos\w*|national law"

KINDS: tuple[Kind, ...] = (
    Kind(
        "entry into force",
        _any(
            r"\b(?:from|since|as of|as from) (?:when|what date|which date)\b",  # "by when" asks any deadline: only with _APPLY
            rf"\bwhen\b[^?]*\b(?:{_APPLY})\b",
            rf"\b(?:what|which) (?:date|day|year)\b[^?]*\b(?:{_APPLY})\b",
            rf"\b(?:deadline|date)\b[^?]*\b(?:{_APPLY}|application)\b",
            r"\btranspos\w*",
            r"\b(?:entry|enters?|entered) into force\b",
            r"\b(?:ab|seit|bis) wann\b", r"\binkrafttreten\b", r"\bin kraft\b", r"\bwann\b[^?]*\b(?:gilt|gelten|anzuwenden)\b",
        ),
        _any(r"\bentry into force\b", r"\btransposition\b", r"\bdate of application\b", r"\binkrafttreten\b", r"\bau(?:ß|ss)erkrafttreten\b"),
    ),
    Kind(
        "penalties",
        _any(r"\b(?:fines?|fined|penalt(?:y|ies)|sanctions?|punish\w*)\b", r"\b(?:bu(?:ß|ss)geld\w*|geldbu(?:ß|ss)e\w*|strafe\w*|sanktion\w*)"),
        _any(r"\bpenalt(?:y|ies)\b", r"\bfines\b", r"\bsanctions\b", r"bu(?:ß|ss)geld", r"\bstrafvorschrift", r"\bsanktion"),
    ),
    Kind(
        "definitions",
        _any(
            r"\bwhat (?:does|do)\b[^?]*\bmean\b", r"\bmeant by\b", r"\bmeaning of\b", r"\bdefin(?:ed|ition|itions) (?:of|as|in)\b", r"\bhow (?:is|are|does|do)\b[^?]*\bdefine",
            r"\bwhat counts as\b", r"\bim sinne\b", r"\bbedeutet\b", r"\bbegriffsbestimmung",
        ),
        _any(r"\bdefinitions?\b", r"\bbegriffsbestimmung"),
    ),
    Kind(
        "repeal and amendments",
        _any(r"\brepeal\w*", r"\bamend\w*", r"\baufheb\w*", r"\bau(?:ß|ss)er kraft\b"),
        _any(r"\brepeal\b", r"\bamendments? (?:to|of)\b", r"\baufhebung\b"),
    ),
)


def question_kinds(question: str) -> tuple[Kind, ...]:
    """The section kinds ``question`` asks for (usually none).

    >>> [k.name for k in question_kinds("From which date do the AI Act's bans take effect?")]
    ['entry into force']
    >>> [k.name for k in question_kinds("What fine ceiling must national law allow for essential entities?")]
    ['penalties']
    >>> question_kinds("Who must register a heat pump?"), question_kinds("When does the GDPR apply to a processor outside the Union?")
    ((), ())
    """
    return tuple(kind for kind in KINDS if kind.question.search(question))


def section_label(path: tuple[str, ...], opening: str) -> str:
    """What names a chunk's section: its own (innermost) heading — not its chapter's: "CHAPTER I
    SUBJECT MATTER, SCOPE AND DEFINITIONS" also holds "Scope"; a chunk of a document without
    headings, the start of its document's text (an article stored as one record begins with its
    title: "Penalties 1. Member States …"; every chunk of it shares that label).

    >>> section_label(("European Climate Law", "CHAPTER V Final provisions", "Article 14 Entry into force"), "Regulation (EU) …")
    'Article 14 Entry into force'
    >>> section_label(("GDPR Article 84",), "Penalties 1. Member States shall lay down the rules on other penalties …")
    'Penalties 1. Member States shall lay down the rules on other'
    """
    return path[-1] if len(path) > 1 else opening[:LABEL_CHARS]


def _openings(store: RDFStore, units: Sequence[Unit]) -> dict[str, str]:
    """Document IRI → the text of its first chunk (by start offset)."""
    rows = store.select(f"SELECT ?c ?s WHERE {{ ?c a <{PKB}Chunk> ; <{PKB}startOffset> ?s }}").rows
    start = {row["c"].value: int(row["s"].value) for row in rows}  # type: ignore[union-attr]
    first: dict[str, tuple[int, str]] = {}
    for u in units:
        at = start.get(u.iri, 0)
        if u.document not in first or at < first[u.document][0]:
            first[u.document] = (at, u.text)
    return {doc: text for doc, (_, text) in first.items()}


_ARTICLE_SUFFIX = re.compile(r"\s*(?:\b(?:art(?:icle|ikel)?\.?)|§+)\s*\d+\s*\w?\s*$", re.IGNORECASE)
ANCHORS = 5  # the first stage's top chunks whose acts a section must belong to
FAVOURED = 3  # the signal's first chunks the rescoring favours (spr.retrieval.rescore) and extractive answers quote first


def favoured_section(ranks: Sequence[tuple[str, int]]) -> bool:
    """Whether an evidence item's fusion ranks put it among this signal's first :data:`FAVOURED`.

    >>> favoured_section((("dense", 9), ("sections", 2))), favoured_section((("sections", 4),))
    (True, False)
    """
    return any(name == SectionSignal.name and rank <= FAVOURED for name, rank in ranks)


def act_of(title: str) -> str:
    """The act a document belongs to, from its title: the title without a trailing article number
    (a corpus of one article per record titles them "DORA Article 35").

    >>> act_of("DORA Article 35"), act_of("Regulation (EU) 2021/1119 (European Climate Law)"), act_of("EnWG § 95")
    ('DORA', 'Regulation (EU) 2021/1119 (European Climate Law)', 'EnWG')
    """
    return _ARTICLE_SUFFIX.sub("", title).strip()


class SectionSignal:
    """Ranks the chunks of the sections a question asks for (:func:`question_kinds`) by cosine,
    among the acts of the first stage's top :data:`ANCHORS` chunks (a penalty question about DORA
    is not pointed to the AI Act's penalties). The labels are read from the store on first use
    (one query; thread-safe), and each kind's chunks found once."""

    name = "sections"
    second_stage = True  # runs after the other signals: their top chunks name the acts

    def __init__(self, store: RDFStore, cosines: Cosines):
        self.store = store
        self.cosines = cosines
        self._labels: dict[str, str] | None = None
        self._acts: dict[str, str] = {}  # chunk IRI -> its act (act_of its document title)
        self._by_kind: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def labels(self) -> dict[str, str]:
        """Chunk IRI → its :func:`section_label`."""
        with self._lock:
            if self._labels is None:
                units = read_units(self.store)
                openings = _openings(self.store, units)
                self._labels = {u.iri: section_label(u.path, openings.get(u.document, u.text)) for u in units}
                self._acts = {u.iri: act_of(u.path[0]) if u.path else u.document for u in units}
                self._by_kind = {k.name: [iri for iri, label in self._labels.items() if k.section.search(label)] for k in KINDS}
            return self._labels

    def rank(self, question: str, depth: int, first: Sequence[Fused] = ()) -> list[Ranked]:
        kinds = question_kinds(question)
        if not kinds:
            return []
        self.labels()
        matched = list(dict.fromkeys(iri for k in kinds for iri in self._by_kind[k.name]))
        if first:
            acts = {self._acts.get(f.chunk) for f in first[:ANCHORS]}
            matched = [iri for iri in matched if self._acts.get(iri) in acts]
        matched = matched[:MAX_MATCHED]
        if not matched:
            return []
        cos = self.cosines(question, matched)
        order = sorted((c for c in matched if c in cos), key=lambda c: (-cos[c], c))
        return [Ranked(c, cos[c]) for c in order[:depth]]
