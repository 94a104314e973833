"""S-expressions: round trip, every operator, typed AST, precise errors, hostile input."""

from __future__ import annotations

import pytest

from core.errors import InputError
from spr.grounding.sexpr import (
    TC,
    And,
    Arg,
    Class,
    Compare,
    Count,
    Entity,
    Iri,
    Join,
    Label,
    Relation,
    SExprError,
    Value,
    hops,
    is_grounded,
    labels,
    to_text,
)
from spr.grounding.sexpr_reader import parse

CANONICAL = [
    "(JOIN [ issues ] [ National Solar Plan ])",
    "(JOIN (R [ supports ]) [ Notice on Distributed Photovoltaics ])",
    "(COUNT (JOIN (R [ supports ]) [ Notice on Distributed Photovoltaics ]))",
    "(AND [ agency ] (JOIN [ issues ] [ National Solar Plan ]))",
    "(AND (JOIN [ a ] [ b ]) (JOIN (R [ c ]) [ d ]))",
    "(ARGMAX [ plan ] [ issued ])",
    "(ARGMIN (JOIN (R [ issues ]) [ Bureau ]) [ issued ])",
    "(lt [ date value ] 2026-01-01)",
    "(le [ amount ] 12)",
    "(gt [ amount ] 3.5)",
    "(ge [ issued ] 2025-01-20T10:00:00Z)",
    "(TC [ deadline ] [ date value ] 2027)",
    "(JOIN (R [ gender ]) (JOIN (R [ children ]) [ abaqa_khan ]))",
    '(JOIN [ title ] "Plan \\"A\\"")',
    '(JOIN [ year ] "2025"^^xsd:gYear)',
    "(JOIN pkb:issues <https://w3id.org/policykb/id/entity/plan-1>)",
    "(JOIN [ label with \\] bracket ] [ x ])",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_text_round_trips(text):
    assert to_text(parse(text)) == text


def test_parse_normalizes_case_and_whitespace():
    expr = parse("  (count\n (join (r [supports ])   [  Notice   on PV ] ) )")
    assert to_text(expr) == "(COUNT (JOIN (R [ supports ]) [ Notice on PV ]))"


def test_typed_ast_by_position():
    expr = parse("(COUNT (AND [ agency ] (JOIN (R [ issues ]) [ Bureau ])))")
    assert expr == Count(And(Class(Label("agency")), Join(Relation(Label("issues"), reverse=True), Entity(Label("Bureau")))))
    assert parse("(TC [ d ] [ v ] 2027)") == TC(Class(Label("d")), Relation(Label("v")), Value("2027", "integer"))
    assert parse("(lt [ v ] 2026-01-01)") == Compare("lt", Relation(Label("v")), Value("2026-01-01", "date"))
    assert parse("(ARGMAX [ p ] [ v ])") == Arg("ARGMAX", Class(Label("p")), Relation(Label("v")))
    assert parse("(JOIN [ r ] 12)").arg == Value("12", "integer")


def test_prefixed_names_expand_to_iris():
    expr = parse("(JOIN pkb:issues <https://x.org/a>)")
    assert expr.relation.ref == Iri("https://w3id.org/policykb/ontology#issues")
    assert expr.arg == Entity(Iri("https://x.org/a"))


def test_labels_roles_grounded_and_hops():
    expr = parse("(AND [ agency ] (JOIN [ issues ] (JOIN (R [ supports ]) [ Notice ])))")
    assert labels(expr) == [("class", "agency"), ("relation", "issues"), ("relation", "supports"), ("entity", "Notice")]
    assert not is_grounded(expr)
    assert hops(expr) == 2
    assert is_grounded(parse("(JOIN <https://x.org/p> <https://x.org/e>)"))


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("(JOIN [ a ]", 11, "input ended"),
        ("(FOO [ a ] [ b ])", 1, "unknown operator 'FOO'"),
        ("(JOIN [ a ] [ b ]) extra", 19, "unexpected text after"),
        ("(JOIN [ ] [ b ])", 6, "empty label"),
        ("(JOIN (COUNT [ a ]) [ b ])", 7, "expected a relation or (R relation)"),
        ("(JOIN [ a ] (COUNT (JOIN [ b ] [ c ])))", 13, "COUNT is only allowed as the outermost"),
        ("(TC [ a ] [ b ] 20)", 16, "four-digit year"),
        ("[ a ]", 0, "expected '('"),
        ("(JOIN foo:bar [ x ])", 6, "unknown prefix"),
        ("(JOIN [ a ] [ b", 12, "unterminated label"),
        ("(lt [ a ] [ b ])", 10, "expected a value"),
        ("(JOIN <relative> [ x ])", 6, "not an absolute IRI"),
    ],
)
def test_malformed_input_names_the_position(text, position, fragment):
    with pytest.raises(SExprError) as info:
        parse(text)
    assert info.value.position == position
    assert fragment in str(info.value)
    assert isinstance(info.value, InputError)


@pytest.mark.parametrize(
    "text",
    [
        "(JOIN <http://a.org/x> DROP ALL> [ y ])",  # '>' inside an IRI
        "(JOIN <http://a.org/x> } ; DROP ALL ; { > [ y ])",
        '(JOIN <http://a.org/x"> [ y ])',
        "(JOIN <http://a.org/x\ny> [ y ])",
        "(JOIN <http://a.org/{x}> [ y ])",
    ],
)
def test_hostile_iris_are_rejected(text):
    with pytest.raises(InputError):
        parse(text)


def test_hostile_labels_survive_as_data():
    text = '(JOIN [ a"} DROP ALL; { ] [ x\\] ) ( ])'
    expr = parse(text)
    assert expr.relation.ref == Label('a"} DROP ALL; {')
    assert expr.arg.ref == Label("x] ) (")
    assert to_text(parse(to_text(expr))) == to_text(expr)


def test_deep_nesting_and_long_input_are_refused():
    deep = "(JOIN [ r ] " * 40 + "[ e ]" + ")" * 40
    with pytest.raises(SExprError, match="nested deeper"):
        parse(deep)
    with pytest.raises(SExprError, match="longer than"):
        parse("(JOIN [ r ] [ " + "x" * 5000 + " ])")


def test_invalid_typed_literal_is_rejected():
    with pytest.raises(SExprError):
        parse('(JOIN [ r ] "x"^^<not an iri>)')
