"""JSONL reader: one document per line, fields mapped as in the package docstring.

A line that is not a JSON object with text is skipped (logged, and reported in
``LoadResult.skipped``); a file with no usable line at all is an InputError.
"""

from __future__ import annotations

import logging
from pathlib import Path

from core.errors import InputError
from core.jsonl import read_jsonl
from kgpipeline.preprocess.clean import clean_text
from kgpipeline.preprocess.documents import ID_FIELDS, TITLE_FIELDS, first_field, make_document
from kgpipeline.records import LoadResult, SkippedRecord, SourceDocument
from store.vocab import slug

log = logging.getLogger(__name__)


def load_jsonl(path: Path, text: str) -> LoadResult:
    """Every usable line of a decoded JSONL file as a document, plus the skipped lines."""
    docs: list[SourceDocument] = []
    skipped: list[SkippedRecord] = []
    seen: set[str] = set()

    def skip(line_no: int, reason: str) -> None:
        log.warning("%s:%d skipped: %s", path, line_no, reason)
        skipped.append(SkippedRecord(str(path), line_no, reason))

    for line_no, rec in read_jsonl(path, text, on_error=skip):
        key = next((k for k in ("text", "content", "body", "article_text") if isinstance(rec.get(k), str)), None)
        if key is None or not rec[key].strip():
            skip(line_no, "no text field (expected one of text, content, body, article_text)")
            continue
        meta = {k: v for k, v in rec.items() if k != key}
        base = first_field(meta, ID_FIELDS)
        part = first_field(meta, ("article_number", "article"))
        doc_id = slug(f"{base}-art-{part}" if base and part else base or f"{path.stem}-{line_no}", max_len=64)
        if doc_id in seen:
            doc_id = f"{doc_id}-l{line_no}"
        title = first_field(meta, TITLE_FIELDS)
        if not title and meta.get("act"):
            title = f"{meta['act']} Article {part}" if part else str(meta["act"])
        body = clean_text(rec[key], mode="plain")
        if not body:
            skip(line_no, "text is empty after cleaning")
            continue
        try:
            doc = make_document(path, "jsonl", body, meta, title or doc_id, f"{path}:{line_no}", doc_id)
        except InputError as exc:
            # make_document prefixes "<source>: "; the skip record carries the line already.
            skip(line_no, str(exc).split(": ", 1)[-1])
            continue
        seen.add(doc_id)
        docs.append(doc)
    if not docs:
        first = f"; first: line {skipped[0].line}: {skipped[0].reason}" if skipped else ""
        raise InputError(f"{path}: no usable JSONL records ({len(skipped)} lines skipped{first})")
    return LoadResult(tuple(docs), tuple(skipped))
