"""The answering API and `policykb ask` on a real KB: the example corpus through the real ingest
pipeline (lexicon extraction, chunk/entity/question indexes, weights), real MiniLM, real store.

The KB is built once per session (``support.kbs.corpus_kb``) and reused by
tests/test_readme_example.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.kbs import corpus_kb
from support.models import model_endpoint_down

from core.errors import InputError, ModelUnavailableError
from spr.qa import KnowledgeBase
from spr.records import ABSTAIN

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "corpus"

pytestmark = pytest.mark.slow  # loads MiniLM and builds a KB


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory) -> Path:
    return corpus_kb(tmp_path_factory)


@pytest.fixture(scope="module")
def kb(kb_dir):
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(kb_dir) as base:
        yield base


@pytest.fixture(scope="module")
def documents() -> dict[str, str]:
    """Document title → normalized text, read independently of the KB to check citation spans."""
    from kgpipeline.preprocess import load_documents

    out = {}
    for path in sorted(CORPUS.iterdir()):
        for doc in load_documents(path).documents:
            out[doc.title] = doc.text
    return out


# Questions the corpus answers, each with words of the sentence that answers it and its document.
ANSWERABLE = [
    ("How much is the fine for an operator who fails to register an installation?", "EUR 50,000", "Renewable Energy Act of 2024"),
    ("Where will the National Energy Monitoring Center be established?", "Aldby", "Decision on the Establishment of the National Energy Monitoring Center"),
    ("What sound power level must the outdoor unit of a heat pump not exceed?", "55 dB(A)", "NES 2045 Performance Specification for Residential Heat Pumps"),
    ("How far must wind turbines be from homes?", "800 metres", "Guidelines for Onshore Wind Siting in Westmark Province"),
]


@pytest.mark.parametrize("question,words,title", ANSWERABLE)
def test_extractive_answer_cites_the_chunk_that_answers(kb, documents, question, words, title):
    answer = kb.ask(question)
    assert not answer.abstained and answer.kind == "extractive" and answer.mode == "dual"
    cited = [c for c in answer.citations if words in c.quote]
    assert cited, (answer.text, answer.citations)
    c = cited[0]
    assert c.title == title and f"[{c.id}]" in answer.text
    assert documents[title][c.start : c.end] == c.quote  # the span is exact in the source document
    assert answer.usage.llm_calls == 0
    assert {"retrieve", "fuse", "generate", "total"} <= set(answer.timings_ms)


def test_unanswerable_question_gets_the_abstention(kb):
    answer = kb.ask("What is the capital of France?")
    assert answer.text == ABSTAIN and answer.abstained and answer.citations == ()
    assert answer.evidence  # retrieval found neighbours; none was relevant enough
    assert answer.confidence is not None and answer.confidence < kb.config.answer.min_score


def test_a_near_miss_is_declined_by_the_answerability_check_and_by_a_stricter_threshold(kb_dir):
    """A near-miss scores above the calibrated min_score (docs/answers.md "Answers"), so on scores alone it
    gets its best neighbours, cited; the answerability check declines it (it asks for a number no
    sentence states), and so does a stricter min_score (the measured trade-off)."""
    from core.config import load_config
    from spr.qa import KnowledgeBase

    question = "How many nuclear power plants does Nordland operate?"
    config = load_config(kb_dir=kb_dir)
    with KnowledgeBase.open(config) as base:
        checked = base.ask(question)
    assert checked.abstained and checked.abstain_reason == "no sentence states a number"
    assert config.answer.min_score <= checked.confidence < 0.4
    config.answer.check_answerable = False
    with KnowledgeBase.open(config) as base:
        lenient = base.ask(question)
    assert not lenient.abstained and lenient.citations and lenient.confidence == checked.confidence
    config.answer.min_score = 0.4
    with KnowledgeBase.open(config) as base:
        strict = base.ask(question)
    assert strict.text == ABSTAIN and strict.abstained and strict.confidence == lenient.confidence


def test_an_answer_past_the_top_k_is_found_by_looking_deeper_before_abstaining(kb_dir):
    """With k = 1 the first passage states no interval, so the answer would abstain; the deeper
    look ([answer] deepen_k) finds the passage whose sentence does and cites it after the top k."""
    from core.config import load_config

    question = "How often do provincial energy bureaus report progress?"
    config = load_config(kb_dir=kb_dir)
    config.answer.deepen_k = 0
    with KnowledgeBase.open(config) as base:
        shallow = base.ask(question, mode="hybrid", k=1)
    assert shallow.abstained and shallow.abstain_reason == "no sentence states a duration"
    config.answer.deepen_k = 8
    with KnowledgeBase.open(config) as base:
        deep = base.ask(question, mode="hybrid", k=1)
    assert not deep.abstained and "every six months" in deep.text
    assert len(deep.evidence) == 2 and deep.evidence[0].key == shallow.evidence[0].key
    assert "looked deeper: passage #" in deep.trace.note and deep.citations[0].chunk == deep.evidence[1].chunk.iri
    assert "check" in deep.timings_ms


def test_structured_mode_returns_triples_with_provenance_and_the_query(kb):
    answer = kb.ask("What did the National Energy Bureau establish?", mode="spr")
    assert answer.evidence and all(e.kind == "triple" for e in answer.evidence)
    assert answer.sexpr.startswith("(JOIN") and "SELECT" in answer.sparql and answer.linked_entities
    facts = [t for t in answer.triples if t.object_label == "Solar Monitoring Center"]
    assert facts and facts[0].graphs and answer.citations[0].chunk in facts[0].graphs
    assert "Solar Monitoring Center" in answer.text


@pytest.mark.parametrize("mode,kinds", [("k", {"chunk"}), ("vector", {"chunk"}), ("hybrid", {"chunk"}), ("spr", {"triple"})])
def test_each_mode_returns_its_kind_of_evidence(kb, mode, kinds):
    answer = kb.ask("Who issues the National Solar Plan?", mode=mode, k=2)
    assert {e.kind for e in answer.evidence} == kinds
    assert len([e for e in answer.evidence if e.kind == "chunk"]) <= 2
    assert all(e.chunk is not None and e.chunk.text for e in answer.evidence)
    assert any("National Solar Plan" in (e.chunk.title + e.text) for e in answer.evidence)


def test_dual_adds_facts_only_above_the_confidence_threshold(kb):
    """The parse of this question links "National Solar Plan" at cosine 0.80: below the default
    threshold (1.0) dual is the fused text alone; with the threshold lowered, the fact comes first."""
    question = "Who issues the National Solar Plan?"
    default = kb.ask(question, mode="dual", k=2)
    assert {e.kind for e in default.evidence} == {"chunk"} and "withheld" in default.trace.note
    lowered = kb.config.model_copy(update={"retrieval": kb.config.retrieval.model_copy(update={"facts_min_confidence": 0.5})})
    with KnowledgeBase.open(lowered) as trusting:
        answer = trusting.ask(question, mode="dual", k=2)
    assert [e.kind for e in answer.evidence] == ["triple", "chunk", "chunk"]
    assert [e.key for e in answer.evidence[1:]] == [e.key for e in default.evidence]  # the same text evidence


@pytest.mark.parametrize(
    "question", ["", "   \n\t ", "x" * 10_000, "DROP ALL " * 300],
)
def test_empty_or_overlong_questions_are_input_errors(kb, question):
    with pytest.raises(InputError):
        kb.ask(question)


@pytest.mark.parametrize(
    "question",
    ['DROP ALL', '" } DROP ALL ; { "', "Who issues {?x} the <National> 'Solar' Plan\\?", "\x00\x07 What?", "[ ] ( ) ] (JOIN"],
)
def test_hostile_questions_get_a_safe_answer_and_change_nothing(kb, question):
    before = kb.store.count()
    for mode in ("dual", "vector"):
        answer = kb.ask(question, mode=mode)
        assert answer.text
    assert kb.store.count() == before


def test_bad_options_are_input_errors(kb):
    with pytest.raises(InputError, match="unknown retrieval mode"):
        kb.ask("Who issues the plan?", mode="telepathy")
    with pytest.raises(InputError, match="answer kind"):
        kb.ask("Who issues the plan?", answer="poem")
    with pytest.raises(InputError):
        kb.ask("Who issues the plan?", k=0)


def test_to_dict_is_json(kb):
    data = json.loads(json.dumps(kb.ask("What did the National Energy Bureau establish?").to_dict()))
    assert data["citations"][0]["quote"] and data["trace"]["sparql"] and data["triples"][0]["graphs"]
    assert data["usage"]["llm_calls"] == 0 and data["kind"] == "extractive"


def test_citations_read_without_source_markup_and_keep_the_exact_quote():
    from spr.records import Answer, Citation

    quote = "#### Article 9\nThe JTF shall not support investment in fossil fuels [^ntr3-L_2021231EN.01000101-E0003]."
    data = Answer(question="q", text="t [1]", mode="dual", kind="extractive",
                  citations=(Citation(1, "urn:c", "urn:d", "JTF", 0, len(quote), quote),)).to_dict()
    assert data["citations"][0]["quote"] == quote
    assert data["citations"][0]["reading_quote"] == "Article 9\nThe JTF shall not support investment in fossil fuels."


def test_warm_up_loads_what_the_first_question_needs_and_asks_no_model(kb_dir):
    with KnowledgeBase.open(kb_dir) as base:
        assert base._embedder is None and not base._retrievers and base._llm is None  # opening is cheap
        spent = base.warm_up(answer="llm")
        assert set(spent) == {"retrieve_and_answer", "llm"} and all(ms > 0 for ms in spent.values())
        assert base._embedder is not None and base._llm is not None
        assert set(base._retrievers) >= {"dual"}  # the default mode and the retrievers it fuses
        assert base.tracker.totals.calls == 0  # the model is loaded, not asked
        with pytest.raises(InputError, match="answer kind"):
            base.warm_up(answer="poem")
        answer = base.ask(ANSWERABLE[0][0])
        assert answer.citations and not answer.abstained


# --- CLI ---------------------------------------------------------------------------------------------
def cli_run(*args: str):
    from policykb.cli import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_prints_answer_with_numbered_sources(kb_dir):
    result = cli_run("--kb", str(kb_dir), "ask", ANSWERABLE[0][0])
    assert result.exit_code == 0, result.output
    assert "EUR 50,000" in result.output and "Sources:" in result.output and "[1]" in result.output


def test_cli_json_and_explain(kb_dir):
    result = cli_run("ask", "What did the National Energy Bureau establish?", "--json", "--kb", str(kb_dir))
    data = json.loads(result.output)
    assert data["mode"] == "dual" and data["citations"]
    explain = cli_run("--kb", str(kb_dir), "ask", "What did the National Energy Bureau establish?", "--explain")
    for part in ("Parse:", "Linked entities", "SPARQL:", "Triples (", "Chunks (", "Timings:"):
        assert part in explain.output
    declined = cli_run("--kb", str(kb_dir), "ask", "How many nuclear power plants does Nordland operate?", "--explain")
    assert "Abstained:    no sentence states a number" in declined.output
    data = json.loads(cli_run("ask", "How many nuclear power plants does Nordland operate?", "--json", "--kb", str(kb_dir)).output)
    assert data["abstained"] and data["abstain_reason"] == "no sentence states a number"


def test_cli_errors_are_one_line(kb_dir, tmp_path):
    empty = cli_run("--kb", str(kb_dir), "ask", "  ")
    assert empty.exit_code == 2 and empty.output.strip() == "error: empty question"
    missing = cli_run("--kb", str(tmp_path / "none"), "ask", "Who?")
    assert missing.exit_code == 2 and "no knowledge base" in missing.output


def test_model_down_is_a_model_unavailable_error(kb_dir, monkeypatch):
    model_endpoint_down(monkeypatch)
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(kb_dir) as base, pytest.raises(ModelUnavailableError):
        base.ask(ANSWERABLE[0][0], answer="llm")
    result = cli_run("--kb", str(kb_dir), "ask", ANSWERABLE[0][0], "--answer", "llm")
    assert result.exit_code == 4 and result.output.count("\n") == 1 and result.output.startswith("error:")


def test_an_llm_answer_the_evidence_cannot_hold_is_declined_without_a_model_call(kb_dir, monkeypatch):
    """The answerability check runs before the model: with the endpoint down, a question about a
    country no passage mentions still gets the abstention (and its reason), not a model error."""
    model_endpoint_down(monkeypatch)
    from spr.qa import KnowledgeBase

    with KnowledgeBase.open(kb_dir) as base:
        answer = base.ask("Which plan does Atlantis publish for its solar parks?", answer="llm")
    assert answer.abstained and answer.text == ABSTAIN and answer.usage.llm_calls == 0
    assert answer.abstain_reason == "the evidence never mentions: atlantis"


def test_llm_answer_makes_one_call_and_cites_or_abstains(kb_dir):
    """The embedded SmolLM2 end to end (the one test that runs the real generator)."""
    from core.config import load_config
    from spr.qa import KnowledgeBase

    config = load_config(kb_dir=kb_dir)
    config.llm.cache = False  # a cached reply would make no model call
    with KnowledgeBase.open(config) as base:
        answer = base.ask("Where will the National Energy Monitoring Center be established?", answer="llm")
        assert base.tracker.totals.calls == 1
    assert answer.usage.llm_calls == 1 and answer.usage.prompt_tokens > answer.usage.context_tokens / 2
    assert answer.kind == "llm" and answer.model.startswith("gguf:")
    if answer.abstained:
        assert answer.text == ABSTAIN
    else:
        ids = {c.id for c in answer.citations}
        assert ids and all(f"[{i}" in answer.text or f", {i}]" in answer.text for i in ids)
