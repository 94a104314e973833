"""Bridge questions: reading the description apart from the rest, and the two searches that
follow it. Whether they find more gold passages is an evaluation (docs/retrieval.md "Bridge questions"),
not a test."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.config import Config, RetrievalConfig
from spr.bridges import bridge
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever
from spr.retrieval.bridges import LABEL, BridgeRetriever
from spr.retrieval.choices import ChoiceRetriever
from spr.retrieval.registry import _hybrid


@pytest.mark.parametrize(
    ("question", "form", "description", "rest"),
    [
        ("Who was the first president of the association which published Journal of Psychotherapy Integration?", "trail",
         "the association which published Journal of Psychotherapy Integration", "Who was the first president of"),
        ("What county shares a border with the county in which Johnnycake, West Virginia is located?", "trail",
         "the county in which Johnnycake, West Virginia is located", "What county shares a border with"),
        ("The Member State whose government programme targets carbon neutrality by 2035 — what final energy consumption does it aim for in 2030?",
         "lead", "The Member State whose government programme targets carbon neutrality by 2035",
         "what final energy consumption does it aim for in 2030?"),
        ("In the year in which the EEG expects onshore wind capacity to reach 62 GW, what is the interim target for renewable electricity?",
         "lead", "In the year in which the EEG expects onshore wind capacity to reach 62 GW", "what is the interim target for renewable electricity?"),
        ("Which country wants to end lignite-fired power by 2028, and what renewables share does it target for 2030?", "and",
         "Which country wants to end lignite-fired power by 2028", "what renewables share does it target for 2030?"),
    ],
)
def test_the_description_and_the_rest_are_read_apart(question, form, description, rest):
    found = bridge(question)
    assert found is not None and (found.form, found.description, found.rest) == (form, description, rest)


@pytest.mark.parametrize(
    "question",
    [
        "How much is the annual fee that essential entities must pay to their national CSIRT under NIS2?",  # describes its answer
        "What is the maximum fine under the CSRD for a company that fails to publish its sustainability report?",  # "a company"
        "How many days after a major ICT-related incident does a bank have to send the final report?",
        "Which country plans to stop burning coal earlier, Germany or Greece?",  # a choice, not a bridge
        "What does the regulation require?",
    ],
)
def test_questions_without_a_bridge_are_not_read_as_one(question):
    assert bridge(question) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_text_is_read_without_error_and_both_parts_come_from_it(text):
    found = bridge(text)
    if found is not None:
        squeezed = " ".join(text.split())
        assert found.description in squeezed and found.rest.rstrip("?") in squeezed


# --- the two searches -----------------------------------------------------------------------------
def chunk(text: str) -> Evidence:
    ref = ChunkRef(f"urn:chunk:{hash(text)}", "urn:doc", text[:10], 0, len(text), text)
    return Evidence("chunk", text, 1.0, "hybrid", chunk=ref, ranks=(("bm25", 1),))


class ByOverlap(Retriever):
    """A first stage that ranks passages by the words of four or more letters they share with the
    query (ties in list order); records every query."""

    name = "hybrid"

    def __init__(self, texts: list[str]):
        self.chunks = [chunk(t) for t in texts]
        self.queries: list[str] = []

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        self.queries.append(question)
        words = {w for w in re.findall(r"\w+", question.lower()) if len(w) >= 4}
        shared = [len(words & set(re.findall(r"\w+", c.text.lower()))) for c in self.chunks]
        order = sorted(range(len(self.chunks)), key=lambda i: (-shared[i], i))
        return Retrieval(tuple(self.chunks[i] for i in order[:k]), Trace(note="inner note", timings_ms={"hybrid": 1.0}))


BAND = "The band plays bagpipes. Brother are an Australian rock band formed in Sydney in 1995."
SYDNEY = "Sydney has mild winters and almost no snowfall."
PASSAGES = ["Average rainfall in Perth is high.", BAND, "The city council met.", SYDNEY]


def test_the_rest_is_searched_with_the_description_s_best_sentence():
    inner = ByOverlap(PASSAGES)
    question = "What is the usual average snowfall in the city where the performers of Brother were formed?"
    assert SYDNEY not in [e.text for e in inner.search(question, 3).evidence]  # alone: the city's passage misses
    inner.queries.clear()
    got = BridgeRetriever(inner).search(question, 3)
    assert inner.queries == [
        question,
        "the city where the performers of Brother were formed",
        question + " Brother are an Australian rock band formed in Sydney in 1995.",
    ]
    assert [e.text for e in got.evidence] == [BAND, PASSAGES[0], SYDNEY]  # the question's ranking and the hop's, interleaved
    assert got.evidence[2].ranks == ((LABEL, 2),)  # found only by the second hop: its label alone
    assert "a bridge question" in got.trace.note and got.trace.timings_ms["bridge"] >= 0


def test_a_question_without_a_bridge_is_searched_once():
    inner = ByOverlap(PASSAGES)
    got = BridgeRetriever(inner).search("How much snowfall does Sydney get?", 2)
    assert inner.queries == ["How much snowfall does Sydney get?"] and got.evidence[0].text == SYDNEY


def test_the_registry_wraps_hybrid_unless_bridges_are_off():
    config = Config()
    services = SimpleNamespace(config=config, store=None, embedder=None, llm=None, language="en")
    wrapped = _hybrid(services)  # on by default
    assert isinstance(wrapped, BridgeRetriever) and isinstance(wrapped.inner, ChoiceRetriever)
    config.retrieval = RetrievalConfig(bridges=False)
    assert isinstance(_hybrid(services), ChoiceRetriever)
