"""Segmentor: document text → section tree + chunks (SPR-RAG's structure-first chunking).

1. Headings. Explicit Markdown heading lines (``#``…``######``, which the preprocessor also
   emits for HTML and DOCX) win when a document has any; otherwise heading lines are recognised
   by pattern: Part/Title/Book, Chapter, Section, Article/``Art. 5``/``§ 3`` (and their German
   forms), Annex, roman ``IV.``, lettered ``A.``, numbered ``1`` / ``1.2`` / ``1.2.3``. A line
   only counts when the rest of it looks like a title (short, capitalised, no final ``.;:,``),
   which keeps numbered paragraphs ("1. The Bureau shall ...") and cross-references ("Article 5
   of Regulation ...") out. A bare "Article 1" followed by a short title line or a deeper
   unnumbered heading is merged with it ("Article 1 Subject matter"). A lone leading level-1
   Markdown heading is the document title, not a section.
2. Tree: headings nest by level (document → chapter → section → article ...).
3. Chunks: each section's own text (heading through to its first child) is one chunk — i.e. the
   document is cut at its deepest headings; a unit over ``max_tokens`` is split by the recursive
   splitter (paragraph → line → sentence → word → hard token cut; ``overlap`` tokens of whole
   pieces carried over), and split fragments under ``min_tokens`` or of fewer than two sentences
   are merged into a neighbour. Heading-only units ("## Chapter II" directly followed by
   "### Article 5") are merged into the next chunk. Without headings the whole text goes through
   the recursive splitter.

Offsets are exact: ``doc.text[c.start:c.end] == c.text`` for every chunk. Sizes: a chunk holds at
most ``max_tokens`` tokens, plus a merged fragment of under ``min_tokens`` and any glued heading
lines; a whole small section stays one chunk (structure beats size). Pure; no I/O.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kgpipeline.records import Chunk, Heading, Section, Segmentation, SourceDocument
from store.vocab import content_hash

# Tokens: runs of word characters, or single punctuation marks. Cheap, deterministic, and close
# enough to subword counts for sizing chunks; documented in the README as "pkb tokens". A word
# run longer than MAX_TOKEN_CHARS counts as several tokens, so that a chunk of ``max_tokens``
# tokens is bounded in characters too (a 30 MB file of one unbroken "word" used to be one chunk,
# and every later stage is slower than linear in the size of one chunk).
MAX_TOKEN_CHARS = 100


@functools.lru_cache(maxsize=8)
def token_pattern(max_token_chars: int = MAX_TOKEN_CHARS) -> re.Pattern:
    return re.compile(rf"\w{{1,{int(max_token_chars)}}}|[^\w\s]")


_TOKEN = token_pattern()
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")

_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_LINE = re.compile(r"^[^\n]*$", re.M)

_KEYWORDS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("part", "book", "title", "teil", "buch"), ("part", 1.0)),
    **dict.fromkeys(("annex", "appendix", "schedule", "anhang", "anlage"), ("annex", 1.0)),
    **dict.fromkeys(("chapter", "kapitel"), ("chapter", 2.0)),
    **dict.fromkeys(("section", "abschnitt"), ("section", 3.0)),
    **dict.fromkeys(("subsection", "unterabschnitt"), ("subsection", 3.5)),
    **dict.fromkeys(("article", "art.", "artikel", "§"), ("article", 5.0)),
}
_KEYWORD_HEADING = re.compile(
    r"^(?P<kw>part|book|title|teil|buch|annex|appendix|schedule|anhang|anlage|chapter|kapitel"
    r"|subsection|section|unterabschnitt|abschnitt|article|art\.|artikel|§)"
    r"\s*(?P<num>\d+[a-z]?|[IVXLC]+)(?![\w/])\.?\s*(?:[-–—:.]\s*)?(?P<title>.*)$",
    re.I,
)
_NUMBERED = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,4})\.?[ \t]+(?P<title>\S.*)$")
_ROMAN = re.compile(r"^(?P<num>[IVX]{1,6})\.[ \t]+(?P<title>\S.*)$")
_VALID_ROMAN = re.compile(r"^(?=[IVX])X{0,3}(IX|IV|V?I{0,3})$")
_LETTERED = re.compile(r"^(?P<num>[A-H])\.[ \t]+(?P<title>\S.*)$")
_LIST_ITEM = re.compile(r"^(?:[-*+•▪–]\s|\(?[a-z0-9]{1,4}[.)]\s)")


def count_tokens(text: str, token: re.Pattern = _TOKEN) -> int:
    """Number of tokens: word runs (of at most MAX_TOKEN_CHARS) plus single punctuation marks."""
    return sum(1 for _ in token.finditer(text))


def _plausible_title(title: str) -> bool:
    # Titles are short and capitalised; sentences and cross-references are not.
    if not title:
        return True
    if len(title) > 150 or len(title.split()) > 18 or title.endswith((".", ",", ";", ":")) or "://" in title:
        return False
    first = title.lstrip("*_\"'“‘(")[:1]
    return bool(first) and (first.isupper() or first.isdigit())


def match_heading(line: str) -> tuple[str, float, str, str] | None:
    """Recognise a plain-text heading line: (kind, rank, number, title) or None.

    ``rank`` orders kinds from outermost (1 = part/annex) to innermost (numbered x.y.z = 6+depth).
    """
    line = line.strip()
    if not line or len(line) > 200:
        return None
    m = _KEYWORD_HEADING.match(line)
    if m and _plausible_title(m["title"].strip()):
        kind, rank = _KEYWORDS[m["kw"].lower()]
        return kind, rank, f"{m['kw']} {m['num']}", m["title"].strip()
    m = _ROMAN.match(line)
    if m and _VALID_ROMAN.match(m["num"]) and _plausible_title(m["title"]) and m["title"][0].isupper():
        return "roman", 2.5, m["num"], m["title"].strip()
    m = _LETTERED.match(line)
    if m and m["title"][0].isupper() and _plausible_title(m["title"]):
        return "letter", 4.0, m["num"], m["title"].strip()
    m = _NUMBERED.match(line)
    if m and m["title"][0].isupper() and _plausible_title(m["title"]):
        depth = m["num"].count(".") + 1
        return "numbered", 6.0 + depth, m["num"], m["title"].strip()
    return None


def _number_of(title: str) -> str:
    """The structural number inside an explicit heading's text ("Article 5 Penalties" → "Article 5")."""
    m = _KEYWORD_HEADING.match(title)
    if m:
        return f"{m['kw']} {m['num']}"
    for pattern in (_NUMBERED, _ROMAN):
        m = pattern.match(title)
        if m:
            return m["num"]
    return ""


@dataclass
class _H:  # mutable while headings are being merged; frozen into Heading afterwards
    rank: float
    kind: str
    number: str
    text: str
    start: int
    end: int


def _explicit_headings(text: str) -> list[_H]:
    out = []
    for m in _MD_HEADING.finditer(text):
        title = re.sub(r"[*_`]+", "", m[2]).strip()
        title = re.sub(r"\s+", " ", title)
        if title:
            out.append(_H(float(len(m[1])), "markdown", _number_of(title), title, m.start(), m.end()))
    return out


def _pattern_headings(text: str) -> list[_H]:
    out = []
    for m in _LINE.finditer(text):
        line = m.group()
        if not line or len(line) > 200:
            continue
        hit = match_heading(line)
        if hit:
            kind, rank, number, title = hit
            shown = f"{number} {title}".strip() if kind in ("roman", "letter", "numbered") else line.strip()
            out.append(_H(rank, kind, number, shown, m.start(), m.end()))
    return out


_NEXT_LINE = re.compile(r"\s*\n([^\n]+)\n(?:[ \t]*\n|$)")


def _merge_titles(text: str, heads: list[_H]) -> list[_H]:
    """Attach a bare "Article 1" heading's title (a deeper unnumbered heading or short line)."""
    out: list[_H] = []
    i = 0
    while i < len(heads):
        h = heads[i]
        bare = h.number and h.text.strip().lower() == h.number.lower()
        if bare and i + 1 < len(heads):
            nxt = heads[i + 1]
            if nxt.rank > h.rank and not nxt.number and not text[h.end : nxt.start].strip():
                out.append(_H(h.rank, h.kind, h.number, f"{h.text} {nxt.text}", h.start, nxt.end))
                i += 2
                continue
        if bare:
            m = _NEXT_LINE.match(text, h.end)
            line = m[1].strip() if m else ""
            if (
                line
                and len(line) <= 100
                and not line.startswith("#")
                and not line.endswith((".", ";", ":", ","))
                and not _LIST_ITEM.match(line)
                and not line[0].isdigit()
                and match_heading(line) is None
            ):
                h = _H(h.rank, h.kind, h.number, f"{h.text} {line}", h.start, m.end(1))
        out.append(h)
        i += 1
    return out


def find_headings(text: str) -> tuple[Heading, ...]:
    """All section headings of a normalized document text, in order, with dense levels (1 = outermost)."""
    heads = _explicit_headings(text)
    if heads:
        top = min(h.rank for h in heads)
        if len(heads) > 1 and heads[0].rank == top and sum(h.rank == top for h in heads) == 1:
            heads = heads[1:]  # the lone leading H1 is the document title
    else:
        heads = _pattern_headings(text)
    heads = _merge_titles(text, heads)
    levels = {rank: i + 1 for i, rank in enumerate(sorted({h.rank for h in heads}))}
    return tuple(Heading(levels[h.rank], h.kind, h.number, h.text, h.start, h.end) for h in heads)


def build_sections(doc_id: str, text: str, headings: tuple[Heading, ...]) -> tuple[Section, ...]:
    """Nest headings into a tree; sections in pre-order (document order)."""
    rows: list[dict] = []
    stack: list[int] = []  # indices into rows of the open ancestors
    child_count: dict[int | None, int] = {}
    for h in headings:
        while stack and headings[stack[-1]].level >= h.level:
            rows[stack.pop()]["end"] = h.start
        parent = stack[-1] if stack else None
        order = child_count.get(parent, 0)
        child_count[parent] = order + 1
        trail = (rows[parent]["trail"] if parent is not None else ()) + (order + 1,)
        path = (rows[parent]["path"] if parent is not None else ()) + (h.text,)
        rows.append(
            {"parent": parent, "order": order, "trail": trail, "path": path, "h": h, "end": len(text)}
        )
        stack.append(len(rows) - 1)

    def sid(i: int) -> str:
        return f"{doc_id}-s" + ".".join(map(str, rows[i]["trail"]))

    return tuple(
        Section(
            section_id=sid(i),
            parent_id=sid(r["parent"]) if r["parent"] is not None else None,
            level=len(r["trail"]),
            order=r["order"],
            number=r["h"].number,
            heading=r["h"].text,
            path=r["path"],
            start=r["h"].start,
            end=r["end"],
        )
        for i, r in enumerate(rows)
    )


_SEPARATORS = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraph
    re.compile(r"\n\s*"),  # line
    re.compile(r"(?<=[.!?;])\s+"),  # sentence (and legal sub-clause ';')
    re.compile(r"\s+"),  # word
)


def _hard_split(text: str, start: int, end: int, max_tokens: int, overlap: int, token: re.Pattern) -> list[tuple[int, int]]:
    spans = [m.span() for m in token.finditer(text, start, end)]
    out, i, step = [], 0, max(1, max_tokens - overlap)
    while i < len(spans):
        j = min(len(spans), i + max_tokens)
        out.append((spans[i][0], spans[j - 1][1]))
        if j == len(spans):
            break
        i += step
    return out


def split_span(
    text: str, start: int, end: int, *, max_tokens: int = 512, overlap: int = 50,
    max_depth: int = 6, _depth: int = 0, _sep: int = 0, token: re.Pattern = _TOKEN,
) -> list[tuple[int, int]]:
    """Recursive splitter over ``text[start:end]``: spans of at most ``max_tokens`` tokens.

    Pieces are cut at the coarsest separator that occurs, packed greedily, and the next window
    starts with trailing pieces of the previous one totalling at most ``overlap`` tokens.
    """
    if count_tokens(text[start:end], token) <= max_tokens:
        return [(start, end)]
    if _sep >= len(_SEPARATORS) or _depth >= max_depth:
        return _hard_split(text, start, end, max_tokens, overlap, token)
    pieces, pos = [], start
    for m in _SEPARATORS[_sep].finditer(text, start, end):
        if m.start() > pos:
            pieces.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        pieces.append((pos, end))
    pieces = [p for p in (_trim(text, a, b) for a, b in pieces) if p[0] < p[1]]
    if len(pieces) < 2:  # separator absent: try the next finer one
        return split_span(text, start, end, max_tokens=max_tokens, overlap=overlap,
                          max_depth=max_depth, _depth=_depth + 1, _sep=_sep + 1, token=token)
    ntok = [count_tokens(text[a:b], token) for a, b in pieces]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(pieces):
        j, total = i, 0
        while j < len(pieces) and total + ntok[j] <= max_tokens:
            total += ntok[j]
            j += 1
        if j == i:  # one piece alone is too big: recurse with the next separator
            out += split_span(text, *pieces[i], max_tokens=max_tokens, overlap=overlap,
                              max_depth=max_depth, _depth=_depth + 1, _sep=_sep + 1, token=token)
            i += 1
            continue
        out.append((pieces[i][0], pieces[j - 1][1]))
        if j == len(pieces):
            break
        k, carried = j, 0
        while k - 1 > i and carried + ntok[k - 1] <= overlap:
            k -= 1
            carried += ntok[k]
        i = k
    return out


def _merge_fragments(
    text: str, spans: list[tuple[int, int]], max_tokens: int, min_tokens: int, token: re.Pattern = _TOKEN
) -> list[tuple[int, int]]:
    """Merge split fragments that are too small (tokens or sentences) into a neighbour."""
    out: list[tuple[int, int]] = []
    for span in spans:
        frag = text[span[0] : span[1]]
        if out:
            ntok = count_tokens(frag, token)
            merged = count_tokens(text[out[-1][0] : span[1]], token)
            few_sentences = len(_SENTENCE_END.findall(frag)) < 2
            if ntok < min_tokens or (few_sentences and merged <= max_tokens):
                out[-1] = (out[-1][0], max(out[-1][1], span[1]))
                continue
        out.append(span)
    if len(out) > 1 and count_tokens(text[out[0][0] : out[0][1]], token) < min_tokens:
        out[1] = (out[0][0], out[1][1])  # a tiny first fragment joins the next one
        out.pop(0)
    return out


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def segment(
    doc: SourceDocument, *, max_tokens: int = 512, overlap: int = 50, min_tokens: int = 32, max_depth: int = 6,
    max_token_chars: int = MAX_TOKEN_CHARS,
) -> Segmentation:
    """Section tree and chunks of one document (see the module docstring)."""
    text = doc.text
    token = token_pattern(max_token_chars)
    headings = find_headings(text)
    sections = build_sections(doc.doc_id, text, headings)
    # Units: (start, end, section index or None, heading end) — each section's own text.
    units: list[tuple[int, int, int | None, int]] = []
    first = sections[0].start if sections else len(text)
    if text[:first].strip():
        units.append((0, first, None, 0))
    for i, s in enumerate(sections):
        own_end = sections[i + 1].start if i + 1 < len(sections) and sections[i + 1].parent_id == s.section_id else s.end
        units.append((s.start, own_end, i, headings[i].end))

    pieces: list[tuple[int, int, int | None]] = []  # (start, end, section index)
    pending_start: int | None = None  # heading-only units waiting to be glued to the next chunk
    for start, end, idx, head_end in units:
        start, end = _trim(text, start, end)
        if start >= end:
            continue
        # Heading-only units (and a title-sized preamble) are glued to the next chunk.
        if (idx is not None and not text[head_end:end].strip()) or (
            idx is None and count_tokens(text[start:end], token) < min_tokens
        ):
            pending_start = start if pending_start is None else pending_start
            continue
        spans = split_span(text, start, end, max_tokens=max_tokens, overlap=overlap, max_depth=max_depth, token=token)
        spans = _merge_fragments(text, spans, max_tokens, min_tokens, token)
        if pending_start is not None:
            spans[0] = (pending_start, spans[0][1])
            pending_start = None
        pieces += [(a, b, idx) for a, b in spans]
    if pending_start is not None:  # trailing heading-only units
        if pieces:
            a, _, idx = pieces[-1]
            pieces[-1] = (a, _trim(text, a, len(text))[1], idx)
        else:
            pieces.append((*_trim(text, pending_start, len(text)), None))

    chunks = []
    for n, (a, b, idx) in enumerate(pieces):
        body = text[a:b]
        sec = sections[idx] if idx is not None else None
        chunks.append(
            Chunk(
                chunk_id=f"{doc.doc_id}-c{n:04d}-{content_hash(doc.doc_id, str(n), body, length=8)}",
                doc_id=doc.doc_id,
                ordinal=n,
                section_id=sec.section_id if sec else "",
                section_path=sec.path if sec else (),
                text=body,
                start=a,
                end=b,
                tokens=count_tokens(body, token),
            )
        )
    return Segmentation(doc.doc_id, "structure" if sections else "recursive", sections, tuple(chunks))
