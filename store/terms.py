"""Safe construction of RDF terms from user strings.

Every IRI or literal that reaches a SPARQL string goes through pyoxigraph terms, whose ``str()``
is the escaped N-Triples form — valid SPARQL syntax that no quote, brace or ``DROP`` can break out
of. Invalid IRIs are rejected here with a clear message.
"""

from __future__ import annotations

from pyoxigraph import Literal, NamedNode

from core.errors import InputError

_XSD = "http://www.w3.org/2001/XMLSchema#"


def named_node(iri: str) -> NamedNode:
    """An IRI term, or InputError if the string is not an absolute IRI."""
    text = iri.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if ":" not in text:
        raise InputError(f"not an absolute IRI: {iri!r}")
    try:
        return NamedNode(text)
    except ValueError as exc:
        raise InputError(f"invalid IRI {iri!r}: {exc}") from None


def literal(value: str | int | float | bool, datatype: str | None = None, language: str | None = None) -> Literal:
    """A literal term; ``datatype`` may be a full IRI or an xsd local name ('date')."""
    try:
        if language:
            return Literal(str(value), language=language)
        if datatype:
            dt = datatype if ":" in datatype else _XSD + datatype
            return Literal(str(value), datatype=NamedNode(dt))
        return Literal(value)
    except ValueError as exc:
        raise InputError(f"invalid literal {value!r}: {exc}") from None


def sparql_term(term: NamedNode | Literal) -> str:
    """The term as it must appear inside a SPARQL query (escaped)."""
    return str(term)
