"""The graph signal's entity–chunk graph (spr/retrieval/graph.py) read from a real in-memory
Oxigraph store laid out as ingest writes it: each chunk graph restates the entities it mentions,
their labels and relations, so the same fact stands in several graphs of the union."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from spr.retrieval.graph import EntityGraph
from store.oxigraph_store import OxigraphStore
from store.vocab import DCTERMS, PKB, SKOS

ID = "https://w3id.org/policykb/id/"
JTF, JUST, COMMISSION = f"{ID}jtf", f"{ID}just-transition", f"{ID}commission"
DOC_A, DOC_B = f"{ID}doc/a", f"{ID}doc/b"
CHUNKS = {f"{ID}chunk/a1": DOC_A, f"{ID}chunk/a2": DOC_A, f"{ID}chunk/b1": DOC_B}
TEXTS = {
    f"{ID}chunk/a1": "The Just Transition Fund supports regions; the Commission adopts the plans.",
    f"{ID}chunk/a2": "The Just Transition Fund shall not support nuclear power stations.",
    f"{ID}chunk/b1": "Support under the Climate Law and the Just Transition mechanism.",
}


def _quad(s: str, p: str, o: ox.NamedNode | ox.Literal, g: str) -> ox.Quad:
    return ox.Quad(ox.NamedNode(s), ox.NamedNode(p), o, ox.NamedNode(g))


@pytest.fixture(scope="module")
def graph() -> EntityGraph:
    store = OxigraphStore()
    quads = []
    for chunk, doc in CHUNKS.items():
        quads += [
            _quad(chunk, f"{PKB}partOfDocument", ox.NamedNode(doc), chunk),
            _quad(chunk, f"{PKB}text", ox.Literal(TEXTS[chunk]), chunk),
        ]
        # every chunk graph restates the entities it mentions with all their labels
        for entity, labels in ((JTF, ["Just Transition Fund", "JTF"]), (COMMISSION, ["Commission"]), (JUST, ["Just Transition"])):
            if labels[0].lower() in TEXTS[chunk].lower():
                quads.append(_quad(entity, f"{PKB}mentionedIn", ox.NamedNode(chunk), chunk))
                quads.append(_quad(entity, f"{SKOS}prefLabel", ox.Literal(labels[0]), chunk))
                quads += [_quad(entity, f"{SKOS}altLabel", ox.Literal(label), chunk) for label in labels[1:]]
        if "Commission" in TEXTS[chunk]:
            quads.append(_quad(COMMISSION, f"{PKB}implements", ox.NamedNode(JTF), chunk))
    quads += [
        _quad(DOC_A, f"{DCTERMS}title", ox.Literal("Just Transition Fund Regulation"), DOC_A),
        _quad(DOC_B, f"{DCTERMS}title", ox.Literal("Climate Law"), DOC_B),
    ]
    store.extend(quads)
    return EntityGraph(store)


def test_surface_forms_sharing_a_first_word_are_all_found(graph):
    # "just transition fund" and "just transition" start alike: both are named, each once
    assert set(graph.seeds("What may the Just Transition Fund support?")) == {JTF, JUST}
    assert set(graph.seeds("Which plans does the JTF fund?")) == {JTF}
    assert graph.seeds("zzzz qqqq") == {}


def test_edges_join_mentions_relations_documents_and_cross_references(graph):
    edges = {tuple(sorted((graph.labels[a], graph.labels[b]))) for a, b in graph.graph.get_edgelist()}
    assert tuple(sorted((JTF, f"{ID}chunk/a2"))) in edges  # a mention
    assert tuple(sorted((COMMISSION, JTF))) in edges  # a relation, stated in one chunk graph
    assert tuple(sorted((DOC_B, f"{ID}chunk/b1"))) in edges  # a document and its chunk
    # b1 names the Climate Law, its own document: no cross-reference to itself
    assert graph.documents_named(TEXTS[f"{ID}chunk/b1"]) == {DOC_B}
    assert graph.documents_named("as the Just Transition Fund Regulation says") == {DOC_A}
    # labels and mentions restated in every chunk graph join nothing else
    neighbours = {graph.labels[i] for i in graph.graph.neighbors(graph.names[JTF])}
    assert neighbours == {f"{ID}chunk/a1", f"{ID}chunk/a2", COMMISSION}


def test_a_document_is_named_by_its_title_without_its_disambiguation_and_accents():
    """Wikipedia-style titles: "Steven Blankaart (physician)" is named "Steven Blankaart"; a bare
    one-word form ("Brother") would be named by every text with the word, so it is not one; a
    question may write "Aschenbrodel" for "Aschenbrödel"."""
    store = OxigraphStore()
    titles = {"blankaart": "Steven Blankaart (physician)", "brother": "Brother (Pearl Jam song)", "ballet": "Aschenbrödel"}
    quads = []
    for key, title in titles.items():
        doc, chunk = f"{ID}doc/{key}", f"{ID}chunk/{key}"
        quads += [
            _quad(chunk, f"{PKB}partOfDocument", ox.NamedNode(doc), chunk),
            _quad(chunk, f"{PKB}text", ox.Literal(f"About {title}."), chunk),
            _quad(doc, f"{DCTERMS}title", ox.Literal(title), doc),
        ]
    store.extend(quads)
    graph = EntityGraph(store)
    doc = {key: f"{ID}doc/{key}" for key in titles}
    assert graph.documents_named("Where was Steven Blankaart born?") == {doc["blankaart"]}
    assert graph.documents_named("a Steven Blankaart (physician) paper") == {doc["blankaart"]}
    assert graph.documents_named("Who performed Brother, a song?") == set()
    assert graph.documents_named("Who performed Brother (Pearl Jam song)?") == {doc["brother"]}
    assert graph.documents_named("Who composed Aschenbrodel?") == {doc["ballet"]}
