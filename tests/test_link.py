"""Entity linking and relation matching on a small hand-made store with the real embedder."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from core.config import EmbedConfig, SPRConfig
from core.embed import make_embedder
from core.resources import resource_dir
from kgpipeline.derived.entity_index import EntityIndexStage, collect_labels
from spr.grounding.link import EntityLinker, LinkOptions, combine, rank_candidates, surface_weights
from spr.grounding.relations import ClassMatcher, RelationMatcher, rank_relations
from store.disambiguation import LinkWeight, write_weights
from store.entity_labels import EntityLabels
from store.ontologies import put_ontologies
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB, RDF, SKOS
from store.vocabulary import read_terms, vocabulary_texts

OPTIONS = LinkOptions.from_config(SPRConfig())  # the defaults of [spr]

BASE = "https://w3id.org/policykb/id/"
NATIONAL = BASE + "entity/energy-bureau-national"
WESTMARK = BASE + "entity/energy-bureau-westmark"
PLAN = BASE + "entity/national-solar-plan"
NOTICE = BASE + "entity/notice-on-pv"
CENTER = BASE + "entity/solar-monitoring-center"


def _entity(iri: str, cls: str, pref: str, alts: list[str], graph: NamedNode) -> list[Quad]:
    e = NamedNode(iri)
    quads = [Quad(e, NamedNode(RDF + "type"), NamedNode(PKB + cls), graph),
             Quad(e, NamedNode(SKOS + "prefLabel"), Literal(pref, language="en"), graph)]  # fmt: skip
    return quads + [Quad(e, NamedNode(SKOS + "altLabel"), Literal(a, language="en"), graph) for a in alts]


def _rel(s: str, p: str, o: str, graph: NamedNode) -> Quad:
    return Quad(NamedNode(s), NamedNode(PKB + p), NamedNode(o), graph)


@pytest.fixture(scope="module")
def embedder():
    return make_embedder(EmbedConfig(), cache_path=None)


@pytest.fixture(scope="module")
def kb(tmp_path_factory, embedder):
    store = OxigraphStore()
    put_ontologies(store, resource_dir(Path("ontologies")))
    g1, g2 = NamedNode(BASE + "chunk/1"), NamedNode(BASE + "chunk/2")
    store.extend(
        _entity(NATIONAL, "Agency", "Energy Bureau (National)", ["National Energy Bureau", "Energy Bureau"], g1)
        + _entity(WESTMARK, "Agency", "Energy Bureau (Westmark Province)", ["Energy Bureau"], g2)
        + _entity(PLAN, "Plan", "National Solar Plan 2025-2030", ["National Solar Plan"], g1)
        + _entity(NOTICE, "Policy", "Notice on Distributed Photovoltaics", ["Notice"], g2)
        + _entity(CENTER, "Center", "Solar Monitoring Center", ["Monitoring Center"], g1)
        + [_rel(NATIONAL, "issues", PLAN, g1), _rel(WESTMARK, "issues", NOTICE, g2),
           _rel(NATIONAL, "establishes", CENTER, g1), _rel(NOTICE, "supports", PLAN, g2)]  # fmt: skip
    )
    kb_dir = tmp_path_factory.mktemp("kb")
    EntityIndexStage(embedder).run(store, kb_dir)
    return store, kb_dir


def _weights(national: float, westmark: float) -> list[LinkWeight]:
    return [
        LinkWeight("energy bureau", NATIONAL, 3, national, 1.0, national, BASE + "community/a"),
        LinkWeight("energy bureau", WESTMARK, 1, westmark, 1.0, westmark, BASE + "community/b"),
    ]


def test_index_holds_labels_bare_names_and_alt_labels(kb):
    _, kb_dir = kb
    from store.entity_labels import load_entity_index

    index, labels = load_entity_index(kb_dir / "indexes" / "entities")
    assert set(labels.surfaces["energy bureau"]) == {NATIONAL, WESTMARK}  # the homonym's shared form
    assert labels.surfaces["national energy bureau"] == (NATIONAL,)
    assert labels.names[NATIONAL] == "Energy Bureau (National)"
    assert len(index) == len(labels.surfaces)


@pytest.mark.parametrize(("national", "westmark", "winner"), [(0.9, 0.2, NATIONAL), (0.15, 0.8, WESTMARK)])
def test_the_weight_decides_between_homonyms(kb, embedder, national, westmark, winner):
    store, kb_dir = kb
    linker = EntityLinker.from_kb(kb_dir, embedder, _weights(national, westmark), replace(OPTIONS, top_k=3))
    top, second = linker.link("Energy Bureau")[:2]
    assert (top.entity, top.surface, top.similarity, top.weight) == (winner, "energy bureau", 1.0, 1.0)
    # the loser's share of the shared form is its relative weight; its own qualified name
    # ("energy bureau (westmark province)") is less similar, so it ranks second either way
    assert second.entity != winner and second.score < top.score
    labels = linker.labels
    shared = rank_candidates("Energy Bureau", [("energy bureau", 1.0)], labels, linker.links, top_k=2)
    assert shared[1].weight == pytest.approx(min(national, westmark) / max(national, westmark), abs=1e-6)


def test_weights_written_to_the_store_are_read_back(kb, embedder):
    store, kb_dir = kb
    write_weights(store, _weights(0.1, 0.7), BASE)
    try:
        from store.disambiguation import read_link_weights

        linker = EntityLinker.from_kb(kb_dir, embedder, read_link_weights(store), OPTIONS)
        assert linker.has_weights and linker.link("the energy bureau")[0].entity == WESTMARK
    finally:
        store.drop_graph(NamedNode(BASE + "graph/weights"))


def test_without_weights_every_weight_is_one(kb, embedder):
    _, kb_dir = kb
    cands = EntityLinker.from_kb(kb_dir, embedder, [], OPTIONS).link("Energy Bureau")
    assert {c.entity for c in cands[:2]} == {NATIONAL, WESTMARK}
    assert all(c.weight == 1.0 and c.score == pytest.approx(c.similarity) for c in cands)


def test_fuzzy_label_uses_the_nearest_surface_form(kb, embedder):
    _, kb_dir = kb
    top = EntityLinker.from_kb(kb_dir, embedder, [], OPTIONS).link("the national solar plan")[0]
    assert top.entity == PLAN and top.surface == "national solar plan" and 0.8 < top.similarity <= 1.0


def test_surface_weights_pure():
    links = [LinkWeight("s", "a", 3, 0.75, 0.8, 0.6, ""), LinkWeight("s", "b", 1, 0.25, 1.0, 0.25, "")]
    assert surface_weights(["a", "b"], []) == {"a": 1.0, "b": 1.0}
    assert surface_weights(["a", "b", "c"], links, relative=False) == {"a": 0.6, "b": 0.25, "c": 0.25}
    rel = surface_weights(["a", "b"], links)
    assert rel["a"] == 1.0 and rel["b"] == pytest.approx(0.25 / 0.6)
    assert combine(-0.3, 1.0) == 0.0 and combine(0.5, 0.5) == 0.25


def test_rank_candidates_keeps_best_surface_per_entity():
    labels = EntityLabels({"x": ("e1",), "y": ("e1", "e2")}, {"e1": "E1", "e2": "E2"})
    ranked = rank_candidates("q", [("x", 0.9), ("y", 0.7)], labels, {}, top_k=5)
    assert [(c.entity, c.surface) for c in ranked] == [("e1", "x"), ("e2", "y")]


def test_case_exact_name_is_not_outweighed_by_a_more_central_homonym():
    # PathQuestion regression: "BELIEVE" (an album) and "Believe" (a song) share the casefolded
    # key; the weights preferred the more connected song for a question about the album.
    labels = EntityLabels({"believe": ("album", "song")}, {"album": "BELIEVE", "song": "Believe"})
    links = {"believe": [LinkWeight("believe", "album", 1, 0.2, 1.0, 0.2, ""), LinkWeight("believe", "song", 4, 0.8, 1.0, 0.8, "")]}
    assert rank_candidates("BELIEVE", [("believe", 1.0)], labels, links, top_k=2)[0].entity == "album"
    assert rank_candidates("Believe", [("believe", 1.0)], labels, links, top_k=2)[0].entity == "song"
    # Neither casing given: the weights decide, as for homonyms spelled alike.
    assert rank_candidates("believe", [("believe", 1.0)], labels, links, top_k=2)[0].entity == "song"
    same = EntityLabels({"believe": ("album", "song")}, {"album": "Believe", "song": "Believe"})
    assert rank_candidates("Believe", [("believe", 1.0)], same, links, top_k=2)[0].entity == "song"


def test_collect_labels_adds_bare_names_and_weight_surfaces():
    rows = [("e", SKOS + "prefLabel", "Energy Bureau (National)"), ("e", SKOS + "altLabel", "NEB")]
    labels = collect_labels(rows, [("The Bureau", "e")])
    assert set(labels.surfaces) == {"energy bureau (national)", "energy bureau", "neb", "the bureau"}


def test_relations_matched_in_both_directions(kb, embedder):
    store, _ = kb
    matcher = RelationMatcher(store, embedder, read_terms(store, "property"), top_k=3, flip_penalty=0.8)
    # "who issued the plan": the plan is the object → plain (JOIN issues plan), not flipped
    best = matcher.match("issued", [PLAN], reverse=False)[0]
    assert (best.relation, best.reverse, best.flipped) == (PKB + "issues", False, False)
    # asked the wrong way round from the bureau's side: still offered, flipped and penalized
    flipped = matcher.match("issued", [NATIONAL], reverse=False)[0]
    assert (flipped.relation, flipped.reverse, flipped.flipped) == (PKB + "issues", True, True)
    assert flipped.score == pytest.approx(flipped.similarity * 0.8, abs=1e-5)
    # an alt label ("set up") reaches its property
    assert matcher.match("set up", [NATIONAL], reverse=True)[0].relation == PKB + "establishes"


def test_rank_relations_pure():
    found = {("p", "in"), ("q", "out")}
    ranked = rank_relations("l", [("p", 0.9, "p"), ("q", 0.95, "q")], found, False, {}, 2, 0.5)
    assert [(c.relation, c.flipped) for c in ranked] == [("p", False), ("q", True)]


def test_class_matcher(kb, embedder):
    store, _ = kb
    classes = ClassMatcher(embedder, read_terms(store, "class"))
    assert classes.match("agencies")[0][0] == PKB + "Agency"


def test_vocabulary_is_embedded_at_ingest_so_a_first_question_only_embeds_its_labels(kb, tmp_path):
    """The entity-index stage puts every property and class name into the KB's embedding cache;
    matching relations and classes on a fresh process then computes only the labels asked."""
    from core.usage import UsageTracker

    store, _ = kb
    cache = tmp_path / "embed.sqlite"
    EntityIndexStage(make_embedder(EmbedConfig(), cache_path=cache)).run(store, tmp_path / "kb")
    tracker = UsageTracker()
    fresh = make_embedder(EmbedConfig(), cache_path=cache, tracker=tracker)
    relations = RelationMatcher(store, fresh, read_terms(store, "property"), top_k=3, flip_penalty=0.8)
    assert relations.match("issued", [PLAN], reverse=False)[0].relation == PKB + "issues"
    assert ClassMatcher(fresh, read_terms(store, "class")).match("agencies")[0][0] == PKB + "Agency"
    totals = tracker.totals
    asked = {"issued", "agencies"} - set(vocabulary_texts(store))  # a label may be a name itself
    assert totals.texts_embedded == len(asked)
    assert totals.embed_cache_hits > 100  # the names of every class and adjacent property
