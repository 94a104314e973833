"""The ontologies: they load offline in owlready2 and the OWL API, HermiT finds them consistent,
every term is documented for extraction prompts, and the typed reader sees them right."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import owlready2
import pytest
import rdflib
from pyoxigraph import RdfFormat, Triple, serialize
from rdflib.namespace import OWL, RDF

from core.errors import InputError
from kgpipeline.ontology import CATEGORY_ONTOLOGY, read_ontologies
from store.vocab import DCTERMS, ELI, ONTOLOGY_BASE, PKB, PROV, XSD

ROOT = Path(__file__).resolve().parents[1]
ONTOLOGY_DIR = ROOT / "ontologies"
SAMPLE_KB = ROOT / "examples" / "sample-kb.trig"
ID = "https://w3id.org/policykb/id/"
NAMES = ("core", "general-policy", "legal-regulation", "standard")
CATEGORY_NAMES = NAMES[1:]

EGD_TYPES = ("Solution", "Date", "GeographicalArea", "Policy", "Actor", "Sector", "Deadline",
             "Resource", "Legislation", "Funds", "Programme")


@pytest.fixture(scope="module")
def onto():
    return read_ontologies(ONTOLOGY_DIR)


# --- owlready2 and HermiT -------------------------------------------------------------------------


def _world_with_ontologies() -> owlready2.World:
    """A fresh owlready2 world holding the three category ontologies, whose ``owl:imports`` of core
    must be resolved from ``ontologies/`` alone (there is no network)."""
    world = owlready2.World()
    owlready2.onto_path.insert(0, str(ONTOLOGY_DIR))
    try:
        for name in CATEGORY_NAMES:
            world.get_ontology(ONTOLOGY_BASE + name).load()
    finally:
        owlready2.onto_path.remove(str(ONTOLOGY_DIR))
    return world


def _load_sample(world: owlready2.World, extra_turtle: str = "") -> None:
    """The sample KB, all graphs flattened (owlready2 reads N-Triples, not TriG)."""
    dataset = rdflib.Dataset()
    dataset.parse(SAMPLE_KB, format="trig")
    flat = rdflib.Graph()
    for s, p, o, _g in dataset.quads((None, None, None, None)):
        flat.add((s, p, o))
    if extra_turtle:
        flat.parse(data=extra_turtle, format="turtle")
    with tempfile.NamedTemporaryFile("wb", suffix=".nt") as nt:
        nt.write(flat.serialize(format="nt", encoding="utf-8"))
        nt.flush()
        with open(nt.name, "rb") as fileobj:
            world.get_ontology("https://w3id.org/policykb/id/sample-kb").load(fileobj=fileobj, format="ntriples")


def _hermit(world: owlready2.World) -> None:
    # HermiT's defaults, as in Protégé: no ignore_unsupported_datatypes, so a datatype outside the
    # OWL 2 datatype map (xsd:date, which older versions wrote) would make it fail.
    owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)


def test_owlready2_resolves_core_import_offline():
    world = _world_with_ontologies()
    loaded = {o.base_iri for o in world.ontologies.values()}
    assert {ONTOLOGY_BASE + n + "#" for n in NAMES} <= loaded
    core = world.get_ontology(ONTOLOGY_BASE + "core")
    for name in CATEGORY_NAMES:
        assert core in world.get_ontology(ONTOLOGY_BASE + name).imported_ontologies
    # Terms of every file end up in the one pkb namespace.
    assert world[PKB + "Agency"] is not None and world[PKB + "establishes"] is not None
    assert world[PKB + "Penalty"] is not None and world[PKB + "TechnicalRequirement"] is not None


def test_hermit_finds_ontologies_consistent_without_unsatisfiable_classes():
    # One run over all four suffices: if the union is consistent and has no unsatisfiable class,
    # so does each part (OWL is monotonic).
    world = _world_with_ontologies()
    _hermit(world)
    assert list(world.inconsistent_classes()) == []
    # HermiT did classify: Agency sits under Actor via Authority.
    assert world[PKB + "Actor"] in world[PKB + "Agency"].ancestors()


def test_hermit_accepts_the_sample_kb():
    world = _world_with_ontologies()
    _load_sample(world)
    _hermit(world)  # raises OwlReadyInconsistentOntologyError if the data contradicts the axioms
    assert list(world.inconsistent_classes()) == []
    bureau = world["https://w3id.org/policykb/id/entity/energy-bureau-national"]
    assert world[PKB + "Agency"] in bureau.is_a


def _pipeline_ntriples() -> bytes:
    """What ingest writes for the sample corpus (lexicon and policy-fact extractors), as N-Triples."""
    from kgpipeline.classify import classify
    from kgpipeline.extract.lexicon_extractor import LexiconExtractor
    from kgpipeline.extract.policy_facts import PolicyFactExtractor
    from kgpipeline.preprocess import discover_files, load_documents
    from kgpipeline.segment import segment
    from kgpipeline.write import build_document_graphs

    lexicon = LexiconExtractor(read_ontologies(ONTOLOGY_DIR))
    extractor = PolicyFactExtractor(lexicon, lexicon)
    triples: set[Triple] = set()  # graphs flattened, as in _load_sample
    for path in discover_files(ROOT / "examples" / "corpus"):
        for doc in load_documents(path).documents:
            category = doc.category or classify(doc).category
            seg = segment(doc)
            out = build_document_graphs(doc, category, seg, [extractor.extract(c, doc, category) for c in seg.chunks], ID)
            triples.update(Triple(q.subject, q.predicate, q.object) for q in out.quads)
    return serialize(sorted(triples, key=str), format=RdfFormat.N_TRIPLES)


def test_hermit_accepts_what_the_pipeline_writes():
    data = _pipeline_ntriples()
    # Document dates and deadlines are there, typed as the ontology's ranges say.
    assert b'^^<http://www.w3.org/2001/XMLSchema#dateTime>' in data and b"XMLSchema#date>" not in data
    world = _world_with_ontologies()
    world.get_ontology(ID + "pipeline").load(fileobj=io.BytesIO(data), format="ntriples")
    _hermit(world)
    assert list(world.inconsistent_classes()) == []


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ('"2025-01-01"^^xsd:date', owlready2.OwlReadyJavaError),  # UnsupportedDatatypeException
        ('"2025-01-01"', owlready2.OwlReadyInconsistentOntologyError),  # a string is no dateTime
    ],
)
def test_hermit_defaults_refuse_dates_that_are_not_xsd_datetime(value, error):
    world = _world_with_ontologies()
    _load_sample(world, f"@prefix xsd: <{XSD}> . <{ID}entity/by-2026> a <{PKB}Deadline> ; <{PKB}dateValue> {value} .")
    with pytest.raises(error):
        _hermit(world)


def test_hermit_rejects_a_reversed_issues_triple():
    # The domain axiom makes the Policy an Actor, which is disjoint from Policy.
    world = _world_with_ontologies()
    _load_sample(
        world,
        "<https://w3id.org/policykb/id/entity/notice-distributed-pv> "
        f"<{PKB}issues> <https://w3id.org/policykb/id/entity/energy-bureau-national> .",
    )
    with pytest.raises(owlready2.OwlReadyInconsistentOntologyError):
        _hermit(world)


_OWLAPI_CHECK = """
import java.io.File;
import org.semanticweb.owlapi.apibinding.OWLManager;
import org.semanticweb.owlapi.model.*;
import org.semanticweb.owlapi.profiles.*;
import org.semanticweb.owlapi.util.AutoIRIMapper;

public class OwlApiCheck {
  public static void main(String[] args) throws Exception {
    File dir = new File(args[0]);
    for (int i = 1; i < args.length; i++) {
      OWLOntologyManager m = OWLManager.createOWLOntologyManager();
      m.addIRIMapper(new AutoIRIMapper(dir, false));  // imports from the folder, never the web
      OWLOntology o = m.loadOntologyFromOntologyDocument(new File(dir, args[i]));
      OWLProfileReport r = new OWL2DLProfile().checkOntology(o);
      System.out.println(args[i] + " imports=" + o.getImports().size() + " dl=" + r.isInProfile());
      for (OWLProfileViolation v : r.getViolations()) System.out.println("  " + v);
    }
  }
}
"""


def test_owl_api_parses_files_as_owl2_dl(tmp_path):
    """Protégé reads ontologies with the OWL API; the one bundled in owlready2's HermiT.jar must
    parse each file, resolve imports from the folder, and find it inside the OWL 2 DL profile."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac: the OWL API check needs a JDK")
    jar = Path(owlready2.__file__).parent / "hermit" / "HermiT.jar"
    (tmp_path / "OwlApiCheck.java").write_text(_OWLAPI_CHECK)
    subprocess.run([javac, "-cp", str(jar), "OwlApiCheck.java"], cwd=tmp_path, check=True, timeout=120)
    files = [f"{n}.owl" for n in NAMES]
    out = subprocess.run(
        ["java", "-cp", f"{jar}:{tmp_path}", "OwlApiCheck", str(ONTOLOGY_DIR), *files],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line for line in out.stdout.splitlines() if not line.startswith("  ")]
    assert lines == [
        "core.owl imports=0 dl=true",
        "general-policy.owl imports=1 dl=true",
        "legal-regulation.owl imports=1 dl=true",
        "standard.owl imports=1 dl=true",
    ], out.stdout


# --- files, IRIs, catalog -------------------------------------------------------------------------


def test_file_names_match_ontology_iris_and_category_files_import_core():
    for name in NAMES:
        graph = rdflib.Graph().parse(ONTOLOGY_DIR / f"{name}.owl", format="xml")
        assert list(graph.subjects(RDF.type, OWL.Ontology)) == [rdflib.URIRef(ONTOLOGY_BASE + name)]
        imports = set(graph.objects(rdflib.URIRef(ONTOLOGY_BASE + name), OWL.imports))
        assert imports == (set() if name == "core" else {rdflib.URIRef(ONTOLOGY_BASE + "core")})


def test_protege_catalog_maps_every_ontology_iri_to_its_file():
    ns = "{urn:oasis:names:tc:entity:xmlns:xml:catalog}"
    root = ET.parse(ONTOLOGY_DIR / "catalog-v001.xml").getroot()
    mapping = {u.get("name"): u.get("uri") for u in root.iter(f"{ns}uri")}
    assert mapping == {ONTOLOGY_BASE + n: f"{n}.owl" for n in NAMES}
    assert all((ONTOLOGY_DIR / f).is_file() for f in mapping.values())


def test_declared_terms_are_pkb_or_known_external_vocabularies():
    allowed = (PKB, DCTERMS, PROV, ELI, XSD, "http://www.w3.org/2004/02/skos/core#")
    for name in NAMES:
        graph = rdflib.Graph().parse(ONTOLOGY_DIR / f"{name}.owl", format="xml")
        for kind in (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty):
            for term in graph.subjects(RDF.type, kind):
                if isinstance(term, rdflib.URIRef):
                    assert str(term).startswith(allowed), f"{name}: unexpected term {term}"
        # External terms are referenced, never imported.
        assert all(str(i).startswith(ONTOLOGY_BASE) for i in graph.objects(None, OWL.imports))


# --- documentation of every term --------------------------------------------------------------------


def test_every_term_has_label_definition_cues_domain_and_range(onto):
    assert onto.lint() == []
    for term in [*onto.classes.values(), *onto.properties.values()]:
        assert len(term.comment) >= 40, f"{term.iri}: definition too short for a prompt"
        assert len(term.alt_labels) >= 3, f"{term.iri}: needs several lexical cues"
    for prop in onto.properties.values():
        assert prop.domain and prop.range, prop.iri
        if prop.kind == "datatype":
            assert len(prop.range) == 1 and prop.range[0].startswith(XSD), prop.iri


def test_lint_reports_missing_documentation(tmp_path):
    text = (ONTOLOGY_DIR / "core.owl").read_text()
    # Drop the definition of one class: lint must name exactly that gap.
    start = text.index('<rdfs:comment xml:lang="en">A structural division')
    end = text.index("</rdfs:comment>", start) + len("</rdfs:comment>")
    (tmp_path / "core.owl").write_text(text[:start] + text[end:])
    assert read_ontologies(tmp_path).lint() == ["core: pkb:Section has no rdfs:comment"]


# --- content ----------------------------------------------------------------------------------------


def test_document_categories_and_policy_entity_types(onto):
    for category in CATEGORY_ONTOLOGY:
        assert PKB + "Document" in onto.classes[category].superclasses
    assert PKB + "LegalRegulation" in onto.descendants(PKB + "Document")
    assert ELI + "LegalResource" in onto.ancestors(PKB + "Law")
    for local in EGD_TYPES:
        cls = onto.classes[PKB + local]
        assert cls.ontology == "core" and PKB + "Entity" in cls.superclasses
    assert {PKB + "Authority", PKB + "Actor", PKB + "Entity"} <= onto.ancestors(PKB + "Agency")


@pytest.mark.parametrize(
    ("name", "classes", "relations"),
    [
        ("general-policy", ["Indicator", "Mechanism", "Center", "Plan", "Infrastructure", "Target"],
         ["establishes", "proposes", "constructs", "supports"]),
        ("legal-regulation", ["Principle", "Purpose", "Responsibility", "Obligation", "Penalty"],
         ["appliesTo", "compliesWith", "achieves", "imposes"]),
        ("standard", ["Term", "TechnicalRequirement", "Scope", "Standard"],
         ["defines", "specifies", "references", "hasScope"]),
    ],
)
def test_category_ontology_terms(onto, name, classes, relations):
    assert {onto.classes[PKB + c].ontology for c in classes} == {name}
    assert {onto.properties[PKB + r].ontology for r in relations} == {name}
    visible = {p.local_name for p in onto.properties_for(name)}
    assert {"issues", "implements", *relations} <= visible
    assert onto.scope(name) == ("core", name)
    # Another category's terms are not visible.
    other = next(n for n in CATEGORY_NAMES if n != name)
    assert not {p.iri for p in onto.properties_for(other)} & {PKB + r for r in relations}


def test_issues_is_actor_to_policy_or_document(onto):
    issues = onto.properties[PKB + "issues"]
    assert issues.kind == "object" and issues.ontology == "core"
    assert issues.domain == (PKB + "Actor",)
    assert issues.range == (PKB + "Document", PKB + "Legislation", PKB + "Policy")
    assert {"issue", "publish", "promulgate"} <= set(issues.alt_labels)


def test_provenance_properties_align_with_dcterms_and_prov(onto):
    part_of = onto.properties[PKB + "partOfDocument"]
    assert part_of.domain == (PKB + "Chunk", PKB + "Section") and part_of.range == (PKB + "Document",)
    assert set(part_of.superproperties) == {DCTERMS + "isPartOf", PROV + "wasDerivedFrom"}
    for local in ("startOffset", "endOffset", "tokenCount", "order"):
        assert onto.properties[PKB + local].range == (XSD + "integer",)
    # Dates are xsd:dateTime, which is in the OWL 2 datatype map (xsd:date is not).
    assert onto.properties[PKB + "dateValue"].range == (XSD + "dateTime",)
    assert onto.properties[PKB + "effectiveDate"].range == (XSD + "dateTime",)
    for local in ("priorWeight", "centralityWeight", "fusedWeight"):
        assert onto.properties[PKB + local].domain == (PKB + "SurfaceFormLink",)


def test_extraction_view_per_category(onto):
    gp_types = {c.local_name for c in onto.entity_types("general-policy")}
    assert {"Entity", "Agency", "Target", "Indicator", *EGD_TYPES} <= gp_types
    assert not gp_types & {"Document", "Chunk", "Penalty", "Term"}
    gp_relations = {p.local_name for p in onto.relations("general-policy")}
    assert {"issues", "implements", "establishes", "supports", "hasJurisdiction"} <= gp_relations
    assert not gp_relations & {"mentionedIn", "partOfDocument", "linksEntity", "imposes", "defines"}
    assert onto.ontology_for_document_class(PKB + "Notice") == "general-policy"
    assert onto.ontology_for_document_class(PKB + "LegalRegulation") == "legal-regulation"
    assert onto.ontology_for_document_class(PKB + "NationalStandard") == "standard"
    with pytest.raises(InputError):
        onto.ontology_for_document_class(PKB + "Chunk")


# --- reader errors ----------------------------------------------------------------------------------


def test_reader_rejects_a_file_not_named_after_its_iri(tmp_path):
    shutil.copy(ONTOLOGY_DIR / "core.owl", tmp_path / "policykb-core.owl")
    with pytest.raises(InputError, match="must be named core.owl"):
        read_ontologies(tmp_path)


def test_reader_rejects_an_unresolvable_import(tmp_path):
    shutil.copy(ONTOLOGY_DIR / "standard.owl", tmp_path / "standard.owl")
    with pytest.raises(InputError, match="imports"):
        read_ontologies(tmp_path)


def test_reader_rejects_empty_dir_and_bad_xml(tmp_path):
    with pytest.raises(InputError, match="no .owl files"):
        read_ontologies(tmp_path)
    (tmp_path / "core.owl").write_text("<rdf:RDF")
    with pytest.raises(InputError, match="cannot parse"):
        read_ontologies(tmp_path)
