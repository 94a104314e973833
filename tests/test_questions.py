"""The question bank: phrasing from the ontology, key sentences, de-duplication, the on-disk bank,
the retriever, and (slow) the whole stage on the sample corpus with real MiniLM embeddings."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from core.config import QuestionsConfig, load_config
from core.embed import Embedder
from core.errors import ModelOutputError, StoreError
from core.llm.base import LLM, Completion
from core.resources import resource_dir
from core.usage import Usage
from kgpipeline.derived.question_templates import (
    EntityView,
    FactView,
    Phrasebook,
    defined_terms,
    fact_questions,
    interleave,
    sentence_questions,
)
from kgpipeline.derived.questions import ChunkContent, QuestionsStage, build_question_bank, llm_questions, representatives
from kgpipeline.ontology import read_ontologies
from spr.retrieval.question_bank import QuestionBankRetriever
from store.layout import KBLayout
from store.oxigraph_store import OxigraphStore
from store.question_index import load_question_bank, question_bank_dir
from store.vocab import PKB

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"


@pytest.fixture(scope="module")
def book() -> Phrasebook:
    return Phrasebook.from_ontology(read_ontologies(resource_dir(Path("ontologies"))))


class HashingEmbedder(Embedder):
    """An honest small fake: bag of hashed lowercase words, normalized (cosine = word overlap)."""

    def __init__(self, dim: int = 256):
        super().__init__("test:hashing", batch_size=8)
        self._dimension = dim

    def embed_batch(self, texts):
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, zlib.crc32(word.encode()) % self._dimension] += 1.0
        return out


# --- phrasing ---------------------------------------------------------------------------------------


def test_fact_phrasings_come_from_the_property_labels(book):
    bureau = EntityView("urn:bureau", PKB + "Agency", ("National Energy Bureau",))
    center = EntityView("urn:center", PKB + "Center", ("National Energy Monitoring Center", "Monitoring Center"))
    questions = fact_questions(FactView(bureau, PKB + "establishes", center), book)
    assert questions[:2] == [
        "Who establishes the National Energy Monitoring Center?",
        "What does the National Energy Bureau establish?",
    ]
    assert "Which agency set up the Monitoring Center?" in questions  # altLabel "set up", past tense
    assert "Who creates the National Energy Monitoring Center?" in questions
    assert len(set(questions)) == len(questions)


def test_has_properties_and_places_get_their_question_words(book):
    plan = EntityView("urn:plan", PKB + "Plan", ("Solar Plan",))
    deadline = EntityView("urn:d", PKB + "Deadline", ("31 December 2030",))
    assert fact_questions(FactView(plan, PKB + "hasDeadline", deadline), book)[0] == "When is the deadline for the Solar Plan?"
    center = EntityView("urn:c", PKB + "Center", ("Monitoring Center",))
    city = EntityView("urn:a", PKB + "GeographicalArea", ("Aldby",))
    assert fact_questions(FactView(center, PKB + "locatedIn", city), book)[0] == "Where is the Monitoring Center located?"


def test_key_sentences(book):
    deadline = sentence_questions(
        "The National Energy Bureau shall establish a National Energy Monitoring Center in the city of Aldby by 1 October 2025.", book
    )
    assert deadline[0] == "When must the National Energy Bureau establish a National Energy Monitoring Center in the city of Aldby?"
    assert "Who must establish a National Energy Monitoring Center?" in deadline  # adjuncts cut
    assert "Who must set up a Monitoring Center?" in deadline  # ontology synonym, short name
    assert not any("1 October" in q for q in deadline)
    assert sentence_questions("'Renewable energy' means energy from renewable non-fossil sources.", book)[0] == (
        "What is Renewable energy?"
    )
    assert sentence_questions("The budget of the Monitoring Center is EUR 12 million.", book) == [
        "What is the budget of the Monitoring Center?"
    ]
    assert sentence_questions("Applications open on 1 June 2025.", book) == []


def test_glossary_headings_become_definition_questions(book):
    text = "## 3 Terms and definitions\n\n### 3.1 inverter\n\ndevice that converts direct current"
    assert defined_terms(text, book) == [["What is inverter?", "How is inverter defined?", "What does inverter mean?"]]
    assert defined_terms("### 3.1 inverter\n\nThe inverter shall stay connected.", book) == []


def test_interleave_takes_first_phrasings_first():
    ranked = [[("a1", "t"), ("a2", "t")], [("b1", "s")], [("A1", "t"), ("c2", "t")]]
    assert interleave(ranked, 10) == [("a1", "t"), ("b1", "s"), ("a2", "t"), ("c2", "t")]  # "A1" = "a1"
    assert interleave(ranked, 2) == [("a1", "t"), ("b1", "s")]


def test_representatives_drop_paraphrases_by_cosine():
    v = np.array([[1.0, 0.0], [0.95, np.sqrt(1 - 0.95**2)], [0.0, 1.0]], dtype=np.float32)
    assert representatives(v, 0.92, 10) == [0, 2]
    assert representatives(v, 0.96, 10) == [0, 1, 2]
    assert representatives(v, 0.96, 2) == [0, 1]


# --- LLM generation plumbing (a fake model; the embedded one is too weak to assert on) ----------------


class ScriptedLLM(LLM):
    def __init__(self, reply: str):
        super().__init__("test:scripted")
        self.reply = reply
        self.schemas: list = []

    def _generate(self, request):
        self.schemas.append(request.schema)
        return Completion(self.reply, Usage(10, 10), cached=False, model=self.model_id)


def test_llm_questions_are_bounded_and_filtered():
    llm = ScriptedLLM(json.dumps({"questions": ["Who sets up the center?", "not a question", "Why?"]}))
    out = llm_questions(ChunkContent("urn:c", "The Bureau sets up a center."), llm, 4)
    assert out == [("Who sets up the center?", "llm")]
    assert llm.schemas[0]["properties"]["questions"]["maxItems"] == 4


def test_bad_llm_output_falls_back_to_rules(book):
    stage = QuestionsStage(QuestionsConfig(generator="llm"), lambda: book, HashingEmbedder, lambda: ScriptedLLM("[]"))
    chunk = ChunkContent("urn:c", "The Bureau shall publish a report by 1 May 2026.")
    with pytest.raises(ModelOutputError):
        llm_questions(chunk, ScriptedLLM("[]"), 4)
    generated, fallbacks = stage.generate([chunk])
    assert fallbacks == 1 and generated["urn:c"][0] == ("When must the Bureau publish a report?", "sentence")


# --- the bank on disk and the retriever ------------------------------------------------------------


def test_bank_roundtrip_and_retriever(tmp_path):
    store = OxigraphStore()
    store.load(_write_chunks(tmp_path), graph=None)
    generated = {
        "https://example.org/chunk/1": [("Who must pay the levy?", "sentence"), ("Who pays the levy?", "triple")],
        "https://example.org/chunk/2": [("What is a heat pump?", "sentence")],
    }
    index, questions = build_question_bank(generated, HashingEmbedder(), QuestionsConfig(dedupe_threshold=0.6))
    assert [q.text for q in questions] == ["Who must pay the levy?", "What is a heat pump?"]  # paraphrase dropped
    from store.question_index import save_question_bank

    save_question_bank(question_bank_dir(tmp_path / "kb"), index, questions, "test:hashing")
    hits = QuestionBankRetriever(tmp_path / "kb", HashingEmbedder(), store).retrieve("what is a heat pump", k=2)
    assert [h.chunk for h in hits] == ["https://example.org/chunk/2", "https://example.org/chunk/1"]
    top = hits[0]
    assert (top.text, top.title, top.start, top.end) == ("A heat pump moves heat.", "Heat Rules", 10, 33)
    assert top.questions == ("What is a heat pump?",) and -1.0 <= top.score <= 1.0 and top.score > hits[1].score


def test_missing_or_foreign_bank_says_to_reindex(tmp_path):
    retriever = QuestionBankRetriever(tmp_path / "kb", HashingEmbedder(), OxigraphStore())
    assert not retriever.available
    with pytest.raises(StoreError, match="policykb reindex questions"):
        retriever.retrieve("anything")
    index, questions = build_question_bank({"urn:c": [("Q?", "llm")]}, HashingEmbedder(), QuestionsConfig())
    from store.question_index import save_question_bank

    save_question_bank(question_bank_dir(tmp_path / "kb"), index, questions, "another-model")
    with pytest.raises(StoreError, match="policykb reindex questions"):
        QuestionBankRetriever(tmp_path / "kb", HashingEmbedder(), OxigraphStore()).retrieve("Q?")


def test_bank_folder_is_the_stage_index_folder(tmp_path):
    assert question_bank_dir(tmp_path) == KBLayout(tmp_path).index("questions")


def _write_chunks(tmp_path: Path) -> Path:
    path = tmp_path / "chunks.trig"
    path.write_text(
        f"""@prefix pkb: <{PKB}> . @prefix dcterms: <http://purl.org/dc/terms/> .
<https://example.org/doc/1> {{
  <https://example.org/doc/1> dcterms:title "Heat Rules" .
  <https://example.org/chunk/1> a pkb:Chunk ; pkb:partOfDocument <https://example.org/doc/1> ;
     pkb:text "Operators pay the levy." ; pkb:startOffset 0 ; pkb:endOffset 23 .
  <https://example.org/chunk/2> a pkb:Chunk ; pkb:partOfDocument <https://example.org/doc/1> ;
     pkb:text "A heat pump moves heat." ; pkb:startOffset 10 ; pkb:endOffset 33 .
}}
""",
        encoding="utf-8",
    )
    return path


# --- the whole stage on the sample corpus, real MiniLM ----------------------------------------------


@pytest.mark.slow
def test_question_bank_on_the_sample_corpus(tmp_path):
    from core.embed import make_embedder
    from kgpipeline.pipeline import STAGES, build_controller

    config = load_config(kb_dir=tmp_path / "kb")
    store = OxigraphStore()
    controller = build_controller(config, store)
    controller.stages = [STAGES["questions"](config, None, None)]  # only this stage: bounded test time
    try:
        summary = controller.ingest([CORPUS])
    finally:
        controller.close()
    assert summary.stages and summary.stages[0].startswith("questions: ")
    folder = question_bank_dir(config.kb_dir)
    first = (folder / "questions.jsonl").read_text(encoding="utf-8")
    bank = load_question_bank(folder)
    assert len(bank.questions) == len(bank.index) > 50 and bank.index.exact

    retriever = QuestionBankRetriever(config.kb_dir, make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache), store)
    hits = retriever.retrieve("Who sets up the monitoring centre?")
    assert 1 <= len(hits) <= 3 and len({h.chunk for h in hits}) == len(hits)
    assert any(re.search(r"establish\w* an? [\w ]*Monitoring Center", h.text) for h in hits), [h.text for h in hits]
    for h in hits:
        assert h.title and h.document and h.end > h.start and h.questions and -1.0 <= h.score <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    STAGES["questions"](config, None, None).run(store, config.kb_dir)  # rerun: same bank
    assert (folder / "questions.jsonl").read_text(encoding="utf-8") == first


def test_generic_questions_cover_descriptive_sentences():
    from kgpipeline.derived.question_templates import generic_questions

    assert generic_questions("The Harbour Authority was founded in 1921 by the city council.") == [
        "What is known about the Harbour Authority?",
        "Who or what was founded in 1921 by the city council?",
    ]
    assert generic_questions("It was founded in 1921.") == []  # a pronoun subject says nothing
    assert generic_questions("Rules, exceptions; lists") == []
