"""The rule parser (no model; the parser of a KB without a trained adapter): question patterns → a labelled S-expression, no model.

It recognizes the relation phrase from the ontology's property labels and altLabels (matched on
crude stems, so "issued", "issues" and "issue" agree), takes the entity from the rest of the
question, and decides the direction from the question form:

    Who issued the National Solar Plan?               (JOIN [ issues ] [ National Solar Plan ])
    What did the National Energy Bureau establish?    (JOIN (R [ establishes ]) [ National Energy Bureau ])
    What is supported by the Notice?                  (JOIN (R [ supports ]) [ Notice ])
    Which plans does the Notice support?              (AND [ plans ] (JOIN (R [ supports ]) [ Notice ]))
    How many policies did the Bureau issue?           (COUNT (AND [ policies ] (JOIN (R [ issues ]) [ Bureau ])))
    What is the deadline of the Center?               (JOIN (R [ has deadline ]) [ Center ])
    the gender of children of X / X 's children 's gender   → a chain, innermost hop nearest X
    When ... X ...?                                   (JOIN (R [ date ]) [ X ]) first

It is a fallback: it does not paraphrase ("offspring" is not "children" unless the ontology says
so). The grounding step still tries relations against the parsed direction, with a penalty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from core.text import stem
from spr.grounding.relations import EXCLUDED
from spr.grounding.sexpr import And, Class, Count, Entity, Expr, Join, Label, Relation, to_text
from spr.parsing.candidate import ParseCandidate, first_of_each
from spr.parsing.policy_forms import policy_parse
from store.vocabulary import Term

NAME = "rules"
_WORD = re.compile(r"\w+(?:[-.:/]\w+)*|'s\b")
_STOP = frozenset(
    "of in by on at to for the a an as is be before after within under about from with least and or "
    "this that these those".split()
)
_INSIDE_NAMES = frozenset("of on for and in the to".split())  # "Decision on the Establishment of ..."
_WH = frozenset("who whom what which when where whose list name".split())
_AUX_BE = frozenset("is are was were be been being".split())
_AUX_DO = frozenset("do does did has have had will shall can could should must may might".split())
_SKIP = _STOP | _WH | _AUX_BE | _AUX_DO | {"how", "many", "much", "number", "'s", "s"}


@dataclass(frozen=True)
class _Tok:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


@dataclass(frozen=True)
class _Phrase:
    """A relation mention: token span [start, end) and the label to emit."""

    start: int
    end: int
    label: str


class RuleParser:
    """Pattern-based parser over the ontology's relation phrases. Pure given its lexicon."""

    name = NAME

    def __init__(self, properties: Mapping[str, Term]):
        phrases: dict[tuple[str, ...], set[str]] = {}
        for term in properties.values():
            if term.iri in EXCLUDED:
                continue
            for text in term.texts:
                key = tuple(stem(w) for w in _WORD.findall(text))
                if key and any(w not in _STOP for w in key):
                    phrases.setdefault(key, set()).add(term.iri)
        self.properties = properties
        # A phrase shared by several properties is emitted as written; grounding picks among them.
        self.phrases = {
            key: (properties[next(iter(iris))].label if len(iris) == 1 else " ".join(key)) for key, iris in phrases.items()
        }
        self.max_len = max((len(k) for k in self.phrases), default=0)

    def parse(self, question: str) -> list[ParseCandidate]:
        """The policy-fact shapes first (:mod:`spr.parsing.policy_forms`), then the generic ones."""
        policy = [ParseCandidate(e, to_text(e), 1.0) for e in policy_parse(question)]
        generic = self._generic(question)
        if policy:
            generic = [ParseCandidate(c.expr, c.text, c.score * 0.5) for c in generic]
        return first_of_each([*policy, *generic])

    def _generic(self, question: str) -> list[ParseCandidate]:
        toks = [_Tok(m.group(), m.start(), m.end()) for m in _WORD.finditer(question)]
        if not toks:
            return []
        stems = [stem(t.text) for t in toks]
        phrases = self._phrases(toks, stems)
        if not phrases:
            return []
        lows = [t.low for t in toks]
        counting = len(lows) > 1 and lows[0] == "how" and lows[1] in ("many", "much")
        cls_span = self._class_span(lows, phrases, counting)
        used = {i for p in phrases for i in range(p.start, p.end)} | set(range(*cls_span))
        span = _entity_span(toks, used)
        if span is None:
            return []
        entity = Entity(Label(question[toks[span[0]].start : toks[span[1] - 1].end]))
        expr = self._chain(phrases, span, lows, entity)
        if cls_span[1] > cls_span[0]:
            expr = And(Class(Label(" ".join(t.text for t in toks[cls_span[0] : cls_span[1]]))), expr)
        if counting:
            expr = Count(expr)
        out = [ParseCandidate(expr, to_text(expr), 1.0)]
        if lows[0] in ("when", "where") and not counting:
            wanted = "date" if lows[0] == "when" else "located in"
            special = Join(Relation(Label(wanted), reverse=True), entity)
            out.insert(0, ParseCandidate(special, to_text(special), 1.0))
            out[1] = ParseCandidate(out[1].expr, out[1].text, 0.5)
        return out

    # --- pieces -------------------------------------------------------------------------------
    def _phrases(self, toks: list[_Tok], stems: list[str]) -> list[_Phrase]:
        """Non-overlapping relation mentions, longest first; all-capitalized matches (inside a
        name such as "Target Of 12 GW") only when nothing lower-case matched."""
        found: list[tuple[int, bool, _Phrase]] = []
        for n in range(self.max_len, 0, -1):
            for i in range(len(toks) - n + 1):
                key = tuple(stems[i : i + n])
                if key in self.phrases:
                    capital = all(t.text[:1].isupper() for t in toks[i : i + n]) and i > 0
                    found.append((n, capital, _Phrase(i, i + n, self.phrases[key])))
        chosen: list[_Phrase] = []
        taken: set[int] = set()
        for capital_pass in (False, True):
            if chosen and capital_pass:
                break
            for _, capital, p in sorted(found, key=lambda f: (-f[0], f[2].start)):
                if capital == capital_pass and not taken & set(range(p.start, p.end)):
                    chosen.append(p)
                    taken |= set(range(p.start, p.end))
        return sorted(chosen, key=lambda p: p.start)

    def _class_span(self, lows: list[str], phrases: list[_Phrase], counting: bool) -> tuple[int, int]:
        """The answer type named after "which"/"what"/"how many" ("which plans ..."), else empty."""
        if counting:
            start = 2
        elif lows[0] in ("which", "what") and len(lows) > 1 and lows[1] not in _SKIP:
            start = 1
        else:
            return (0, 0)
        end = start
        first_rel = min(p.start for p in phrases)
        while end < len(lows) and end < first_rel and lows[end] not in _SKIP:
            end += 1
        # "what" followed by the entity itself ("What Notice ...") is not a type; keep it short.
        return (start, end) if end - start in (1, 2) else (0, 0)

    def _chain(self, phrases: list[_Phrase], span: tuple[int, int], lows: list[str], entity: Entity) -> Expr:
        """Nest the relations, nearest the entity innermost."""
        ordered = sorted(phrases, key=lambda p: min(abs(p.start - span[1]), abs(span[0] - p.end)))
        expr: Expr | Entity = entity
        for depth, p in enumerate(ordered):
            reverse = True if depth else _reverse(p, span, lows)
            expr = Join(Relation(Label(p.label), reverse), expr)
        return expr  # type: ignore[return-value]


def _reverse(p: _Phrase, span: tuple[int, int], lows: list[str]) -> bool:
    """True when the entity is the subject of the relation: (JOIN (R r) e)."""
    if p.end <= span[0]:  # relation before entity
        between = lows[p.end : span[0]]
        if "by" in between:  # "issued by X": X did it
            return True
        if "of" in between:  # "the deadline of X": X has it
            return True
        return False  # "who issued X"
    before = lows[: span[0]]
    between = lows[span[1] : p.start]
    if "'s" in between or "s" in between:
        return True  # "X 's children"
    aux = next((w for w in reversed(before) if w in _AUX_BE or w in _AUX_DO), "")
    return aux not in _AUX_BE  # "was X issued" → X is the object; "did X issue" → the subject


def _entity_span(toks: list[_Tok], used: set[int]) -> tuple[int, int] | None:
    """The longest run of tokens that are not question words, relation or class tokens; leading
    articles and trailing function words are dropped."""
    runs: list[tuple[int, int]] = []
    start = None
    for i, tok in enumerate([*toks, None]):
        free = tok is not None and i not in used and (tok.low not in _SKIP or (start is not None and tok.low in _INSIDE_NAMES))
        if free and start is None:
            start = i
        elif not free and start is not None:
            runs.append((start, i))
            start = None
    cleaned = []
    for a, b in runs:
        while b > a and toks[b - 1].low in _SKIP:
            b -= 1
        if b > a:
            cleaned.append((a, b))
    if not cleaned:
        return None
    return max(cleaned, key=lambda r: (toks[r[1] - 1].end - toks[r[0]].start, -r[0]))
