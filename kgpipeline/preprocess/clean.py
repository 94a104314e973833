"""Text cleaning: extracted text → normalized paragraphs separated by one blank line.

In order: Unicode NFKC and control-character removal; running headers/footers (lines repeating at
the top or bottom of most pages, digits ignored) and page numbers ("3", "- 3 -", "Page 3 of 10");
inline running headers of flattened PDF text ("<Plan title> 71 of 268"); standalone figure/table
captions ("Figure 3: ..."); de-hyphenation ("regu-\\nlation") and joining of hard-wrapped lines
into paragraphs; whitespace normalization. Explicit headings become Markdown heading lines (see
``SourceDocument``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from kgpipeline.segment import match_heading

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
