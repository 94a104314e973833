"""The ontology-lexicon extractor on the sample corpus (through the real preprocess + segment),
on short synthetic texts for single rules, and on real EU regulations."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.text import singular
from kgpipeline.classify import classify
from kgpipeline.extract.lexicon import build_lexicon, normalize_name, trie_pattern, verb_forms
from kgpipeline.extract.lexicon_extractor import LexiconExtractor, sentences
from kgpipeline.ontology import read_ontologies
from kgpipeline.preprocess import discover_files, load_documents
from kgpipeline.records import SourceDocument
from kgpipeline.segment import segment
from store.vocab import PKB, XSD

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "corpus"
EGD = ROOT.parent / "shared" / "data" / "policy_corpora" / "egd_regulations"


@pytest.fixture(scope="module")
def onto():
    return read_ontologies(ROOT / "ontologies")


@pytest.fixture(scope="module")
def corpus(onto):
    """doc_id → (document, category, [(chunk, extraction), ...]) for every sample document."""
    extractor = LexiconExtractor(onto)
    out = {}
    for path in discover_files(CORPUS):
        for doc in load_documents(path).documents:
            category = doc.category or classify(doc).category
            out[doc.doc_id] = (doc, category, [(c, extractor.extract(c, doc, category)) for c in segment(doc).chunks])
    return out


def _mentions(corpus, doc_id):
    return [m for _, ex in corpus[doc_id][2] for m in ex.mentions]


def _triples(corpus, doc_id):
    return {(r.subject.canonical, r.property_iri[len(PKB) :], r.object.canonical)
            for _, ex in corpus[doc_id][2] for r in ex.relations}  # fmt: skip


def _extract_text(onto, text: str, category: str, title: str = "", **meta):
    doc = SourceDocument("synthetic", "synthetic.txt", "text", title, text, metadata=meta, category=category)
    extractor = LexiconExtractor(onto)
    return [extractor.extract(c, doc, category) for c in segment(doc).chunks]


def test_offsets_are_exact_and_records_fit_the_ontology(corpus, onto):
    lexicons = {cat: build_lexicon(onto, cat) for cat in ("general-policy", "legal-regulation", "standard")}
    total = 0
    for doc, category, pairs in corpus.values():
        lex = lexicons[category]
        for chunk, ex in pairs:
            assert ex.chunk_id == chunk.chunk_id
            for m in ex.mentions:
                total += 1
                assert chunk.text[m.start : m.end] == m.text
                assert m.class_iri in lex.mention_classes, (doc.doc_id, m)
                assert m.canonical and m.canonical == m.canonical.strip()
            for r in ex.relations:
                assert r.subject in ex.mentions and r.object in ex.mentions
                assert r.evidence[0] <= min(r.subject.start, r.object.start)
                assert max(r.subject.end, r.object.end) <= r.evidence[1]
                rule = lex.rules[r.property_iri]
                assert r.subject.class_iri in rule.domain_ok and r.object.class_iri in rule.range_ok
            for a in ex.attributes:
                assert a.subject in ex.mentions and a.datatype.startswith(XSD)
    assert total > 100


def test_national_and_provincial_energy_bureau_share_canonical_name_not_scope(corpus):
    national = {m.scope for m in _mentions(corpus, "national-solar-plan") if m.canonical == "energy bureau"}
    notice = {(m.text, m.scope) for m in _mentions(corpus, "westmark-notice-distributed-pv") if m.canonical == "energy bureau"}
    assert national == {"national"}
    # the full name with its jurisdiction, a bare place name, and the national body named alongside
    assert ("Energy Bureau of Westmark Province", "westmark province") in notice
    assert ("Westmark Energy Bureau", "westmark province") in notice
    assert ("National Energy Bureau", "national") in notice
    # "the Energy Bureau" without jurisdiction takes the document's (from the title)
    bare = {m.scope for m in _mentions(corpus, "westmark-wind-guidelines") if m.text == "Energy Bureau"}
    assert bare == {"westmark province"}


@pytest.mark.parametrize(
    ("doc_id", "triple"),
    [
        # "The National Energy Bureau shall establish a Solar Monitoring Center by 1 September 2025."
        ("national-solar-plan", ("energy bureau", "establishes", "solar monitoring center")),
        # "The National Energy Bureau issues this Plan ..." — "this Plan" is the document itself
        ("national-solar-plan", ("energy bureau", "issues", "national solar plan 2025-2030")),
        ("westmark-notice-distributed-pv", ("notice on distributed photovoltaics in westmark province", "supports",
                                            "national solar plan 2025-2030")),  # fmt: skip
        # "The National Energy Bureau imposes the fine by administrative decision."
        ("nl-rea-2024", ("energy bureau", "imposes", "fine")),
        # "The guidelines implement the Renewable Energy Act of 2024 at provincial level."
        ("westmark-wind-guidelines", ("guidelines for onshore wind siting in westmark province", "implements",
                                      "renewable energy act of 2024")),  # fmt: skip
        # "The Ministry of Climate and Energy adopted this strategy ..."
        ("hydrogen-strategy", ("ministry of climate and energy", "issues", "nordland hydrogen strategy")),
        ("national-solar-plan", ("solar monitoring center", "hasDeadline", "2025-09-01")),
    ],
)
def test_expected_relations_fire(corpus, doc_id, triple):
    assert triple in _triples(corpus, doc_id)


def test_relations_with_wrong_type_or_direction_are_not_emitted(corpus):
    # "The Westmark Climate Fund will finance EUR 30 million": Funds is not in allocates' domain.
    assert not [t for t in _triples(corpus, "westmark-climate-plan") if t[1] == "allocates"]
    # Only the Bureau issues the Plan, never the reverse.
    assert ("national solar plan 2025-2030", "issues", "energy bureau") not in _triples(corpus, "national-solar-plan")
    # A legal regulation has no pkb:establishes (general-policy only), though "establishes" is written.
    assert not [t for t in _triples(corpus, "nl-rea-2024") if t[1] == "establishes"]


def test_passive_voice_swaps_roles(onto):
    text = ("The Wind Action Plan is issued by the Energy Agency of Eastland Province. "
            "The Wind Action Plan shall be implemented by the Grid Agency. "
            "The Solar Action Plan was issued in 2024.")  # fmt: skip
    (ex,) = _extract_text(onto, text, "general-policy")
    triples = {(r.subject.canonical, r.property_iri[len(PKB) :], r.object.canonical, r.subject.scope) for r in ex.relations}
    assert ("energy agency", "issues", "wind action plan", "eastland province") in triples
    assert ("grid agency", "implements", "wind action plan", "") in triples
    # no agent named: nothing is guessed
    assert not [t for t in triples if t[2] == "solar action plan"]


def test_jurisdiction_in_the_name_moves_to_scope(onto):
    text = "The Eastland Provincial Energy Bureau and the Energy Bureau of the Province of Eastland met the Commission."
    (ex,) = _extract_text(onto, text, "general-policy", title="Eastland Province Wind Plan")
    got = {(m.text, m.canonical, m.scope) for m in ex.mentions}
    assert ("Eastland Provincial Energy Bureau", "energy bureau", "eastland province") in got
    assert ("Energy Bureau of the Province of Eastland", "energy bureau", "eastland province") in got
    assert ("Commission", "commission", "eastland province") in got  # named without jurisdiction


def test_dates_deadlines_amounts_and_targets(onto):
    text = ("The Plan sets a target of 12 GW by 31 December 2030. The ministry will provide EUR 7 500 000 000 "
            "from 1 June 2025. Reports are due by 2028.")  # fmt: skip
    (ex,) = _extract_text(onto, text, "general-policy", title="Wind Plan")
    by_text = {m.text: m for m in ex.mentions}
    assert by_text["31 December 2030"].class_iri == PKB + "Deadline"
    assert by_text["1 June 2025"].class_iri == PKB + "Date"
    assert by_text["2028"].class_iri == PKB + "Deadline"
    assert by_text["EUR 7 500 000 000"].class_iri == PKB + "Funds"
    assert by_text["target of 12 GW"].class_iri == PKB + "Target"
    attrs = {(a.subject.text, a.property_iri[len(PKB) :], a.value, a.datatype[len(XSD) :]) for a in ex.attributes}
    assert ("31 December 2030", "dateValue", "2030-12-31T00:00:00", "dateTime") in attrs  # midnight: OWL 2 has no xsd:date
    assert ("1 June 2025", "dateValue", "2025-06-01T00:00:00", "dateTime") in attrs
    assert ("target of 12 GW", "targetValue", "12 GW", "string") in attrs
    assert not [a for a in attrs if a[0] == "2028"]  # a year alone is no calendar date
    triples = {(r.subject.text, r.property_iri[len(PKB) :], r.object.text) for r in ex.relations}
    assert ("Plan", "hasTarget", "target of 12 GW") in triples
    assert ("target of 12 GW", "hasDeadline", "31 December 2030") in triples


def test_acronym_defined_in_the_document_is_the_same_entity(onto):
    text = "This Regulation establishes the Just Transition Fund (JTF).\n\nThe JTF shall support regions."
    exs = _extract_text(onto, text, "general-policy", title="Regulation (EU) 2021/1056")
    jtf = {(m.text, m.canonical, m.class_iri) for ex in exs for m in ex.mentions if m.canonical == "just transition fund"}
    assert jtf == {("Just Transition Fund (JTF)", "just transition fund", PKB + "Funds"),
                   ("JTF", "just transition fund", PKB + "Funds")}  # fmt: skip


def test_output_is_deterministic(onto, corpus):
    doc, category, pairs = corpus["westmark-notice-distributed-pv"]
    again = LexiconExtractor(onto)
    for chunk, ex in pairs:
        assert again.extract(chunk, doc, category) == ex
        assert list(ex.mentions) == sorted(ex.mentions, key=lambda m: (m.start, m.end))


def test_unknown_category_is_an_input_error(onto):
    doc = SourceDocument("d", "d.txt", "text", "", "Some text.")
    chunk = segment(doc).chunks[0]
    with pytest.raises(InputError):
        LexiconExtractor(onto).extract(chunk, doc, "poetry")


@pytest.mark.skipif(not EGD.is_dir(), reason="shared EGD corpus not available")
def test_real_eu_regulations(onto):
    extractor = LexiconExtractor(onto)
    counts = {"mentions": 0, "relations": 0, "commission": 0}
    for name in ("32018R0842.md", "32021R1119.md"):
        for doc in load_documents(EGD / name).documents:
            category = doc.category or classify(doc).category
            for chunk in segment(doc).chunks:
                ex = extractor.extract(chunk, doc, category)
                assert all(chunk.text[m.start : m.end] == m.text for m in ex.mentions)
                counts["mentions"] += len(ex.mentions)
                counts["relations"] += len(ex.relations)
                counts["commission"] += sum(m.canonical == "commission" and m.scope == "european union" for m in ex.mentions)
    assert counts["mentions"] > 200 and counts["relations"] > 5 and counts["commission"] > 10


def test_name_helpers():
    assert normalize_name("  The  Solar\nMonitoring Centre ") == "solar monitoring center"
    assert normalize_name("Plan 2025\u20132030") == "plan 2025-2030"
    assert [singular(w) for w in ("bureaus", "authorities", "centres", "bus", "analysis")] == [
        "bureau", "authority", "centre", "bus", "analysis"]  # fmt: skip
    assert verb_forms("establish") == {"establish": False, "establishes": False, "establishing": False, "established": True}
    assert set(verb_forms("be responsible for")) >= {"is responsible for", "are responsible for"}
    assert verb_forms("in accordance with") == {"in accordance with": False}
    assert sentences("No. 5 applies. Art. 3 too; and e.g. this.\nNext") == [(0, 14), (14, 26), (26, 42), (42, 46)]


def test_trie_pattern_matches_exactly_the_words():
    import re

    words = ["in", "issue", "issues", "issued", "by", "before", "be within"]
    pattern = re.compile(r"\b(?:" + trie_pattern(words) + r")\b")
    assert {pattern.fullmatch(w) is not None for w in words} == {True}
    assert [pattern.fullmatch(w) for w in ("i", "iss", "issuer", "be")] == [None] * 4
