"""Compile a grounded S-expression to a standard SPARQL 1.1 SELECT query.

Every relation step becomes one triple pattern inside ``GRAPH ?gN { ... }``: policykb writes each
extracted triple into the named graph of the chunk that states it, so the graph variable binds the
provenance of that hop. Class constraints use ``rdf:type/rdfs:subClassOf*`` over the union graph.
Every IRI and literal goes through pyoxigraph terms (``store.terms``), whose printed form is
escaped, so no label, IRI or value can change the query's structure.

policykb writes dates as ``xsd:dateTime`` at midnight (``xsd:date`` is outside the OWL 2 datatype
map); KBs built by older versions hold ``xsd:date``. Date comparisons are therefore written twice,
once against each datatype, joined by ``||``: comparing a date with a dateTime is a type error in
SPARQL 1.1, and under the error rules of ``||`` the alternative that fits the stored datatype
decides. A date value to match exactly (``JOIN``) is offered in both forms through ``VALUES``.

    >>> from spr.grounding.sexpr_reader import parse
    >>> q = compile_query(parse("(JOIN <https://x.org/issues> <https://x.org/plan>)"))
    >>> print(q.sparql)  # doctest: +NORMALIZE_WHITESPACE
    SELECT DISTINCT ?x ?g1 WHERE {
      GRAPH ?g1 { ?x <https://x.org/issues> <https://x.org/plan> . }
    } LIMIT 1000
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode

from core.errors import InputError
from spr.grounding.sexpr import (
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
    Relation,
    Value,
    labels,
    to_text,
    value_term,
)
from store.terms import literal, named_node, sparql_term
from store.vocab import RDF, RDFS

ANSWER = "x"
COUNT_VAR = "n"
_TYPE_PATH = f"<{RDF}type>/<{RDFS}subClassOf>*"
_OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return f"?{self.name}"


Slot = Var | NamedNode | Literal


@dataclass(frozen=True)
class Hop:
    """One relation step: ``subject predicate object`` found in the named graph ``graph``."""

    subject: Slot
    predicate: NamedNode
    object: Slot
    graph: Var


@dataclass(frozen=True)
class CompiledQuery:
    """``sparql`` answers the question; its rows bind ``answer_var`` and, unless the query is an
    aggregate (COUNT), every hop's variables too. ``evidence_sparql`` binds the hops for the
    triples behind an aggregate (the same query otherwise)."""

    sparql: str
    answer_var: str
    hops: tuple[Hop, ...]
    evidence_sparql: str
    aggregate: bool


@dataclass
class _Compiler:
    counter: int = 0
    hops: list[Hop] = field(default_factory=list)

    def fresh(self, stem: str) -> Var:
        self.counter += 1
        return Var(f"{stem}{self.counter}")

    def hop(self, subject: Slot, predicate: NamedNode, obj: Slot, record: bool) -> str:
        graph = self.fresh("g")
        if record:
            self.hops.append(Hop(subject, predicate, obj, graph))
        return f"GRAPH {graph} {{ {_slot(subject)} {sparql_term(predicate)} {_slot(obj)} . }}"

    def pattern(self, expr: Expr | Class, target: Var, record: bool = True) -> list[str]:
        """Graph patterns that bind ``target`` to the members of ``expr``."""
        match expr:
            case Class(ref):
                return [f"{target} {_TYPE_PATH} {sparql_term(_iri(ref))} ."]
            case Join(relation, arg):
                pred = _iri(relation.ref)
                if isinstance(arg, Entity):
                    node: Slot = _iri(arg.ref)
                    inner: list[str] = []
                elif isinstance(arg, Value) and arg.datatype in ("date", "dateTime"):
                    node = self.fresh("v")
                    inner = [f"VALUES {node} {{ {' '.join(_date_forms(arg))} }}"]
                elif isinstance(arg, Value):
                    node = value_term(arg)
                    inner = []
                else:
                    node = self.fresh("v")
                    inner = self.pattern(arg, node, record)
                s, o = (node, target) if relation.reverse else (target, node)
                return inner + [self.hop(s, pred, o, record)]
            case And(left, right):
                return self.pattern(left, target, record) + self.pattern(right, target, record)
            case Compare(op, relation, value):
                v = self.fresh("v")
                return [self.hop(*_oriented(relation, target, v), record), _filter(v, op, value)]
            case TC(arg, relation, year):
                v = self.fresh("v")
                start, end = Value(f"{year.lexical}-01-01", "date"), Value(f"{int(year.lexical) + 1}-01-01", "date")
                return self.pattern(arg, target, record) + [
                    self.hop(*_oriented(relation, target, v), record),
                    f"FILTER(({_cmp(v, '>=', start)}) && ({_cmp(v, '<', end)}))",
                ]
            case Arg(op, arg, relation):
                best = self.fresh("best")
                member, value = self.fresh("m"), self.fresh("mv")
                sub = self.pattern(arg, member, record=False)
                sub.append(self.hop(*_oriented(relation, member, value), record=False))
                agg = "MAX" if op == "ARGMAX" else "MIN"
                return self.pattern(arg, target, record) + [
                    f"{{ SELECT ({agg}({value}) AS {best}) WHERE {{ {' '.join(sub)} }} }}",
                    self.hop(*_oriented(relation, target, best), record),
                ]
            case Count():
                raise InputError("COUNT is only allowed as the outermost operator")
        raise InputError(f"cannot compile {expr!r}")


def compile_query(expr: Expr, limit: int = 1000) -> CompiledQuery:
    """SPARQL for a grounded expression (InputError if a label is left or a term is invalid)."""
    left = labels(expr)
    if left:
        raise InputError(f"cannot compile an S-expression with unlinked labels: {left}; link it first ({to_text(expr)})")
    if limit <= 0:
        raise InputError("limit must be positive")
    c = _Compiler()
    target = Var(ANSWER)
    if isinstance(expr, Count):
        body = _body(c.pattern(expr.arg, target))
        sparql = f"SELECT (COUNT(DISTINCT {target}) AS ?{COUNT_VAR}) WHERE {{\n{body}\n}}"
        evidence = _select(target, c.hops, body, limit)
        return CompiledQuery(sparql, COUNT_VAR, tuple(c.hops), evidence, aggregate=True)
    body = _body(c.pattern(expr, target))
    sparql = _select(target, c.hops, body, limit)
    return CompiledQuery(sparql, ANSWER, tuple(c.hops), sparql, aggregate=False)


def _select(target: Var, hops: list[Hop], body: str, limit: int) -> str:
    names = [str(target)]
    for hop in hops:
        names += [str(s) for s in (hop.subject, hop.object) if isinstance(s, Var)] + [str(hop.graph)]
    projection = " ".join(dict.fromkeys(names))
    return f"SELECT DISTINCT {projection} WHERE {{\n{body}\n}} LIMIT {int(limit)}"


def _body(patterns: list[str]) -> str:
    return "\n".join(f"  {p}" for p in patterns)


def _iri(ref) -> NamedNode:
    if not isinstance(ref, Iri):
        raise InputError(f"unlinked label {ref!r}")
    return named_node(ref.value)  # re-validated: an Iri may have been built without the parser


def _slot(slot: Slot) -> str:
    return str(slot) if isinstance(slot, Var) else sparql_term(slot)


def _oriented(relation: Relation, member: Var, value: Var) -> tuple[Slot, NamedNode, Slot]:
    """(subject, predicate, object) for 'member relation value' ((R r) swaps the ends)."""
    pred = _iri(relation.ref)
    return (value, pred, member) if relation.reverse else (member, pred, value)


def _filter(var: Var, op: str, value: Value) -> str:
    return f"FILTER({_cmp(var, _OPS[op], value)})"


def _date_forms(value: Value) -> tuple[str, str]:
    """The date ``value`` as an xsd:date and as an xsd:dateTime term, the value's own type first."""
    value_term(value)  # InputError on an invalid date
    as_date = sparql_term(literal(value.lexical[:10], "date"))
    if value.datatype == "date":
        return as_date, sparql_term(literal(f"{value.lexical}T00:00:00", "dateTime"))
    return sparql_term(literal(value.lexical, "dateTime")), as_date


def _cmp(var: Var, sym: str, value: Value) -> str:
    if value.datatype in ("date", "dateTime"):
        first, second = _date_forms(value)
        return f"{var} {sym} {first} || {var} {sym} {second}"
    return f"{var} {sym} {sparql_term(value_term(value))}"
