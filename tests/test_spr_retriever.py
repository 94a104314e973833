"""The semantic parsing retriever end to end: examples/corpus ingested by the real pipeline (lexicon
extractor, writer, derived stages), questions answered with the rule parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Config, KBConfig
from core.embed import make_embedder
from core.resources import resource_dir
from kgpipeline.pipeline import STAGES, build_controller, derived_stages
from spr.parsing.rules import RuleParser
from spr.retrieval.semantic_parsing import SemanticParsingRetriever
from store.layout import KBLayout
from store.ontologies import put_ontologies
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    kb_dir = tmp_path_factory.mktemp("kb")
    config = Config(kb=KBConfig(dir=kb_dir))
    store = OxigraphStore()
    put_ontologies(store, resource_dir(Path("ontologies")))
    controller = build_controller(config, store)
    # Only the stages linking reads (the weights when registered, then the entity index).
    controller.stages = [s for name in ("weights", "entities") if name in STAGES for s in derived_stages(config, only=name)]
    try:
        summary = controller.ingest([CORPUS])
    finally:
        controller.close()
    assert summary.documents >= 10 and not summary.skipped
    return SemanticParsingRetriever(store, make_embedder(config.embed, KBLayout(kb_dir).embed_cache), kb_dir, config.spr)


def _chunk_text(store, graph: str) -> str:
    rows = store.select(f"SELECT ?t WHERE {{ <{graph}> a <{PKB}Chunk> ; <{PKB}text> ?t }}").rows
    return rows[0]["t"].value if rows else ""


def test_without_adapter_the_rule_parser_is_used(retriever):
    assert isinstance(retriever.parser, RuleParser)


def test_who_issued_the_national_solar_plan(retriever):
    result = retriever.retrieve("Who issued the National Solar Plan?")
    assert result.parser == "rules"
    assert result.sexpr == "(JOIN [ issues ] [ National Solar Plan ])"
    assert [a.label for a in result.answers] == ["Energy Bureau (National)"]
    assert result.grounded.startswith("(JOIN pkb:issues <")
    assert "GRAPH ?g" in result.sparql
    (fact,) = result.triples
    assert (fact.subject_label, fact.predicate_label) == ("Energy Bureau (National)", "issues")
    assert fact.object_label.startswith("National Solar Plan")
    # provenance: the chunk graph that states the triple, whose text says so
    assert fact.graphs and all("issues this Plan" in _chunk_text(retriever.store, g) for g in fact.graphs)
    assert result.entities[0].label == "National Solar Plan" and 0 < result.entities[0].score <= 1
    assert set(result.timings_ms) == {"parse", "ground", "execute", "total"}


def test_what_did_the_national_energy_bureau_establish(retriever):
    result = retriever.retrieve("What did the National Energy Bureau establish?")
    assert [a.label for a in result.answers] == ["Solar Monitoring Center"]
    assert result.triples[0].predicate == PKB + "establishes"


def test_type_constrained_question_picks_the_provincial_bureau(retriever):
    result = retriever.retrieve("Which agency issued the Guidelines for Onshore Wind Siting in Westmark Province?")
    assert result.grounded.startswith("(AND pkb:Agency (JOIN pkb:issues")
    assert [a.label for a in result.answers] == ["Energy Bureau (Westmark Province)"]


def test_count_question_returns_the_count_and_its_triples(retriever):
    result = retriever.retrieve("How many policies did the Energy Bureau of Westmark Province issue?")
    assert result.count == 2 and result.answers == ()
    assert len(result.triples) == 2
    assert {f.subject_label for f in result.triples} == {"Energy Bureau (Westmark Province)"}
    assert all(f.graphs for f in result.triples)


def test_unparseable_question_says_why(retriever):
    result = retriever.retrieve("Tell me a joke")
    assert not result.found and result.parses == () and "did not understand" in result.note



def test_several_answers_are_ordered_by_their_label_and_evidence():
    from spr.retrieval.semantic_parsing import order_answers

    question = "Which regulation does the Act amend so that administrators of critical benchmarks manage ICT risk?"
    labels = ["Regulation (EC) No 1060/2009", "Regulation (EU) 2016/1011", "Directive 2013/36/EU"]
    title = "Act amending Regulations (EC) No 1060/2009 and (EU) 2016/1011 and Directive 2013/36/EU"
    evidence = [
        [title],
        [title, "Amendments to Regulation (EU) 2016/1011: administrators of critical benchmarks shall manage ICT risk"],
        [title],
    ]
    assert order_answers(question, labels, evidence) == [1, 0, 2]  # the benchmarks article, then by kind
    assert order_answers("Which act?", ["B", "A"], [[], []]) == [0, 1]  # nothing to tell them apart: query order


def test_a_target_question_reads_the_quantified_target(retriever):
    # "The Plan sets a target of 12 GW of installed solar capacity in Nordland by 31 December 2030."
    result = retriever.retrieve("What is the 2030 target for installed solar capacity in Nordland?")
    assert result.sexpr.startswith("(JOIN (R [ target amount ])")
    assert [a.label for a in result.answers][:1] == ["12 GW"]
    (fact, *_) = result.triples
    assert "12 GW of installed solar capacity" in fact.subject_label and fact.predicate_label == "target amount"


class _CountingLearned:
    """A learned parser's fixed output that counts its decodes (each costs seconds on a CPU)."""

    name = "lora"

    def __init__(self, text: str):
        self.text, self.calls = text, 0

    def parse(self, question: str):
        from spr.parsing.candidate import parse_outputs

        self.calls += 1
        return parse_outputs([self.text], [0.9])


def test_a_learned_parser_decodes_only_when_no_policy_shape_answers(retriever, monkeypatch):
    from spr.parsing.factory import ShapesFirst

    model = _CountingLearned("(JOIN [ issues ] [ National Solar Plan ])")
    monkeypatch.setattr(retriever, "parser", ShapesFirst(model))
    shaped = retriever.retrieve("What is the 2030 target for installed solar capacity in Nordland?")
    assert [a.label for a in shaped.answers][:1] == ["12 GW"] and model.calls == 0
    assert shaped.parses and all(p.startswith("(JOIN (R [ target") for p in shaped.parses)
    unshaped = retriever.retrieve("Which agency issued the National Solar Plan?")  # no policy shape reads "which agency"
    assert model.calls == 1 and unshaped.parser == "lora"
    assert [a.label for a in unshaped.answers] == ["Energy Bureau (National)"]
    assert unshaped.timings_ms["parse"] <= unshaped.timings_ms["total"]
