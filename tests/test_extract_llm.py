"""LLM extractor: prompt and schema from the ontology, mapping literal answers back onto the
text, and one structural check with the real embedded SmolLM2 model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import ModelOutputError, ModelUnavailableError
from kgpipeline.extract.lexicon_extractor import LexiconExtractor
from kgpipeline.extract.llm_extractor import LLMExtractor, build_messages, build_schema, map_answer
from kgpipeline.ontology import read_ontologies
from kgpipeline.records import SourceDocument
from kgpipeline.segment import segment
from store.vocab import PKB

ROOT = Path(__file__).resolve().parents[1]
TEXT = "The National Energy Bureau shall establish a Solar Monitoring Center by 1 September 2025."


@pytest.fixture(scope="module")
def onto():
    return read_ontologies(ROOT / "ontologies")


@pytest.fixture(scope="module")
def lexicons(onto):
    return LexiconExtractor(onto)


def _doc(text: str = TEXT, category: str = "general-policy") -> SourceDocument:
    return SourceDocument("plan", "plan.md", "markdown", "National Solar Plan 2025-2030", text, category=category)


class ScriptedModel:
    """Answers every request with one fixed value (or raises), and records what it was asked."""

    def __init__(self, answer=None, error: Exception | None = None):
        self.answer, self.error, self.requests = answer, error, []

    def complete_json(self, messages, schema):
        self.requests.append((messages, schema))
        if self.error is not None:
            raise self.error
        return json.loads(json.dumps(self.answer))  # a fresh copy, as parsed JSON would be


ANSWER = {
    "entities": [
        {"name": "National Energy Bureau", "type": "Agency"},
        {"name": "solar monitoring center", "type": "Center"},  # case differs from the text
        {"name": "1 September 2025", "type": "Deadline"},
        {"name": "Lunar Energy Agency", "type": "Agency"},  # invented: not in the text
        {"name": 5, "type": "Agency"},  # malformed
        {"name": "Bureau", "type": "Spaceship"},  # type outside the ontology
    ],
    "relations": [
        {"subject": "National Energy Bureau", "property": "establishes", "object": "Solar Monitoring Center"},
        {"subject": "Solar Monitoring Center", "property": "establishes", "object": "National Energy Bureau"},
        {"subject": "Lunar Energy Agency", "property": "supports", "object": "National Energy Bureau"},
        {"subject": "Solar Monitoring Center", "property": "hasDeadline", "object": "1 September 2025"},
        {"subject": "National Energy Bureau", "property": "imposes", "object": "Solar Monitoring Center"},
    ],
}


def test_schema_enums_come_from_the_category_ontology(lexicons):
    general = build_schema(lexicons.lexicon("general-policy"), max_items=5)
    legal = build_schema(lexicons.lexicon("legal-regulation"), max_items=5)
    types = general["properties"]["entities"]["items"]["properties"]["type"]["enum"]
    props = general["properties"]["relations"]["items"]["properties"]["property"]["enum"]
    assert {"Agency", "Center", "Plan", "Deadline"} <= set(types) and "Chunk" not in types and "Document" not in types
    assert {"establishes", "issues", "supports"} <= set(props) and "imposes" not in props and "mentionedIn" not in props
    legal_props = legal["properties"]["relations"]["items"]["properties"]["property"]["enum"]
    assert "imposes" in legal_props and "establishes" not in legal_props
    assert general["properties"]["entities"]["maxItems"] == 5 and general["properties"]["relations"]["maxItems"] == 5
    assert types == sorted(types)


def test_prompt_carries_definitions_domain_range_examples_and_text(onto, lexicons):
    lex = lexicons.lexicon("general-policy")
    system, user = build_messages(onto, lex, TEXT, "National Solar Plan 2025-2030")
    assert system["role"] == "system" and user["role"] == "user"
    agency_definition = onto.classes[PKB + "Agency"].comment
    assert "- Agency: " + agency_definition[:40] in system["content"]
    assert "- issues (Actor -> Document|Legislation|Policy)" in system["content"]
    assert system["content"].count("Example answer:") == 2
    assert TEXT in user["content"] and "National Solar Plan 2025-2030" in user["content"]
    brief, _ = build_messages(onto, lex, TEXT, definition_chars=0)
    assert "- Agency\n" in brief["content"] and len(brief["content"]) < len(system["content"]) / 2


def test_answer_maps_to_exact_offsets_and_type_checked_relations(lexicons):
    lex = lexicons.lexicon("general-policy")
    doc = _doc()
    mentions, relations, dropped = map_answer(ANSWER, TEXT, lex, lexicons.context(doc, "general-policy"), max_items=10)
    assert all(TEXT[m.start : m.end] == m.text for m in mentions)
    got = {(m.text, m.class_iri[len(PKB) :], m.canonical, m.scope) for m in mentions}
    assert got == {
        ("National Energy Bureau", "Agency", "energy bureau", "national"),  # same rules as the lexicon
        ("Solar Monitoring Center", "Center", "solar monitoring center", ""),
        ("1 September 2025", "Deadline", "2025-09-01", ""),
    }
    triples = {(r.subject.text, r.property_iri[len(PKB) :], r.object.text) for r in relations}
    assert triples == {
        ("National Energy Bureau", "establishes", "Solar Monitoring Center"),
        ("Solar Monitoring Center", "hasDeadline", "1 September 2025"),
    }
    assert all(r.cue == "llm" and r.evidence == (0, len(TEXT)) for r in relations)
    assert dropped == {"entity not in text": 1, "malformed entity": 2, "relation type mismatch": 1,
                       "relation end not an entity": 1, "malformed relation": 1}  # fmt: skip


def test_max_items_bounds_the_answer(lexicons):
    lex = lexicons.lexicon("general-policy")
    answer = {"entities": [{"name": "National Energy Bureau", "type": "Agency"}] * 3, "relations": "none"}
    mentions, relations, dropped = map_answer(answer, TEXT, lex, lexicons.context(_doc(), "general-policy"), max_items=2)
    assert len(mentions) == 1 and relations == ()
    assert dropped == {"entities over max_items": 1, "malformed relations": 1}


def test_extract_returns_records_with_attributes_and_counts_drops(onto):
    model = ScriptedModel(ANSWER)
    extractor = LLMExtractor(onto, model, max_items=10)
    doc = _doc()
    chunk = segment(doc).chunks[0]
    out = extractor.extract(chunk, doc, "general-policy")
    assert out.chunk_id == chunk.chunk_id and len(out.mentions) == 3 and len(out.relations) == 2
    assert [(a.subject.text, a.value) for a in out.attributes] == [("1 September 2025", "2025-09-01T00:00:00")]
    assert extractor.dropped["entity not in text"] == 1
    messages, schema = model.requests[0]
    assert schema["properties"]["entities"]["maxItems"] == 10 and TEXT in messages[-1]["content"]


def test_model_errors_propagate_and_non_objects_are_output_errors(onto, lexicons):
    doc = _doc()
    chunk = segment(doc).chunks[0]
    with pytest.raises(ModelUnavailableError):
        LLMExtractor(onto, ScriptedModel(error=ModelUnavailableError("down"))).extract(chunk, doc, "general-policy")
    with pytest.raises(ModelOutputError):
        LLMExtractor(onto, ScriptedModel(["not", "an", "object"])).extract(chunk, doc, "general-policy")


@pytest.mark.slow
def test_real_smollm2_gives_valid_grounded_records(onto, lexicons):
    from core.config import LLMConfig
    from core.llm import make_llm

    llm = make_llm(LLMConfig(max_tokens=192, model_path="smollm2-135m-instruct"), cache_path=None, cache=False)  # the tiny test model
    extractor = LLMExtractor(onto, llm, max_items=3, definition_chars=0)  # short prompt: 2k context
    doc = _doc()
    chunk = segment(doc).chunks[0]
    out = extractor.extract(chunk, doc, "general-policy")
    lex = lexicons.lexicon("general-policy")
    assert out.chunk_id == chunk.chunk_id
    for m in out.mentions:  # the model is weak: check structure, not content
        assert chunk.text[m.start : m.end] == m.text and m.class_iri in lex.mention_classes and m.canonical
    for r in out.relations:
        rule = lex.rules[r.property_iri]
        assert r.subject in out.mentions and r.object in out.mentions
        assert r.subject.class_iri in rule.domain_ok and r.object.class_iri in rule.range_ok
    spans = sorted((m.start, m.end) for m in out.mentions)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # no overlapping mentions
    assert llm.tracker.totals.calls == 1  # one bounded call per chunk
