"""The greedy parser's two shortcuts that leave its output as it is: closing brackets the grammar
forces are written, not decoded (spr.parsing.grammar), and relation labels the KB completes one
way are drafted (spr.parsing.decode.LabelDrafter)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spr.grounding.sexpr import TC, And, Arg, Class, Compare, Count, Entity, Join, Label, Relation, Value, to_text
from spr.grounding.sexpr_reader import parse
from spr.parsing.decode import LabelDrafter, NgramDrafter
from spr.parsing.grammar import decoding_ends, expression_closed, forced_closing
from tests.test_sexpr import CANONICAL

# --- forced closings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "closing"),
    [
        (" (JOIN (R [ gender ]) (JOIN (R [ parents ]) [ hussein_of_jordan ]", "))"),
        (" (COUNT (AND [ policy ] (JOIN (R [ issues ]) [ Bureau ]", ")))"),
        ("(JOIN (R [ x \\] y ]) [ personal data (GDPR) ]", ")"),  # brackets inside labels are text
        ("(JOIN pkb:issues <https://w3id.org/policykb/id/entity/plan-1>", ")"),
        ("(lt [ date value ] 2026-01-01 ", ")"),
        ("(JOIN [ year ] \"2025\"^^xsd:gYear ", ")"),
        # something else may follow
        ("(AND (JOIN (R [ a ]) [ x ]", None),  # AND's second argument
        ("(JOIN (R [ a ])", None),  # JOIN's argument
        ("(JOIN (R [ a ]) [ Cub", None),  # a label still being written
        ("(lt [ date value ] 2026-01", None),  # a value may go on: "2026-01-01"
        ('(JOIN [ year ] "2025"', None),  # ^^xsd:gYear may follow
        ('(JOIN [ title ] "Plan', None),
        ("(JOIN pkb:issues <https://w3id", None),
        ("(JOIN (R [ a ]) [ x ])", None),  # already whole
        ("", None),
        ("(", None),
        # not a beginning of any expression
        ("(FOO [ a ] [ b ]", None),
        ("(JOIN [ a ] [ b ] [ c ]", None),
        ("[ a ] [ b ]", None),
        ("(JOIN [ a ]) [ b ])", None),
    ],
)
def test_forced_closing(text, closing):
    assert forced_closing(text) == closing


def test_decoding_ends_at_a_closed_expression_or_where_the_grammar_forces_the_rest():
    forced = "(JOIN (R [ a ]) [ x ]"
    assert decoding_ends(forced) and not decoding_ends(forced, close_by_grammar=False)
    assert decoding_ends(forced + ")", close_by_grammar=False)
    assert not decoding_ends("(JOIN (R [ a ]) [ x")


def _assert_only_the_closing_may_follow(text: str) -> None:
    """At every prefix of a whole expression where a closing is forced, the expression goes on with
    exactly that closing; and after its last label the closing is forced."""
    for i in range(len(text) + 1):
        closing = forced_closing(text[:i])
        if closing is not None:
            assert text[i:].replace(" ", "") == closing, (text, i)
            assert expression_closed(text[:i] + closing) and to_text(parse(text[:i] + closing)) == text
    body = text.rstrip(")")
    if body.endswith(("]", ">")):
        assert forced_closing(body) == text[len(body) :]


@pytest.mark.parametrize("text", CANONICAL)
def test_only_the_forced_closing_follows_in_every_canonical_form(text):
    _assert_only_the_closing_may_follow(text)


_labels = st.text(st.sampled_from("ab c()_-]\\"), min_size=1, max_size=8).map(lambda s: Label(s)).filter(
    lambda lab: lab.text.strip() and " ".join(lab.text.split()) == lab.text
)
_relations = st.builds(Relation, _labels, st.booleans())
_values = st.sampled_from([Value("2026-01-01", "date"), Value("12", "integer"), Value("3.5", "decimal")])


def _exprs(children):
    sets = st.one_of(st.builds(Class, _labels), children)
    return st.one_of(
        st.builds(Join, _relations, st.one_of(st.builds(Entity, _labels), _values, children)),
        st.builds(And, sets, sets),
        st.builds(Arg, st.sampled_from(["ARGMAX", "ARGMIN"]), sets, _relations),
        st.builds(Compare, st.sampled_from(["lt", "le", "gt", "ge"]), _relations, _values),
        st.builds(TC, sets, _relations, st.just(Value("2027", "integer"))),
    )


_leaf = st.builds(Join, _relations, st.builds(Entity, _labels))
_expressions = st.one_of(st.recursive(_leaf, _exprs, max_leaves=4), st.builds(Count, st.recursive(_leaf, _exprs, max_leaves=3)))


@settings(max_examples=150, deadline=None)
@given(_expressions)
def test_only_the_forced_closing_follows_in_any_expression(expr):
    text = to_text(expr)
    assert to_text(parse(text)) == text  # the strategy builds readable expressions only
    _assert_only_the_closing_may_follow(text)


# --- relation labels from the KB --------------------------------------------------------------------

# A toy tokenizer: each id is one piece of text, as a BPE tokenizer's would be.
PIECES = [" (", "JO", "IN", "R", " [", " ])", " ]", "))", " canonical", " version", " form", " genre", " gen", "re", " Cuba", "lt", " date"]
ID = {p: i for i, p in enumerate(PIECES)}


def ids(*pieces: str) -> list[int]:
    return [ID[p] for p in pieces]


def decode(tokens) -> str:
    return "".join(PIECES[t] for t in tokens)


@pytest.fixture
def labels():
    kb = [(" canonical", " version"), (" canonical", " form"), (" genre",), (" gen", "re"), (" date",)]
    return LabelDrafter((ids(*label) for label in kb), decode, ids(" ])"), ids(" ]"))


def test_a_label_the_kb_completes_one_way_is_drafted_with_its_closing(labels):
    opening = ids(" (", "JO", "IN", " (", "R", " [")
    assert labels.draft(opening + ids(" genre")) == ids(" ])")  # whole, and no label goes on from it
    assert labels.draft(ids(" (", "JO", "IN", " [", " gen")) == ids("re", " ]")  # (JOIN [ … ]: no ")"
    assert labels.draft(ids(" (", "lt", " [", " date")) == ids(" ]")


def test_no_draft_where_labels_part_or_no_relation_is_open(labels):
    opening = ids(" (", "JO", "IN", " (", "R", " [")
    assert labels.draft(opening) == []  # nothing of the label yet
    assert labels.draft(opening + ids(" canonical")) == []  # "canonical version" or "canonical form"
    assert labels.draft(opening + ids(" Cuba")) == []  # no such label
    assert labels.draft(opening + ids(" genre", " ])", " [", " gen")) == []  # an entity's label, not a relation's
    assert labels.draft([]) == []


def test_the_ngram_drafter_continues_after_a_drafted_label(labels):
    targets = [ids(" (", "JO", "IN", " (", "R", " [", " canonical", " version", " ])", " [", " Cuba", " ]", "))")]
    drafter = NgramDrafter(targets, labels=labels)
    context = ids(" (", "JO", "IN", " (", "R", " [", " gen")
    # "re ])" from the KB's labels, then " [" which every target has after " ])"
    assert drafter.draft(context, prompt=[])[:3] == ids("re", " ])", " [")
    assert NgramDrafter(targets).draft(context, prompt=[]) == []  # without the labels: no guess
