"""The question-bank retriever (mode ``questions``): a user question → chunks, through latent questions.

Each chunk of the KB carries the questions it answers (built by ``policykb reindex questions``,
stored in ``<kb>/indexes/questions/``). A user question is embedded, the ``k`` most similar latent
questions are found in FAISS, mapped back to their chunks and de-duplicated; each chunk comes back
once, with its text and location fetched from the store.

    >>> retriever = QuestionBankRetriever(kb_dir, embedder, store)          # doctest: +SKIP
    >>> [hit.chunk for hit in retriever.retrieve("Who sets up the monitoring centre?")]  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.embed import Embedder, same_vectors
from core.errors import InputError, StoreError
from spr.records import ChunkRef, Evidence
from spr.retrieval.base import Retriever, chunk_evidence
from spr.retrieval.fusion import Ranked
from store.base import RDFStore
from store.question_index import REINDEX_HINT, QuestionBank, load_question_bank, question_bank_dir
from store.vocab import DCTERMS, PKB, values_clause


@dataclass(frozen=True)
class QuestionBankHit:
    """One chunk found through its latent questions.

    ``chunk``: the chunk IRI. ``text``: the chunk text (``pkb:text``). ``document``/``title``: the
    document IRI and its ``dcterms:title`` ("" when it has none). ``start``/``end``: character
    offsets of the chunk in the normalized document text. ``score``: cosine similarity between the
    user question and the best matching latent question of this chunk, in [-1, 1], higher is more
    similar. ``questions``: the matched latent questions of this chunk, best first.
    """

    chunk: str
    text: str
    document: str
    title: str
    start: int
    end: int
    score: float
    questions: tuple[str, ...]


class QuestionBankRetriever:
    """Constructor-injected embedder and store; the bank is loaded on first use (and kept), so a KB
    without a question bank can still build the retriever and fails only when it is asked."""

    def __init__(self, kb_dir: Path, embedder: Embedder, store: RDFStore):
        self.folder = question_bank_dir(kb_dir)
        self.embedder = embedder
        self.store = store
        self._bank: QuestionBank | None = None

    @property
    def available(self) -> bool:
        """Whether a question bank has been built for this KB."""
        return self._bank is not None or (self.folder / "questions.jsonl").is_file()

    @property
    def bank(self) -> QuestionBank:
        if self._bank is None:
            bank = load_question_bank(self.folder)
            if bank.model_id and not same_vectors(bank.model_id, self.embedder.model_id):
                raise StoreError(
                    f"the question bank was embedded with {bank.model_id}, not {self.embedder.model_id}; {REINDEX_HINT}"
                )
            self._bank = bank
        return self._bank

    def retrieve(self, question: str, k: int = 3) -> list[QuestionBankHit]:
        """Chunks whose latent questions are among the ``k`` most similar to ``question``, best
        first, each chunk once (so at most ``k`` hits)."""
        if not question.strip():
            raise InputError("empty question")
        bank = self.bank
        hits = bank.index.search(self.embedder.embed(question), k)[0]
        matched: dict[str, list[tuple[float, str]]] = {}
        for hit in hits:  # best first, so each chunk's first entry is its best score
            q = bank.questions.get(hit.id)
            if q is not None:
                matched.setdefault(q.chunk, []).append((hit.score, q.text))
        located = chunk_details(self.store, list(matched))
        out = []
        for chunk, found in matched.items():
            if chunk in located:  # a chunk deleted since the last reindex is skipped
                text, document, title, start, end = located[chunk]
                score = max(-1.0, min(1.0, found[0][0]))  # float32 rounding may pass 1 slightly
                out.append(QuestionBankHit(chunk, text, document, title, start, end, score, tuple(t for _, t in found)))
        return out


def chunk_details(store: RDFStore, chunks: list[str]) -> dict[str, tuple[str, str, str, int, int]]:
    """Chunk IRI → (text, document IRI, document title, start, end), for the chunks in the store."""
    if not chunks:
        return {}
    rows = store.select(
        f"""SELECT ?c ?t ?d ?title ?s ?e WHERE {{ {values_clause('c', chunks)}
            ?c <{PKB}text> ?t ; <{PKB}partOfDocument> ?d .
            OPTIONAL {{ ?c <{PKB}startOffset> ?s }} OPTIONAL {{ ?c <{PKB}endOffset> ?e }}
            OPTIONAL {{ ?d <{DCTERMS}title> ?title }} }}"""
    ).rows
    out: dict[str, tuple[str, str, str, int, int]] = {}
    for r in rows:
        out.setdefault(
            r["c"].value,
            (
                r["t"].value,
                r["d"].value,
                r["title"].value if r["title"] is not None else "",
                int(r["s"].value) if r["s"] is not None else 0,
                int(r["e"].value) if r["e"] is not None else 0,
            ),
        )
    return out


class QuestionBankAdapter(Retriever):
    """Chunks found through their latent questions (``spr.retrieval.question_bank.QuestionBankRetriever``)."""

    name = "questions"

    def __init__(self, bank: QuestionBankRetriever):
        self.bank = bank

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return [
            chunk_evidence(ChunkRef(h.chunk, h.document, h.title, h.start, h.end, h.text), h.score, self.name, h.questions)
            for h in self.bank.retrieve(question, k=k)
        ]


class QuestionSignal:
    """The question bank as a fusion signal: each of the ``depth * 3`` latent questions most
    similar to the user question votes for its chunk; a chunk ranks by its best match."""

    name = "questions"
    FETCH_PER_CHUNK = 3  # latent questions fetched per chunk wanted: a chunk often has several near ones

    def __init__(self, bank: QuestionBankRetriever):
        self.bank = bank

    def rank(self, question: str, depth: int) -> list[Ranked]:
        if not self.bank.available:
            return []  # a KB built without a question bank: the other signals still answer
        bank = self.bank.bank
        matched: dict[str, tuple[float, list[str]]] = {}
        for hit in bank.index.search(self.bank.embedder.embed(question), depth * self.FETCH_PER_CHUNK)[0]:
            q = bank.questions.get(hit.id)
            if q is not None:
                matched.setdefault(q.chunk, (hit.score, []))[1].append(q.text)
        return [Ranked(c, score, tuple(texts)) for c, (score, texts) in list(matched.items())[:depth]]
