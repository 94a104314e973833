"""The document graph (Document GraphRAG): the keyword layer, the tree in RDF, the three expansions
through SPARQL, mode ``docgraph`` with its reranking and pass condition — on KBs built by the real
pipeline: the example corpus, and a small act whose long article is split into several chunks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.kbs import corpus_kb

from core.config import DocGraphConfig, load_config
from core.keywords import guess_language, make_extractor
from kgpipeline.derived.keywords import KeywordsStage
from kgpipeline.pipeline import ingest_paths
from spr.qa import KnowledgeBase
from spr.retrieval.docgraph import DocumentGraph, Scored, capped
from spr.retrieval.titles import StoreTitles, read_titles
from store.keywords import keyword_key, keywords_graph
from store.oxigraph_store import OxigraphStore
from store.units import chapter_chunks, heading_paths, read_units
from store.vocab import PKB, declare_prefixes

ACT = """---
title: Act on Offshore Hydrogen Storage
identifier: OHS-2025
short_title: OHSA
department: Ministry of Energy of Nordland
source: https://example.org/eli/act/2025/7
date: 2025-03-01
---
# Act on Offshore Hydrogen Storage

## Chapter I General provisions

### Article 1 Subject matter

This Act lays down rules for the storage of hydrogen in depleted offshore gas fields.

### Article 2 Storage permits

{permits}

## Chapter II Supervision

### Article 3 Inspections

The Maritime Safety Inspectorate inspects every storage site once a year. Salt caverns are inspected by the Mining Office.

### Article 4 Penalties

An operator that stores hydrogen without a storage permit pays a fine of up to EUR 2 million.
"""
PERMIT = (
    "An operator shall obtain a storage permit from the Offshore Licensing Authority before injecting hydrogen. "
    "The application describes the reservoir, the wells and the monitoring plan. "
)


@pytest.fixture(scope="module")
def act_kb(tmp_path_factory):
    """An act whose Article 2 is long enough to be split: several chunks in one section."""
    root = tmp_path_factory.mktemp("docgraph")
    (root / "corpus").mkdir()
    (root / "corpus" / "ohs-act.md").write_text(ACT.format(permits=" ".join([PERMIT] * 12)), encoding="utf-8")
    kb = root / "kb"
    kb.mkdir()
    (kb / "policykb.toml").write_text("[ingest]\nchunk_tokens = 80\nmin_chunk_tokens = 16\n", encoding="utf-8")
    ingest_paths(load_config(kb_dir=kb), [root / "corpus"])
    return kb


@pytest.fixture(scope="module")
def act(act_kb):
    with KnowledgeBase.open(act_kb) as opened:
        yield opened


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    with KnowledgeBase.open(corpus_kb(tmp_path_factory)) as opened:
        yield opened


def select(kb: KnowledgeBase, query: str):
    """A SELECT with the well-known prefixes declared, as the CLI and the endpoint do."""
    return kb.store.select(declare_prefixes(query))


def _chunks_of(kb: KnowledgeBase, heading: str) -> list[str]:
    return sorted(u.iri for u in read_units(kb.store) if u.path and u.path[-1] == heading)


# --- the tree and the document in RDF -----------------------------------------------------------------
def test_document_node_has_issuer_identifiers_and_language(act):
    rows = select(act, 
        f"SELECT ?id ?issuer ?local ?see ?lang WHERE {{ ?d a ?class ; dcterms:identifier ?id ; dcterms:publisher ?issuer ; "
        f"rdfs:seeAlso ?see ; dcterms:language ?lang . FILTER(?class != <{PKB}Section>) }}"
    ).rows
    assert rows, "the document node carries its issuer, its ELI link and its language"
    row = rows[0]
    assert row["id"].value == "ohs-2025"  # document ids are normalized; the ELI link keeps its form
    assert row["issuer"].value == "Ministry of Energy of Nordland"
    assert row["see"].value == "https://example.org/eli/act/2025/7"
    assert row["lang"].value == "en"


def test_a_short_title_is_stored_shown_in_heading_paths_and_names_the_document(act):
    """Questions cite a law by its short title ("the EEG"), which its text may never write."""
    rows = select(act, "SELECT ?short WHERE { ?d dcterms:identifier \"ohs-2025\" ; dcterms:alternative ?short }").rows
    assert [r["short"].value for r in rows] == ["OHSA"]
    unit = next(u for u in read_units(act.store) if u.path and u.path[-1] == "Article 4 Penalties")
    assert unit.path[0] == "Act on Offshore Hydrogen Storage (OHSA)" and "OHSA" in unit.index_text
    assert heading_paths(act.store, [unit.iri])[unit.iri].startswith("Act on Offshore Hydrogen Storage (OHSA) › ")
    doc = next(iter(read_titles(act.store)))
    assert read_titles(act.store)[doc] == ["Act on Offshore Hydrogen Storage", "OHSA"]
    assert StoreTitles(act.store).named("What fine does the OHSA set?") == {doc}
    # The answerability check reads the heading path: the short title is a premise the evidence holds.
    answer = act.ask("What fine does the OHSA set for storing hydrogen without a permit?")
    assert not answer.abstained and "EUR 2 million" in answer.text


def test_sparql_walks_document_chapters_articles_chunks(act):
    """The docs/graphrag.md query: document → chapter → article → chunk, in order."""
    rows = select(act, 
        """SELECT ?chapter ?article (COUNT(?chunk) AS ?chunks) WHERE {
             ?doc dcterms:identifier "ohs-2025" .
             ?ch pkb:sectionOf ?doc ; pkb:heading ?chapter ; pkb:order ?co .
             ?art pkb:sectionOf ?ch ; pkb:heading ?article ; pkb:order ?ao .
             ?chunk pkb:inSection ?art .
           } GROUP BY ?chapter ?article ?co ?ao ORDER BY ?co ?ao"""
    ).rows
    got = [(r["chapter"].value, r["article"].value, int(r["chunks"].value)) for r in rows]
    assert [a for _, a, _ in got] == ["Article 1 Subject matter", "Article 2 Storage permits", "Article 3 Inspections", "Article 4 Penalties"]
    assert got[1][2] > 1, "the long Article 2 is split into several chunks, all in its section"
    assert {c for c, _, _ in got} == {"Chapter I General provisions", "Chapter II Supervision"}


def test_chunks_never_span_two_sections(act):
    """Every chunk lies in exactly one section; the only headings inside it are its section's own
    and those of its ancestors (a heading-only "Chapter II" line is glued to its first article)."""
    rows = select(act, "SELECT ?c (COUNT(DISTINCT ?s) AS ?n) WHERE { ?c a pkb:Chunk ; pkb:inSection ?s } GROUP BY ?c").rows
    assert rows and all(int(r["n"].value) == 1 for r in rows)
    headings = [r["h"].value for r in select(act, "SELECT ?h WHERE { ?s a pkb:Section ; pkb:heading ?h }").rows]
    for unit in read_units(act.store):
        inside = [h for h in headings if h in unit.text and h not in unit.path]
        assert not inside, (unit.iri, inside)


# --- the keyword layer ---------------------------------------------------------------------------------
def test_keyword_layer_counts_match_its_links(kb):
    rows = select(kb, 
        "SELECT ?k ?n (COUNT(?c) AS ?linked) WHERE { ?k a pkb:Keyword ; pkb:chunkFrequency ?n . ?c pkb:hasKeyword ?k } GROUP BY ?k ?n"
    ).rows
    assert len(rows) > 50
    assert all(int(r["n"].value) == int(r["linked"].value) for r in rows)
    per_chunk = select(kb, "SELECT ?c (COUNT(?k) AS ?n) WHERE { ?c pkb:hasKeyword ?k } GROUP BY ?c").rows
    assert per_chunk and max(int(r["n"].value) for r in per_chunk) <= DocGraphConfig().keywords_per_chunk
    # keywords link chunks of different documents
    cross = select(kb, 
        "SELECT ?k WHERE { ?a pkb:hasKeyword ?k ; pkb:partOfDocument ?d1 . ?b pkb:hasKeyword ?k ; pkb:partOfDocument ?d2 . FILTER(?d1 != ?d2) } LIMIT 1"
    ).rows
    assert cross


def _writable_copy(kb: Path, tmp_path: Path) -> tuple[Path, OxigraphStore]:
    copy = tmp_path / "kb"
    shutil.copytree(kb, copy)
    return copy, OxigraphStore(copy / "store")


def test_keyword_stage_rebuild_replaces_the_graph(act_kb, tmp_path):
    kb, store = _writable_copy(act_kb, tmp_path)
    base = load_config(kb_dir=kb).kb.base_iri
    try:
        before = store.count(keywords_graph(base))
        summary = KeywordsStage(DocGraphConfig(keywords_per_chunk=3), base).run(store, kb)
        assert "keywords" in summary and "en 1" in summary
        after = store.count(keywords_graph(base))
        assert 0 < after < before  # fewer keywords per chunk, nothing left over from the first build
        KeywordsStage(DocGraphConfig(), base).run(store, kb)
        assert store.count(keywords_graph(base)) == before
    finally:
        store.close()


def test_both_yake_backends_mostly_agree(kb):
    """yake-rust and the reference yake agree exactly on most chunks; where they differ it is the
    de-duplication of near-identical phrases ("data subject"/"data subjects"), 3 or more of 5 shared."""
    texts = [u.text for u in read_units(kb.store)]
    rust = make_extractor("yake-rust", "en", 2, 0.8, 5)
    reference = make_extractor("yake", "en", 2, 0.8, 5)
    pairs = [(rust(t), reference(t)) for t in texts]
    assert sum(a == b for a, b in pairs) >= 0.9 * len(pairs)
    assert all(len(set(a) & set(b)) >= min(len(a), len(b)) - 2 for a, b in pairs)


def test_language_guess_and_unknown_language():
    assert guess_language("Der Netzbetreiber hat die Anlage unverzüglich an das Netz anzuschließen.") == "de"
    assert guess_language("Les États membres veillent à ce que les opérateurs respectent les règles.") == "fr"
    assert guess_language("12345 !!!") == "en"
    with pytest.raises(Exception, match="no stop words for language 'xx'"):
        make_extractor("yake-rust", "xx", 2, 0.8, 5)


# --- the expansions --------------------------------------------------------------------------------------
def test_ics_returns_the_other_chunks_of_the_section_only(act):
    permits = _chunks_of(act, "Article 2 Storage permits")
    assert len(permits) >= 3
    graph = DocumentGraph(act.store, DocGraphConfig(fanout=50))
    found = [s.chunk for s in graph.ics([Scored(permits[0], 1.0)])]
    assert sorted(found) == permits[1:]
    # fan-out: the nearest section mates first
    near = DocumentGraph(act.store, DocGraphConfig(fanout=1)).ics([Scored(permits[0], 1.0)])
    assert len(near) == 1
    # one level up: the whole chapter (Article 1 joins), never the other chapter
    chapter = {s.chunk for s in DocumentGraph(act.store, DocGraphConfig(fanout=50, ics_up=1)).ics([Scored(permits[0], 1.0)])}
    assert set(_chunks_of(act, "Article 1 Subject matter")) <= chapter
    assert not chapter & set(_chunks_of(act, "Article 3 Inspections"))
    # a tree shallower than ics_up gives nothing rather than the whole document
    assert chapter_chunks(act.store, [permits[0]], up=3) == []


def test_iks_follows_shared_keywords_and_skips_generic_ones(act):
    penalties = _chunks_of(act, "Article 4 Penalties")
    graph = DocumentGraph(act.store, DocGraphConfig(max_keyword_share=1.0, fanout=50))
    found = graph.iks([Scored(penalties[0], 1.0)])
    assert found and penalties[0] not in {s.chunk for s in found}
    seed_keys = {r["key"].value for r in select(act, 
        f"SELECT ?key WHERE {{ <{penalties[0]}> pkb:hasKeyword ?k . ?k pkb:keywordKey ?key }}").rows}
    for s in found:  # every chunk found shares a keyword with the seed
        keys = {r["key"].value for r in select(act, 
            f"SELECT ?key WHERE {{ <{s.chunk}> pkb:hasKeyword ?k . ?k pkb:keywordKey ?key }}").rows}
        assert keys & seed_keys
    # with the default share, a keyword in most chunks of this small KB is generic: fewer followed
    strict = DocumentGraph(act.store, DocGraphConfig(max_keyword_share=0.01, fanout=50))
    assert strict.max_frequency == 2
    assert len(strict.iks([Scored(penalties[0], 1.0)])) <= len(found)


def test_uks_finds_chunks_by_the_question_keywords(act):
    graph = DocumentGraph(act.store, DocGraphConfig(max_keyword_share=1.0))
    question = "Which authority grants a storage permit?"
    keys = [keyword_key(k) for k in graph.question_keywords(question)]
    assert keys
    found = graph.uks(question)
    assert found
    assert set(_chunks_of(act, "Article 2 Storage permits")) & {s.chunk for s in found}


def test_capped_keeps_the_best_per_group():
    assert sorted(capped([("k", "a"), ("k", "b"), ("j", "a")], {"a": 1.0, "b": 2.0}, 1)) == ["a", "b"]
    assert capped([], {}, 3) == set()


# --- mode docgraph ------------------------------------------------------------------------------------------
def test_docgraph_mode_dedupes_reranks_and_passes_top_k(act):
    result = act.retriever("docgraph").search("Who inspects salt caverns?", 4)
    chunks = [e.chunk.iri for e in result.evidence]
    assert 0 < len(chunks) <= 4 and len(chunks) == len(set(chunks))
    assert all(e.ranks[-1][0] == "rerank" for e in result.evidence)
    assert [e.ranks[-1][1] for e in result.evidence] == list(range(1, len(chunks) + 1))
    scores = [e.score for e in result.evidence]
    assert scores == sorted(scores, reverse=True)
    assert "Mining Office" in result.evidence[0].text
    for name in ("uks", "iks", "ics", "rerank", "docgraph"):
        assert name in result.trace.timings_ms
    # an expansion brings in a chunk the base mode did not return
    wide = act.retriever("docgraph").search("What must an operator obtain before injecting hydrogen?", 10)
    assert any(name in ("ics", "iks", "uks") for e in wide.evidence for name, _ in e.ranks)


def test_docgraph_through_ask_and_on_a_kb_without_keywords(act_kb, tmp_path):
    copy, store = _writable_copy(act_kb, tmp_path)
    store.drop_graph(keywords_graph(load_config(kb_dir=copy).kb.base_iri))
    store.close()
    with KnowledgeBase.open(copy) as opened:
        result = opened.retriever("docgraph").search("Who inspects salt caverns?", 3)
        assert result.evidence and "no keyword layer" in result.trace.note
        answer = opened.ask("Who inspects salt caverns?", mode="docgraph", k=3)
        assert answer.citations and "Mining Office" in answer.text


def test_base_mode_must_not_be_docgraph(act_kb):
    config = load_config(kb_dir=act_kb)
    config = config.model_copy(update={"docgraph": config.docgraph.model_copy(update={"base": "docgraph"})})
    with KnowledgeBase.open(config) as opened, pytest.raises(Exception, match="base must be another retrieval mode"):
        opened.retriever("docgraph")


def test_llm_rerank_that_is_down_keeps_the_offline_order(act_kb):
    config = load_config(kb_dir=act_kb)
    offline = config.model_copy(update={"docgraph": config.docgraph.model_copy(update={"rerank": "offline"})})
    llm = config.model_copy(update={
        "docgraph": config.docgraph.model_copy(update={"rerank": "llm"}),
        "llm": config.llm.model_copy(update={"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "timeout_s": 2.0, "retries": 0}),
    })
    question = "Who inspects salt caverns?"
    with KnowledgeBase.open(offline) as a:
        expected = [e.chunk.iri for e in a.retriever("docgraph").search(question, 3).evidence]
    with KnowledgeBase.open(llm) as b:
        result = b.retriever("docgraph").search(question, 3)
    assert [e.chunk.iri for e in result.evidence] == expected
    assert "LLM rerank skipped" in result.trace.note


def test_expansions_as_fused_signals(act_kb):
    config = load_config(kb_dir=act_kb)
    weights = {"weight_uks": 0.5, "weight_ics": 0.5, "weight_iks": 0.5}
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update=weights)})
    with KnowledgeBase.open(config) as opened:
        result = opened.retriever("hybrid").search("What must an operator obtain before injecting hydrogen?", 8)
    names = {name for e in result.evidence for name, _ in e.ranks}
    assert {"ics", "iks"} & names
    assert {"uks", "ics", "iks"} <= set(result.trace.timings_ms)


def test_llm_keyword_backend_keeps_only_phrases_of_the_text():
    """The 'llm' backend with the real tiny model: whatever it answers, only phrases that occur in
    the text, of at most ``ngrams`` words, at most ``top`` of them, are kept."""
    from core.keywords import llm_keywords
    from core.llm import LlamaCppLLM

    text = "The Offshore Licensing Authority grants a storage permit before hydrogen is injected into a reservoir."
    found = llm_keywords(LlamaCppLLM(cache=False), text, 3, 2)
    assert len(found) <= 3
    assert all(k.casefold() in text.casefold() and len(k.split()) <= 2 for k in found)
    assert llm_keywords(LlamaCppLLM(cache=False), "   ", 3, 2) == []


def test_ics_in_a_document_without_sections_returns_its_other_chunks(tmp_path):
    """A plain-text record (an article of a JSONL corpus) has no section tree: its chapter is the
    document itself, so ICS gives the document's other chunks."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    sentence = "the operator shall keep the monitoring records of the storage site for ten years. "
    (corpus / "records.jsonl").write_text(
        '{"id": "art-9", "title": "Article 9", "text": "' + (sentence * 40) + '"}\n'
        + '{"id": "art-10", "title": "Article 10", "text": "Member States appoint an inspector."}\n',
        encoding="utf-8",
    )
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "policykb.toml").write_text("[ingest]\nchunk_tokens = 64\nmin_chunk_tokens = 16\n", encoding="utf-8")
    ingest_paths(load_config(kb_dir=kb), [corpus])
    with KnowledgeBase.open(kb) as opened:
        units = read_units(opened.store)
        by_doc: dict[str, list[str]] = {}
        for u in units:
            by_doc.setdefault(u.document, []).append(u.iri)
        long_doc = max(by_doc.values(), key=len)
        assert len(long_doc) >= 3
        found = {s.chunk for s in DocumentGraph(opened.store, DocGraphConfig(fanout=50)).ics([Scored(long_doc[0], 1.0)])}
        assert found == set(long_doc) - {long_doc[0]}


def test_keyword_and_community_stages_can_be_turned_off():
    from core.config import Config
    from kgpipeline.pipeline import enabled_stages

    config = Config()
    assert {"keywords", "communities", "reports"} <= set(enabled_stages(config))
    off = config.model_copy(update={
        "docgraph": config.docgraph.model_copy(update={"keywords": False}),
        "communities": config.communities.model_copy(update={"build": False}),
    })
    assert not {"keywords", "communities", "reports"} & set(enabled_stages(off))
