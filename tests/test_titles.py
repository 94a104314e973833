"""Documents a question names by the distinctive words of their titles (spr/retrieval/titles.py),
and the rescoring pulling them in (``[retrieval] rescore_pull_named``): unit tests, then a KB of
look-alike national plans built by the real pipeline."""

from __future__ import annotations

import pytest

from core.config import load_config
from spr.qa import KnowledgeBase
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever
from spr.retrieval.rescore import MAX_PULLED, NAMED, TITLED, OfflineReranker
from spr.retrieval.titles import TitleWords

COUNTRIES = ("Spain", "Germany", "Sweden", "Hungary", "Austria", "Poland", "Greece", "Italy", "France", "Malta", "Latvia")
PARTS = ("Decarbonisation", "Energy efficiency", "Energy security")


def _plans() -> dict[str, str]:
    return {f"doc:{c}-{p}": f"{c}_National Objectives and Targets_{p}" for c in COUNTRIES for p in PARTS}


def test_a_country_names_its_plans_and_the_shared_words_name_none():
    titles = TitleWords(_plans())
    assert titles.keys["doc:Spain-Decarbonisation"] == [{"spain"}]  # "decarbonisation" is in 11 of 33 titles
    assert titles.named("What share of Spain's energy will be renewable?") == {f"doc:Spain-{p}" for p in PARTS}
    assert titles.named("What do the national objectives and targets for decarbonisation say?") == set()
    assert titles.named("Spain's or Portugal's, or Malta's?") == {f"doc:{c}-{p}" for c in ("Malta", "Spain") for p in PARTS}


def test_titles_of_a_shared_pattern_are_look_alikes():
    titles = TitleWords({**_plans(), "doc:report": "Annual Report of the Grid Regulator"})
    assert "doc:Spain-Decarbonisation" in titles.alike and "doc:report" not in titles.alike
    assert titles.named_alike("What does Spain's plan aim for?") == {f"doc:Spain-{p}" for p in PARTS}
    assert titles.named_alike("What does the Grid Regulator's annual report say?") == set()
    assert titles.named("What does the Grid Regulator's annual report say?") == {"doc:report"}


def test_a_title_is_named_only_by_all_its_distinctive_words_and_never_by_numbers():
    titles = TitleWords({
        "doc:jtf": "Regulation (EU) 2021/1056 establishing the Just Transition Fund",
        "doc:law": "Regulation (EU) 2021/1119 (European Climate Law)",
        "doc:dora-10": "DORA Article 10", "doc:cra-10": "Cyber Resilience Act Article 10",
    })  # fmt: skip
    assert titles.named("Can the Just Transition Fund support nuclear power?") == set()  # "establishing" is missing
    assert titles.named("Is the Just Transition Fund regulation establishing exclusions?") == {"doc:jtf"}
    assert titles.named("A model trained with 10^25 FLOPs: what testing applies?") == set()
    assert titles.named("What does DORA say about ICT risk?") == {"doc:dora-10"}


def _chunk(iri: str, document: str, text: str, score: float) -> Evidence:
    title = document.removeprefix("doc:")
    return Evidence(kind="chunk", text=text, score=score, source="hybrid", chunk=ChunkRef(iri, document, title, 0, len(text), text))


class _Ranked(Retriever):
    name = "hybrid"

    def __init__(self, evidence):
        self.evidence = evidence

    def retrieve(self, question, k):
        return self.evidence[:k]

    def search(self, question, k):
        return Retrieval(tuple(self.evidence[:k]), Trace())


def test_only_named_documents_without_a_candidate_are_pulled_in_scored_like_the_rest():
    first = [_chunk("urn:de", "doc:Germany-Decarbonisation", "Renewables will cover 30% of final energy in 2030.", 1.0),
             _chunk("urn:es-ee", "doc:Spain-Energy efficiency", "Spain will save 39.5% of primary energy by 2030.", 0.9)]  # fmt: skip
    asked: list[list[str]] = []

    def pull(question, documents):
        asked.append(list(documents))
        return [_chunk(f"urn:{d}", d, "Renewables will account for 42% of final energy in 2030.", 0.5) for d in documents]

    def titled(question):
        return {f"doc:Spain-{p}" for p in PARTS} if "Spain" in question else set()

    question = "How much of Spain's final energy will renewables cover in 2030?"
    found = OfflineReranker(_Ranked(first), None, top_n=2, titled=titled, pull_named=pull).search(question, 4)
    assert asked == [["doc:Spain-Decarbonisation", "doc:Spain-Energy security"]]  # not the one a candidate is from
    pulled = [e for e in found.evidence if (TITLED, 1) in e.ranks]
    assert {e.chunk.document for e in pulled} == {"doc:Spain-Decarbonisation", "doc:Spain-Energy security"}
    assert all((NAMED, 1) not in e.ranks and e.ranks[0][0] == "rescore" for e in pulled)  # no bonus, no first-stage rank
    assert "pulled in the documents the question names by title" in found.trace.note
    assert OfflineReranker(_Ranked(first), None, top_n=2, titled=titled, pull_named=None).search(question, 4).evidence == tuple(
        OfflineReranker(_Ranked(first), None, top_n=2).search(question, 4).evidence
    )
    # with ``alike``, a candidate of a look-alike document the question names gains the named bonus
    lifted = OfflineReranker(_Ranked(first), None, top_n=2, named_bonus=0.5, alike=lambda q: {"doc:Spain-Energy efficiency"})
    top = lifted.search(question, 2).evidence
    assert top[0].chunk.iri == "urn:es-ee" and (NAMED, 1) in top[0].ranks
    many = {f"doc:{i}" for i in range(MAX_PULLED + 1)}
    asked.clear()
    OfflineReranker(_Ranked(first), None, top_n=2, titled=lambda q: many, pull_named=pull).search(question, 4)
    assert asked == []  # words naming that many documents say little about where to look


PLAN = """the national plan sets the objectives for 2030 in the dimension decarbonisation, as follows.

Greenhouse gas emissions of the sectors outside emissions trading fall by {a}% by 2030 compared with 2005.

Renewable energy will account for {b}% of gross final energy consumption in 2030.
"""


@pytest.fixture(scope="module")
def plans_kb(tmp_path_factory):
    """Twelve look-alike plans (the NECP's shape: the country only in the title, taken from the file
    name: the text opens in lower case, which no title does)."""
    from kgpipeline.pipeline import ingest_paths

    root = tmp_path_factory.mktemp("plans")
    corpus = root / "corpus"
    corpus.mkdir()
    for i, c in enumerate(COUNTRIES + ("Portugal",)):
        text = PLAN.format(a=30 + i, b=20 + i)
        (corpus / f"{c}_National Objectives and Targets_Decarbonisation.txt").write_text(text, encoding="utf-8")
    kb = root / "kb"
    kb.mkdir()
    ingest_paths(load_config(kb_dir=kb), [corpus])
    return kb


def test_a_kb_of_look_alike_plans_finds_the_named_countrys_plan(plans_kb):
    question = "What share of gross final energy consumption will renewable energy account for in Malta in 2030?"
    config = load_config(kb_dir=plans_kb)

    # The first stage is the sentence vectors alone, which read no titles: on twelve short plans the
    # other signals find Malta's by its title (on the 162 long NECP plans they did not).
    alone = {"weight_bm25": 0.0, "weight_dense": 0.0, "weight_graph": 0.0, "weight_sections": 0.0, "weight_sentences": 1.0}

    def search(pull: bool):
        retrieval = config.retrieval.model_copy(update={**alone, "rescore_top_n": 3, "rescore_pull_named": pull})
        with KnowledgeBase.open(config.model_copy(update={"retrieval": retrieval})) as kb:
            return kb.retriever("hybrid").search(question, 3)

    before, after = search(False), search(True)
    malta = "Malta_National Objectives and Targets_Decarbonisation"
    assert all(e.chunk.title != malta for e in before.evidence)  # the plans read alike: sentences cannot tell
    assert after.evidence[0].chunk.title == malta and (TITLED, 1) in after.evidence[0].ranks
    assert malta in after.trace.note
