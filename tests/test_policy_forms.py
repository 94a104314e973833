"""Question shapes of the policy facts (spr/parsing/policy_forms.py) and their place in the rule parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.resources import resource_dir
from spr.grounding.sexpr import to_text
from spr.parsing.policy_forms import policy_parse
from spr.parsing.rules import RuleParser
from store.ontologies import put_ontologies
from store.oxigraph_store import OxigraphStore
from store.vocabulary import read_terms


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What does 'data holder' mean under the Data Sharing Act?", "(JOIN (R [ definition ]) [ data holder (Data Sharing Act) ])"),
        ("How does the Grid Code define a ‘balancing service’?", "(JOIN (R [ definition ]) [ balancing service (Grid Code) ])"),
        ("What is meant by “storage unit”?", "(JOIN (R [ definition ]) [ storage unit ])"),
        ("What is curtailment according to the Grid Code?", "(JOIN (R [ definition ]) [ curtailment (Grid Code) ])"),
        ("Within how many days must an operator publish the connection offer?",
         "(JOIN (R [ time limit ]) [ Within how many days must an operator publish the connection offer ])"),
        ("How much can the fine for late reporting be?", "(JOIN (R [ amount ]) [ How much can the fine for late reporting be ])"),
        ("What percentage of turnover caps the penalty?", "(JOIN (R [ percentage ]) [ What percentage of turnover caps the penalty ])"),
        ("By when must Member States adopt the measures?", "(JOIN (R [ has deadline ]) [ By when must Member States adopt the measures ])"),
        ("When is the first review of the Grid Code due?", "(JOIN (R [ has deadline ]) [ When is the first review of the Grid Code due ])"),
        ("What is the latest an operator may report an outage?",
         "(JOIN (R [ time limit ]) [ What is the latest an operator may report an outage ])"),
        ("What is Westmark's 2030 target for renewable energy?",
         "(JOIN (R [ target amount ]) [ What is Westmark's 2030 target for renewable energy ])"),
        ("By how much must Westmark cut its emissions by 2030?",
         "(JOIN (R [ target amount ]) [ By how much must Westmark cut its emissions by 2030 ])"),
        ("From what date does the Grid Code apply?", "(JOIN (R [ has date ]) [ From what date does the Grid Code apply ])"),
        ("Who must notify the regulator of a grid incident?", "(JOIN (R [ addressee ]) [ Who must notify the regulator of a grid incident ])"),
        ("Which directive does the Grid Code repeal?", "(JOIN (R [ repeals ]) [ Grid Code ])"),
        ("Which regulation covering storage is amended by the EEG?", "(JOIN (R [ amends ]) [ EEG ])"),
        ("Which act repeals Directive 2009/28/EC?", "(JOIN [ repeals ] [ Directive 2009/28/EC ])"),
        ("Which directive does the Heat Act refer to for its definition of 'heat pump'?",  # the definition names it
         "(JOIN (R [ definition ]) [ heat pump (Heat Act) ])"),
        ("Which directive does the Heat Act refer to for heat pumps?", "(JOIN (R [ cites ]) [ Heat Act ])"),
        ("Articles 3 and 4 of which regulation are deleted by Regulation (EU) 2023/1804?",
         "(JOIN (R [ amends ]) [ Regulation (EU) 2023/1804 ])"),
        # who adopted an act (the facts come from its formal title: kgpipeline.extract.acts.title_adoption)
        ("Who issues the European Climate Law?", "(JOIN [ issues ] [ European Climate Law ])"),
        ("Which institutions adopted the GDPR?", "(JOIN [ issues ] [ GDPR ])"),
        ("By whom was Regulation (EU) 2021/1119 adopted?", "(JOIN [ issues ] [ Regulation (EU) 2021/1119 ])"),
        ("Who was the Net-Zero Industry Act adopted by?", "(JOIN [ issues ] [ Net-Zero Industry Act ])"),
        ("Who issued the National Solar Plan?", "(JOIN [ issues ] [ National Solar Plan ])"),
        ("Which institutions adopted the Just Transition Fund regulation?", "(JOIN [ issues ] [ Just Transition Fund regulation ])"),
        ("When was the GDPR adopted?", "(JOIN (R [ adopted on ]) [ GDPR ])"),
        ("On what date was Directive 2009/31/EC signed?", "(JOIN (R [ adopted on ]) [ Directive 2009/31/EC ])"),
        ("When did the EU adopt the European Climate Law?", "(JOIN (R [ adopted on ]) [ European Climate Law ])"),
        ("When did the Council adopt the Net-Zero Industry Act?", "(JOIN (R [ adopted on ]) [ Net-Zero Industry Act ])"),
        # ... but "who issues <something that is no act>" asks for a provision's addressee
        ("Who issues permits?", "(JOIN (R [ addressee ]) [ Who issues permits ])"),
        ("Who issues permits under the Climate Law?", "(JOIN (R [ addressee ]) [ Who issues permits under the Climate Law ])"),
    ],
)  # fmt: skip
def test_policy_shapes(question, expected):
    assert to_text(policy_parse(question)[0]) == expected


def test_other_questions_have_no_policy_shape():
    for question in ("Which agency issued the National Solar Plan?", "What is the deadline of the Solar Monitoring Center?",
                     "Which plans does the Notice support?", "Which act supports the National Solar Plan?",
                     "When were the national plans adopted?"):  # not an act: the generic shapes read it  # fmt: skip
        assert policy_parse(question) == []


@pytest.fixture(scope="module")
def rules():
    store = OxigraphStore()
    put_ontologies(store, resource_dir(Path("ontologies")))
    return RuleParser(read_terms(store, "property"))


def test_the_rule_parser_puts_policy_shapes_first_and_keeps_its_own_reading(rules):
    out = rules.parse("Who must approve the plan issued by the Energy Bureau?")
    assert out[0].text.startswith("(JOIN (R [ addressee ])") and out[0].score == 1.0
    assert len(out) > 1 and all(c.score <= 0.5 for c in out[1:])
    assert rules.parse("Who issued the National Solar Plan?")[0].score == 1.0  # no shape: generic as before


def test_synthesized_policy_questions_agree_with_the_rule_shapes():
    """The LoRA parser's training questions in the policy shapes carry the S-expression the rule
    parser gives them wherever a rule shape reads them; the other phrasings ("Is anyone required
    to …, and who?") are what only the trained parser learns."""
    from spr.grounding.sexpr_reader import parse
    from spr.parsing.synth import synthesize_policy

    facts = [("definition", "data holder (Data Sharing Act)"), ("time limit", "publish the connection offer"),
             ("amount", "report late"), ("percentage", "exceed the cap"), ("has deadline", "adopt the measures"),
             ("has date", "apply"), ("addressee", "notify the regulator")]  # fmt: skip
    examples = synthesize_policy(facts, per_form=4)
    assert {e.sexpr.split(" ]")[0] for e in examples} >= {f"(JOIN (R [ {label}" for label, _ in facts}
    read = 0
    for e in examples:
        parse(e.sexpr)  # every target is a valid S-expression
        ruled = policy_parse(e.question)
        if ruled:
            read += 1
            assert to_text(ruled[0]) == e.sexpr, e.question
    assert read >= 0.7 * len(examples)


class _Learned:
    """A learned parser's fixed output (the shapes wrapper only orders candidates)."""

    name = "lora"

    def __init__(self, texts: list[str]):
        self.texts = texts

    def parse(self, question: str):
        from spr.parsing.candidate import parse_outputs

        return parse_outputs(self.texts, [0.9 - i / 10 for i in range(len(self.texts))])


def test_shapes_come_before_a_learned_parser_and_are_not_repeated():
    from spr.parsing.factory import ShapesFirst

    shape = "(JOIN (R [ has deadline ]) [ By when must Member States adopt the measures ])"
    learned = ShapesFirst(_Learned(["(JOIN (R [ adopts ]) [ Member States ])", shape]))
    parsed = learned.parse("By when must Member States adopt the measures?")
    assert [c.text for c in parsed] == [shape, "(JOIN (R [ adopts ]) [ Member States ])"] and learned.name == "lora"
    # The shape keeps its score when the learned parser repeats it with less (regression: the
    # repeat's 0.8 replaced it, and dual withheld the facts it found).
    assert parsed[0].score == 1.0
    # No shape fits: the learned parser's candidates alone, in its order.
    assert [c.text for c in learned.parse("Tell me what the Energy Bureau constructs.")] == [
        "(JOIN (R [ adopts ]) [ Member States ])", shape,
    ]
