"""Enumerations in policy text: a lead-in sentence ending in ":" and the items under it.

Legal acts state many rules as lists: "The JTF shall not support: (a) the decommissioning or
construction of nuclear power plants; (b) …". When the items stand on their own lines (Markdown
"- (a) …", the numbered items of German laws), the sentence splitter (:func:`core.text.sentence_spans`)
cuts the lead-in and every item apart. Quoted alone, a lead-in promises what it does not give
("… shall contain the following elements:") and an item loses what it belongs to: an exclusion
reads like a permission. :func:`list_block` finds the list around a sentence so that an answer can
quote the lead-in with its items (:func:`list_unit`). Lists written inline ("tasks: (a) …; (b) …",
one line, as EUR-Lex plain text writes them) are one sentence; a long one is quoted by the items
that answer the question (:func:`trim_inline`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.text import inline_list, item_readings, reading_text
from spr.fuse import Span, sentences

# An item opens with a bullet, an enumerator or both: "- (a) ", "(iv) ", "b) ", "aa) ", "1. ", "3a. ",
# "(2) ", "• ". Lower-case letters only: "(EU) 2021/1119" or "A. Scope" do not open items.
_ITEM = re.compile(
    r"(?:[-*\u2022\u2013]\s+)?"
    r"(?:\((?P<p>[a-z]{1,4}|\d{1,3})\)|(?P<dd>(?P<ch>[a-z])(?P=ch))\)|(?P<d>[a-z]|\d{1,3}[a-z]?)[.)])\s"
    r"|[-*\u2022\u2013]\s"
)
_BULLET = re.compile(r"[-*\u2022\u2013]\s+")
_FIRST = {"a", "i", "1", "aa"}  # what a list's first enumerator is
_ENDS = (".", "!", "?", ":", ";", ",")
MAX_ITEMS = 40  # a longer run of items is a table of contents or an annex, not one list


def item_kind(text: str) -> str | None:
    """"alpha" ("(a)", "b)", "(iv)"), "double" ("aa)", German sub-items), "digit" ("1.", "(2)",
    "3a."), "bullet" ("- ", "• ") or None (no item)."""
    m = _ITEM.match(text)
    if m is None:
        return None
    if m.group("dd"):
        return "double"
    label = m.group("p") or m.group("d")
    return "bullet" if label is None else "digit" if label[0].isdigit() else "alpha"


def is_item(text: str) -> bool:
    return item_kind(text) is not None


def is_enumerator(text: str) -> bool:
    """Whether ``text`` is an item's number or bullet alone ("1.", "(b)", "iv)", "-"), without its item.

    >>> is_enumerator("(b)"), is_enumerator("12."), is_enumerator("1. Compliance"), is_enumerator("A.")
    (True, True, False, False)
    """
    return _ITEM.fullmatch(text.strip() + " ") is not None


def _first_item(text: str) -> bool:
    m = _ITEM.match(text)
    return m is not None and (m.group("p") or m.group("dd") or m.group("d")) in _FIRST


_BARE = re.compile(r"(?:[-*\u2022\u2013]\s+)?(?:\d{1,3}[a-z]?|[a-z])\.")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Lines:
    """A passage's text and its sentences and lines (:func:`spr.fuse.sentences`), as lists are
    found in them: the text tells a new line block (after a blank line) from a wrapped line."""

    text: str
    spans: tuple[Span, ...]

    @classmethod
    def of(cls, text: str) -> Lines:
        """The lines of ``text``; a bare enumerator the splitter cut off ("1." before "Anforderungen
        an …": a full stop before a capital) is joined to the rest of its line."""
        spans: list[Span] = []
        for span in sentences(text):
            prev = spans[-1] if spans else None
            if prev is not None and _BARE.fullmatch(prev.text) and "\n" not in text[prev.end : span.start]:
                span = Span(prev.start, span.end, text[prev.start : span.end])
                spans.pop()
            spans.append(span)
        return cls(text, tuple(spans))

    def at(self, offset: int) -> int | None:
        """The index of the line holding character ``offset``."""
        return next((k for k, s in enumerate(self.spans) if s.start <= offset < s.end), None)

    def __len__(self) -> int:
        return len(self.spans)

    def line(self, k: int) -> str:
        return self.spans[k].text

    def item(self, k: int) -> str | None:
        """The item kind of line ``k`` (:func:`item_kind`) where it starts an item: first in the
        text, after a blank line, or after a line that ends a clause. "§ 111a Satz" / "1) ein
        Aufsichtsverfahren …" is a wrapped sentence, not an item."""
        kind = item_kind(self.line(k))
        if kind is None or k == 0:
            return kind
        prev = self.spans[k - 1]
        if _BLANK_LINE.search(self.text, prev.end, self.spans[k].start) or prev.text.rstrip().endswith(_ENDS):
            return kind
        return None

    def opens(self, k: int) -> bool:
        """Whether line ``k`` is a lead-in: it ends in ":" before an item, or (German laws: "(1) Der
        Höchstpreis in den Ausschreibungen ist", a blank line, "1. im verkürzten Verfahren …") it
        ends without punctuation before a list's first item that goes on (ends in no full stop).
        Never a heading."""
        if k + 1 >= len(self) or self.item(k + 1) is None:
            return False
        text = self.line(k).rstrip()
        if text.endswith(":"):
            return True
        first = self.line(k + 1)
        # Without a colon, a first item that ends a sentence is a numbered paragraph under a title
        # ("Scope" / "1. This Regulation applies …"), not a list.
        return not text.startswith("#") and not text.endswith((*_ENDS, ")")) and _first_item(first) and not first.rstrip().endswith(".")


def list_block(lines: Lines, i: int) -> tuple[int, int] | None:
    """``(lead, last)``: the indices of the lead-in and of the last line of the innermost list that
    line ``i`` opens or is an item of; None when it is in no list. The list's items are of its first item's
    kind; items of other kinds between them are nested (a German "5. … a) … aa) …"), and after the
    last one they belong to it only when that item opens them (a numbered paragraph after a
    lettered list does not). The list ends at an item of its kind that ends with a full stop, at a
    nested one that does with no item after it, or before the first line that is no item."""
    kind = lines.item(i)
    lead = i
    if not lines.opens(i):
        if kind is None:
            return None
        lead = i - 1
        while True:  # back to the lead-in of a list of i's kind, over the items above i
            if lead < 0 or i - lead > MAX_ITEMS or lines.item(lead) is None and not lines.opens(lead):
                return None
            if lines.opens(lead) and lines.item(lead + 1) == kind:
                break
            if lines.item(lead) is None or (lines.item(lead) == kind and lines.line(lead).rstrip().endswith(".")):
                return None  # another list's lead-in, or the end of an earlier list of this kind
            lead -= 1
    top = lines.item(lead + 1)
    last = last_top = lead
    for k in range(lead + 1, min(len(lines), lead + 1 + MAX_ITEMS)):
        kind_k = lines.item(k)
        if kind_k is None:
            break
        last = k
        ends = lines.line(k).rstrip().endswith(".")
        if kind_k == top:
            last_top = k
            if ends:
                break
        elif ends and not (k + 1 < len(lines) and lines.item(k + 1) is not None):
            break
    if last > last_top and not lines.opens(last_top):
        last = last_top
    return (lead, last) if i <= last else None  # else a later paragraph, not this list's


@dataclass(frozen=True)
class ListUnit:
    """What an answer quotes for one chosen sentence: ``text`` (the sentences joined, " … " where
    items were skipped or cut, source markup removed) and the source range ``start``–``end`` it comes from (an exact span that
    holds every quoted word); ``covered`` the indices of the sentences it says, the lead-in first."""

    text: str
    start: int
    end: int
    covered: frozenset[int]
    last: int  # the list's last item


def _join(lines: Lines, indices: Sequence[int]) -> str:
    parts: list[str] = []
    for prev, k in zip([None, *indices], indices):
        if prev is not None and k != prev + 1:
            parts.append("…")
        parts.append(shown(lines.line(k)))
    return " ".join(parts)


def shown(text: str) -> str:
    """A line as an answer or the LLM's evidence shows it: source markup removed
    (:func:`core.text.reading_text`), blanks collapsed, a Markdown bullet before an enumerator
    dropped ("- (a) x" → "(a) x"), a bare one shown as "•"."""
    text = " ".join(reading_text(text).split())
    bullet = _BULLET.match(text)
    if bullet is None:
        return text
    rest = text[bullet.end():]
    return rest if is_item(rest) else f"\u2022 {rest}"


# A lead-in that introduces what something holds ("… shall contain at least the following
# information:", "… shall include:"): its items together answer a question about contents.
_CONTENTS_LEAD = re.compile(r"\b(?:contain|includ|cover|compris|consist|set\w* out|specif|following)\w*", re.IGNORECASE)


def states_contents(lead_in: str) -> bool:
    """Whether ``lead_in`` introduces the contents of something.

    >>> states_contents("The instructions for use shall contain at least the following information:")
    True
    >>> states_contents("The Fund shall not support:")
    False
    """
    return bool(_CONTENTS_LEAD.search(lead_in))


def list_unit(lines: Lines, i: int, max_chars: int, contents_chars: int = 0) -> ListUnit | None:
    """The quote for line ``i`` when it is part of a list (:func:`list_block`), else None.

    A lead-in comes with its items in order, as many as ``max_chars`` allows (at least one); an item
    comes after its lead-in, with the items between them when they fit, else with " … " for them;
    " …" at the end says the list goes on. ``contents_chars``: the limit instead for a list whose
    lead-in states contents (:func:`states_contents`), when the question asks for them."""
    block = list_block(lines, i)
    if block is None or max_chars <= 0:
        return None
    lead, last = block
    if contents_chars and states_contents(lines.line(lead)):
        max_chars = max(max_chars, contents_chars)

    def size_of(ks: Sequence[int]) -> int:
        return sum(len(lines.line(k)) + 1 for k in ks)

    if i == lead:
        chosen = [lead]
        for k in range(lead + 1, last + 1):
            if size_of([*chosen, k]) > max_chars and len(chosen) > 1:
                break
            chosen.append(k)
    else:
        whole = list(range(lead, i + 1))
        top = lines.item(lead + 1)
        # a nested item keeps the item it is under ("5. Anforderungen …" over "a) …")
        parent = next((k for k in range(i, lead, -1) if lines.item(k) == top), i)
        chosen = whole if size_of(whole) <= max_chars else sorted({lead, parent, i})
    return quote(lines, chosen, last)


def quote(lines: Lines, indices: Sequence[int], last: int) -> ListUnit:
    """The unit of the lines ``indices`` (ascending, the lead-in first) of a list whose last item is
    line ``last``: " … " where lines are skipped, " …" at the end when the list goes on."""
    text = _join(lines, indices) + (" …" if indices[-1] < last else "")
    return ListUnit(text, lines.spans[indices[0]].start, lines.spans[indices[-1]].end, frozenset(indices), last)


def trim_inline(
    sentence: str, score: Callable[[list[str]], list[float]], max_chars: int, threshold: float, contents: bool = False
) -> tuple[str, int] | None:
    """A long inline list sentence ("… shall be prohibited: (a) …; (b) …; …", one sentence of
    thousands of characters in EUR-Lex plain text) cut to what answers: its lead-in and the items
    whose reading (:func:`core.text.item_readings`) ``score`` rates highest — the best one, and
    any other at ``threshold`` or above while the quote stays within ``max_chars``. Returns the
    text shown (" … " for skipped items, " …" when the list goes on) and the length of the
    source prefix it quotes; None when ``sentence`` is no inline list, fits in ``max_chars``, or
    every item scores at ``threshold`` or above: then the question asks for the list ("What are
    the principles …?") and it is quoted whole; so it is when ``contents`` (the question asks what
    something must contain) and the lead-in states contents (:func:`states_contents`).

    >>> s = "It shall not support: (a) nuclear power stations; (b) tobacco; (c) fossil fuels; (d) shipyards."
    >>> trim_inline(s, lambda texts: [0.1, 0.2, 0.6, 0.1], 60, 0.3)
    ('It shall not support: … (c) fossil fuels; …', 80)
    >>> trim_inline(s, lambda texts: [0.4, 0.3, 0.6, 0.5], 60, 0.3) is None  # every item answers
    True
    """
    found = inline_list(sentence)
    if found is None or len(sentence) <= max_chars:
        return None
    (lead_start, lead_end), items = found
    if contents and states_contents(sentence[lead_start:lead_end]):
        return None
    scores = score(item_readings(sentence))
    if min(scores) >= threshold:
        return None
    order = sorted(range(len(items)), key=lambda k: (-scores[k], k))
    chosen = [order[0]]
    size = lead_end - lead_start + items[order[0]][1] - items[order[0]][0]
    for k in order[1:]:
        length = items[k][1] - items[k][0]
        if scores[k] < threshold or size + length > max_chars:
            break
        chosen.append(k)
        size += length
    chosen.sort()
    parts = [shown(sentence[lead_start:lead_end])]
    for prev, k in zip([-1, *chosen], chosen):
        if k != prev + 1:
            parts.append("…")
        parts.append(shown(sentence[items[k][0] : items[k][1]]))
    last = chosen[-1]
    return " ".join(parts) + (" …" if last < len(items) - 1 else ""), items[last][1]
