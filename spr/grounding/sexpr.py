"""S-expressions of the GrailQA / ChatKBQA grammar: a typed AST, a parser and a printer.

    (JOIN r x)          {y | (y r x)}                  (JOIN (R r) x)   {y | (x r y)}
    (AND a b)           a ∩ b                          (COUNT e)        |e|
    (ARGMAX e r)        members of e with the largest r; ARGMIN the smallest
    (lt r v) (le r v) (gt r v) (ge r v)   {x | (x r w), w < v ...}
    (TC e r year)       members of e whose r falls in that year

A reference to a KB term is one of ``[ a label ]`` (before linking), ``<absolute-iri>`` or a
prefixed name of a well-known prefix (``pkb:issues``). Values are numbers (``12``, ``3.5``), dates
(``2025-01-20``), date-times, quoted strings (``"a \\"b\\""``) or typed literals
(``"2025"^^xsd:gYear``). Atoms are typed by position: the object of a JOIN is an
:class:`Entity` (or a :class:`Value`), an atom where a set is expected (AND, ARGMAX, TC) is a
:class:`Class`, a relation slot holds a :class:`Relation`.

``to_text(parse(s))`` is the canonical form of ``s``: operators in their canonical case, single
spaces, labels with collapsed whitespace. Malformed input raises :class:`SExprError` (an
``InputError``) naming the character position.

    >>> from spr.grounding.sexpr_reader import parse
    >>> to_text(parse("(count (join (r [supports ])  [ Notice on  PV ]))"))
    '(COUNT (JOIN (R [ supports ]) [ Notice on PV ]))'
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal as TypingLiteral

from core.errors import InputError
from store.terms import literal
from store.vocab import PREFIXES, XSD

MAX_LENGTH = 4000  # characters; a parser never needs more, and it bounds the work on hostile input
MAX_DEPTH = 24  # nesting; guards the recursive descent


class SExprError(InputError):
    """Malformed S-expression. ``position`` is the 0-based character offset of the problem."""

    def __init__(self, message: str, position: int, text: str):
        self.position = position
        snippet = text[max(0, position - 20) : position + 20].replace("\n", " ")
        super().__init__(f"invalid S-expression at position {position}: {message} (near {snippet!r})")


# --- AST -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Label:
    """An unlinked name, ``[ text ]``; ``text`` has collapsed whitespace."""

    text: str


@dataclass(frozen=True)
class Iri:
    """A grounded KB term (an absolute IRI, validated)."""

    value: str


Ref = Label | Iri


@dataclass(frozen=True)
class Entity:
    ref: Ref


@dataclass(frozen=True)
class Class:
    """A type constraint: the instances of the class (and of its subclasses)."""

    ref: Ref


@dataclass(frozen=True)
class Relation:
    """``reverse`` is the ``(R r)`` form: follow the relation from subject to object."""

    ref: Ref
    reverse: bool = False


@dataclass(frozen=True)
class Value:
    """A literal: ``lexical`` form and an XSD datatype local name (integer, decimal, date, ...)."""

    lexical: str
    datatype: str


@dataclass(frozen=True)
class Join:
    relation: Relation
    arg: Expr | Entity | Value


@dataclass(frozen=True)
class And:
    left: Expr | Class
    right: Expr | Class


@dataclass(frozen=True)
class Count:
    arg: Expr | Class


@dataclass(frozen=True)
class Arg:
    op: TypingLiteral["ARGMAX", "ARGMIN"]
    arg: Expr | Class
    relation: Relation


@dataclass(frozen=True)
class Compare:
    op: TypingLiteral["lt", "le", "gt", "ge"]
    relation: Relation
    value: Value


@dataclass(frozen=True)
class TC:
    arg: Expr | Class
    relation: Relation
    year: Value


Expr = Join | And | Count | Arg | Compare | TC
SetArg = Expr | Class

COMPARISONS = ("lt", "le", "gt", "ge")


# --- printing --------------------------------------------------------------------------------------
def to_text(node: Expr | Entity | Class | Relation | Value | Ref) -> str:
    """The canonical text of a node (for a whole query, of the expression)."""
    match node:
        case Label(text):
            return f"[ {_escape_label(text)} ]"
        case Iri(value):
            return _iri_text(value)
        case Entity(ref) | Class(ref):
            return to_text(ref)
        case Relation(ref, reverse):
            return f"(R {to_text(ref)})" if reverse else to_text(ref)
        case Value():
            return _value_text(node)
        case Join(relation, arg):
            return f"(JOIN {to_text(relation)} {to_text(arg)})"
        case And(left, right):
            return f"(AND {to_text(left)} {to_text(right)})"
        case Count(arg):
            return f"(COUNT {to_text(arg)})"
        case Arg(op, arg, relation):
            return f"({op} {to_text(arg)} {to_text(relation)})"
        case Compare(op, relation, value):
            return f"({op} {to_text(relation)} {to_text(value)})"
        case TC(arg, relation, year):
            return f"(TC {to_text(arg)} {to_text(relation)} {to_text(year)})"
    raise TypeError(f"not an S-expression node: {node!r}")


def _escape_label(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]").replace("[", "\\[")


LOCAL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _iri_text(value: str) -> str:
    for prefix, ns in PREFIXES.items():
        if value.startswith(ns) and LOCAL_NAME.fullmatch(value[len(ns) :]):
            return f"{prefix}:{value[len(ns):]}"
    return f"<{value}>"


NUMBER = re.compile(r"-?\d+(\.\d+)?")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?")
_BARE = {"integer": re.compile(r"-?\d+"), "decimal": re.compile(r"-?\d+\.\d+"), "date": DATE, "dateTime": DATETIME}


def _value_text(value: Value) -> str:
    bare = _BARE.get(value.datatype)
    if bare is not None and bare.fullmatch(value.lexical):
        return value.lexical
    quoted = '"' + value.lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return quoted if value.datatype == "string" else f"{quoted}^^{_iri_text(_datatype_iri(value.datatype))}"


def _datatype_iri(datatype: str) -> str:
    return datatype if ":" in datatype else XSD + datatype


_LEXICAL = {
    "integer": re.compile(r"[+-]?\d+"),
    "decimal": re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)"),
    "double": re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|INF|-INF|NaN"),
    "gYear": re.compile(r"-?\d{4,}(Z|[+-]\d{2}:\d{2})?"),
    "boolean": re.compile(r"true|false|1|0"),
}


def value_term(value: Value):
    """The value as a validated pyoxigraph Literal (InputError if the lexical form does not fit
    its datatype: pyoxigraph accepts ill-typed literals, which would silently compare as errors)."""
    pattern = _LEXICAL.get(value.datatype)
    ok = pattern.fullmatch(value.lexical) if pattern else True
    if value.datatype in ("date", "dateTime"):
        try:
            if value.datatype == "date":
                dt.date.fromisoformat(value.lexical)
            else:
                dt.datetime.fromisoformat(value.lexical.replace("Z", "+00:00"))
        except ValueError:
            ok = False
    if not ok:
        raise InputError(f"{value.lexical!r} is not a valid xsd:{value.datatype}")
    return literal(value.lexical, datatype=value.datatype)


# --- inspection ------------------------------------------------------------------------------------
def labels(node: Expr | Entity | Class | Relation | Value) -> list[tuple[str, str]]:
    """Every unlinked label with its role ('entity', 'class', 'relation'), in reading order."""
    out: list[tuple[str, str]] = []

    def visit(n) -> None:
        match n:
            case Entity(Label(t)):
                out.append(("entity", t))
            case Class(Label(t)):
                out.append(("class", t))
            case Relation(Label(t), _):
                out.append(("relation", t))
            case Join(r, a):
                visit(r), visit(a)
            case And(a, b):
                visit(a), visit(b)
            case Count(a):
                visit(a)
            case Arg(_, a, r) | TC(a, r, _):
                visit(a), visit(r)
            case Compare(_, r, _):
                visit(r)

    visit(node)
    return out


def is_grounded(node: Expr) -> bool:
    """True when no label is left, i.e. the expression can be compiled."""
    return not labels(node)


def hops(node: Expr) -> int:
    """Number of relation steps (JOIN, comparison, ARGMAX/ARGMIN, TC) in the expression."""
    match node:
        case Join(_, a):
            return 1 + (hops(a) if isinstance(a, (Join, And, Count, Arg, Compare, TC)) else 0)
        case And(a, b):
            return sum(hops(x) for x in (a, b) if not isinstance(x, Class))
        case Count(a):
            return 0 if isinstance(a, Class) else hops(a)
        case Arg(_, a, _) | TC(a, _, _):
            return 1 + (0 if isinstance(a, Class) else hops(a))
        case Compare():
            return 1
    return 0
