"""Compilation to SPARQL 1.1: every operator executed on a real Oxigraph store; escaping."""

from __future__ import annotations

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from core.errors import InputError
from spr.grounding.compile import compile_query
from spr.grounding.sexpr import Entity, Iri, Join, Relation, Value
from spr.grounding.sexpr_reader import parse
from store.oxigraph_store import OxigraphStore
from store.vocab import RDF, RDFS, XSD

X = "https://x.org/"


def n(local: str) -> NamedNode:
    return NamedNode(X + local)


def date(text: str) -> Literal:
    return Literal(text, datatype=NamedNode(XSD + "date"))


@pytest.fixture(scope="module")
def store():
    s = OxigraphStore()
    g1, g2, g3, onto = n("chunk/1"), n("chunk/2"), n("chunk/3"), n("onto")
    a = NamedNode(RDF + "type")
    s.extend(
        [
            Quad(n("bureau"), n("issues"), n("plan"), g1),
            Quad(n("bureau"), n("issues"), n("act"), g2),
            Quad(n("ministry"), n("issues"), n("strategy"), g3),
            Quad(n("plan"), n("issued"), date("2025-01-20"), g1),
            Quad(n("act"), n("issued"), date("2024-03-01"), g2),
            Quad(n("strategy"), n("issued"), Literal("2023-06-01T00:00:00", datatype=NamedNode(XSD + "dateTime")), g3),
            Quad(n("plan"), n("capacity"), Literal("12", datatype=NamedNode(XSD + "integer")), g1),
            Quad(n("act"), n("capacity"), Literal("3", datatype=NamedNode(XSD + "integer")), g2),
            Quad(n("plan"), a, n("Plan"), g1),
            Quad(n("strategy"), a, n("Strategy"), g3),
            Quad(n("Plan"), NamedNode(RDFS + "subClassOf"), n("Policy"), onto),
            Quad(n("Strategy"), NamedNode(RDFS + "subClassOf"), n("Policy"), onto),
        ]
    )
    return s


def run(store, text: str) -> set[str]:
    compiled = compile_query(parse(text))
    return {row[compiled.answer_var].value for row in store.select(compiled.sparql)}


@pytest.mark.parametrize(
    ("sexpr", "expected"),
    [
        ("(JOIN <https://x.org/issues> <https://x.org/plan>)", {X + "bureau"}),
        ("(JOIN (R <https://x.org/issues>) <https://x.org/bureau>)", {X + "plan", X + "act"}),
        ("(COUNT (JOIN (R <https://x.org/issues>) <https://x.org/bureau>))", {"2"}),
        ("(AND <https://x.org/Policy> (JOIN (R <https://x.org/issues>) <https://x.org/bureau>))", {X + "plan"}),
        ("(ARGMAX (JOIN (R <https://x.org/issues>) <https://x.org/bureau>) <https://x.org/capacity>)", {X + "plan"}),
        ("(ARGMIN (JOIN (R <https://x.org/issues>) <https://x.org/bureau>) <https://x.org/capacity>)", {X + "act"}),
        ("(lt <https://x.org/capacity> 5)", {X + "act"}),
        ("(le <https://x.org/capacity> 12)", {X + "act", X + "plan"}),
        ("(gt <https://x.org/capacity> 3)", {X + "plan"}),
        ("(ge <https://x.org/capacity> 3)", {X + "act", X + "plan"}),
        ("(lt <https://x.org/issued> 2024-12-31)", {X + "act", X + "strategy"}),  # date and dateTime data
        ("(gt <https://x.org/issued> 2024-01-01)", {X + "act", X + "plan"}),
        ("(TC <https://x.org/Policy> <https://x.org/issued> 2023)", {X + "strategy"}),
        ("(TC (JOIN (R <https://x.org/issues>) <https://x.org/bureau>) <https://x.org/issued> 2025)", {X + "plan"}),
        ("(JOIN (R <https://x.org/issued>) (JOIN (R <https://x.org/issues>) <https://x.org/bureau>))", {"2025-01-20", "2024-03-01"}),
        ("(JOIN <https://x.org/capacity> 12)", {X + "plan"}),
        # A date matches xsd:dateTime data (what policykb writes) and legacy xsd:date data.
        ("(JOIN <https://x.org/issued> 2023-06-01)", {X + "strategy"}),
        ("(JOIN <https://x.org/issued> 2025-01-20)", {X + "plan"}),
        ("(JOIN <https://x.org/issued> 2023-06-01T00:00:00)", {X + "strategy"}),
    ],
)
def test_every_operator_executes(store, sexpr, expected):
    assert run(store, sexpr) == expected


def test_hops_bind_provenance_graphs(store):
    compiled = compile_query(parse("(JOIN (R <https://x.org/issued>) (JOIN (R <https://x.org/issues>) <https://x.org/bureau>))"))
    assert len(compiled.hops) == 2
    rows = store.select(compiled.sparql).rows
    graphs = {(row[compiled.hops[0].graph.name].value, row[compiled.hops[1].graph.name].value) for row in rows}
    assert graphs == {(X + "chunk/1", X + "chunk/1"), (X + "chunk/2", X + "chunk/2")}


def test_count_has_an_evidence_query(store):
    compiled = compile_query(parse("(COUNT (JOIN (R <https://x.org/issues>) <https://x.org/bureau>))"))
    assert compiled.aggregate and "COUNT(DISTINCT ?x) AS ?n" in compiled.sparql
    assert {r["x"].value for r in store.select(compiled.evidence_sparql)} == {X + "plan", X + "act"}


def test_unlinked_labels_are_refused():
    with pytest.raises(InputError, match="unlinked labels"):
        compile_query(parse("(JOIN [ issues ] <https://x.org/plan>)"))


@pytest.mark.parametrize("bad", ["https://x.org/a> } DROP ALL { <b", "https://x.org/a b", 'https://x.org/"', "no-scheme"])
def test_hostile_iris_built_without_the_parser_are_rejected(bad):
    expr = Join(Relation(Iri("https://x.org/issues")), Entity(Iri(bad)))
    with pytest.raises(InputError):
        compile_query(expr)


def test_hostile_literal_is_escaped_not_injected(store):
    value = Value('x" } ; DROP ALL ; SELECT * WHERE { ?s ?p "\n', "string")
    compiled = compile_query(Join(Relation(Iri(X + "title")), value))
    assert "DROP ALL" in compiled.sparql  # present as data ...
    assert store.select(compiled.sparql).rows == ()  # ... and the query still parses and runs
    before = store.count()
    store.select(compiled.sparql)
    assert store.count() == before


def test_invalid_typed_value_is_rejected():
    with pytest.raises(InputError):
        compile_query(Join(Relation(Iri(X + "issued")), Value("not-a-date", "date")))
