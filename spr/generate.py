"""Answers from a fused context, and what both answer kinds share.

Extractive (here): the answer is the relevant verbalized facts and the best matching document
sentences, each followed by its citation. Sentences (and facts) are scored against the question by
a :class:`spr.scoring.SentenceScorer`: cosine similarity of sentence embeddings, lexical overlap
(the share of the question's content words, weighted by rarity among the candidates, that a
sentence contains), or the mean of both (the default, ``HybridScorer``). Only candidates at or
above the scorer's threshold count; when none does, the answer is the abstention. Deterministic,
and fast enough to be the default.

LLM: :mod:`spr.llm_answer` (the prompt, the evidence focus, the generator) and :mod:`spr.cite`
(the reply's citations checked against the evidence). Both kinds produce a :class:`Draft`;
:func:`renumber` numbers its citations for the reader.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from core.keywords import question_language
from spr import answerable
from spr.asking import asks_contents
from spr.choices import Choice, choice
from spr.countries import countries, other_countries
from spr.fuse import FusedContext, Span, sentences
from spr.lexical import content_words, lexical_scores
from spr.lists import Lines, ListUnit, is_item, list_unit, quote, shown, trim_inline
from spr.records import ABSTAIN, ChunkRef, Citation
from spr.retrieval.sections import favoured_section
from spr.scoring import SentenceScorer
from spr.values import QUANTITIES


@dataclass(frozen=True)
class Draft:
    """What a generator produced: the text and the citations it uses (ids as in the context)."""

    text: str
    citations: tuple[Citation, ...]
    abstained: bool
    draft: str = ""  # an uncited LLM reply that was withheld
    model: str = ""
    attributed: bool = False  # the LLM cited nothing; citations were matched to its sentences
    unsupported: tuple[str, ...] = ()  # reply sentences no cited evidence supports (dropped or marked)
    confidence: float | None = None  # extractive: the best candidate's score (abstain below the threshold)
    abstain_reason: str = ""  # spr.answerable's reason when its check decided the abstention
    note: str = ""  # how the answer came to be, when not the usual way (the trace shows it)


# --- extractive ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    """A sentence that could go into an extractive answer: from a fact or from a passage."""

    cid: int
    text: str
    source: ChunkRef | None
    span: Span | None  # offsets within ``source.text`` (None for a fact)
    is_fact: bool
    confidence: float | None = None  # a fact's (Evidence.confidence)


def candidates(context: FusedContext) -> list[Candidate]:
    """Every fact, and every sentence of every passage except Markdown heading lines and the
    document's title repeated as its first line ("Scott Howell (political consultant)")."""
    out: list[Candidate] = []
    for piece in context.pieces:
        source = context.sources.get(piece.cid)
        if piece.kind == "triple":
            out.append(Candidate(piece.cid, piece.text, source, None, True, piece.evidence.confidence))
            continue
        title = " ".join(source.title.split()).casefold() if source is not None else ""
        for span in sentences(source.text if source is not None else piece.text):
            if _is_heading(span.text) or (title and " ".join(span.text.split()).casefold().rstrip(".") == title):
                continue  # headings, titles and fragments state nothing
            out.append(Candidate(piece.cid, span.text, source, span, False))
    return out


def check_answerable(question: str, context: FusedContext, pool: Sequence[Candidate] | None = None) -> answerable.Verdict:
    """:func:`spr.answerable.check_context` with ``pool`` (default: every candidate sentence) as the
    sentences an answer may quote, best first."""
    pool = candidates(context) if pool is None else pool
    return answerable.check_context(question, context, [(c.cid, c.text) for c in pool])


@dataclass
class ExtractiveGenerator:
    """Assembles answers from the context; needs no LLM."""

    scorer: SentenceScorer
    max_facts: int  # [answer] max_facts
    max_sentences: int  # [answer] max_sentences
    check: bool = False  # [answer] check_answerable: abstain when the evidence cannot hold the answer
    list_chars: int = 0  # [answer] list_chars: a list's lead-in and items are quoted together (0 = never)
    check_question: str | None = None  # what the check reads instead: the question in the documents' language
    fact_confidence: float | None = None  # [retrieval] facts_min_confidence: facts this sure answer, whatever their wording

    def generate(self, question: str, context: FusedContext) -> Draft:
        pool = candidates(context)
        scores = self.scorer.score(question, [c.text for c in pool])
        if self.fact_confidence is not None:
            # A fact this sure of answers the parsed question, whatever words it shares with it
            # ("Which institutions adopted the GDPR?" → "European Parliament issues Regulation (EU) 2016/679.").
            floor = self.scorer.threshold
            scores = [max(s, floor) if c.is_fact and (c.confidence or 0.0) >= self.fact_confidence else s for s, c in zip(scores, pool, strict=True)]
        ranked = sorted(
            (pair for pair in zip(scores, range(len(pool))) if pair[0] >= self.scorer.threshold),
            key=lambda pair: (-pair[0], pair[1]),
        )
        best = round(max(scores), 4) if scores else None
        if self.check and pool:
            # Every sentence of the passages may state the asked value: one scoring under the
            # threshold often does (a long provision whose other words the question lacks). So
            # the check runs even when no sentence reaches the threshold: a question worded unlike
            # the text ("How long can it take to answer?") is answered by the sentence stating the
            # asked kind of value in a passage on its subject, if there is one (_UNWORDED).
            by_score = sorted(range(len(pool)), key=lambda i: (-scores[i], i))
            verdict = check_answerable(self.check_question or question, context, [pool[i] for i in by_score])
            if not verdict.answerable:
                return Draft(ABSTAIN, (), True, confidence=best, abstain_reason=verdict.reason)
            if verdict.answers and (ranked or _unworded(verdict.asked, self.check_question or question)):
                # the best sentence stating the asked value (in a passage on the subject) goes first;
                # one in a section of the kind the question asks for ("Entry into force") before others
                answers = set(verdict.answers)
                stating = [i for i in by_score if pool[i].text in answers]
                favoured = _section_cids(context)
                typed = next((i for i in stating if pool[i].cid in favoured), stating[0])
                ranked = [(scores[typed], typed)] + [pair for pair in ranked if pair[1] != typed]
            # A sentence about other countries than the question names does not answer it ("How
            # much offshore wind does Sweden's plan aim for?" over Denmark's energy island); when
            # the best one is, the evidence is about something else.
            asked = countries(self.check_question or question)
            if asked and ranked and (others := other_countries(pool[ranked[0][1]].text, asked)):
                reason = "the best sentence is about " + ", ".join(sorted(others))
                return Draft(ABSTAIN, (), True, confidence=best, abstain_reason=reason)
            ranked = [pair for pair in ranked if not (asked and other_countries(pool[pair[1]].text, asked))]
            if found := choice(self.check_question or question):
                # a comparison is answered by each option's best sentence ("Germany or Greece?": both plans' dates)
                picks = _option_picks(found, pool, self.scorer, set(verdict.answers))
                ranked = [(scores[i], i) for i in picks] + [pair for pair in ranked if pair[1] not in picks]
        facts = [pool[i] for _, i in ranked if pool[i].is_fact][: self.max_facts]
        said: set[str] = {" ".join(content_words(c.text)) for c in facts}
        passages: list[Candidate] = []
        contents = asks_contents(self.check_question or question)  # "What must the plan contain?"
        lists = _Lists(self.list_chars, contents)
        for _, i in ranked:
            cand = pool[i]
            norm = " ".join(content_words(cand.text))
            if cand.is_fact or norm in said or lists.said(cand):
                continue
            said.add(norm)
            lists.add(cand, passages)
            if passages[-1] is cand and cand.span is not None and (cut := self._trim(question, cand.text, contents)):
                # a long inline list is quoted by the items that answer, under its lead-in
                text, length = cut
                passages[-1] = replace(cand, text=text, span=Span(cand.span.start, cand.span.start + length, cand.text[:length]))
            if len(passages) >= self.max_sentences:
                break
        chosen = facts + _with_antecedents(passages, pool)
        if not chosen:
            return Draft(ABSTAIN, (), True, confidence=best)
        citations: dict[int, Citation] = {}
        parts = []
        spare = max((c.cid for c in (*pool, *chosen)), default=0) + 1  # ids no passage uses
        for cand in chosen:
            cid = cand.cid
            if cand.span is not None and cand.source is not None:
                # Each quoted sentence cites its own span: a second sentence of the same passage
                # gets a citation of its own, so that every quote a reader sees is the one cited.
                if cid in citations:
                    cid, spare = spare, spare + 1
                citations[cid] = _citation(cid, cand.source, cand.span)
            elif cid not in citations:
                citations[cid] = support_citation(cid, cand.source, cand.text, context)
            parts.append(f"{_sentence(cand.text)} [{cid}]")
        return Draft(" ".join(parts), tuple(citations.values()), False, confidence=best)

    def _trim(self, question: str, sentence: str, contents: bool) -> tuple[str, int] | None:
        if self.list_chars <= 0:
            return None
        return trim_inline(sentence, lambda texts: self.scorer.score(question, texts), self.list_chars, self.scorer.threshold, contents)


# Under the threshold a value-stating sentence answers only a duration or an amount asked in
# English (where the check also reads what the amount is of). "When" takes dates and durations
# alike, too broad without the question's words: "Seit wann gilt das Gesetz?" ("since when") is
# not answered by "within six weeks".
_UNWORDED: frozenset[str] = QUANTITIES | {"duration"}


def _unworded(asked: str | None, question: str) -> bool:
    """Whether a sentence stating ``asked`` may answer ``question`` with no sentence at the threshold."""
    return asked in _UNWORDED and question_language(question) == "en"


# A sentence that opens on a word pointing back ("This period shall not exceed five years.", "Such
# information shall include: …") says what it is about in the sentence before it. Not the act
# itself: "This Regulation shall apply from …" is read under the document's title.
_POINTS_BACK = re.compile(
    r"^(?:(?:this|that|these|those|such)\s+(?!(?:regulation|directive|decision|act|article|annex|chapter|section)\b)\w|it\s+shall\b)",
    re.IGNORECASE,
)


def _with_antecedents(passages: Sequence[Candidate], pool: Sequence[Candidate]) -> list[Candidate]:
    """``passages`` with the sentence before each one that points back (:data:`_POINTS_BACK`), from
    the same passage, put before it when the answer does not quote it already."""
    out: list[Candidate] = []
    quoted = [(c.cid, c.span) for c in passages if c.span is not None]  # a list's quote spans its items
    for cand in passages:
        if cand.span is not None and _POINTS_BACK.match(cand.text.strip()):
            start = cand.span.start
            before = [c for c in pool if c.cid == cand.cid and c.span is not None and not c.is_fact and c.span.end <= start]
            prior = max(before, key=lambda c: c.span.start if c.span is not None else -1, default=None)
            if prior is not None and prior.span is not None and not any(
                cid == prior.cid and span.start <= prior.span.start < span.end for cid, span in quoted
            ):
                quoted.append((prior.cid, prior.span))
                out.append(prior)
        out.append(cand)
    return out


def _option_picks(found: Choice, pool: Sequence[Candidate], scorer: SentenceScorer, stating: set[str]) -> list[int]:
    """For each option of a choice question, in order, its best sentence: scored against the
    question about that option alone (:meth:`spr.choices.Choice.asking`), at or above the
    scorer's threshold, in a passage that names the option (its names, in the sentence, the
    document title or the heading path); a sentence stating the asked value first when one does."""
    picks: list[int] = []
    for i, option in enumerate(found.options):
        scores = scorer.score(found.asking(i), [c.text for c in pool])
        eligible = [j for j in range(len(pool)) if scores[j] >= scorer.threshold and j not in picks and answerable.names_option(option, _read(pool[j]))]
        if not eligible:
            continue
        preferred = [j for j in eligible if pool[j].text in stating] or eligible
        picks.append(max(preferred, key=lambda j: (scores[j], -j)))
    return picks


def _read(cand: Candidate) -> list[str]:
    """A candidate sentence with what it stands under: its document title and heading path."""
    return [cand.text] + ([cand.source.title, cand.source.heading_path] if cand.source is not None else [])


def _section_cids(context: FusedContext) -> set[int]:
    """Citation ids of the passages the ``sections`` signal ranked among its first (a section of
    the kind the question asks for: :func:`spr.retrieval.sections.favoured_section`)."""
    return {p.cid for p in context.pieces if p.kind == "chunk" and favoured_section(p.evidence.ranks)}


_CONTENTS_LISTS = 4  # a list of contents may be this many times [answer] list_chars


class _Lists:
    """An extractive answer's sentences that belong to a list (:mod:`spr.lists`), quoted with it:
    a lead-in with its items, an item under its lead-in. A second item of a list already quoted
    joins that quote instead of repeating the lead-in."""

    def __init__(self, max_chars: int, contents: bool = False) -> None:
        self.max_chars = max_chars
        # a question about contents gets a list that states them whole, up to this many characters
        self.contents_chars = max_chars * _CONTENTS_LISTS if contents else 0
        self.lines: dict[int, Lines] = {}  # citation id → its passage's lines
        self.quoted: dict[tuple[int, int], tuple[int, ListUnit]] = {}  # (cid, lead-in) → (place in the answer, quote)

    def _index(self, cand: Candidate) -> int | None:
        if self.max_chars <= 0 or cand.source is None or cand.span is None:
            return None
        if cand.cid not in self.lines:
            self.lines[cand.cid] = Lines.of(cand.source.text)
        return self.lines[cand.cid].at(cand.span.start)

    def said(self, cand: Candidate) -> bool:
        k = self._index(cand)
        return k is not None and any(cid == cand.cid and k in unit.covered for (cid, _), (_, unit) in self.quoted.items())

    def add(self, cand: Candidate, passages: list[Candidate]) -> None:
        """Append ``cand`` to ``passages`` (as its list's quote when it is in one), or widen the quote
        of its list that is there already."""
        k = self._index(cand)
        unit = None if k is None else list_unit(self.lines[cand.cid], k, self.max_chars, self.contents_chars)
        if unit is None or cand.source is None:
            passages.append(cand)
            return
        lead = min(unit.covered)
        key = (cand.cid, lead)
        if key in self.quoted:
            place, before = self.quoted[key]
            unit = quote(self.lines[cand.cid], sorted(before.covered | {k}), unit.last)
        else:
            place = len(passages)
            passages.append(cand)
        self.quoted[key] = (place, unit)
        span = Span(unit.start, unit.end, cand.source.text[unit.start : unit.end])
        passages[place] = replace(cand, text=unit.text, span=span)


def _is_heading(text: str) -> bool:
    """A Markdown heading, or a short line without closing punctuation ("2 Goals", "Article 5") that
    is no list item ("a) an die Frequenzhaltung," is one)."""
    if text.startswith("#"):
        return True
    return not text.rstrip().endswith((".", "!", "?", ":", ";", ",", ")")) and len(text.split()) < 8 and not is_item(text)


def _sentence(text: str) -> str:
    """A quoted sentence as the answer shows it (:func:`spr.lists.shown`: no source markup such as
    footnote references, bold marks or bullets), ending in punctuation. Its citation keeps the
    exact source text."""
    text = shown(text)
    if text.endswith(","):
        return text[:-1] + " …"  # a list item or wrapped line the source goes on after
    return text if text.endswith((".", "!", "?", ":", ";", "…")) else text + "."


def _citation(cid: int, chunk: ChunkRef, span: Span) -> Citation:
    return Citation(cid, chunk.iri, chunk.document, chunk.title, chunk.start + span.start, chunk.start + span.end, span.text)


def support_citation(cid: int, chunk: ChunkRef | None, claim: str, context: FusedContext) -> Citation:
    """Cite ``chunk`` with its sentence that shares the most words with ``claim`` (the quote a
    reader checks). A source without text (a fact from a plain RDF file) cites its graph alone."""
    if chunk is None:
        return Citation(cid, "", "", "", 0, 0, "")
    spans = [s for s in sentences(chunk.text) if not s.text.startswith("#")] or sentences(chunk.text)
    if not spans:
        return Citation(cid, chunk.iri, chunk.document, chunk.title, chunk.start, chunk.end, chunk.text)
    scores = lexical_scores(claim, [s.text for s in spans])
    best = max(range(len(spans)), key=lambda i: (scores[i], -i))
    return _citation(cid, chunk, spans[best])


# --- citation markers (both kinds) ---------------------------------------------------------------
MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")


def cited_ids(text: str) -> list[int]:
    """Citation ids in order of first use: "[1]", "[2, 3]" and "[2][3]" are all understood."""
    ids: list[int] = []
    for match in MARKER.finditer(text):
        for part in re.split(r"[,;]", match.group(1)):
            ids.append(int(part))
    return list(dict.fromkeys(ids))


def renumber(draft: Draft) -> Draft:
    """Citations numbered 1, 2, ... in order of first use in the text (context ids have gaps when
    some evidence goes unused); markers and citation ids change together."""
    order = {old: new for new, old in enumerate(cited_ids(draft.text), 1)}
    if all(old == new for old, new in order.items()):
        return draft

    def swap(match: re.Match[str]) -> str:
        ids = [int(p) for p in re.split(r"[,;]", match.group(1))]
        return "[" + ", ".join(str(order.get(i, i)) for i in ids) + "]"

    citations = sorted((replace(c, id=order[c.id]) for c in draft.citations if c.id in order), key=lambda c: c.id)
    return replace(draft, text=MARKER.sub(swap, draft.text), citations=tuple(citations))
