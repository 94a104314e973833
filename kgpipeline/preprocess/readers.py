"""Readers for single-document formats: PDF, DOCX, HTML, Markdown/plain text → (title, cleaned body).

Each reader fills ``meta`` with what the format carries (PDF page count, DOCX core properties,
HTML ``<meta>`` tags, YAML front matter) and returns the title it found ("" if none) and the body
after :func:`~kgpipeline.preprocess.clean.clean_text`. Parsing libraries are imported inside each
reader, so a corpus without PDFs never loads pypdf.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from pathlib import Path

from core.errors import InputError
from kgpipeline.preprocess.clean import clean_text
from kgpipeline.preprocess.frontmatter import split_front_matter

log = logging.getLogger(__name__)


class _ToDebug(logging.Handler):
    """pypdf logs every oddity of a damaged file ("EOF marker not found") on its own logger; our
    one-line skip message already says the PDF is corrupt, so its records go to our debug log."""

    def emit(self, record: logging.LogRecord) -> None:
        log.debug("pypdf: %s", record.getMessage())


def _quiet_pypdf() -> None:
    pypdf_log = logging.getLogger("pypdf")
    if not any(isinstance(h, _ToDebug) for h in pypdf_log.handlers):
        pypdf_log.addHandler(_ToDebug())
        pypdf_log.propagate = False


def extract_pdf(path: Path, raw: bytes, meta: dict) -> tuple[str, str]:
    """PDF text per page (pypdf); the document-info title; InputError if encrypted, corrupt or scanned."""
    from pypdf import PdfReader

    _quiet_pypdf()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pypdf's PdfReadWarning: same story as its log records
            reader = PdfReader(io.BytesIO(raw))
            if reader.is_encrypted and not reader.decrypt(""):
                raise InputError(f"{path}: encrypted PDF (password required)")
            pages = [page.extract_text() or "" for page in reader.pages]
            info = reader.metadata or {}
            title = str(info.get("/Title") or "").strip()
    except InputError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise InputError(f"{path}: corrupt PDF ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    if not any(p.strip() for p in pages):
        raise InputError(f"{path}: PDF has no extractable text (scanned images?)")
    meta["page_count"] = len(pages)
    return title, clean_text("", mode="plain", pages=pages, meta=meta)


def extract_docx(path: Path, raw: bytes, meta: dict) -> tuple[str, str]:
    """DOCX paragraphs, headings (as Markdown), list items and tables (one "| a | b |" line per row)."""
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


def extract_html(html: str, meta: dict) -> tuple[str, str]:
    """HTML body text without scripts, navigation and captions; ``<h1>``…``<h6>`` as Markdown headings."""
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


def extract_text(path: Path, text: str, meta: dict, *, markdown: bool) -> tuple[str, str]:
    """Markdown or plain text, YAML front matter allowed in both; the title is left to the caller."""
    fm, rest = split_front_matter(text, path)
    meta.update(fm)
    return "", clean_text(rest, mode="markdown" if markdown else "plain", meta=meta)
