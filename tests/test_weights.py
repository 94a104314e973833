"""Disambiguation weights: hand-computed arithmetic, linking rules, both Louvain backends, and the
stage on the sample corpus through the real ingest pipeline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.config import WeightsConfig, load_config
from core.errors import InputError
from kgpipeline.derived.surface_counts import CorpusChunk, SurfaceDictionary, count_links, find_keys, resolve, surface_variants
from kgpipeline.derived.weights import (
    EntityGraph,
    WeightsStage,
    build_entity_graph,
    canonical_membership,
    community_centrality,
    compute_weights,
    detect_communities,
    link_weights,
    priors,
)
from store.disambiguation import LinkWeight, links_by_surface, normalize_surface, read_link_weights, weights_graph
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB, SKOS

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"
A, B, C, D, E = (f"https://example.org/e/{x}" for x in "ABCDE")


# --- pure arithmetic, computed by hand ----------------------------------------------------------


def tiny_graph() -> EntityGraph:
    # A-B and A-C are relations (1.0), C-D a relation across communities, D-E a co-mention (0.25).
    return build_entity_graph([A, B, C, D, E], [(A, B), (C, A), (C, D)], [[D, E]], comention_weight=0.25)


def test_entity_graph_weights_relations_over_comentions():
    g = build_entity_graph([A, B, C], [(A, B), (B, A), (C, C)], [[A, B, C]], comention_weight=0.25)
    pairs = {tuple(e): w for e, w in zip(g.edges.tolist(), g.weights.tolist())}
    assert pairs == {(0, 1): 1.0, (0, 2): 0.25, (1, 2): 0.25}  # relation wins; self-loop dropped
    assert len(build_entity_graph([A, B], [], [[A, B]], comention_weight=0.0).edges) == 0


def test_centrality_within_community_by_hand():
    degree, wi = community_centrality(tiny_graph(), np.array([0, 0, 0, 1, 1]))
    # Community {A,B,C}: strengths A=2, B=1, C=1 (C-D crosses communities, not counted); |C|-1 = 2.
    # Community {D,E}: strengths 0.25 each; |C|-1 = 1.
    assert degree.tolist() == pytest.approx([1.0, 0.5, 0.5, 0.25, 0.25])
    assert wi.tolist() == pytest.approx([1.0, 0.5, 0.5, 1.0, 1.0])


def test_singleton_community_is_its_own_most_central_node():
    degree, wi = community_centrality(build_entity_graph([A, B], [], []), np.array([0, 1]))
    assert degree.tolist() == [0.0, 0.0] and wi.tolist() == [1.0, 1.0]


def test_priors_and_fused_weights_by_hand():
    candidates = {"bureau": (A, D), "unit": (B, C)}
    counts = {("bureau", A): 3, ("bureau", D): 1}
    assert priors(counts, candidates) == {("bureau", A): 0.75, ("bureau", D): 0.25, ("unit", B): 0.5, ("unit", C): 0.5}
    weights = link_weights(candidates, counts, {A: 1.0, B: 0.5, C: 0.5, D: 1.0}, {A: "c0", D: "c1"})
    got = {(w.surface, w.entity): (w.count, w.prior, w.centrality, w.fused, w.community) for w in weights}
    assert got == {
        ("bureau", A): (3, 0.75, 1.0, 0.75, "c0"),
        ("bureau", D): (1, 0.25, 1.0, 0.25, "c1"),
        ("unit", B): (0, 0.5, 0.5, 0.25, ""),  # never seen in text: uniform prior
        ("unit", C): (0, 0.5, 0.5, 0.25, ""),
    }


def test_canonical_membership_numbers_by_first_node():
    assert canonical_membership([7, 7, 3, 9, 3]).tolist() == [0, 0, 1, 2, 1]


@pytest.mark.parametrize("backend", ["louvain", "igraph"])
def test_louvain_backends_split_two_cliques(backend):
    nodes = [f"n{i}" for i in range(8)]
    left = [(nodes[i], nodes[j]) for i in range(4) for j in range(i + 1, 4)]
    right = [(nodes[i], nodes[j]) for i in range(4, 8) for j in range(i + 1, 8)]
    graph = build_entity_graph(nodes, left + right + [(nodes[3], nodes[4])])
    found = detect_communities(graph, backend)
    assert found.backend == backend
    assert found.membership.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert detect_communities(graph, backend).membership.tolist() == found.membership.tolist()  # seeded


def test_unknown_backend_is_an_input_error():
    with pytest.raises(InputError):
        detect_communities(tiny_graph(), "leiden")


# --- surface forms and linking ----------------------------------------------------------------------


def test_surface_variants_add_the_bare_name_of_scoped_labels():
    assert surface_variants("Energy Bureau (Westmark  Province)") == ("energy bureau (westmark province)", "energy bureau")
    assert surface_variants("Monitoring Center") == ("monitoring center",)
    assert normalize_surface("  Energy\n BUREAU ") == "energy bureau"


def test_find_keys_is_leftmost_longest_without_overlap():
    d = SurfaceDictionary.build({A: {"energy bureau"}, B: {"national energy bureau"}, C: {"bureau"}})
    text = "The National Energy Bureau and the energy  bureau; a Bureau."
    assert find_keys(text, d) == ["national energy bureau", "energy bureau", "bureau"]


def test_homonyms_resolved_by_chunk_then_document_then_frequency():
    d = SurfaceDictionary.build({A: {"energy bureau", "national energy bureau"}, D: {"energy bureau"}})
    chunks = [
        CorpusChunk("c1", "doc1", "The National Energy Bureau and the Energy Bureau.", frozenset({A})),
        CorpusChunk("c2", "doc2", "The Energy Bureau of the province.", frozenset({D})),
        CorpusChunk("c3", "doc2", "Ask the Energy Bureau.", frozenset()),  # document context: D
        CorpusChunk("c4", "doc3", "An energy bureau.", frozenset()),  # no context: most mentioned
        CorpusChunk("c5", "doc3", "Both: energy bureau.", frozenset({A, D}), {D: frozenset({"energy bureau"})}),
    ]
    # c1: chunk mentions A → A. c2: D. c3: no chunk context, doc2 mentions only D → D.
    # c4: doc3 mentions A and D; each is mentioned in 2 chunks → tie, smaller IRI → A.
    # c5: both mentioned; the extractor recorded "energy bureau" for D here → D.
    counts = count_links(chunks, d)
    assert counts == {("national energy bureau", A): 1, ("energy bureau", A): 2, ("energy bureau", D): 3}
    assert resolve("energy bureau", (A, D), chunks[3], frozenset(), {A: 1, D: 5}) == D


# --- the stage on the sample corpus, through the real pipeline -----------------------------------------


@pytest.fixture(scope="module")
def corpus_kb(tmp_path_factory):
    from kgpipeline.pipeline import STAGES, build_controller

    kb_dir = tmp_path_factory.mktemp("weights") / "kb"
    config = load_config(kb_dir=kb_dir)
    store = OxigraphStore()
    controller = build_controller(config, store)
    controller.stages = [STAGES["weights"](config, None, None)]  # only this stage: no model loads here
    try:
        summary = controller.ingest([CORPUS])
    finally:
        controller.close()
    return config, store, summary


def test_stage_runs_after_ingest(corpus_kb):
    _, _, summary = corpus_kb
    assert summary.documents > 0 and not summary.skipped
    assert len(summary.stages) == 1 and summary.stages[0].startswith("weights: ")


def test_energy_bureau_homonyms_share_a_surface_form(corpus_kb):
    config, store, _ = corpus_kb
    rows = store.select(
        f'SELECT DISTINCT ?e WHERE {{ ?e <{SKOS}prefLabel> ?l FILTER(STRSTARTS(STR(?l), "Energy Bureau (")) }}'
    ).rows
    bureaus = {r["e"].value for r in rows}
    assert len(bureaus) >= 2  # national and Westmark Province
    links = links_by_surface(read_link_weights(store))["energy bureau"]
    assert bureaus <= {w.entity for w in links}
    assert sum(w.prior for w in links) == pytest.approx(1.0)


def test_all_weights_are_consistent(corpus_kb):
    _, store, _ = corpus_kb
    weights = read_link_weights(store)
    assert weights
    for w in weights:
        assert 0.0 <= w.prior <= 1.0 and 0.0 <= w.centrality <= 1.0 and 0.0 <= w.fused <= 1.0
        assert w.fused == pytest.approx(w.prior * w.centrality)
        assert w.community
    for group in links_by_surface(weights).values():
        assert sum(w.prior for w in group) == pytest.approx(1.0)


def test_communities_are_queryable_with_sparql(corpus_kb):
    config, store, _ = corpus_kb
    rows = store.select(
        f"""SELECT ?c (COUNT(DISTINCT ?e) AS ?n) (MAX(?d) AS ?top) WHERE {{
            GRAPH {weights_graph(config.kb.base_iri)} {{ ?e <{PKB}memberOfCommunity> ?c . ?c a <{PKB}Community> .
            ?e <{PKB}degreeCentrality> ?d }} }} GROUP BY ?c"""
    ).rows
    assert len(rows) > 1
    assert sum(int(r["n"].value) for r in rows) == len({w.entity for w in read_link_weights(store)})
    assert all(0.0 <= float(r["top"].value) <= 1.0 for r in rows)


def test_rerun_is_idempotent(corpus_kb):
    config, store, _ = corpus_kb
    before, quads = sorted(read_link_weights(store), key=_key), store.count()
    WeightsStage(config.weights, config.kb.base_iri).run(store, config.kb_dir)
    assert sorted(read_link_weights(store), key=_key) == before
    assert store.count() == quads


def test_compute_weights_with_the_fast_backend_gives_weights_too(corpus_kb):
    from kgpipeline.derived.surface_counts import read_corpus, read_labels, read_relation_pairs

    config, store, _ = corpus_kb
    fast = compute_weights(
        read_labels(store), read_corpus(store), read_relation_pairs(store),
        WeightsConfig(community_backend="igraph"), config.kb.base_iri,
    )  # fmt: skip
    assert fast.backend == "igraph" and fast.communities > 1
    assert {(w.surface, w.entity, w.count, w.prior) for w in fast.weights} == {
        (w.surface, w.entity, w.count, w.prior) for w in read_link_weights(store)
    }  # counts and priors do not depend on the community backend


def _key(w: LinkWeight) -> tuple[str, str]:
    return (w.surface, w.entity)
