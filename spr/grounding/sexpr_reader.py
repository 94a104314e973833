"""The S-expression reader: tokenizer and recursive descent, typed by position (see spr.grounding.sexpr).

Kept apart from the AST so that each module reads in one sitting: the AST module knows nothing
of reading; :func:`parse` here turns text into it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import InputError
from spr.grounding.sexpr import (
    COMPARISONS,
    DATE,
    DATETIME,
    LOCAL_NAME,
    MAX_DEPTH,
    MAX_LENGTH,
    NUMBER,
    TC,
    And,
    Arg,
    Class,
    Compare,
    Count,
    Entity,
    Expr,
    Iri,
    Join,
    Label,
    Ref,
    Relation,
    SExprError,
    Value,
    value_term,
)
from store.terms import named_node
from store.vocab import PREFIXES, XSD

_OPERATORS = {"JOIN": "JOIN", "AND": "AND", "COUNT": "COUNT", "ARGMAX": "ARGMAX", "ARGMIN": "ARGMIN", "TC": "TC"}
_OPERATORS.update({c.upper(): c for c in COMPARISONS})


TOKEN = re.compile(  # one piece of an S-expression (spr.parsing.grammar reads partial ones with it)
    r"""\s*(?:
        (?P<open>\() | (?P<close>\)) |
        (?P<label>\[(?:\\.|[^\]\\])*\]) |
        (?P<iri><[^<>\s"{}|^`\\]*>) |
        (?P<string>"(?:\\.|[^"\\])*"(?:\^\^(?:<[^<>\s"{}|^`\\]*>|[A-Za-z][\w-]*:[A-Za-z_][\w-]*))?) |
        (?P<atom>[^\s()\[\]<>"]+)
    )""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: int


def _tokenize(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = TOKEN.match(text, pos)
        if m is None or m.lastgroup is None:
            start = len(text) - len(text[pos:].lstrip())
            ch = text[start]
            what = {"[": "unterminated label", "<": "malformed IRI", '"': "unterminated string"}.get(ch, "unexpected character")
            raise SExprError(f"{what} {ch!r}", start, text)
        tokens.append(_Tok(m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)))
        pos = m.end()
    return tokens


def parse(text: str) -> Expr:
    """Parse one S-expression into the typed AST (labels, IRIs or both)."""
    if len(text) > MAX_LENGTH:
        raise SExprError(f"longer than {MAX_LENGTH} characters", MAX_LENGTH, text)
    reader = _Reader(text, _tokenize(text))
    expr = reader.expr(0, top=True)
    if reader.i < len(reader.tokens):
        raise SExprError("unexpected text after the expression", reader.tokens[reader.i].pos, text)
    return expr


class _Reader:
    """Recursive descent over tokens; every method knows what the grammar expects there."""

    def __init__(self, text: str, tokens: list[_Tok]):
        self.text, self.tokens, self.i = text, tokens, 0

    def fail(self, message: str, tok: _Tok | None = None) -> SExprError:
        pos = tok.pos if tok else (self.tokens[self.i].pos if self.i < len(self.tokens) else len(self.text))
        return SExprError(message, pos, self.text)

    def peek(self) -> _Tok | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, what: str) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise self.fail(f"expected {what} but the input ended")
        self.i += 1
        return tok

    def close(self) -> None:
        tok = self.take("')'")
        if tok.kind != "close":
            raise self.fail(f"expected ')' but found {tok.text!r}", tok)

    def expr(self, depth: int, top: bool = False) -> Expr:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
        tok = self.take("'('")
        if tok.kind != "open":
            raise self.fail(f"expected '(' starting an expression but found {tok.text!r}", tok)
        op_tok = self.take("an operator")
        op = _OPERATORS.get(op_tok.text.upper()) if op_tok.kind == "atom" else None
        if op is None:
            known = "JOIN, AND, COUNT, ARGMAX, ARGMIN, TC, lt, le, gt, ge"
            raise self.fail(f"unknown operator {op_tok.text!r} (expected one of {known})", op_tok)
        node: Expr
        if op == "JOIN":
            node = Join(self.relation(depth), self.join_arg(depth))
        elif op == "AND":
            node = And(self.set_arg(depth), self.set_arg(depth))
        elif op == "COUNT":
            if not top:
                raise self.fail("COUNT is only allowed as the outermost operator", op_tok)
            node = Count(self.set_arg(depth))
        elif op in ("ARGMAX", "ARGMIN"):
            node = Arg(op, self.set_arg(depth), self.relation(depth))  # type: ignore[arg-type]
        elif op == "TC":
            node = TC(self.set_arg(depth), self.relation(depth), self.year())
        else:
            node = Compare(op, self.relation(depth), self.value())  # type: ignore[arg-type]
        self.close()
        return node

    def relation(self, depth: int) -> Relation:
        tok = self.peek()
        if tok is not None and tok.kind == "open":
            self.i += 1
            r_tok = self.take("R")
            if r_tok.kind != "atom" or r_tok.text.upper() != "R":
                raise self.fail(f"expected a relation or (R relation) but found {r_tok.text!r}", r_tok)
            rel = Relation(self.ref("a relation"), reverse=True)
            self.close()
            return rel
        return Relation(self.ref("a relation"))

    def set_arg(self, depth: int) -> Expr | Class:
        tok = self.peek()
        if tok is not None and tok.kind == "open":
            return self.expr(depth + 1)
        return Class(self.ref("an expression or a class"))

    def join_arg(self, depth: int) -> Expr | Entity | Value:
        tok = self.peek()
        if tok is not None and tok.kind == "open":
            return self.expr(depth + 1)
        if tok is not None and (tok.kind == "string" or (tok.kind == "atom" and _looks_like_value(tok.text))):
            return self.value()
        return Entity(self.ref("an expression, an entity or a value"))

    def ref(self, what: str) -> Ref:
        tok = self.take(what)
        if tok.kind == "label":
            text = " ".join(re.sub(r"\\(.)", r"\1", tok.text[1:-1]).split())
            if not text:
                raise self.fail("empty label", tok)
            return Label(text)
        if tok.kind == "iri":
            return Iri(self.iri(tok.text[1:-1], tok))
        if tok.kind == "atom" and ":" in tok.text and not _looks_like_value(tok.text):
            prefix, _, local = tok.text.partition(":")
            if prefix in PREFIXES and LOCAL_NAME.fullmatch(local):
                return Iri(PREFIXES[prefix] + local)
            raise self.fail(f"unknown prefix or bad local name in {tok.text!r} (use <iri> or [ label ])", tok)
        raise self.fail(f"expected {what} ([ label ], <iri> or prefix:name) but found {tok.text!r}", tok)

    def iri(self, text: str, tok: _Tok) -> str:
        try:
            return named_node(text).value
        except InputError as exc:
            raise self.fail(str(exc), tok) from None

    def value(self) -> Value:
        tok = self.take("a value")
        if tok.kind == "string":
            m = _STRING.fullmatch(tok.text)
            if m is None:
                raise self.fail(f"malformed string {tok.text!r}", tok)
            lexical = re.sub(r"\\(.)", lambda e: "\n" if e.group(1) == "n" else e.group(1), m.group(1), flags=re.S)
            dtype = m.group(2) or ""
            datatype = "string"
            if dtype:
                iri = dtype[1:-1] if dtype.startswith("<") else _expand(dtype)
                if iri is None:
                    raise self.fail(f"unknown datatype prefix in {dtype!r}", tok)
                datatype = iri[len(XSD) :] if iri.startswith(XSD) else self.iri(iri, tok)
            value = Value(lexical, datatype)
        elif tok.kind == "atom" and _looks_like_value(tok.text):
            value = Value(tok.text, _bare_datatype(tok.text))
        else:
            raise self.fail(f"expected a value (number, date or \"string\") but found {tok.text!r}", tok)
        try:
            value_term(value)
        except InputError as exc:
            raise self.fail(str(exc), tok) from None
        return value

    def year(self) -> Value:
        tok = self.peek()
        value = self.value()
        if not re.fullmatch(r"\d{4}", value.lexical):
            raise self.fail(f"TC expects a four-digit year, found {value.lexical!r}", tok)
        return Value(value.lexical, "integer")


_STRING = re.compile(r'"((?:\\.|[^"\\])*)"(?:\^\^(.+))?', re.DOTALL)


def _looks_like_value(text: str) -> bool:
    return bool(NUMBER.fullmatch(text) or DATE.fullmatch(text) or DATETIME.fullmatch(text))


def _bare_datatype(text: str) -> str:
    if DATETIME.fullmatch(text):
        return "dateTime"
    if DATE.fullmatch(text):
        return "date"
    return "decimal" if "." in text else "integer"


def _expand(prefixed: str) -> str | None:
    prefix, _, local = prefixed.partition(":")
    return PREFIXES[prefix] + local if prefix in PREFIXES else None


