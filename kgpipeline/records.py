"""Typed records shared by the indexing stages (preprocess → classify → segment → ...).

All records are frozen. Character offsets (``start``/``end``) always index into
``SourceDocument.text`` — the *normalized* document text — so that
``doc.text[x.start:x.end]`` is exactly the text the record describes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Category = Literal["general-policy", "legal-regulation", "standard"]
CATEGORIES: tuple[str, ...] = ("general-policy", "legal-regulation", "standard")

#: Formats :func:`kgpipeline.preprocess.detect_format` can return.
FORMATS: tuple[str, ...] = ("pdf", "docx", "html", "markdown", "text", "jsonl")

#: One "page" for throughput figures (pages/s), as in the benchmarks.
CHARS_PER_PAGE = 3000


@dataclass(frozen=True)
class SourceDocument:
    """One document after preprocessing.

    ``text`` is NFKC-normalized, de-wrapped, cleaned text. Explicit headings (Markdown ``#``,
    HTML ``h1``–``h6``, DOCX "Heading N" styles) are kept in it as Markdown heading lines
    (``"## Chapter II"``), one per line with blank lines around; headings in plain text and PDF
    stay as written and are found by the segmentor's patterns ("Article 5", "§ 3", "1.2 Scope").
    ``doc_id`` is stable across runs: the metadata identifier when there is one, else the file
    stem (slugged); JSONL records add their article/record number.
    """

    doc_id: str
    source: str  # file path; JSONL records append ":<line number>"
    format: str  # one of FORMATS
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)
    category: str | None = None  # from metadata when given (wins over the classifier)
    content_hash: str = ""  # store.vocab.content_hash of ``text`` (16 hex)

    @property
    def pages(self) -> float:
        """Length in nominal pages of CHARS_PER_PAGE characters."""
        return len(self.text) / CHARS_PER_PAGE


@dataclass(frozen=True)
class SkippedRecord:
    """A part of an input that was skipped (e.g. a JSONL line that is not JSON), and why."""

    source: str
    line: int  # 1-based; 0 when not line-based
    reason: str


@dataclass(frozen=True)
class LoadResult:
    """What :func:`kgpipeline.preprocess.load_documents` returns for one file."""

    documents: tuple[SourceDocument, ...]
    skipped: tuple[SkippedRecord, ...] = ()


@dataclass(frozen=True)
class Heading:
    """A heading line found in ``doc.text``.

    ``level``: 1 = outermost structural level of this document (not necessarily Markdown's #
    count). ``kind``: how it was recognised ("markdown", "article", "chapter", "numbered",
    "roman", ...). ``start``/``end``: the span of the heading line(s) in ``doc.text``.
    """

    level: int
    kind: str
    number: str  # "Article 5", "§ 3a", "1.2", "IV"; "" when unnumbered
    text: str  # display heading, e.g. "Article 5 Penalties"
    start: int
    end: int


@dataclass(frozen=True)
class Section:
    """A node of the document tree (document → chapter → section → ...).

    The document itself is not a Section; top-level sections have ``parent_id`` None and
    ``level`` 1. ``order`` is the 0-based position among siblings. The span runs from the
    heading line to the start of the next heading of the same or a higher level (or the end).
    ``path`` holds the headings from the top down to this section.
    """

    section_id: str
    parent_id: str | None
    level: int
    order: int
    number: str
    heading: str
    path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class Chunk:
    """A retrieval unit: ``doc.text[start:end] == text`` exactly.

    ``chunk_id`` is deterministic (doc id, ordinal and a content hash), so re-ingesting the same
    content gives the same ids. ``section_id`` is the deepest section containing the chunk's
    start ("" for documents without structure); ``tokens`` counts
    :func:`kgpipeline.segment.count_tokens` tokens.
    """

    chunk_id: str
    doc_id: str
    ordinal: int
    section_id: str
    section_path: tuple[str, ...]
    text: str
    start: int
    end: int
    tokens: int


@dataclass(frozen=True)
class Segmentation:
    """Segmentor output for one document: the section tree (pre-order) and the chunks in order.

    ``strategy`` is "structure" when headings drove the split, "recursive" otherwise.
    """

    doc_id: str
    strategy: Literal["structure", "recursive"]
    sections: tuple[Section, ...]
    chunks: tuple[Chunk, ...]

    def children(self, section_id: str | None) -> tuple[Section, ...]:
        """Direct children of a section (None = top-level sections), in order."""
        return tuple(s for s in self.sections if s.parent_id == section_id)


@dataclass(frozen=True)
class Classification:
    """Classifier verdict. ``scores``: non-negative sums of cue weights per category (higher =
    more likely; not probabilities). ``cues``: human-readable cues that fired, e.g.
    ``"title head 'regulation' → legal-regulation +3"``. ``method``: what decided."""

    category: str
    scores: Mapping[str, float] = field(hash=False)
    cues: tuple[str, ...]
    method: Literal["metadata", "rules", "llm"]
