"""Typed records of the answering side: evidence in, answers out.

Everything here is frozen and JSON-friendly: :meth:`Answer.to_dict` is what the HTTP server returns
and what ``policykb ask --json`` prints. Character offsets always index into the *normalized*
document text the KB was built from (``pkb:startOffset``/``pkb:endOffset`` of chunks), so a citation
``(document, start, end)`` with its ``quote`` can be checked against the source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from core.config import AnswerKind
from core.errors import InputError
from core.keywords import question_language
from core.text import reading_text

EvidenceKind = Literal["triple", "chunk"]

ABSTAIN = "The documents do not say."
# The abstention shown to a reader, in the languages questions are read in (core.keywords); the
# pipeline abstains with ABSTAIN and the answer is worded in the question's language at the end.
ABSTAIN_IN = {"en": ABSTAIN, "de": "Die Dokumente sagen dazu nichts."}
_ARTICLES = frozenset({"a", "an", "the"})


def _words(text: str) -> str:
    return " ".join(w for w in re.findall(r"[^\W_]+", text.lower()) if w not in _ARTICLES)


_ABSTAIN_WORDS = tuple(f" {_words(sentence)} " for sentence in ABSTAIN_IN.values())


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_question(question: object, max_chars: int) -> str:
    """The question with control characters removed and blanks collapsed, or InputError.

    Quotes, braces and SPARQL keywords are ordinary text here: nothing downstream builds a query
    by pasting the question (the compiler escapes every term)."""
    if not isinstance(question, str):
        raise InputError("the question must be a string")
    text = " ".join(_CONTROL.sub(" ", question).split())
    if not text:
        raise InputError("empty question")
    if len(text) > max_chars:
        raise InputError(f"question too long: {len(text):,} characters (limit {max_chars:,}; [answer] max_question_chars)")
    return text


def abstention(question: str) -> str:
    """The abstention sentence in the language of ``question`` (English where it has none).

    >>> abstention("Wie lange gilt der Energieausweis?"), abstention("Ist das erlaubt?!")
    ('Die Dokumente sagen dazu nichts.', 'Die Dokumente sagen dazu nichts.')
    >>> abstention("How long is the certificate valid?")
    'The documents do not say.'
    """
    return ABSTAIN_IN.get(question_language(question), ABSTAIN)


def is_abstention(text: str) -> bool:
    """Whether a reply declines to answer: it has no words, or it says the :data:`ABSTAIN`
    sentence (in any language of :data:`ABSTAIN_IN`). Compared on words (lower case, punctuation and articles dropped), and the sentence
    may sit inside a longer reply: small models wrap it ('Answer: "The documents do not say."',
    a citation marker after it). The generator turns such a reply into :data:`ABSTAIN` when it
    cites no evidence; the metrics score it as the empty prediction.

    >>> [is_abstention(t) for t in ("The documents do not say.", "the documents do NOT say [1]", "  ")]
    [True, True, True]
    >>> [is_abstention(t) for t in ("The documents say 5.", "The documents don't say.")]
    [False, False]
    >>> is_abstention("Die Dokumente sagen dazu nichts [2].")
    True
    """
    words = f" {_words(text)} "
    return not words.strip() or any(sentence in words for sentence in _ABSTAIN_WORDS)


@dataclass(frozen=True)
class ChunkRef:
    """A chunk of a document: its text and where it sits (``start``/``end`` in the document text)."""

    iri: str
    document: str  # document IRI
    title: str  # document title ("" when the KB has none)
    start: int
    end: int
    text: str
    heading_path: str = ""  # "Act › Chapter II › Article 5 Penalties" (store.units), when known


@dataclass(frozen=True)
class Fact:
    """One RDF triple with readable labels. ``object_is_literal``: the object is a value, not an IRI.

    ``graphs`` are the chunk graphs that state the triple: its provenance.
    """

    subject: str
    predicate: str
    object: str
    subject_label: str
    predicate_label: str
    object_label: str
    object_is_literal: bool = False
    graphs: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


@dataclass(frozen=True)
class Evidence:
    """One retrieved piece: a triple (``fact`` set) or a text chunk (``chunk`` set).

    ``score``: the retriever's own relevance, higher is better; cosine scores lie in [-1, 1],
    structured (SPR) triples carry 1.0 because a query returned them. ``chunk`` of a triple is its
    provenance chunk when known (the first of ``fact.graphs`` the KB could resolve).
    ``source`` names the retriever ("spr", "questions", "vector", ...); ``matched`` holds what matched, e.g. the
    question-bank questions. ``ranks``: for fused retrieval, each signal that found the chunk with
    its 1-based rank there, e.g. ``(("bm25", 1), ("dense", 4))``. ``confidence``: for a structured
    fact, how sure the parse-link-query chain is, in [0, 1] (:mod:`spr.retrieval.confidence`).
    """

    kind: EvidenceKind
    text: str  # a chunk's text, or the triple verbalized as a sentence
    score: float
    source: str
    chunk: ChunkRef | None = None
    fact: Fact | None = None
    matched: tuple[str, ...] = ()
    ranks: tuple[tuple[str, int], ...] = ()
    confidence: float | None = None

    @property
    def key(self) -> str:
        """Identity for de-duplication: the triple, or the chunk IRI."""
        if self.fact is not None:
            return "triple:" + "\x00".join(self.fact.key)
        return "chunk:" + (self.chunk.iri if self.chunk else self.text)


@dataclass(frozen=True)
class LinkedEntity:
    """A question phrase grounded to a KB entity. ``score``: the fused linking score (higher is
    better); ``similarity``: embedding cosine in [-1, 1]; ``weight``: the disambiguation weight
    ``w_f · w_i`` in [0, 1]."""

    mention: str
    iri: str
    label: str
    score: float
    similarity: float = 0.0
    weight: float = 0.0


@dataclass(frozen=True)
class Trace:
    """What a retriever did beyond returning evidence (filled by the structured retriever)."""

    sexpr: str = ""  # the grounded S-expression, or the parse when grounding failed
    parse: str = ""  # the parser's raw output (labels, before linking)
    sparql: str = ""
    linked: tuple[LinkedEntity, ...] = ()
    answers: tuple[str, ...] = ()  # the query's answer labels or values
    count: int | None = None  # the answer of a COUNT query
    note: str = ""  # why structured retrieval returned nothing, when it did not
    timings_ms: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Retrieval:
    """Evidence plus the trace of how it was found."""

    evidence: tuple[Evidence, ...]
    trace: Trace = Trace()

    def noted(self, *notes: str) -> Retrieval:
        """This retrieval with ``notes`` (empty ones skipped) after its trace's note, "; "-joined."""
        if not any(notes):
            return self
        return replace(self, trace=replace(self.trace, note="; ".join(filter(None, (self.trace.note, *notes)))))


@dataclass(frozen=True)
class Citation:
    """A numbered source in an answer: the quote is exactly ``document_text[start:end]``."""

    id: int
    chunk: str  # chunk IRI
    document: str  # document IRI
    title: str
    start: int
    end: int
    quote: str


@dataclass(frozen=True)
class AnswerUsage:
    """Model use for one answer. ``llm_calls`` counts requests and the tokens are theirs, cache hits
    included (what the answer costs uncached); ``llm_cache_hits`` how many the cache served."""

    llm_calls: int = 0
    llm_cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    context_tokens: int = 0  # estimated tokens of the packed evidence context


@dataclass(frozen=True)
class Answer:
    """An answer with its evidence.

    ``citations``: the sources the text cites as ``[n]``. ``triples``: the structured facts used,
    with provenance graphs. ``evidence``: everything retrieval returned (for explain).
    ``abstained``: the text is the abstention (nothing relevant was found or cited).
    ``timings_ms``: per stage ("retrieve", "fuse", "generate", "total", and the retriever's own).
    """

    question: str
    text: str
    mode: str
    kind: AnswerKind
    citations: tuple[Citation, ...] = ()
    triples: tuple[Fact, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    trace: Trace = Trace()
    abstained: bool = False
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    usage: AnswerUsage = AnswerUsage()
    model: str = ""  # the generator's model id ("" for extractive answers)
    draft: str = ""  # an LLM reply withheld because no evidence supports it
    attributed: bool = False  # the LLM cited nothing; its sentences were matched to evidence
    unsupported: tuple[str, ...] = ()  # LLM sentences dropped: their cited evidence does not support them
    confidence: float | None = None  # extractive: best sentence score; below [answer] min_score it abstains
    abstain_reason: str = ""  # why the evidence cannot hold the answer (spr.answerable), when that decided

    @property
    def sexpr(self) -> str:
        return self.trace.sexpr

    @property
    def sparql(self) -> str:
        return self.trace.sparql

    @property
    def linked_entities(self) -> tuple[LinkedEntity, ...]:
        return self.trace.linked

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serializable data (tuples become lists, mappings dicts)."""
        data = asdict(self)
        data["timings_ms"] = {k: round(float(v), 2) for k, v in self.timings_ms.items()}
        data["trace"]["timings_ms"] = {k: round(float(v), 2) for k, v in self.trace.timings_ms.items()}
        for item in data["evidence"]:  # what a reader sees: the chunk without source markup
            if item.get("chunk"):
                item["chunk"]["reading_text"] = reading_text(item["chunk"]["text"])
        for item in data["citations"]:  # the quote stays the exact characters; this is how it reads
            item["reading_quote"] = reading_text(item["quote"])
        return _plain(data)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class AnswerToken:
    """A piece of an LLM answer as the model writes it (:meth:`spr.qa.KnowledgeBase.ask_stream`).
    The streamed text is the raw draft: the final :class:`Answer` may drop sentences the check of
    citations rejects, so a reader replaces the draft with ``AnswerDone.answer.text``."""

    text: str


@dataclass(frozen=True)
class AnswerDone:
    """The last event of a stream: the checked answer."""

    answer: Answer


AskEvent = AnswerToken | AnswerDone
