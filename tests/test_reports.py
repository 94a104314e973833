"""The "reports" stage (kgpipeline.derived.reports): community reports, descriptions, indexes.

Runs on a copy of the example corpus KB (tests/support/kbs.py) with one community per Louvain
community of the entity graph, written here, so it does not depend on the "communities" stage.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.kbs import corpus_kb

from core.config import load_config
from core.errors import StoreError
from kgpipeline.derived.reports import make_stage
from store.communities import (
    DESCRIPTIONS_INDEX,
    REPORTS_INDEX,
    Community,
    community_index,
    community_iri,
    drop_reports,
    read_communities,
    read_descriptions,
    read_reports,
    write_communities,
)
from store.layout import KBLayout
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB


def louvain_communities(store, base_iri: str) -> list[Community]:
    from kgpipeline.derived.surface_counts import read_corpus, read_labels, read_relation_pairs
    from kgpipeline.derived.weights import build_entity_graph, detect_communities

    nodes = sorted(read_labels(store))
    corpus = read_corpus(store)
    graph = build_entity_graph(nodes, read_relation_pairs(store), (c.mentioned for c in corpus))
    groups: dict[int, list[str]] = {}
    for node, c in zip(nodes, detect_communities(graph, "louvain").membership.tolist()):
        groups.setdefault(c, []).append(node)
    return [Community(community_iri(base_iri, 0, m).value, 0, None, tuple(sorted(m))) for m in groups.values()]


@pytest.fixture(scope="module")
def base_kb(tmp_path_factory) -> Path:
    """A private copy of the corpus KB with Louvain communities and no reports (tests copy it again)."""
    kb = tmp_path_factory.mktemp("reports") / "kb"
    shutil.copytree(corpus_kb(tmp_path_factory), kb)
    config = load_config(kb_dir=kb)
    store = OxigraphStore(kb / "store")
    try:
        communities = louvain_communities(store, config.kb.base_iri)
        assert sum(len(c.members) >= 2 for c in communities) >= 3, "the corpus should give several communities"
        write_communities(store, communities, config.kb.base_iri)
        # The ingest may have run the reports stage on its own communities: start without reports.
        drop_reports(store, [r.community for r in read_reports(store)], config.kb.base_iri)
    finally:
        store.close()
    # Warm the embedding cache once (a throwaway run), so each test's own run embeds from it.
    scratch = kb.parent / "scratch"
    shutil.copytree(kb, scratch)
    store = OxigraphStore(scratch / "store")
    try:
        make_stage(load_config(kb_dir=scratch)).run(store, scratch)
    finally:
        store.close()
    cache = KBLayout(scratch).embed_cache
    for part in cache.parent.glob(cache.name + "*"):  # the SQLite file and its write-ahead log
        shutil.copy2(part, KBLayout(kb).embed_cache.parent / part.name)
    return kb


@pytest.fixture()
def kb(base_kb, tmp_path):
    kb = tmp_path / "kb"
    shutil.copytree(base_kb, kb)
    store = OxigraphStore(kb / "store")
    yield kb, store, load_config(kb_dir=kb)
    store.close()


def chunk_texts(store) -> dict[str, str]:
    from store.units import read_units

    return {u.iri: u.text for u in read_units(store)}


def mentions(store) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in store.select(f"SELECT ?e ?c WHERE {{ ?e <{PKB}mentionedIn> ?c }}").rows:
        out.setdefault(r["c"].value, set()).add(r["e"].value)
    return out


def test_extractive_reports_are_checkable(kb):
    kb_dir, store, config = kb
    stage = make_stage(config)
    summary = stage.run(store, kb_dir)
    communities = {c.iri: c for c in read_communities(store)}
    eligible = {iri for iri, c in communities.items() if len(c.members) >= config.communities.min_size}
    reports = read_reports(store)
    assert {r.community for r in reports} == eligible
    assert f"{len(eligible)} reports ({len(eligible)} written, 0 reused, 0 dropped; extractive)" in summary
    texts, mentioned = chunk_texts(store), mentions(store)
    quotes = 0
    for r in reports:
        members = set(communities[r.community].members)
        assert r.generated_by == "extractive" and r.prompt_tokens == r.completion_tokens == 0
        assert r.members_hash == communities[r.community].members_hash
        assert r.title and r.summary and 1 <= len(r.findings) <= config.communities.findings
        for f in r.findings:
            assert f.entities and set(f.entities) <= members, f
            assert f.chunks, f
            for c in f.chunks:
                assert mentioned.get(c, set()) & set(f.entities), (f, c)
            if any(f.text in texts[c] for c in f.chunks):
                quotes += 1  # a key sentence: verbatim from the chunk it cites
            else:  # otherwise a relation, verbalized from the labels of the entities it cites
                assert f.text.endswith(".") and len(f.entities) >= 2, f
    assert quotes >= len(reports) // 2, "most reports should quote their chunks"


def test_rerun_reuses_and_changes_are_incremental(kb):
    kb_dir, store, config = kb
    stage = make_stage(config)
    stage.run(store, kb_dir)
    before = {r.community: r for r in read_reports(store)}
    summary = stage.run(store, kb_dir)
    assert stage.counts["written"] == 0 and stage.counts["reused"] == len(before), summary
    assert f"0 written, {len(before)} reused, 0 dropped" in summary

    # One community loses a member (same IRI), one disappears: only the first is rewritten.
    communities = read_communities(store)
    big = sorted((c for c in communities if len(c.members) >= 3), key=lambda c: c.iri)
    changed, removed = big[0], big[1]
    smaller = Community(changed.iri, 0, None, changed.members[1:])
    rest = [smaller if c.iri == changed.iri else c for c in communities if c.iri != removed.iri]
    write_communities(store, rest, config.kb.base_iri)
    summary = stage.run(store, kb_dir)
    assert (stage.counts["written"], stage.counts["dropped"]) == (1, 1), summary
    assert stage.counts["reused"] == len(before) - 2
    after = {r.community: r for r in read_reports(store)}
    assert removed.iri not in after
    assert after[changed.iri].members_hash == smaller.members_hash != before[changed.iri].members_hash
    assert all(f.entities and set(f.entities) <= set(smaller.members) for f in after[changed.iri].findings)
    assert all(after[c] == before[c] for c in after if c != changed.iri)


def test_descriptions_and_indexes_embedded_at_ingest(kb):
    from store.vectors import VectorIndex

    kb_dir, store, config = kb
    ingest = config.model_copy(update={"communities": config.communities.model_copy(update={"embed": "ingest"})})
    summary = make_stage(ingest).run(store, kb_dir)
    assert "embed " in summary
    members = {m for c in read_communities(store) for m in c.members}
    descriptions = read_descriptions(store)
    assert set(descriptions) == members
    assert all(d.strip() and len(d) < 1500 for d in descriptions.values())
    layout = KBLayout(kb_dir)
    reports = VectorIndex.load(layout.index(REPORTS_INDEX))
    assert sorted(reports.ids) == sorted(r.community for r in read_reports(store))
    described = VectorIndex.load(layout.index(DESCRIPTIONS_INDEX))
    assert sorted(described.ids) == sorted(descriptions)


def test_indexes_left_to_first_use_are_embedded_once_and_alike(kb, caplog):
    """By default the stage drops the two indexes (their texts may have changed) and the first
    reader embeds them: the same ids and vectors as an ingest-time build, saved for the next."""
    import numpy as np

    from store.vectors import VectorIndex

    kb_dir, store, config = kb
    assert config.communities.embed == "first_use"
    layout = KBLayout(kb_dir)
    ingest = config.model_copy(update={"communities": config.communities.model_copy(update={"embed": "ingest"})})
    make_stage(ingest).run(store, kb_dir)
    eager = {name: VectorIndex.load(layout.index(name)) for name in (REPORTS_INDEX, DESCRIPTIONS_INDEX)}
    summary = make_stage(config).run(store, kb_dir)
    assert "vectors embedded on first use" in summary
    embedder = make_stage(config)._embedder()
    for name, built in eager.items():
        with pytest.raises(StoreError):
            VectorIndex.load(layout.index(name))  # stale vectors are not left behind
        with caplog.at_level("WARNING", logger="store.communities"):
            lazy = community_index(store, kb_dir, name, embedder)
        assert f"embedding {len(built)} " in caplog.text  # the one slow step is announced
        assert lazy.ids == built.ids and len(lazy) > 0
        for id_ in lazy.ids[:20]:
            assert np.allclose(lazy.vectors(id_), built.vectors(id_), atol=1e-5)
        assert VectorIndex.load(layout.index(name)).ids == built.ids  # saved for the next reader


def test_a_provision_is_named_once_in_its_description_and_briefly_in_reports(kb):
    # A provision's label is its whole clause: relation sentences call it "It" (elsewhere its first
    # words), and the first mention, which is the clause again, is not quoted a second time.
    kb_dir, store, config = kb
    make_stage(config).run(store, kb_dir)
    descriptions = read_descriptions(store)
    labels = {
        r["e"].value: r["l"].value
        for r in store.select(f"SELECT ?e ?l WHERE {{ ?e a <{PKB}Provision> ; <http://www.w3.org/2004/02/skos/core#prefLabel> ?l }}").rows
    }
    long = {e: label for e, label in labels.items() if e in descriptions and len(label.split()) > 12}
    assert len(long) >= 3
    for entity, label in long.items():
        assert descriptions[entity].count(label) == 1, descriptions[entity]
        assert descriptions[entity].startswith(label)
    for report in read_reports(store):  # (a finding may still quote the clause's sentence)
        assert not any(label in report.title or label in report.summary for label in long.values())


@pytest.mark.slow
def test_llm_report_contract(kb):
    """SmolLM2 on one small community (two findings at most, to keep it quick): its report cites
    only members and offered evidence, with its model id and token counts; or, when its output is
    unusable, the extractive fallback."""
    kb_dir, store, _ = kb
    environ = {**os.environ, "POLICYKB_COMMUNITIES__REPORTS": "llm", "POLICYKB_COMMUNITIES__FINDINGS": "2",
               "POLICYKB_LLM__THREADS": "1"}  # fmt: skip
    config = load_config(kb_dir=kb_dir, environ=environ)
    small = min((c for c in read_communities(store) if len(c.members) >= 2), key=lambda c: (len(c.members), c.iri))
    write_communities(store, [small], config.kb.base_iri)
    stage = make_stage(config)
    summary = stage.run(store, kb_dir)
    (report,) = read_reports(store)
    assert report.community == small.iri and stage.counts["written"] == 1
    if stage.counts["fallbacks"]:
        assert report.generated_by == "extractive" and "1 LLM fallbacks to extractive" in summary
        return
    assert report.generated_by.startswith("gguf:SmolLM2"), report.generated_by
    assert report.prompt_tokens > 0 and report.completion_tokens > 0 and report.seconds > 0
    assert report.title and report.summary and 1 <= len(report.findings) <= config.communities.findings
    mentioned = mentions(store)
    for f in report.findings:
        assert set(f.entities) <= set(small.members)
        assert all(c in mentioned for c in f.chunks)
    # Unchanged: the report is reused (no model call at all).
    assert "0 written, 1 reused" in stage.run(store, kb_dir)


class ScriptedLLM:
    """An LLM (core.llm.base.LLM) that answers every request with the next scripted text."""

    def __new__(cls, *texts: str):
        from core.llm.base import LLM, Completion
        from core.usage import Usage

        class Scripted(LLM):
            supports_schema = False  # schema goes into the prompt; complete_json only checks shape

            def _generate(self, request):
                return Completion(self.texts.pop(0), Usage(120, 40), False, self.model_id)

        llm = Scripted("scripted-model")
        llm.texts = list(texts)
        return llm


def test_llm_citations_are_mapped_and_invalid_output_falls_back(kb):
    import json

    from kgpipeline.derived.report_writers import gather, read_view
    from kgpipeline.derived.reports import ReportsStage, llm_context, llm_report

    kb_dir, store, config = kb
    view = read_view(store)
    community = max((c for c in read_communities(store)), key=lambda c: (len(c.members), c.iri))
    ev = gather(view, community)
    context, labels, chunks = llm_context(view, ev)
    assert context.startswith("Entities:") and len(context) <= 3300 and chunks
    answer = {"title": "T", "summary": "S.", "findings": [
        {"text": "Cited.", "entities": [labels[0], "Nobody"], "chunks": [1, 99]},
        {"text": "  ", "entities": [], "chunks": []},
        {"text": "cited.", "entities": [labels[0]], "chunks": [1]},  # a repeat
    ]}  # fmt: skip
    report = llm_report(view, ev, ScriptedLLM(json.dumps(answer)), 5)
    (finding,) = report.findings
    assert finding.entities == (ev.central[0],) and finding.chunks == (chunks[0],)
    assert (report.generated_by, report.prompt_tokens, report.completion_tokens) == ("scripted-model", 120, 40)

    # The stage: a malformed answer and one without findings fall back to extractive reports.
    two = sorted((c for c in read_communities(store) if len(c.members) >= 2), key=lambda c: c.iri)[:2]
    write_communities(store, two, config.kb.base_iri)
    llm = ScriptedLLM("not json", json.dumps({"title": "T", "summary": "S.", "findings": []}))
    stage = ReportsStage(config.communities.model_copy(update={"reports": "llm"}), config.kb.base_iri,
                         lambda: make_stage(config)._embedder(), lambda: llm)  # fmt: skip
    summary = stage.run(store, kb_dir)
    assert "2 LLM fallbacks to extractive" in summary and stage.counts["written"] == 2
    assert {r.generated_by for r in read_reports(store)} == {"extractive"}
