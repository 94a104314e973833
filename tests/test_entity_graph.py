"""The graph signal's entity–chunk graph (spr/retrieval/graph.py, store/entity_graph.py) read from a
real in-memory Oxigraph store laid out as ingest writes it: each chunk graph restates the entities
it mentions, their labels and relations, so the same fact stands in several graphs of the union.
Then the saved index (derived stage ``graph``): the same graph back, and the store read instead
when the index is missing, damaged, of another version or stale."""

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
    return EntityGraph.read(store)


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
    graph = EntityGraph.read(store)
    doc = {key: f"{ID}doc/{key}" for key in titles}
    assert graph.documents_named("Where was Steven Blankaart born?") == {doc["blankaart"]}
    assert graph.documents_named("a Steven Blankaart (physician) paper") == {doc["blankaart"]}
    assert graph.documents_named("Who performed Brother, a song?") == set()
    assert graph.documents_named("Who performed Brother (Pearl Jam song)?") == {doc["brother"]}
    assert graph.documents_named("Who composed Aschenbrodel?") == {doc["ballet"]}


# --- the saved index -----------------------------------------------------------------------------
def test_the_saved_graph_loads_as_the_same_graph(graph, tmp_path):
    from store.entity_graph import GraphData

    path = graph.data.save(tmp_path / "graph")
    loaded = EntityGraph(GraphData.load(path.parent), "index")
    assert (loaded.labels, loaded.data.edges, loaded.chunks_of, loaded.documents, loaded.chunk_ids) == (
        graph.labels, graph.data.edges, graph.chunks_of, graph.documents, graph.chunk_ids)
    assert loaded.data.surfaces == graph.data.surfaces
    assert loaded.seeds("What may the Just Transition Fund support?") == graph.seeds("What may the Just Transition Fund support?")
    assert loaded.documents_named("as the Just Transition Fund Regulation says") == {DOC_A}
    assert not list(path.parent.glob("*.tmp"))  # written atomically: nothing left beside it


def test_a_missing_damaged_foreign_or_stale_index_means_the_store_is_read(graph, tmp_path):
    import gzip

    from store.entity_graph import FILE, NAME, open_graph
    from store.freshness import mark_fresh, mark_stale
    from store.layout import KBLayout

    store = OxigraphStore()  # an empty store: what comes from it has no nodes
    kb = tmp_path / "kb"
    folder = KBLayout(kb).index(NAME)
    assert open_graph(store, kb)[1] == "store"  # no index yet (a KB built before it existed)
    graph.data.save(folder)
    data, source = open_graph(store, kb)
    assert source == "index" and data.labels == graph.labels
    mark_stale(kb, "policykb load extra.ttl")  # a write bypassed the indexes: the store decides
    data, source = open_graph(store, kb)
    assert source == "store" and data.labels == []
    mark_fresh(kb)
    for damaged in (b"not gzip", gzip.compress(b"{\"version\": 99}"), gzip.compress(b"[1, 2]"), gzip.compress(b'{"version": 1}'), b""):
        (folder / FILE).write_bytes(damaged)
        assert open_graph(store, kb)[1] == "store", damaged
    assert open_graph(store, None)[1] == "store"  # no KB folder (a store opened on its own)


@pytest.mark.slow
def test_ingest_saves_the_graph_and_a_kb_opens_it(tmp_path_factory):
    """The derived stage runs with every ingest; the graph signal of an opened KB then loads the
    saved graph, which is the graph the store holds."""
    from support.kbs import corpus_kb

    from core.config import load_config
    from spr.qa import KnowledgeBase
    from spr.retrieval.registry import signals
    from store.entity_graph import FILE, NAME
    from store.layout import KBLayout

    kb_dir = corpus_kb(tmp_path_factory)
    assert (KBLayout(kb_dir).index(NAME) / FILE).is_file()
    with KnowledgeBase.open(load_config(kb_dir=kb_dir)) as kb:
        signal = next(s for s in signals(kb) if s.name == "graph")
        opened = signal.graph
        assert opened.source == "index"
        fresh = EntityGraph.read(kb.store)
        assert (opened.labels, opened.data.edges, opened.data.surfaces) == (fresh.labels, fresh.data.edges, fresh.data.surfaces)
        assert signal.rank("What does the National Solar Plan aim for?", 5)  # it ranks chunks as before
