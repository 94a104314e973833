"""Building a :class:`SourceDocument` from a cleaned body and its metadata (title, id, category)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.errors import InputError
from kgpipeline.records import CATEGORIES, SourceDocument
from store.vocab import content_hash, slug

#: Metadata fields that name the document id / title, first present wins.
ID_FIELDS = ("id", "doc_id", "identifier", "celex", "eli")
TITLE_FIELDS = ("title", "Title", "name", "heading")

_CATEGORY_ALIASES = {
    **{c: c for c in CATEGORIES},
    "general": "general-policy", "policy": "general-policy", "general_policy": "general-policy",
    "legal": "legal-regulation", "regulation": "legal-regulation", "law": "legal-regulation",
    "legal_regulation": "legal-regulation", "standards": "standard",
}


def normalize_category(value: Any) -> str | None:
    """Map a metadata category value to one of CATEGORIES; None when absent; InputError if unknown."""
    if value is None or value == "":
        return None
    key = str(value).strip().lower().replace(" ", "-")
    if key not in _CATEGORY_ALIASES:
        raise InputError(f"unknown category {value!r} (expected one of {', '.join(CATEGORIES)})")
    return _CATEGORY_ALIASES[key]


def first_field(meta: dict, keys: tuple[str, ...]) -> str:
    """The first non-empty value among ``keys`` in ``meta``, stripped; "" if none."""
    for k in keys:
        if meta.get(k) not in (None, ""):
            return str(meta[k]).strip()
    return ""


_WORD = re.compile(r"[^\W\d_]{3,}")


def title_like(line: str) -> bool:
    """Whether a running header, heading or first line can stand as a document's title: it holds a
    word of three letters or more and its first word is not all lower case. Page furniture cannot:
    a page number ("52"), a section number ("2.4.3.ii."), the tail of a running header cut at a
    line ("and climate plan for the period 2021-2030 | 45").

    >>> [title_like(t) for t in ("52", "2.4.3.ii.", "and climate plan for the period 2021-2030 | 45", "2.2 Energy security", "ePrivacy Directive")]
    [False, False, False, True, True]
    """
    words = line.split()
    return bool(_WORD.search(line)) and not words[0].islower()


def make_document(
    path: Path, fmt: str, body: str, meta: dict, title: str, source: str = "", doc_id: str = ""
) -> SourceDocument:
    """The document record; the title falls back from metadata to the reader's title, the running
    header, the first heading, a short first line and the file stem. ``source``/``doc_id`` override
    the path-derived values (JSONL: one document per line)."""
    try:
        category = normalize_category(meta.get("category"))
    except InputError as exc:
        raise InputError(f"{source or path}: {exc}") from None
    if not (title := first_field(meta, TITLE_FIELDS) or title):
        first_heading = re.search(r"^#{1,6} (.+)$", body, re.M)
        first_line = body.split("\n", 1)[0].strip()
        candidates = (meta.get("running_header") or "", first_heading[1] if first_heading else "", first_line if len(first_line) <= 150 else "")
        title = next((c for c in candidates if title_like(c)), path.stem)
    doc_id = doc_id or slug(first_field(meta, ID_FIELDS) or path.stem, max_len=64)
    return SourceDocument(
        doc_id=doc_id,
        source=source or str(path),
        format=fmt,
        title=title,
        text=body,
        metadata=meta,
        category=category,
        content_hash=content_hash(body, length=16),
    )
