"""Entry points: find the input files under a root, and read one file into documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import InputError
from kgpipeline.preprocess.documents import make_document
from kgpipeline.preprocess.jsonl import load_jsonl
from kgpipeline.preprocess.readers import extract_docx, extract_html, extract_pdf, extract_text
from kgpipeline.preprocess.sniff import decode_text, detect_format
from kgpipeline.records import LoadResult

DEFAULT_MAX_BYTES = 50 * 1024 * 1024


def discover_files(root: Path) -> list[Path]:
    """Every file under ``root`` (recursively, sorted, hidden files skipped).

    Unsupported files are listed too, so that the caller reports them as skipped with a reason
    instead of ignoring them silently.
    """
    if root.is_file():
        return [root]
    return sorted(
        p for p in root.rglob("*") if p.is_file() and not any(x.startswith(".") for x in p.relative_to(root).parts)
    )


def load_documents(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadResult:
    """Read one file into documents (many for JSONL). InputError for unusable input."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if path.is_dir():
        raise InputError(f"{path}: is a directory (use discover_files)")
    size = path.stat().st_size
    if size == 0:
        raise InputError(f"{path}: empty file (0 bytes)")
    if size > max_bytes:
        raise InputError(f"{path}: {size} bytes exceeds the size limit of {max_bytes} bytes")
    raw = path.read_bytes()
    fmt = detect_format(path, raw[:8192])
    if fmt == "jsonl":
        return load_jsonl(path, decode_text(path, raw))
    meta: dict[str, Any] = {}
    if fmt == "pdf":
        title, body = extract_pdf(path, raw, meta)
    elif fmt == "docx":
        title, body = extract_docx(path, raw, meta)
    elif fmt == "html":
        title, body = extract_html(decode_text(path, raw), meta)
    else:
        title, body = extract_text(path, decode_text(path, raw), meta, markdown=fmt == "markdown")
    if not body.strip():
        raise InputError(f"{path}: no text content after extraction")
    return LoadResult((make_document(path, fmt, body, meta, title),))
