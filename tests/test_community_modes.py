"""Modes community, entity, local and global (spr/retrieval/community.py, local_search.py, global_search.py) on a
copy of the example corpus KB whose communities, reports, descriptions and indexes this module
writes itself (store.communities' layout, the real MiniLM embedder): one level-0 community per
document, three small level-1 communities, reports made from the documents' own sentences.
Global search runs the real SmolLM2 on the three level-1 reports; a scripted model checks that
invalid map output is skipped."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from support.kbs import corpus_kb

from core.config import load_config
from core.errors import StoreError
from core.llm.base import LLM, Completion, Request
from core.text import sentence_spans
from core.usage import Usage, UsageTracker
from spr.fuse import fuse
from spr.qa import KnowledgeBase
from spr.retrieval import registry
from spr.retrieval.community import CommunityData, make_community, make_entity
from spr.retrieval.global_search import GlobalRetriever, make_global, map_schema
from spr.retrieval.local_search import LocalRetriever, make_local
from store.communities import (
    DESCRIPTIONS_INDEX,
    REPORTS_INDEX,
    Community,
    Finding,
    Report,
    community_iri,
    members_hash,
    write_communities,
    write_descriptions,
    write_report,
)
from store.layout import KBLayout
from store.vocab import DCTERMS, PKB, SKOS

pytestmark = pytest.mark.slow  # loads MiniLM and builds a KB

WIND = "Guidelines for Onshore Wind Siting in Westmark Province"
WIND_QUESTION = "How far must wind turbines be from homes?"


def _first_sentences(text: str, n: int) -> list[str]:
    spans = [text[a:b] for a, b in sentence_spans(text)]
    return [s for s in spans if len(s.split()) >= 5 and not s.startswith("#")][:n]


def _build(kb: Path) -> dict:
    """Write communities (level 0: one per document; level 1: three of the wind document's
    entities), their reports, every mentioned entity's description and both indexes."""
    from core.embed import make_embedder
    from store.oxigraph_store import OxigraphStore
    from store.vectors import VectorIndex

    config = load_config(kb_dir=kb)
    base = config.kb.base_iri
    store = OxigraphStore(kb / "store")
    try:
        rows = store.select(
            f"SELECT ?e ?c ?d ?title ?text WHERE {{ ?e <{PKB}mentionedIn> ?c . ?c <{PKB}partOfDocument> ?d ; <{PKB}text> ?text . "
            f"?d <{DCTERMS}title> ?title }}"
        ).rows
        labels = {r["e"].value: r["l"].value for r in store.select(f"SELECT ?e ?l WHERE {{ ?e <{PKB}mentionedIn> ?c ; <{SKOS}prefLabel> ?l }}").rows}
        doc_of_entity: dict[str, dict[str, int]] = {}
        chunks_of_doc: dict[str, dict[str, str]] = {}
        title_of: dict[str, str] = {}
        entity_chunks: dict[str, list[str]] = {}
        for r in rows:
            e, c, d = r["e"].value, r["c"].value, r["d"].value
            counts = doc_of_entity.setdefault(e, {})
            counts[d] = counts.get(d, 0) + 1
            chunks_of_doc.setdefault(d, {})[c] = r["text"].value
            title_of[d] = r["title"].value
            entity_chunks.setdefault(e, []).append(c)
        members: dict[str, list[str]] = {}
        for e, counts in doc_of_entity.items():
            members.setdefault(max(sorted(counts), key=lambda d: counts[d]), []).append(e)

        communities: list[Community] = []
        reports: list[Report] = []
        doc_community: dict[str, str] = {}
        chunk_text = {c: t for d in chunks_of_doc.values() for c, t in d.items()}
        for d, ms in sorted(members.items()):
            iri = community_iri(base, 0, ms).value
            doc_community[d] = iri
            communities.append(Community(iri, 0, None, tuple(sorted(ms))))
            findings = []
            for c in sorted(chunks_of_doc[d])[:3]:
                for sentence in _first_sentences(chunk_text[c], 1):
                    cited = tuple(sorted(e for e in ms if c in entity_chunks[e]))
                    findings.append(Finding(sentence, cited, (c,)))
            summary = f"Entities of {title_of[d]}: " + ", ".join(sorted(labels.get(e, "") for e in ms)[:6]) + "."
            reports.append(Report(iri, title_of[d], summary, tuple(findings), "extractive", 0, 0, 0.01, members_hash(ms)))

        wind = next(d for d, t in title_of.items() if t == WIND)
        wind_members = sorted(members[wind])
        thirds = [wind_members[i::3] for i in range(3)]
        level1 = []
        for i, ms in enumerate(thirds):
            iri = community_iri(base, 1, ms).value
            level1.append(iri)
            communities.append(Community(iri, 1, doc_community[wind], tuple(sorted(ms))))
            names = sorted(labels.get(e, "") for e in ms)[:4]
            c = sorted(chunks_of_doc[wind])[i % len(chunks_of_doc[wind])]
            sentence = _first_sentences(chunk_text[c], 1)[0]
            reports.append(
                Report(iri, f"Wind siting group {i + 1}", f"Entities: {', '.join(names)}.", (Finding(sentence, tuple(ms), (c,)),),
                       "extractive", 0, 0, 0.01, members_hash(ms))
            )

        descriptions = {}
        for e, label in labels.items():
            first = sorted(entity_chunks[e])[0]
            sentence = (_first_sentences(chunk_text[first], 1) or [""])[0]
            descriptions[e] = f"{label}: {sentence}" if sentence else label

        write_communities(store, communities, base)
        for r in reports:
            write_report(store, r, base)
        write_descriptions(store, descriptions, base)
    finally:
        store.close()

    embedder = make_embedder(config.embed, None)
    layout = KBLayout(kb)
    index = VectorIndex(embedder.dimension)
    index.add([r.community for r in reports], embedder.embed_many([r.text for r in reports]))
    index.save(layout.index(REPORTS_INDEX))
    entities = sorted(descriptions)
    index = VectorIndex(embedder.dimension)
    index.add(entities, embedder.embed_many([descriptions[e] for e in entities]))
    index.save(layout.index(DESCRIPTIONS_INDEX))
    return {
        "wind_community": doc_community[wind],
        "level0": {c.iri for c in communities if c.level == 0},
        "level1": level1,
        "members": {c.iri: set(c.members) for c in communities},
        "descriptions": descriptions,
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    source = corpus_kb(tmp_path_factory)
    copy = tmp_path_factory.mktemp("communities") / "kb"
    shutil.copytree(source, copy)
    facts = _build(copy)
    with KnowledgeBase.open(copy) as kb:
        yield kb, facts


# --- community ---------------------------------------------------------------------------------------
def test_community_returns_the_right_report_first(built):
    kb, facts = built
    retriever = make_community(kb)
    found = retriever.search(WIND_QUESTION, 5)
    reports = [e for e in found.evidence if e.source == "community:report"]
    assert 1 <= len(reports) <= 5
    assert reports[0].chunk.iri == facts["wind_community"]
    assert [e.score for e in reports] == sorted((e.score for e in reports), reverse=True)
    assert {e.chunk.iri for e in reports} <= facts["level0"]  # level 1 is in the index, not at [communities] level
    # the report is citable: its text is the community's pkb:reportText, offsets into it
    first = reports[0]
    assert first.kind == "chunk" and first.text == first.chunk.text and first.chunk.document == facts["wind_community"]
    assert first.text.startswith(f"# {WIND}")
    # then the chunks the findings cite, real document chunks
    chunks = [e for e in found.evidence if e.source == "community:chunk"]
    assert chunks and len(chunks) <= 5 and found.evidence[: len(reports)] == tuple(reports)
    assert all(e.chunk.iri.startswith(kb.config.kb.base_iri.rstrip("/") + "/chunk/") for e in chunks)
    assert "wind" in chunks[0].text.lower()
    assert "context tokens (budget 4,000)" in found.trace.note and "community" in found.trace.timings_ms
    assert fuse(found.evidence, 10**6).tokens <= 4000  # within 800 tokens a report
    assert len(retriever.retrieve(WIND_QUESTION, 2)) <= 2 + 2


def test_community_context_fits_and_cites_reports(built, monkeypatch):
    kb, facts = built
    monkeypatch.setitem(registry.RETRIEVERS, "community", make_community)
    answer = kb.ask(WIND_QUESTION, mode="community", k=5)
    assert answer.mode == "community" and not answer.abstained
    assert answer.usage.llm_calls == 0 and 0 < answer.usage.context_tokens <= 4000
    assert answer.citations and "800" in answer.text
    for c in answer.citations:  # a report's quote is its text at the cited offsets; a chunk's is the chunk's
        source = next(e.chunk for e in answer.evidence if e.chunk is not None and e.chunk.iri == c.chunk)
        assert source.text[c.start - source.start : c.end - source.start] == c.quote


# --- entity ------------------------------------------------------------------------------------------
def test_entity_scores_communities_through_members(built):
    kb, facts = built
    retriever = make_entity(kb)
    found = retriever.search(WIND_QUESTION, 3)
    reports = [e for e in found.evidence if e.source == "entity:report"]
    descriptions = [e for e in found.evidence if e.source == "entity:description"]
    assert 1 <= len(reports) <= 3 and len(descriptions) == kb.config.communities.top_entities
    assert found.evidence[: len(reports)] == tuple(reports)  # reports first, then descriptions
    similarity = {e.chunk.iri: e.score for e in descriptions}
    for r in reports:  # each report scores the best similarity of its members among the top n
        linked = facts["members"][r.chunk.iri] & set(similarity)
        assert linked and r.score == pytest.approx(max(similarity[m] for m in linked))
    assert [e.score for e in reports] == sorted((e.score for e in reports), reverse=True)
    # the best-linked entity's community comes first
    best = max(similarity, key=similarity.get)
    assert best in facts["members"][reports[0].chunk.iri]
    assert descriptions[0].text == facts["descriptions"][descriptions[0].chunk.iri]
    assert fuse(found.evidence, 10**6).tokens <= 3 * 800 or len(reports) == 1


def test_budget_keeps_the_best_report(built):
    kb, facts = built
    data = CommunityData(kb.store, kb.config.kb_dir, 0)
    from spr.retrieval.community import CommunityRetriever

    found = CommunityRetriever(data, kb.embedder, tokens_per_report=10).retrieve(WIND_QUESTION, 5)
    assert [e.chunk.iri for e in found] == [facts["wind_community"]]  # nothing else fits 50 tokens


def test_entity_top_n_follows_the_parameter(built):
    kb, _ = built
    data = CommunityData(kb.store, kb.config.kb_dir, 0)
    from spr.retrieval.community import EntityRetriever

    found = EntityRetriever(data, kb.embedder, top_entities=15).retrieve(WIND_QUESTION, 5)
    assert len([e for e in found if e.source == "entity:description"]) == 15


# --- local -------------------------------------------------------------------------------------------
def test_local_packs_within_the_budget(built):
    kb, facts = built
    data = CommunityData(kb.store, kb.config.kb_dir, 0)
    retriever = LocalRetriever(data, kb.embedder, kb.term_labels, top_entities=10, budget=1500)
    context = retriever.build(WIND_QUESTION)
    assert 0 < context.tokens <= 1500
    assert fuse(context.evidence, 10**6).tokens == context.tokens  # the answer path counts the same
    sources = set(context.counts)
    assert {"local:description", "local:relation", "local:chunk"} <= sources, context.counts
    linked = {e.chunk.iri for e in context.evidence if e.source == "local:description"}
    for e in context.evidence:
        if e.source == "local:relation":
            assert e.fact is not None and {e.fact.subject, e.fact.object} & linked
            assert e.chunk is not None and e.chunk.iri in e.fact.graphs
    big = LocalRetriever(data, kb.embedder, kb.term_labels, top_entities=10, budget=8000).search(WIND_QUESTION, 5)
    assert len(big.evidence) > len(context.evidence) and "context tokens (budget 8,000)" in big.trace.note


def _with_llm(kb: KnowledgeBase, llm: LLM) -> KnowledgeBase:
    """The module's KB (store, embedder) answering with ``llm``, which counts on the KB's tracker."""
    return KnowledgeBase(kb.config, kb.store, embedder=kb.embedder, llm=llm, tracker=llm.tracker)


def test_local_answer_is_one_llm_call(built, monkeypatch):
    kb, _ = built
    monkeypatch.setitem(registry.RETRIEVERS, "local", make_local)
    llm = _Scripted(["Wind turbines must stand at least 800 metres from homes [1]."])
    answer = _with_llm(kb, llm).ask(WIND_QUESTION, mode="local", answer="llm")
    assert answer.usage.llm_calls == 1 and answer.usage.prompt_tokens == 100
    assert "local" in answer.trace.timings_ms and "context tokens (budget 8,000)" in answer.trace.note
    assert not answer.abstained and answer.citations


# --- global ------------------------------------------------------------------------------------------
def test_global_map_calls_and_tokens_with_smollm2(built):
    kb, facts = built
    data = CommunityData(kb.store, kb.config.kb_dir, 1)
    sizes = sorted(len(r.text) for r in data.reports.values())
    assert len(sizes) == 3
    # two reports fit a batch, three do not: two map calls
    from spr.fuse import estimate_tokens

    costs = sorted(estimate_tokens(r.text) + 4 for r in data.reports.values())
    retriever = GlobalRetriever(data, kb.llm, batch_tokens=costs[-1] + costs[-2], points=3, map_tokens=160)
    assert len(retriever.batches()) == 2
    before = kb.tracker.totals.requests
    result = retriever.run("Which rules apply to wind turbine siting?")
    s = result.stats
    assert s.batches == 2 and s.calls == 2 and kb.tracker.totals.requests - before == 2
    assert s.reports == 3 and s.prompt_tokens > 0 and s.completion_tokens > 0
    assert 0 <= s.invalid <= 2 and s.estimated_prompt_tokens == retriever.map_prompt_tokens("Which rules apply to wind turbine siting?")
    assert len(result.points) == s.points == len(result.evidence) <= 2 * 3
    assert [p.score for p in result.points] == sorted((p.score for p in result.points), reverse=True)
    for e in result.evidence:  # points cite their report
        assert e.kind == "triple" and e.source == "global:point" and 0 < e.score <= 1
        assert e.chunk.document in facts["level1"] and e.chunk.iri.startswith(e.chunk.document + "#point-")


def test_global_usage_reaches_the_answer(built, monkeypatch):
    kb, _ = built
    point = '{"points": [{"description": "Wind turbines keep %d metres from homes.", "score": 80, "report": 1}]}'
    llm = _Scripted([point % n for n in (800, 700, 700)])  # the repeated point counts once
    base = _with_llm(kb, llm)
    retriever = GlobalRetriever(CommunityData(kb.store, kb.config.kb_dir, 1), lambda: base.llm, batch_tokens=10)
    monkeypatch.setitem(registry.RETRIEVERS, "global", make_global)
    monkeypatch.setitem(base._retrievers, "global", retriever)  # level 1: the three small reports, one a call
    answer = base.ask(WIND_QUESTION, mode="global", answer="extractive")
    assert answer.usage.llm_calls == 3 and answer.usage.prompt_tokens == 300 and answer.usage.completion_tokens == 30
    assert "3 map calls over 3 reports of level 1" in answer.trace.note and "map tokens 300 prompt + 30 completion" in answer.trace.note
    assert "global_map" in answer.trace.timings_ms
    assert len(answer.evidence) == 2 and all(e.source == "global:point" for e in answer.evidence)
    assert answer.citations and all(c.document in {e.chunk.document for e in answer.evidence} for c in answer.citations)


class _Scripted(LLM):
    """Replies in turn from ``replies`` (each call counted with fixed token counts)."""

    def __init__(self, replies: Sequence[str]):
        super().__init__("scripted", tracker=UsageTracker())
        self.replies = list(replies)

    def _generate(self, request: Request) -> Completion:
        return Completion(self.replies.pop(0), Usage(100, 10), False, self.model_id)


def test_global_skips_invalid_map_output(built):
    kb, facts = built
    data = CommunityData(kb.store, kb.config.kb_dir, 1)
    retriever = GlobalRetriever(data, _Scripted([
        "not json at all",
        '{"points": [{"description": "Turbines stand 800 metres from homes.", "score": 90, "report": 7},'
        ' {"description": "Unrelated.", "score": 0, "report": 1}, {"description": "", "score": 50, "report": 1}]}',
        '{"points": "none"}',
    ]), batch_tokens=10)
    assert len(retriever.batches()) == 3  # each report alone
    result = retriever.run(WIND_QUESTION)
    assert result.stats.calls == 3 and result.stats.invalid == 2
    assert result.stats.prompt_tokens == 300 and result.stats.completion_tokens == 30
    assert [p.text for p in result.points] == ["Turbines stand 800 metres from homes."]  # score 0 and empty dropped
    assert result.evidence[0].chunk.document == retriever.batches()[1][0].community  # report 7 is off: its batch's report


def test_map_schema_bounds_points():
    schema = map_schema(4, 2)
    points = schema["properties"]["points"]
    assert points["maxItems"] == 4 and points["items"]["properties"]["score"]["maximum"] == 100
    assert points["items"]["properties"]["report"]["maximum"] == 2


# --- a KB without reports ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A copy of the corpus KB without communities, reports, descriptions and their indexes."""
    from store.oxigraph_store import OxigraphStore

    copy = tmp_path_factory.mktemp("bare") / "kb"
    shutil.copytree(corpus_kb(tmp_path_factory), copy)
    base = load_config(kb_dir=copy).kb.base_iri
    store = OxigraphStore(copy / "store")
    write_communities(store, [], base)
    write_descriptions(store, {}, base)
    store.close()
    for name in (REPORTS_INDEX, DESCRIPTIONS_INDEX):
        shutil.rmtree(KBLayout(copy).index(name), ignore_errors=True)
    with KnowledgeBase.open(copy) as kb:
        yield kb


@pytest.mark.parametrize("factory", [make_community, make_entity, make_local, make_global])
def test_kb_without_reports_says_what_to_run(bare, factory):
    with pytest.raises(StoreError) as error:
        factory(bare).retrieve(WIND_QUESTION, 5)
    message = str(error.value)
    assert "policykb reindex reports" in message and "\n" not in message
