"""Questions that choose between options: reading the options, a search per option, and an
extractive answer that quotes each option. Whether the searches find more gold quotes is an
evaluation (docs/retrieval.md "Comparisons: evidence for every option"), not a test."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kbs import corpus_kb

from core.config import Config, RetrievalConfig
from spr.choices import choice
from spr.fuse import fuse
from spr.generate import ExtractiveGenerator
from spr.records import ChunkRef, Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever
from spr.retrieval.choices import ChoiceRetriever, option_label
from spr.retrieval.registry import _hybrid
from spr.retrieval.rescore import OfflineReranker
from spr.scoring import LexicalScorer

B = "https://example.org/"


@pytest.mark.parametrize(
    ("question", "options"),
    [
        ("Which plan aims higher, Spain's or Portugal's?", ("Spain's", "Portugal's")),
        ("Which law sets the higher fine, the Climate Act or the Coal Act, and what are the ceilings?", ("the Climate Act", "the Coal Act")),
        ("Which is shorter: reporting a breach under the GDPR, or warning of an incident under NIS2?",
         ("reporting a breach under the GDPR", "warning of an incident under NIS2")),
        ("Who is oldest, Sid Haig, Vic Darchinyan or Mark King?", ("Sid Haig", "Vic Darchinyan", "Mark King")),
        ("Which band formed first The Exies or Circus Diablo ?", ("The Exies", "Circus Diablo")),
        ("Between Iain Banks and Irwin Shaw, which writer had a more diverse career?", ("Iain Banks", "Irwin Shaw")),
        ("How do the fines compare between the AI Act and the Cyber Resilience Act?", ("the AI Act", "the Cyber Resilience Act")),
    ],
)
def test_the_options_of_a_choice_are_read(question, options):
    found = choice(question)
    assert found is not None and found.options == options
    for i, option in enumerate(options):
        assert option in found.asking(i) and found.about(i).startswith(option)
        assert not any(other in found.asking(i) for other in options if other != option and other not in option)


@pytest.mark.parametrize(
    "question",
    [
        "Can a company keep the data in the US, or must it stay in the EU?",  # a second question, not an option
        "May an employer read workers' feelings from their faces or voices?",  # "or" inside a phrase
        "Is the output characterized by a simple or complex answer?",
        "How much will emissions fall between 2021 and 2030?",  # a period
        "What is the relationship between P and co-NP?",  # nothing compared
        "What machine does not define BQP or QMA?",  # names, but nothing chosen
        "What is the fine for breaches such as a late notification or a missing record?",  # examples
        "Must the operator report within 24 hours, or not?",
        "",
    ],
)
def test_other_questions_are_no_choice(question):
    assert choice(question) is None


def test_the_search_for_an_option_leaves_out_the_words_that_ask_or_compare():
    found = choice("Which country plans to stop burning coal earlier, Germany or Greece, and by how many years?")
    assert found.about(0) == "Germany country plans to stop burning coal years"
    assert found.asking(1) == "Which country plans to stop burning coal earlier, Greece, and by how many years?"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"ab AB,:;?'’-", "or", " or ", "between", " and ", "Which ", "Who ", "2030"]), max_size=30).map("".join))
def test_any_text_is_read_without_error_and_options_come_from_it(text):
    found = choice(text)
    if found is not None:
        assert len(found.options) >= 2
        for i, option in enumerate(found.options):
            assert option and option in text
            assert option in found.asking(i) and found.about(i).startswith(option)


# --- the search per option ------------------------------------------------------------------------
def chunk(name: str) -> Evidence:
    ref = ChunkRef(f"urn:chunk:{name}", f"urn:doc:{name}", name, 0, len(name), name)
    return Evidence("chunk", name, 1.0, "hybrid", chunk=ref, ranks=(("bm25", 1),))


class ByWords(Retriever):
    """A first stage that ranks the chunks its query names first (in the query's order), then the
    rest; records every query."""

    name = "hybrid"

    def __init__(self, names: list[str]):
        self.chunks = [chunk(n) for n in names]
        self.queries: list[str] = []

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        self.queries.append(question)
        words = re.findall(r"\w+", question.lower())
        named = sorted((c for c in self.chunks if c.text.lower() in words), key=lambda c: words.index(c.text.lower()))
        rest = [c for c in self.chunks if c not in named]
        return Retrieval(tuple((named + rest)[:k]), Trace(note="inner note", timings_ms={"hybrid": 1.0}))


def test_a_question_that_is_no_choice_is_searched_once():
    inner = ByWords(["alpha", "beta", "gamma"])
    got = ChoiceRetriever(inner).search("What does beta require?", 2)
    assert inner.queries == ["What does beta require?"]
    assert [e.text for e in got.evidence] == ["beta", "alpha"] and got.trace.note == "inner note"


def test_each_option_is_searched_and_its_best_passage_joins_the_top():
    # the whole question's ranking favours one option (its words come first); the other's
    # passage would stand below k without its own search
    inner = ByWords(["filler", "germany", "other", "greece", "more"])
    question = "Which country ends coal earlier, Germany or Greece?"
    got = ChoiceRetriever(inner).search(question, 3)
    assert inner.queries == [question, "Germany country ends coal", "Greece country ends coal"]
    assert [e.text for e in got.evidence] == ["germany", "greece", "filler"]
    germany, greece = got.evidence[0], got.evidence[1]
    assert (option_label("Germany"), 1) in germany.ranks and ("bm25", 1) in germany.ranks
    assert greece.ranks == (("bm25", 1), (option_label("Greece"), 1))
    assert "searched for 'Germany', 'Greece' too" in got.trace.note and got.trace.timings_ms["options"] >= 0


def test_the_registry_wraps_hybrid_when_choices_are_on():
    config = Config()
    services = SimpleNamespace(config=config, store=None, embedder=None, llm=None, language="en")
    config.retrieval = RetrievalConfig(bridges=False)  # bridges wrap the choices (tests/test_bridges.py)
    wrapped = _hybrid(services)
    assert isinstance(wrapped, ChoiceRetriever) and isinstance(wrapped.inner, OfflineReranker)
    config.retrieval = RetrievalConfig(choices=False, bridges=False)
    assert isinstance(_hybrid(services), OfflineReranker)


# --- the extractive answer -------------------------------------------------------------------------
def passage(name: str, text: str) -> Evidence:
    ref = ChunkRef(B + f"chunk/{name}", B + f"doc/{name}", f"National plan of {name}", 0, len(text), text)
    return Evidence("chunk", text, 0.8, "hybrid", chunk=ref)


def test_the_extractive_answer_quotes_each_option():
    greece = passage("Greece", "Greece will end lignite-fired power generation by 2028. Greece plans to end coal mining and power "
                               "generation from coal, with coal power plants closed early.")
    germany = passage("Germany", "Germany will phase out its last coal-fired plants by 2038 at the latest.")
    context = fuse([greece, germany], 2000)
    question = "Which country plans to end coal power generation earlier, Greece or Germany?"
    generator = ExtractiveGenerator(LexicalScorer(0.2), max_facts=3, max_sentences=2, check=True)
    draft = generator.generate(question, context)
    assert not draft.abstained
    # without the options, Greece's two sentences (they share more words with the question) would be the answer
    assert draft.text.count("Greece") == 1 and "Germany will phase out its last coal-fired plants by 2038" in draft.text
    assert draft.text.index("Greece") < draft.text.index("Germany")  # in the question's order
    # a question asking for a value: each option's sentence that states one
    dated = generator.generate("By which year will coal power generation end, in Greece or in Germany?", context)
    assert "by 2028" in dated.text and "by 2038" in dated.text


# --- the whole path: a real KB -----------------------------------------------------------------------
@pytest.mark.slow
def test_a_kb_answers_a_choice_from_both_documents(tmp_path_factory):
    from core.config import load_config
    from spr.qa import KnowledgeBase

    question = "Which aims for more capacity by 2030, the National Solar Plan or the hydrogen strategy?"
    config = load_config(kb_dir=corpus_kb(tmp_path_factory))
    with KnowledgeBase.open(config) as kb:
        found = kb.retriever("hybrid").search(question, 3)
        answer = kb.ask(question, mode="hybrid", k=3)
    labels = {name for e in found.evidence for name, _ in e.ranks}
    assert {option_label("the National Solar Plan"), option_label("the hydrogen strategy")} <= labels
    cited = {c.title for c in answer.citations}
    assert any("Solar" in t for t in cited) and any("ydrogen" in t for t in cited), (answer.text, cited)
    assert "12 GW" in answer.text and "2 GW" in answer.text
