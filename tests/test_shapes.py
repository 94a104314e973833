"""SHACL shapes: the generated files are current and stable, the validator catches domain/range
and structural violations on the right node, and the sample KB conforms."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pyoxigraph
import pyshacl
import pytest
import rdflib
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.namespace import RDF, SH

from core.errors import InputError
from kgpipeline.ontology import read_ontologies
from kgpipeline.shacl import ShapeValidator, ValidationReport, Violation, load_shapes_graph
from kgpipeline.shapes import GENERATED_DIR, SHAPES_NS, generate_shapes, write_shapes
from store.vocab import PKB

ROOT = Path(__file__).resolve().parents[1]
ONTOLOGY_DIR = ROOT / "ontologies"
SHAPES_DIR = ROOT / "shapes"
SAMPLE_KB = ROOT / "examples" / "sample-kb.trig"
ID = "https://w3id.org/policykb/id/"

PREFIXES = """
@prefix pkb: <https://w3id.org/policykb/ontology#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
@prefix : <https://w3id.org/policykb/id/> .
"""

# A document with one chunk that satisfies every core shape; tests break one thing at a time.
VALID_DOC = """
:doc a pkb:Notice ; dcterms:title "Notice on Grid Access" ; dcterms:issued "2024-03-01T00:00:00"^^xsd:dateTime .
:chunk a pkb:Chunk ; pkb:partOfDocument :doc ; pkb:text "Grid companies shall connect projects." ;
    pkb:startOffset 0 ; pkb:endOffset 38 ; pkb:tokenCount 7 .
"""


@pytest.fixture(scope="module")
def validator() -> ShapeValidator:
    return ShapeValidator(SHAPES_DIR, ONTOLOGY_DIR)


def graph(turtle: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=PREFIXES + turtle, format="turtle")


def sample_dataset() -> rdflib.Dataset:
    dataset = rdflib.Dataset()
    dataset.parse(SAMPLE_KB, format="trig")
    return dataset


def kinds(report: ValidationReport, focus: str) -> set[tuple[str, str | None]]:
    """(constraint component, path) pairs reported for one focus node given by local id."""
    return {(v.constraint_name, v.path) for v in report.for_focus(ID + focus)}


# --- the generated files -----------------------------------------------------------------------


def test_checked_in_generated_shapes_are_current():
    expected = generate_shapes(ONTOLOGY_DIR)
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in (SHAPES_DIR / GENERATED_DIR).glob("*.ttl")}
    hint = "shapes/generated/ is out of date with ontologies/: run `policykb shapes` and commit the result"
    assert sorted(on_disk) == sorted(expected), hint
    for name, text in expected.items():
        assert on_disk[name] == text, f"{name}: {hint}"


def test_generation_is_deterministic_and_every_shape_has_an_iri():
    first, second = generate_shapes(ONTOLOGY_DIR), generate_shapes(ONTOLOGY_DIR)
    assert first == second
    assert sorted(first) == ["core.ttl", "general-policy.ttl", "legal-regulation.ttl", "standard.ttl"]
    for name, text in first.items():
        assert "_:" not in text and "[" not in text, name
        shapes = rdflib.Graph().parse(data=text, format="turtle")
        for kind in (SH.NodeShape, SH.PropertyShape):
            for shape in shapes.subjects(RDF.type, kind):
                assert isinstance(shape, rdflib.URIRef) and str(shape).startswith(SHAPES_NS), (name, shape)


def test_every_property_gets_a_domain_and_a_range_shape():
    onto = read_ontologies(ONTOLOGY_DIR)
    shapes = rdflib.Graph()
    for text in generate_shapes(ONTOLOGY_DIR).values():
        shapes.parse(data=text, format="turtle")
    for prop in onto.properties.values():
        domain = rdflib.URIRef(f"{SHAPES_NS}{prop.local_name}-domain")
        range_ = rdflib.URIRef(f"{SHAPES_NS}{prop.local_name}-range")
        assert shapes.value(domain, SH.targetSubjectsOf) == rdflib.URIRef(prop.iri)
        assert shapes.value(range_, SH.path) == rdflib.URIRef(prop.iri)
        if prop.kind == "datatype":
            assert shapes.value(range_, SH.datatype) == rdflib.URIRef(prop.range[0])
        elif len(prop.range) > 1:
            assert shapes.value(range_, SH["or"]) is not None  # a union becomes sh:or
        else:
            assert shapes.value(range_, SH["class"]) == rdflib.URIRef(prop.range[0])


def test_write_shapes_writes_generated_files_and_drops_stale_ones(tmp_path):
    out = tmp_path / "shapes"
    (out / GENERATED_DIR).mkdir(parents=True)
    (out / GENERATED_DIR / "renamed-away.ttl").write_text("# stale\n")
    (out / "core.ttl").write_text("# hand-written, must survive\n")
    written = write_shapes(ONTOLOGY_DIR.resolve(), out.resolve())
    assert [p.name for p in written] == sorted(generate_shapes(ONTOLOGY_DIR))
    assert not (out / GENERATED_DIR / "renamed-away.ttl").exists()
    assert (out / "core.ttl").read_text() == "# hand-written, must survive\n"
    assert (out / GENERATED_DIR / "core.ttl").read_text() == generate_shapes(ONTOLOGY_DIR)["core.ttl"]


def test_shapes_are_valid_shacl():
    # pySHACL checks the shapes graph against the SHACL-for-SHACL shapes first.
    conforms, _report, text = pyshacl.validate(rdflib.Graph(), shacl_graph=load_shapes_graph(SHAPES_DIR), meta_shacl=True)
    assert conforms, text


# --- domain and range -------------------------------------------------------------------------


def test_agency_issuing_a_policy_conforms(validator):
    # The subject is an Agency, an Actor only through Agency ⊑ Authority ⊑ Actor.
    report = validator.validate(graph("""
        :eb a pkb:Agency ; skos:prefLabel "Energy Bureau"@en .
        :notice a pkb:Policy ; skos:prefLabel "Notice on Distributed Photovoltaics"@en .
        :eb pkb:issues :notice .
    """))
    assert report == ValidationReport(conforms=True, violations=())


def test_policy_issuing_an_agency_violates_domain_and_range(validator):
    report = validator.validate(graph("""
        :eb a pkb:Agency ; skos:prefLabel "Energy Bureau"@en .
        :notice a pkb:Policy ; skos:prefLabel "Notice on Distributed Photovoltaics"@en .
        :notice pkb:issues :eb .
    """))
    assert report.conforms is False
    assert {(v.shape, v.constraint_name) for v in report.violations} == {
        (SHAPES_NS + "issues-domain", "ClassConstraintComponent"),
        (SHAPES_NS + "issues-range", "OrConstraintComponent"),
    }
    # Both name the subject as focus; the range result also carries the whole triple.
    assert kinds(report, "notice") == {("ClassConstraintComponent", None), ("OrConstraintComponent", PKB + "issues")}
    range_result = next(v for v in report.violations if v.shape.endswith("issues-range"))
    assert range_result.value == f"<{ID}eb>"
    assert "rdfs:range" in range_result.message and report.for_focus(ID + "eb") == ()


def test_untyped_object_fails_the_range_check(validator):
    # Per-chunk validation must include the types of the entities a relation points to.
    report = validator.validate(graph("""
        :eb a pkb:Agency ; skos:prefLabel "Energy Bureau"@en .
        :eb pkb:issues :something .
    """))
    assert kinds(report, "eb") == {("OrConstraintComponent", PKB + "issues")}


def test_literal_with_wrong_datatype_names_subject_path_and_value(validator):
    report = validator.validate(graph("""
        :d a pkb:Deadline ; skos:prefLabel "by 2025"@en ; pkb:dateValue "2025-01-01" .
    """))
    [violation] = report.violations
    assert violation == Violation(
        focus_node=f"<{ID}d>",
        path=PKB + "dateValue",
        value='"2025-01-01"',
        constraint=str(SH.DatatypeConstraintComponent),
        message="Value of pkb:dateValue must be of datatype xsd:dateTime (rdfs:range)",
        shape=SHAPES_NS + "dateValue-range",
    )


def test_rdfs_inference_over_the_ontology_would_hide_a_domain_violation():
    # Why ShapeValidator materialises only subclass types: with ont_graph + RDFS entailment the
    # domain axiom itself makes the reversed subject an Actor, and the domain shape passes.
    data = graph(":notice a pkb:Policy ; skos:prefLabel \"Notice\"@en ; pkb:issues :doc . :doc a pkb:Notice .")
    _conforms, report, _text = pyshacl.validate(
        data, shacl_graph=load_shapes_graph(SHAPES_DIR), ont_graph=read_ontologies(ONTOLOGY_DIR).graph, inference="rdfs"
    )
    domain_shape = rdflib.URIRef(SHAPES_NS + "issues-domain")
    assert domain_shape not in set(report.objects(None, SH.sourceShape))


# --- hand-written core shapes -----------------------------------------------------------------


def test_minimal_document_with_chunk_conforms(validator):
    assert validator.validate(graph(VALID_DOC)).conforms


# (id, text in VALID_DOC, its replacement, focus node, expected (constraint, path))
CORE_CASES = [
    ("chunk-without-text", 'pkb:text "Grid companies shall connect projects." ;', "",
     "chunk", ("MinCountConstraintComponent", PKB + "text")),
    ("date-as-plain-string", '"2024-03-01T00:00:00"^^xsd:dateTime', '"2024-03-01"',
     "doc", ("DatatypeConstraintComponent", "http://purl.org/dc/terms/issued")),
    ("date-as-xsd-date", '"2024-03-01T00:00:00"^^xsd:dateTime', '"2024-03-01"^^xsd:date',  # outside OWL 2
     "doc", ("DatatypeConstraintComponent", "http://purl.org/dc/terms/issued")),
    ("no-end-offset", "pkb:endOffset 38 ;", "",
     "chunk", ("MinCountConstraintComponent", PKB + "endOffset")),
    ("negative-start", "pkb:startOffset 0 ;", "pkb:startOffset -1 ;",
     "chunk", ("MinInclusiveConstraintComponent", PKB + "startOffset")),
    ("end-before-start", "pkb:startOffset 0 ;", "pkb:startOffset 40 ;",
     "chunk", ("LessThanOrEqualsConstraintComponent", PKB + "startOffset")),
    ("two-documents", "pkb:partOfDocument :doc ;", "pkb:partOfDocument :doc , :law ;",
     "chunk", ("MaxCountConstraintComponent", PKB + "partOfDocument")),
    ("no-document", "pkb:partOfDocument :doc ;", "",
     "chunk", ("MinCountConstraintComponent", PKB + "partOfDocument")),
    ("no-title", 'dcterms:title "Notice on Grid Access" ;', "",
     "doc", ("MinCountConstraintComponent", "http://purl.org/dc/terms/title")),
    ("no-category", ":doc a pkb:Notice ;", ":doc a pkb:Document ;", "doc", ("XoneConstraintComponent", None)),
    ("two-categories", ":doc a pkb:Notice ;", ":doc a pkb:Notice , pkb:Law ;", "doc", ("XoneConstraintComponent", None)),
]


@pytest.mark.parametrize(("old", "new", "focus", "expected"), [c[1:] for c in CORE_CASES], ids=[c[0] for c in CORE_CASES])
def test_core_shape_violations(validator, old, new, focus, expected):
    assert old in VALID_DOC
    data = VALID_DOC.replace(old, new) + ':law a pkb:Law ; dcterms:title "Grid Law" .'
    report = validator.validate(graph(data))
    assert report.conforms is False
    assert expected in kinds(report, focus), report.violations


def test_section_needs_heading_and_order(validator):
    report = validator.validate(graph(VALID_DOC + """
        :sec a pkb:Section ; pkb:partOfDocument :doc ; pkb:sectionOf :doc ; pkb:order -1 .
    """))
    assert kinds(report, "sec") == {
        ("MinCountConstraintComponent", PKB + "heading"),
        ("MinInclusiveConstraintComponent", PKB + "order"),
    }


def test_weights_must_lie_in_unit_interval(validator):
    report = validator.validate(graph("""
        :e a pkb:Agency ; skos:prefLabel "Energy Bureau"@en .
        :l a pkb:SurfaceFormLink ; pkb:surfaceForm "Energy Bureau" ; pkb:linksEntity :e ;
            pkb:priorWeight "1.5"^^xsd:double ; pkb:fusedWeight "0.3"^^xsd:double .
    """))
    assert kinds(report, "l") == {("MaxInclusiveConstraintComponent", PKB + "priorWeight")}


def test_validate_leaves_the_input_graph_unchanged(validator):
    data = graph(VALID_DOC)
    before = set(data)
    validator.validate(data)
    assert set(data) == before  # the supertypes were added to a copy


def test_report_records_are_frozen(validator):
    report = validator.validate(graph(":d a pkb:Deadline ; skos:prefLabel \"x\"@en ; pkb:dateValue \"soon\" ."))
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.conforms = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.violations[0].message = ""  # type: ignore[misc]


def test_missing_or_broken_shapes_raise_input_error(tmp_path):
    with pytest.raises(InputError, match="no shapes"):
        ShapeValidator(tmp_path, ONTOLOGY_DIR)
    shutil.copytree(SHAPES_DIR, tmp_path / "shapes")
    (tmp_path / "shapes" / "broken.ttl").write_text("pkbsh:x a ")
    with pytest.raises(InputError, match="broken.ttl"):
        ShapeValidator(tmp_path / "shapes", ONTOLOGY_DIR)


# --- the sample knowledge base ----------------------------------------------------------------


def test_sample_kb_conforms(validator):
    report = validator.validate(sample_dataset())
    assert report.conforms, report.violations


def test_sample_kb_content():
    dataset = sample_dataset()
    quads = list(dataset.quads((None, None, None, None)))
    assert 60 <= len(quads) <= 180
    flat = rdflib.Graph()
    for s, p, o, _g in quads:
        flat.add((s, p, o))
    pkb = rdflib.Namespace(PKB)
    onto = read_ontologies(ONTOLOGY_DIR)
    # At least two documents per category.
    for category in ("GeneralPolicy", "LegalRegulation", "StandardDocument"):
        members = {PKB + category, *onto.descendants(PKB + category)}
        docs = {s for s, o in flat.subject_objects(RDF.type) if str(o) in members}
        assert len(docs) >= 2, category
    # Two homonymous "Energy Bureau" agencies, told apart by jurisdiction.
    bureaus = set(flat.subjects(rdflib.URIRef("http://www.w3.org/2004/02/skos/core#prefLabel"),
                                rdflib.Literal("Energy Bureau", lang="en")))
    assert len(bureaus) == 2 and all((b, RDF.type, pkb.Agency) in flat for b in bureaus)
    assert len({flat.value(b, pkb.hasJurisdiction) for b in bureaus}) == 2
    # Every named graph is named by a chunk and holds only relation triples (no rdf:type).
    named = {g for _s, _p, _o, g in quads if g is not None and g != DATASET_DEFAULT_GRAPH_ID}
    assert named and all((g, RDF.type, pkb.Chunk) in flat for g in named)
    for _s, p, _o, g in quads:
        if g in named:
            assert p != RDF.type and str(p).startswith(PKB)


def test_sample_kb_answers_a_sparql_query_with_provenance():
    store = pyoxigraph.Store()
    store.load(path=str(SAMPLE_KB), format=pyoxigraph.RdfFormat.TRIG)
    # "What does the Notice on Distributed Photovoltaics support?" and from which chunk.
    rows = store.query(
        """
        PREFIX pkb: <https://w3id.org/policykb/ontology#>
        PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
        SELECT ?label ?chunk WHERE {
          ?notice skos:prefLabel "Notice on Distributed Photovoltaics"@en .
          GRAPH ?chunk { ?notice pkb:supports ?x }
          ?x skos:prefLabel ?label .
          ?chunk pkb:partOfDocument ?doc .
        } ORDER BY ?label
        """
    )
    got = [(row["label"].value, row["chunk"].value) for row in rows]
    chunk = ID + "chunk/notice-distributed-pv-0"
    assert got == [("county pilot programme", chunk), ("rooftop photovoltaic projects", chunk)]
