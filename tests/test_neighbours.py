"""Small-to-big (spr/retrieval/neighbours.py): the chunks beside each retrieved passage, on a real
in-memory Oxigraph store holding policykb's document → section → chunk model."""

from __future__ import annotations

import pytest

from spr.fuse import fuse
from spr.records import Retrieval, Trace
from spr.retrieval.base import chunk_evidence, chunk_refs
from spr.retrieval.neighbours import SOURCE, beside, packed_neighbours_only, with_neighbours
from store.oxigraph_store import OxigraphStore
from store.vocab import DCTERMS, PKB

B = "https://example.org/"
ART5 = [
    "Article 5 Reporting. Operators shall report every significant incident to the Bureau.",
    "The report shall be submitted within 72 hours of becoming aware of the incident.",
    "The Bureau shall publish a yearly summary of the reports.",
]
ART6 = ["Article 6 Penalties. Operators that fail to report pay a fine of up to EUR 50,000."]


def _store() -> OxigraphStore:
    """One document, two sections (Article 5: three chunks, Article 6: one), one loose chunk
    without a section in another document."""
    store = OxigraphStore()
    lines = [f'<{B}doc/act> <{DCTERMS}title> "Energy Act" .', f'<{B}doc/plan> <{DCTERMS}title> "Plan" .']
    offset = 0
    for section, texts in (("art5", ART5), ("art6", ART6)):
        lines.append(f"<{B}section/{section}> a <{PKB}Section> .")
        for i, text in enumerate(texts):
            c = f"<{B}chunk/{section}-{i}>"
            lines += [
                f'{c} <{PKB}text> "{text}" ; <{PKB}partOfDocument> <{B}doc/act> ; <{PKB}inSection> <{B}section/{section}> ;'
                f" <{PKB}startOffset> {offset} ; <{PKB}endOffset> {offset + len(text)} .",
            ]
            offset += len(text) + 1
    for i, text in enumerate(["Solar first.", "Wind second.", "Storage third."]):
        lines.append(
            f'<{B}chunk/plan-{i}> <{PKB}text> "{text}" ; <{PKB}partOfDocument> <{B}doc/plan> ; <{PKB}startOffset> {i * 20} .'
        )
    store.update("INSERT DATA { GRAPH <" + B + "graph/meta> { " + "\n".join(lines) + " } }")
    return store


def _found(store: OxigraphStore, *names: str) -> Retrieval:
    refs = chunk_refs(store, [f"{B}chunk/{n}" for n in names])
    return Retrieval(tuple(chunk_evidence(refs[f"{B}chunk/{n}"], 1.0 / r, "hybrid") for r, n in enumerate(names, 1)), Trace())


def test_beside_takes_the_nearest_chunks_after_then_before():
    siblings = [(0, "a"), (10, "b"), (20, "c"), (30, "d")]
    assert beside(siblings, "b", 1) == ["c", "a"]
    assert beside(siblings, "b", 2) == ["c", "a", "d"]
    assert beside(siblings, "d", 1) == ["c"] and beside(siblings, "x", 1) == []


def test_neighbours_come_from_the_same_section_after_every_retrieved_passage():
    store = _store()
    found = with_neighbours(store, _found(store, "art5-0", "art6-0"), 1)
    keys = [e.chunk.iri.rsplit("/", 1)[1] for e in found.evidence]
    # the retrieved passages keep their places; Article 6 has no other chunk, and nothing crosses sections
    assert keys == ["art5-0", "art6-0", "art5-1"]
    added = found.evidence[2]
    assert added.source == SOURCE and added.ranks == ((SOURCE, 1),) and added.text == ART5[1]
    assert added.chunk.heading_path == "Energy Act" and added.chunk.start == len(ART5[0]) + 1


def test_a_neighbour_already_retrieved_is_not_repeated_and_zero_means_none():
    store = _store()
    found = with_neighbours(store, _found(store, "art5-1", "art5-2"), 1)
    assert [e.chunk.iri.rsplit("/", 1)[1] for e in found.evidence] == ["art5-1", "art5-2", "art5-0"]
    plain = _found(store, "art5-1")
    assert with_neighbours(store, plain, 0) is plain


def test_a_chunk_without_a_section_gets_its_documents_neighbours():
    store = _store()
    found = with_neighbours(store, _found(store, "plan-1"), 1)
    assert [e.text for e in found.evidence] == ["Wind second.", "Storage third.", "Solar first."]


def test_neighbours_the_budget_leaves_out_are_not_evidence():
    store = _store()
    found = with_neighbours(store, _found(store, "art5-1"), 1)
    assert len(found.evidence) == 3
    small = fuse(found.evidence, 60)  # room for the passage and one neighbour at most
    kept = packed_neighbours_only(found, small)
    assert kept.evidence[0] == found.evidence[0] and len(kept.evidence) < 3
    assert {e.key for e in kept.evidence} <= {p.evidence.key for p in small.pieces}


ACT_MD = """# Grid Reporting Act

## Article 3 Incident reports

Operators of transmission grids shall report every significant incident that interrupts supply to more than ten thousand customers to the Grid Bureau without undue delay after becoming aware of it.

The incident report shall describe the cause of the interruption, the number of customers affected, the duration of the interruption and the measures taken to restore supply and to prevent a recurrence.

The final incident report shall be submitted to the Grid Bureau within 72 hours of the restoration of supply, together with the data logs of the affected substations.

## Article 4 Publication

The Grid Bureau shall publish a yearly summary of the incident reports it received.
"""


@pytest.mark.slow
def test_llm_answers_read_the_neighbours_extractive_answers_do_not(tmp_path):
    # The real ingest (small chunks, so Article 3 is several), the real embedded SmolLM2.
    from core.config import load_config
    from kgpipeline.pipeline import ingest_paths
    from spr.qa import KnowledgeBase

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "grid-act.md").write_text(ACT_MD, encoding="utf-8")
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "policykb.toml").write_text("[ingest]\nchunk_tokens = 48\nchunk_overlap = 0\nmin_chunk_tokens = 8\n", encoding="utf-8")
    ingest_paths(load_config(kb_dir=kb), [corpus])
    question = "Which operators must report incidents that interrupt supply to the Grid Bureau?"
    with KnowledgeBase.open(kb) as base:
        llm = base.ask(question, mode="vector", answer="llm", k=1)
        extractive = base.ask(question, mode="vector", answer="extractive", k=1)
    retrieved, *added = llm.evidence
    assert added and all(e.source == SOURCE and e.ranks == ((SOURCE, 1),) for e in added)
    assert all(e.chunk.document == retrieved.chunk.document for e in added)
    assert [e.key for e in extractive.evidence] == [retrieved.key]
