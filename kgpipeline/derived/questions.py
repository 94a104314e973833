"""The "questions" stage: the question bank K — latent questions per chunk, embedded, in FAISS.

For each chunk, the questions a reader would most likely ask about it: from the configured LLM
when ``[questions] generator = "llm"`` (a bounded JSON list; off by default, the embedded 135M
model being weak and slow), otherwise from the chunk's extracted triples and key sentences
(:mod:`kgpipeline.derived.question_templates`). Paraphrases of the same chunk above a cosine threshold are
dropped, keeping the first (the best-ranked phrasing). The questions are embedded once, indexed
with :class:`store.vectors.VectorIndex` and saved with their chunk IRIs in
``<kb>/indexes/questions/`` (:mod:`store.question_index`), which ``spr.retrieval.question_bank`` reads.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pyoxigraph import Literal

from core.config import Config, QuestionsConfig
from core.errors import ModelOutputError
from kgpipeline.derived.question_templates import (
    EntityView,
    FactView,
    Phrasebook,
    defined_terms,
    fact_questions,
    generic_questions,
    interleave,
    sentence_questions,
    sentences,
)
from store.base import RDFStore
from store.layout import KBLayout
from store.question_index import QUESTION_BANK, LatentQuestion, save_question_bank
from store.vocab import PKB, RDF, SKOS, content_hash

log = logging.getLogger("policykb.questions")
_SCOPE = re.compile(r"\s*\([^()]*\)\s*$")  # the writer's "Name (Scope)" display labels
Generated = Mapping[str, Sequence[tuple[str, str]]]  # chunk IRI → [(question, origin)], best first


@dataclass(frozen=True)
class ChunkContent:
    iri: str
    text: str
    facts: tuple[FactView, ...] = ()


# --- reading the store ----------------------------------------------------------------------------


def read_chunk_contents(store: RDFStore) -> list[ChunkContent]:
    """Every chunk with its text and the facts of its chunk graph, in IRI order."""
    texts = store.select(f"SELECT ?c ?t WHERE {{ ?c a <{PKB}Chunk> ; <{PKB}text> ?t }}").rows
    ents = store.select(
        f"""SELECT ?c ?e ?t ?l ?pref WHERE {{ GRAPH ?c {{ ?e <{PKB}mentionedIn> ?c ; a ?t .
            OPTIONAL {{ ?e <{SKOS}altLabel> ?l }} OPTIONAL {{ ?e <{SKOS}prefLabel> ?pref }} }} }}"""
    ).rows
    views: dict[tuple[str, str], tuple[str, set[str], set[str]]] = {}
    for r in ents:
        cls, names, prefs = views.setdefault((r["c"].value, r["e"].value), (r["t"].value, set(), set()))
        if r["l"] is not None:
            names.add(r["l"].value)  # the surface forms as written in this chunk
        if r["pref"] is not None:
            prefs.add(_SCOPE.sub("", r["pref"].value))  # only used when no surface form is stored
    entity = {
        k: EntityView(k[1], cls, tuple(sorted(names or prefs, key=lambda n: (-len(n), n))))
        for k, (cls, names, prefs) in views.items()
        if names or prefs
    }
    triples = store.select(
        f"""SELECT ?c ?s ?p ?o WHERE {{ GRAPH ?c {{ ?s ?p ?o . ?s <{PKB}mentionedIn> ?c }}
            FILTER(?p NOT IN (<{RDF}type>, <{SKOS}prefLabel>, <{SKOS}altLabel>, <{PKB}mentionedIn>)) }}"""
    ).rows
    facts: dict[str, list[FactView]] = defaultdict(list)
    for r in sorted(triples, key=lambda r: (r["c"].value, r["s"].value, r["p"].value, str(r["o"]))):
        c, s = r["c"].value, entity.get((r["c"].value, r["s"].value))
        if s is None:
            continue
        if isinstance(r["o"], Literal):  # an attribute value
            facts[c].append(FactView(s, r["p"].value, None, r["o"].value))
        elif (o := entity.get((c, r["o"].value))) is not None:
            facts[c].append(FactView(s, r["p"].value, o))
    return [
        ChunkContent(r["c"].value, r["t"].value, tuple(facts.get(r["c"].value, ())))
        for r in sorted(texts, key=lambda r: r["c"].value)
    ]


# --- generation -------------------------------------------------------------------------------------


def rule_questions(chunk: ChunkContent, book: Phrasebook, limit: int) -> list[tuple[str, str]]:
    """Deterministic questions of one chunk, ranked, at most ``2 * limit`` (dedupe trims later)."""
    ranked = [[(q, "triple") for q in fact_questions(f, book)] for f in chunk.facts]
    ranked += [[(q, "sentence") for q in sentence_questions(s, book)] for s in sentences(chunk.text)]
    ranked += [[(q, "sentence") for q in qs] for qs in defined_terms(chunk.text, book)]
    if not any(ranked):
        # Descriptive text matched no policy pattern: ask what its plain sentences answer.
        ranked = [[(q, "generic") for q in generic_questions(s)] for s in sentences(chunk.text)[:limit]]
    return interleave([r for r in ranked if r], 2 * limit)


def question_schema(limit: int) -> dict:
    return {
        "type": "object",
        "properties": {"questions": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": limit}},
        "required": ["questions"],
    }


def llm_questions(chunk: ChunkContent, llm, limit: int) -> list[tuple[str, str]]:
    """Questions from the LLM; raises ModelOutputError on unusable output."""
    messages = [
        {"role": "system", "content": "You write the questions that a reader of policy documents would most likely "
                                      "ask and that the given passage answers. One question per item, each complete "
                                      "and self-contained (name the actors and things, no pronouns)."},
        {"role": "user", "content": f"Passage:\n{chunk.text}\n\nWrite up to {limit} distinct questions."},
    ]  # fmt: skip
    data = llm.complete_json(messages, question_schema(limit))
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ModelOutputError("question list missing")
    usable = [q for q in items if isinstance(q, str) and q.strip().endswith("?") and len(q.split()) >= 3]
    out = [(" ".join(q.split()), "llm") for q in usable]
    return interleave([out], limit)


# --- building the bank (what the benchmark times) -------------------------------------------------


def representatives(vectors: np.ndarray, threshold: float, limit: int) -> list[int]:
    """Greedy semantic de-duplication: walk the rows in order, keep a row unless its cosine with a
    kept row reaches ``threshold``; stop at ``limit`` kept rows. Rows are L2-normalized."""
    kept: list[int] = []
    if len(vectors) == 0:
        return kept
    sims = vectors @ vectors.T
    for i in range(len(vectors)):
        if not kept or float(sims[i, kept].max()) < threshold:
            kept.append(i)
            if len(kept) >= limit:
                break
    return kept


def build_question_bank(generated: Generated, embedder, config: QuestionsConfig):
    """Embed, de-duplicate per chunk and index. Returns (VectorIndex, [LatentQuestion])."""
    from store.vectors import VectorIndex

    texts = sorted({q for qs in generated.values() for q, _ in qs}, key=lambda t: (len(t), t))
    # Sorted by length, batches pad little: the same order the embedder itself would pick.
    vectors = embedder.embed_many(texts) if texts else np.zeros((0, embedder.dimension), np.float32)
    row = {t: i for i, t in enumerate(texts)}
    index = VectorIndex(embedder.dimension, approximate_above=config.approximate_above)
    questions: list[LatentQuestion] = []
    ids: list[str] = []
    rows: list[int] = []
    for chunk in sorted(generated):
        items = generated[chunk]
        mine = vectors[[row[q] for q, _ in items]] if items else vectors[:0]
        for i in representatives(mine, config.dedupe_threshold, config.max_per_chunk):
            text, origin = items[i]
            q = LatentQuestion(content_hash(chunk, text), chunk, text, origin)
            questions.append(q)
            ids.append(q.id)
            rows.append(row[text])
    if ids:
        index.add(ids, vectors[rows])
    return index, questions


class QuestionsStage:
    """Derived stage "questions": regenerates the whole question bank."""

    name = QUESTION_BANK

    def __init__(self, config: QuestionsConfig, phrasebook_factory, embedder_factory, llm_factory=None):
        # Factories, not instances: the ontology and the models load only when the stage runs.
        self.config = config
        self._phrasebook = phrasebook_factory
        self._embedder = embedder_factory
        self._llm = llm_factory

    def generate(self, chunks: Sequence[ChunkContent]) -> tuple[dict[str, list[tuple[str, str]]], int]:
        """(questions per chunk, number of chunks where the LLM failed and rules stood in)."""
        book = self._phrasebook()
        llm = self._llm() if self.config.generator == "llm" and self._llm is not None else None
        out: dict[str, list[tuple[str, str]]] = {}
        fallbacks = 0
        for chunk in chunks:
            if llm is not None:
                try:
                    out[chunk.iri] = llm_questions(chunk, llm, self.config.max_per_chunk)
                    continue
                except ModelOutputError as exc:
                    log.warning("LLM questions failed for %s (%s); using rules", chunk.iri, exc)
                    fallbacks += 1
            out[chunk.iri] = rule_questions(chunk, book, self.config.max_per_chunk)
        return out, fallbacks

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        started = time.perf_counter()
        chunks = read_chunk_contents(store)
        generated, fallbacks = self.generate(chunks)
        generated_at = time.perf_counter()
        embedder = self._embedder()
        index, questions = build_question_bank(generated, embedder, self.config)
        save_question_bank(KBLayout(kb_dir).index(self.name), index, questions, embedder.model_id)
        candidates = sum(len(v) for v in generated.values())
        note = f", {fallbacks} LLM fallbacks" if fallbacks else ""
        return (
            f"{len(questions)} questions ({candidates} generated, {self.config.generator}) for "
            f"{len({q.chunk for q in questions})}/{len(chunks)} chunks{note}; "
            f"generate {generated_at - started:.1f} s, embed+index {time.perf_counter() - generated_at:.1f} s"
        )


def questions_stage(config: Config, tracker=None, llm_cache: bool | None = None) -> QuestionsStage:
    """Factory for ``kgpipeline.pipeline.STAGES``."""

    def phrasebook() -> Phrasebook:
        from core.resources import resource_dir
        from kgpipeline.ontology import read_ontologies

        return Phrasebook.from_ontology(read_ontologies(resource_dir(config.ontology.dir)))

    def embedder():
        from core.embed import make_embedder

        return make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker=tracker)

    def llm():
        from core.llm import make_llm

        return make_llm(config.llm, KBLayout(config.kb_dir).llm_cache, tracker=tracker, cache=llm_cache)

    return QuestionsStage(config.questions, phrasebook, embedder, llm)
