"""A generated test set's items and the checks each passes (:mod:`spr.eval.personas` writes them).

- **Records**: :class:`GeneratedQuestion` with its verified :class:`Quote` s; one JSONL line each
  (:func:`write_testset`, :func:`read_testset`).
- **Quote verification** (:func:`verify_quotes`): a model's quote counts only when it is a
  verbatim substring of a chunk shown to it (:func:`locate_quote`: exact, else with whitespace runs
  matched loosely and the first letter in either case); the chunk's own text and offsets are kept.
- **De-duplication** (:func:`is_duplicate`, :func:`deduplicate`): the same words, a token-set
  Jaccard of at least ``near``, or with an embedder a cosine of at least ``cosine``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store.units import Unit

if TYPE_CHECKING:
    from core.embed import Embedder


@dataclass(frozen=True)
class Quote:
    """A verified quote: ``text`` is exactly ``chunk_text[start:end]`` of the chunk ``chunk``."""

    text: str
    chunk: str
    start: int
    end: int


@dataclass(frozen=True)
class GeneratedQuestion:
    """One generated question. ``chunks``: the chunk IRIs it was written from (two for multi-hop);
    ``doc_ids``: their documents' ids; ``via``: what joins a multi-hop pair ("entity: …",
    "keyword: …", "same document"), empty for single-hop."""

    id: str
    persona: str
    hop: str
    question: str
    reference: str
    quotes: tuple[Quote, ...]
    chunks: tuple[str, ...]
    doc_ids: tuple[str, ...]
    via: str = ""

    def to_row(self) -> dict[str, Any]:
        """The JSONL record (the harness's generic format plus the persona fields)."""
        return {
            "id": self.id,
            "question": self.question,
            "answers": [self.reference],
            "contexts": [q.text for q in self.quotes],
            "gold_ids": list(self.doc_ids),
            "kind": self.hop,
            "persona": self.persona,
            "hop": self.hop,
            "chunks": list(self.chunks),
            "quotes": [{"text": q.text, "chunk": q.chunk, "start": q.start, "end": q.end} for q in self.quotes],
            "via": self.via,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> GeneratedQuestion:
        answers = row.get("answers") or [row.get("answer", "")]
        return cls(
            str(row["id"]), str(row["persona"]), str(row["hop"]), str(row["question"]), str(answers[0]),
            tuple(Quote(str(q["text"]), str(q["chunk"]), int(q["start"]), int(q["end"])) for q in row.get("quotes") or ()),
            tuple(row.get("chunks") or ()), tuple(row.get("gold_ids") or ()), str(row.get("via", "")),
        )


# --- quote verification -----------------------------------------------------------------------------
_EDGES = " \t\r\n\"'“”‘’«»`"


def clean_quote(quote: str) -> str:
    """A model's quote without surrounding quotation marks, ellipses and spaces.

    >>> clean_quote('  "…the controller shall notify..."  ')
    'the controller shall notify'
    """
    text = quote.strip(_EDGES)
    while True:
        before = text
        for mark in ("...", "…"):
            text = text.removeprefix(mark).removesuffix(mark)
        text = text.strip(_EDGES)
        if text == before:
            return text


def locate_quote(quote: str, text: str) -> tuple[int, int] | None:
    """``(start, end)`` of ``quote`` in ``text``: exactly, else with every whitespace run of either
    side matching any whitespace run of the other and the first letter in either case (a model
    capitalizes a quote taken from mid-sentence); None when it is not there.

    >>> text = "Member States shall\\n  lay down the rules on penalties."
    >>> locate_quote("lay down the rules", text)
    (22, 40)
    >>> start, end = locate_quote("shall lay down", text); text[start:end]
    'shall\\n  lay down'
    >>> start, end = locate_quote("The rules on penalties", text); text[start:end]
    'the rules on penalties'
    >>> locate_quote("shall set out", text) is None
    True
    """
    quote = quote.strip()
    if not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    words = quote.split()
    first = re.escape(words[0][0])
    if words[0][0].isalpha():
        first = f"[{re.escape(words[0][0].lower())}{re.escape(words[0][0].upper())}]"
    pattern = first + r"\s+".join([re.escape(words[0][1:]), *(re.escape(w) for w in words[1:])])
    match = re.search(pattern, text)
    return (match.start(), match.end()) if match else None


def verify_quotes(
    quotes: Iterable[str], chunks: Sequence[Unit], min_words: int = 3, cut_at: int | None = None
) -> tuple[list[Quote], int]:
    """The quotes found verbatim in ``chunks`` (:func:`locate_quote`), distinct, each with at least
    ``min_words`` words; and how many were dropped. A quote found in several chunks goes to the
    first one no earlier quote is from (a multi-hop item needs one in each). A quote of ``cut_at``
    characters or more was cut by the schema's length bound, where small models run the last
    words together: it is also tried without its last one or two words (what is stored is still
    the chunk's own text)."""
    kept: list[Quote] = []
    dropped = 0
    for raw in quotes:
        quote = clean_quote(str(raw))
        words = quote.split()
        tries = [quote]
        if cut_at is not None and len(str(raw).strip()) >= cut_at - 1:
            tries += [" ".join(words[:-n]) for n in (1, 2) if len(words) - n >= min_words]
        found = None
        for candidate in tries:
            if len(candidate.split()) < min_words:
                continue
            spans = [(u, span) for u in chunks if (span := locate_quote(candidate, u.text)) is not None]
            if spans:
                covered = {q.chunk for q in kept}
                unit, span = next(((u, sp) for u, sp in spans if u.iri not in covered), spans[0])
                found = Quote(unit.text[span[0] : span[1]], unit.iri, span[0], span[1])
                break
        if found is None or any((q.chunk, q.start, q.end) == (found.chunk, found.start, found.end) for q in kept):
            dropped += 1
        else:
            kept.append(found)
    return kept, dropped


# --- de-duplication ---------------------------------------------------------------------------------
def question_key(text: str) -> str:
    """Lower-case words: the exact-duplicate key.

    >>> question_key("What is  the GDPR's fine?") == question_key("what is the gdpr s fine")
    True
    """
    return " ".join(re.findall(r"\w+", text.casefold()))


def jaccard(a: str, b: str) -> float:
    """Token-set Jaccard similarity of two questions' words.

    >>> jaccard("who pays the fine", "who pays the fines")
    0.6
    """
    x, y = set(question_key(a).split()), set(question_key(b).split())
    return len(x & y) / len(x | y) if x | y else 1.0


def is_duplicate(question: str, kept: Sequence[str], *, near: float = 0.8, vectors=None, vector=None, cosine: float = 0.95) -> bool:
    """Same words as a kept question, Jaccard ≥ ``near`` with one, or (with unit ``vectors`` of
    the kept questions and this one's ``vector``) a cosine ≥ ``cosine``."""
    key = question_key(question)
    for other in kept:
        if question_key(other) == key or jaccard(question, other) >= near:
            return True
    if vectors is not None and vector is not None and len(vectors):
        import numpy as np

        return bool(float(np.max(np.asarray(vectors) @ np.asarray(vector))) >= cosine)
    return False


def deduplicate(items: Sequence[GeneratedQuestion], *, near: float = 0.8, embedder: Embedder | None = None, cosine: float = 0.95) -> tuple[list[GeneratedQuestion], int]:
    """The items whose question duplicates no earlier kept one, in order; and how many were dropped."""
    vectors = embedder.embed_many([q.question for q in items]) if embedder is not None and items else None
    kept: list[GeneratedQuestion] = []
    kept_vectors: list[Any] = []
    for i, item in enumerate(items):
        vector = vectors[i] if vectors is not None else None
        if is_duplicate(item.question, [q.question for q in kept], near=near, vectors=kept_vectors if vectors is not None else None, vector=vector, cosine=cosine):
            continue
        kept.append(item)
        if vector is not None:
            kept_vectors.append(vector)
    return kept, len(items) - len(kept)


# --- files ---------------------------------------------------------------------------------------------
def write_testset(items: Iterable[GeneratedQuestion], path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(q.to_row(), ensure_ascii=False) + "\n" for q in items), encoding="utf-8")
    return path


def read_testset(path: Path) -> list[GeneratedQuestion]:
    from core.jsonl import read_jsonl

    return [GeneratedQuestion.from_row(row) for _, row in read_jsonl(Path(path))]
