"""Preprocessor: a file → cleaned, normalized :class:`SourceDocument` records.

Formats: PDF (pypdf), DOCX (python-docx), HTML (BeautifulSoup + lxml), Markdown (with YAML
front matter), plain text (front matter allowed too), JSONL (one document per line).
:func:`detect_format` sniffs content first (``%PDF-``, a zip holding ``word/document.xml``, other
binary signatures, NUL bytes) and falls back to the extension.

Cleaning, in order: Unicode NFKC and control-character removal; running headers/footers (lines
repeating at the top or bottom of most pages, digits ignored) and page numbers ("3", "- 3 -",
"Page 3 of 10"); inline running headers of flattened PDF text ("<Plan title> 71 of 268");
standalone figure/table captions ("Figure 3: ..."); de-hyphenation ("regu-\\nlation") and
joining of hard-wrapped lines into paragraphs; whitespace normalization. Paragraphs are separated
by one blank line. Explicit headings become Markdown heading lines (see ``SourceDocument``).

JSONL field mapping (first field present wins):
  text      ``text``, ``content``, ``body``, ``article_text``
  title     ``title``, ``name``, ``heading``; else ``act`` (+ " Article N" from ``article_number``)
  id        ``id``, ``doc_id``, ``identifier``, ``celex``, ``eli``; + "-art-N" from
            ``article_number``/``article``; else "<file stem>-<line>"; duplicates get "-l<line>"
  category  ``category`` (same values as front matter); every other field goes to metadata.
A line that is not a JSON object with text is skipped and reported in ``LoadResult.skipped``.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import logging
import re
import unicodedata
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from kgpipeline.records import CATEGORIES, LoadResult, SkippedRecord, SourceDocument
from kgpipeline.segment import match_heading
from policykb.errors import InputError
from store.vocab import content_hash, slug

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
EXTENSIONS = {
    ".pdf": "pdf", ".docx": "docx", ".html": "html", ".htm": "html", ".xhtml": "html",
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
    ".jsonl": "jsonl", ".ndjson": "jsonl",
}
_BINARY_MAGIC = {
    b"\x89PNG": "PNG image", b"\xff\xd8\xff": "JPEG image", b"GIF8": "GIF image",
    b"\x1f\x8b": "gzip archive", b"\x7fELF": "ELF executable", b"\xd0\xcf\x11\xe0": "legacy Office (OLE) file",
    b"Rar!": "RAR archive", b"7z\xbc\xaf": "7-Zip archive", b"%!PS": "PostScript file",
}
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


def detect_format(path: Path, head: bytes | None = None) -> str:
    """One of ``records.FORMATS``; InputError for binary, unknown or mismatching files."""
    if head is None:
        with open(path, "rb") as fh:
            head = fh.read(8192)
    ext = path.suffix.lower()
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as zf:
                if "word/document.xml" in zf.namelist():
                    return "docx"
        except zipfile.BadZipFile:
            raise InputError(f"{path}: corrupt zip container (DOCX expected)") from None
        raise InputError(f"{path}: zip archive that is not a DOCX document")
    for magic, what in _BINARY_MAGIC.items():
        if head.startswith(magic):
            raise InputError(f"{path}: binary file ({what}), not a document")
    if ext in (".pdf", ".docx"):
        raise InputError(f"{path}: not a valid {ext[1:].upper()} file (signature missing)")
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path}: binary content (NUL bytes), not a text document")
    if ext in EXTENSIONS:
        return EXTENSIONS[ext]
    if re.match(rb"\s*<(!doctype html|html)", head, re.I):
        return "html"
    raise InputError(f"{path}: unsupported file extension {ext or '(none)'!r} (supported: {', '.join(sorted(EXTENSIONS))})")


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
        return _load_jsonl(path, _decode(path, raw))
    meta: dict[str, Any] = {}
    if fmt == "pdf":
        title, body = _extract_pdf(path, raw, meta)
    elif fmt == "docx":
        title, body = _extract_docx(path, raw, meta)
    elif fmt == "html":
        title, body = _extract_html(_decode(path, raw), meta)
    else:
        fm, rest = split_front_matter(_decode(path, raw), path)
        meta.update(fm)
        title, body = "", clean_text(rest, mode="markdown" if fmt == "markdown" else "plain", meta=meta)
    if not body.strip():
        raise InputError(f"{path}: no text content after extraction")
    return LoadResult((_make_document(path, fmt, body, meta, title),))


def _decode(path: Path, raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from None


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.S)


def split_front_matter(text: str, path: Path | str = "<text>") -> tuple[dict[str, Any], str]:
    """YAML front matter (``---`` … ``---`` at the very start) → (metadata, rest of the text)."""
    import yaml  # local: only Markdown/text inputs need it

    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    try:
        data = yaml.safe_load(m[1])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise InputError(f"{path}: invalid YAML front matter{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(data, dict):
        return {}, text  # a leading rule, not front matter
    return {str(k): _jsonable(v) for k, v in data.items()}, text[m.end() :]


def _jsonable(value: Any) -> Any:
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


# --- cleaning ---------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u00ad\u200b-\u200d\u2060\ufeff]")
_PAGE_NUMBER = re.compile(r"^(?:page|seite|p\.)?\s*[-–—]?\s*\d{1,4}\s*[-–—]?\s*(?:(?:of|/|von)\s*\d{1,4})?$", re.I)
_PAGE_LINE = re.compile(r"^\s*(?:page|seite)\s+\d{1,4}(?:\s+(?:of|von|/)\s+\d{1,4})?\s*$", re.I)
_CAPTION = re.compile(
    r"^(?:figure|fig\.|table|chart|map|diagram|graph|abbildung|abb\.|tabelle)\s*\d+(?:\.\d+)*[a-z]?"
    r"\s*(?:$|[:.–—-]\s*\S)", re.I)
_LIST_ITEM = re.compile(r"^(?:[-*+•▪–]\s|\(?[a-z0-9]{1,4}[.)]\s|>)", re.I)
_CONJUNCTIONS = {"and", "or", "nor", "to", "und", "oder", "bzw", "bzw.", "sowie", "et", "ou"}
_INLINE_MARKER = re.compile(r"\b(\d{1,4}) of (\d{1,4})\b")


def normalize_unicode(text: str) -> str:
    """NFKC, Unix newlines, no control/zero-width characters, tabs as spaces."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text).replace("\t", " ")


def strip_page_furniture(pages: list[str]) -> list[str]:
    """Drop running headers/footers and page numbers from the first/last lines of each page."""
    def key(line: str) -> str:
        return re.sub(r"\d+", "#", line.strip().lower())

    split = [[ln for ln in p.split("\n")] for p in pages]
    edges = []
    for lines in split:
        idx = [i for i, ln in enumerate(lines) if ln.strip()]
        k = min(2, max(1, len(idx) // 3))  # short pages: fewer edge lines, so body text survives
        edges.append(set(idx[:k] + idx[-k:]))
    counts = Counter(k for lines, e in zip(split, edges) for k in {key(lines[i]) for i in e})
    need = max(2, -(-len(pages) // 2))  # on at least half of the pages
    repeated = {k for k, c in counts.items() if c >= need} if len(pages) >= 2 else set()
    out = []
    for lines, e in zip(split, edges):
        out.append("\n".join(
            ln for i, ln in enumerate(lines)
            if not (i in e and (key(ln) in repeated or _PAGE_NUMBER.match(ln.strip())))
        ))
    return out


def strip_inline_headers(text: str) -> tuple[str, str]:
    """Remove "<running header> N of M" markers left inline by PDF-to-text flattening.

    The header is the longest word-aligned text that precedes every marker with the same total M
    (at least 3 markers, page numbers increasing). Returns (text, header or "").
    """
    groups: dict[str, list[re.Match]] = {}
    for m in _INLINE_MARKER.finditer(text):
        groups.setdefault(m[2], []).append(m)
    for total, ms in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        nums = [int(m[1]) for m in ms]
        if len(ms) < 3 or nums != sorted(nums):
            continue
        befores = [text[max(0, m.start() - 120) : m.start()].rstrip() for m in ms]
        suffix = befores[0]
        for b in befores[1:]:
            while suffix and not b.endswith(suffix):
                suffix = suffix[1:]
        header = suffix[suffix.find(" ") + 1 :] if len(suffix) < len(min(befores, key=len)) else suffix
        header = header.strip()
        if len(header) >= 8 and re.search(r"[A-Za-z]{3}", header):
            pattern = re.compile(re.escape(header) + r"\s*\d{1,4} of " + total + r"\b")
            return pattern.sub(" ", text), header
    return text, ""


def clean_text(text: str, *, mode: str = "plain", pages: list[str] | None = None, meta: dict | None = None) -> str:
    """Normalize and clean a document body. ``mode``: "plain" (join hard-wrapped lines by
    heuristics), "markdown" (a single newline is a soft wrap), "blocks" (every line is a
    paragraph: HTML/DOCX output). ``pages`` (PDF) enables header/footer removal; a form feed in
    ``text`` separates pages too. A detected inline running header is stored in
    ``meta["running_header"]``."""
    if pages is None:
        pages = normalize_unicode(text).split("\f")
    else:
        pages = [normalize_unicode(p).replace("\f", "\n") for p in pages]
    text = "\n".join(strip_page_furniture(pages) if len(pages) > 1 else pages)
    if mode == "plain":
        text, header = strip_inline_headers(text)
        if header and meta is not None:
            meta.setdefault("running_header", header)
        # Flattened PDF text uses runs of 3+ spaces where lines or blocks ended.
        text = "\n".join(re.sub(r" {3,}", "\n", ln) if len(ln) > 1000 else ln for ln in text.split("\n"))
    lines = [ln.strip() for ln in text.split("\n")]
    lines = [ln for ln in lines if not (_PAGE_LINE.match(ln) or (_CAPTION.match(ln) and len(ln) <= 150))]
    return _join_paragraphs(lines, mode)


def _join_paragraphs(lines: list[str], mode: str) -> str:
    lengths = sorted(len(ln) for ln in lines if ln)
    width = lengths[int(len(lengths) * 0.9)] if lengths else 0
    wrapped = 0 < width <= 120  # hard-wrapped text has a typical line width
    blocks: list[str] = []
    cur: list[str] = []  # lines of the current paragraph

    def flush() -> None:
        if cur:
            blocks.append(re.sub(r" {2,}", " ", " ".join(cur)))
            cur.clear()

    for ln in lines:
        if not ln:
            flush()
            continue
        if re.match(r"#{1,6} ", ln) or ln.startswith("|"):
            flush()
            if ln.startswith("#"):  # Markdown emphasis markers carry no meaning in a heading
                ln = re.sub(r"\*+|(?<!\w)_+|_+(?!\w)|`", "", ln)
            blocks.append(re.sub(r" {2,}", " ", ln).strip())
            continue
        if not cur or mode == "blocks" or _LIST_ITEM.match(ln) or (mode == "plain" and match_heading(ln)):
            flush()
            cur.append(ln)
            continue
        prev = cur[-1]
        if (mode == "plain" and prev.endswith("-") and len(prev) > 1 and prev[-2].isalpha()
                and ln[0].isalpha() and ln.split(" ", 1)[0] not in _CONJUNCTIONS):
            # De-hyphenate "regu-" + "lation"; keep the hyphen before a capital ("Bund-Länder").
            # Markdown is never de-hyphenated: its writers wrap at spaces only.
            cur[-1] = (prev[:-1] if ln[0].islower() else prev) + ln
            continue
        if mode == "markdown" or (not match_heading(prev) and (
            ln[0].islower() or (wrapped and len(prev) >= 0.75 * width)
        )):
            cur.append(ln)
        else:
            flush()
            cur.append(ln)
    flush()
    # Consecutive table rows stay together, one per line; other blocks are paragraphs.
    out: list[str] = []
    for b in blocks:
        if out and b.startswith("|") and out[-1].split("\n")[-1].startswith("|"):
            out[-1] += "\n" + b
        else:
            out.append(b)
    return "\n\n".join(out).strip()


# --- format extractors (title, cleaned body) --------------------------------------------------


def _extract_pdf(path: Path, raw: bytes, meta: dict) -> tuple[str, str]:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(f"{path}: encrypted PDF (password required)")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata or {}
        title = str(info.get("/Title") or "").strip()
    except InputError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise InputError(f"{path}: corrupt PDF ({type(exc).__name__}: {exc})") from None
    if not any(p.strip() for p in pages):
        raise InputError(f"{path}: PDF has no extractable text (scanned images?)")
    meta["page_count"] = len(pages)
    return title, clean_text("", mode="plain", pages=pages, meta=meta)


def _extract_docx(path: Path, raw: bytes, meta: dict) -> tuple[str, str]:
    import docx

    try:
        document = docx.Document(io.BytesIO(raw))
    except Exception as exc:  # python-docx/lxml errors for damaged packages
        raise InputError(f"{path}: corrupt DOCX ({type(exc).__name__}: {exc})") from None
    props = document.core_properties
    for name in ("author", "subject", "keywords", "category"):
        if getattr(props, name, None):
            meta[name] = getattr(props, name)
    if props.created:
        meta["date"] = props.created.date().isoformat()
    title = (props.title or "").strip()
    lines: list[str] = []
    for block in document.iter_inner_content():
        if hasattr(block, "rows"):  # a table: one "a | b | c" line per row
            for row in block.rows:
                lines.append("| " + " | ".join(c.text.strip() for c in row.cells) + " |")
            lines.append("")
            continue
        text = block.text.strip()
        style = block.style.name if block.style is not None else ""
        m = re.match(r"Heading (\d)", style)
        if not text:
            continue
        if style == "Title":
            title = title or text
            lines += ["", f"# {text}", ""]
        elif m:  # one level below the Title style, which is the document's "#"
            lines += ["", f"{'#' * min(6, int(m[1]) + 1)} {text}", ""]
        elif style.startswith("List"):
            lines.append(f"- {text}")
        else:
            lines += [text, ""]
    return title, clean_text("\n".join(lines), mode="blocks", meta=meta)


_BLOCK_TAGS = ["p", "div", "li", "tr", "section", "article", "blockquote", "pre", "dt", "dd",
               "table", "ul", "ol", "main", "header", "footer", "aside", "address"]


def _extract_html(html: str, meta: dict) -> tuple[str, str]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for tag in soup(["script", "style", "noscript", "template", "nav", "figcaption", "caption", "svg"]):
        tag.decompose()
    for tag in soup.find_all("meta"):
        name, content = tag.get("name") or tag.get("property"), tag.get("content")
        if name and content:
            meta[str(name).lower().removeprefix("dc.").removeprefix("dcterms.")] = content.strip()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    body = soup.body or soup
    for s in body.find_all(string=True):  # source newlines inside elements are soft
        s.replace_with(re.sub(r"\s+", " ", str(s)))
    for h in body.find_all(re.compile(r"^h[1-6]$")):
        h.replace_with(f"\n\n{'#' * int(h.name[1])} {h.get_text(' ', strip=True)}\n\n")
    for br in body.find_all("br"):
        br.replace_with("\n")
    for tag in body.find_all(_BLOCK_TAGS):
        tag.insert_before("\n\n")
        tag.insert_after("\n\n")
    return title, clean_text(body.get_text(), mode="blocks", meta=meta)


# --- documents --------------------------------------------------------------------------------

_ID_FIELDS = ("id", "doc_id", "identifier", "celex", "eli")
_TITLE_FIELDS = ("title", "Title", "name", "heading")


def _first(meta: dict, keys: tuple[str, ...]) -> str:
    for k in keys:
        if meta.get(k) not in (None, ""):
            return str(meta[k]).strip()
    return ""


def _make_document(path: Path, fmt: str, body: str, meta: dict, title: str, source: str = "", doc_id: str = "") -> SourceDocument:
    try:
        category = normalize_category(meta.get("category"))
    except InputError as exc:
        raise InputError(f"{source or path}: {exc}") from None
    if not (title := _first(meta, _TITLE_FIELDS) or title):
        first_heading = re.search(r"^#{1,6} (.+)$", body, re.M)
        first_line = body.split("\n", 1)[0]
        title = (
            meta.get("running_header")
            or (first_heading[1] if first_heading else "")
            or (first_line if len(first_line) <= 150 else "")
            or path.stem
        )
    doc_id = doc_id or slug(_first(meta, _ID_FIELDS) or path.stem, max_len=64)
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


def _load_jsonl(path: Path, text: str) -> LoadResult:
    docs: list[SourceDocument] = []
    skipped: list[SkippedRecord] = []
    seen: set[str] = set()

    def skip(line_no: int, reason: str) -> None:
        log.warning("%s:%d skipped: %s", path, line_no, reason)
        skipped.append(SkippedRecord(str(path), line_no, reason))

    for line_no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            skip(line_no, f"not JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(rec, dict):
            skip(line_no, f"not a JSON object (got {type(rec).__name__})")
            continue
        key = next((k for k in ("text", "content", "body", "article_text") if isinstance(rec.get(k), str)), None)
        if key is None or not rec[key].strip():
            skip(line_no, "no text field (expected one of text, content, body, article_text)")
            continue
        meta = {k: v for k, v in rec.items() if k != key}
        base = _first(meta, _ID_FIELDS)
        part = _first(meta, ("article_number", "article"))
        doc_id = slug(f"{base}-art-{part}" if base and part else base or f"{path.stem}-{line_no}", max_len=64)
        if doc_id in seen:
            doc_id = f"{doc_id}-l{line_no}"
        title = _first(meta, _TITLE_FIELDS)
        if not title and meta.get("act"):
            title = f"{meta['act']} Article {part}" if part else str(meta["act"])
        body = clean_text(rec[key], mode="plain")
        if not body:
            skip(line_no, "text is empty after cleaning")
            continue
        try:
            doc = _make_document(path, "jsonl", body, meta, title or doc_id, f"{path}:{line_no}", doc_id)
        except InputError as exc:
            skip(line_no, str(exc).split(": ", 1)[-1])
            continue
        seen.add(doc_id)
        docs.append(doc)
    if not docs:
        first = f"; first: line {skipped[0].line}: {skipped[0].reason}" if skipped else ""
        raise InputError(f"{path}: no usable JSONL records ({len(skipped)} lines skipped{first})")
    return LoadResult(tuple(docs), tuple(skipped))
