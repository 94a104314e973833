"""Does the cited evidence support each sentence of an answer? Checked without a judge model.

An answer is split into *claims*: its sentences, each with the ``[n]`` markers it carries. A claim
is supported by a set of evidence texts when

- every number it states appears in that evidence (a changed figure is the typical invention of a
  small model, and word overlap alone would not see it), and
- the mean of two scores reaches the threshold: *coverage*, the share of the claim's content words
  (:func:`spr.lexical.content_words`) found in the evidence, and *similarity*, the best cosine of
  the claim with one evidence sentence (paraphrases that share few words).

On top of that check sit the ALCE citation measures (Gao et al. 2023, "Enabling Large Language
Models to Generate Text with Citations"), with this check standing in for their NLI model:
citation recall (is a claim supported by the union of what it cites) and citation precision (is
each citation needed: it supports the claim alone, or the others do not without it).

    >>> [ (c.text, c.cited) for c in claims("Fines reach 4 % [2]. Member States report yearly [1][3].") ]
    [('Fines reach 4 %.', (2,)), ('Member States report yearly.', (1, 3))]
    >>> sorted(numbers("EUR 20 000 000 or 4 % by 31 December 2025"))
    ['20000000', '2025', '31', '4']
    >>> unmatched_numbers("Fines reach EUR 20 million or 4 %.", "up to 20 000 000 EUR, or up to 4 %")
    set()
    >>> sorted(unmatched_numbers("Fines reach EUR 30 million.", "up to 20 000 000 EUR"))
    ['30', '30000000']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.text import sentence_spans
from spr.lexical import content_words
from spr.lists import is_enumerator
from spr.references import without_references

if TYPE_CHECKING:
    from core.embed import Embedder

_MARKER = re.compile(r"\s*\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")
# A number as people write it: "20 000 000", "20,000,000", "1.5", "2030"; group separators go.
_NUMBER = re.compile(r"\d+(?:[ \u00a0\u202f,.]\d+)*")
_GROUPED = re.compile(r"^\d{1,3}(?:([ \u00a0\u202f,])\d{3})+$")
_SCALED = re.compile(r"(\d+(?:[.,]\d+)?)\s*(thousand|million|billion|mio\.?|bn)\b", re.IGNORECASE)
_SCALE = {"thousand": 10**3, "million": 10**6, "mio": 10**6, "mio.": 10**6, "billion": 10**9, "bn": 10**9}
MAX_SENTENCES = 8  # evidence sentences embedded per check: the ones sharing most words


@dataclass(frozen=True)
class Claim:
    """One answer sentence without its markers, and the citation ids it carries (in order)."""

    text: str
    cited: tuple[int, ...]
    number: str = ""  # a list item's number ("2.", "(b)"): shown before the item, not a claim of it

    @property
    def shown(self) -> str:
        """The claim as the answer shows it: its item number first."""
        return f"{self.number} {self.text}" if self.number else self.text


@dataclass(frozen=True)
class Support:
    """How well some evidence supports a claim. ``coverage`` in [0, 1]; ``similarity`` the best
    cosine with one evidence sentence, in [-1, 1] (0 without an embedder); ``score`` the mean of
    coverage and the non-negative similarity; ``supported``: numbers found and score ≥ threshold."""

    coverage: float
    similarity: float
    numbers_found: bool
    score: float
    supported: bool


# Markers (and the unsupported mark) written after the full stop belong to the sentence before it:
# "A. [1] B." is "A [1]. B."; moved back first, so the sentence splitter cannot hand them on. The
# splitter also ends a unit at ";" (the items of a legal list, which extractive answers quote).
_TRAILING = re.compile(r"([.!?;])((?:\s*\[(?:\d{1,3}(?:\s*[,;]\s*\d{1,3})*|unsupported)\])+)")


def attach_markers(text: str) -> str:
    """Markers (and ``[unsupported]``) written after a sentence's end moved before it.

    >>> attach_markers("They give EUR 800 million. [2] It runs to 2030. [1][3]")
    'They give EUR 800 million [2]. It runs to 2030 [1][3].'
    >>> attach_markers("(a) within 24 hours, an early warning; [1] Member States shall ensure it. [2]")
    '(a) within 24 hours, an early warning [1]; Member States shall ensure it [2].'
    """
    return _TRAILING.sub(lambda m: f"{m.group(2)}{m.group(1)}", text)


# A list item's number (:func:`spr.lists.is_enumerator`): the sentence splitter ends a sentence
# after "1." before a capital, so a reply's numbered list came apart into claims "1.", "Compliance
# with …", "2.", … And "… are: 1." or "… the last item\n3.": the sentence before took the next
# item's number, its last word after a colon or a line break.
_LAST_WORD = re.compile(r"(?::[ \t]*|[ \t]*\n\s*)(\S+)\s*$")


def claims(text: str) -> list[Claim]:
    """The sentences of an answer with their citation markers taken out. A list item's number
    stays with its item, not a claim of its own (nor the end of the lead-in before it).

    >>> [(c.text, c.cited) for c in claims("Fines apply. [1] Reports are yearly. [2][3] Done.")]
    [('Fines apply.', (1,)), ('Reports are yearly.', (2, 3)), ('Done.', ())]
    >>> [(c.number, c.text) for c in claims("It requires: 1. Compliance [1]. 2. Records [2].")]
    [('', 'It requires:'), ('1.', 'Compliance.'), ('2.', 'Records.')]
    >>> [(c.number, c.text) for c in claims("It requires:\\n1. Compliance with the rules of the Regulation\\n2. Records [1].")]
    [('', 'It requires:'), ('1.', 'Compliance with the rules of the Regulation'), ('2.', 'Records.')]
    >>> [(c.number, c.text, c.cited) for c in claims("The panel has members: 27. [1]")]
    [('', 'The panel has members: 27.', (1,))]
    """
    text = attach_markers(text)
    out: list[Claim] = []
    number, carried = "", []  # a list item's number (and any markers written after it), waiting for its item
    for a, b in sentence_spans(text):
        sentence = text[a:b]
        cited = [int(p) for m in _MARKER.finditer(sentence) for p in re.split(r"[,;]", m.group(1))]
        raw = _MARKER.sub("", sentence).replace("[unsupported]", "")
        if is_enumerator(_normalized(raw)):
            number, carried = _normalized(raw), cited
            continue
        own, number, cited, carried = number, "", carried + cited, []
        if (ending := _LAST_WORD.search(raw)) and is_enumerator(ending.group(1)):
            raw, number = raw[: ending.start()] + (":" if ending.group(0).startswith(":") else ""), ending.group(1)
        if body := _normalized(raw):
            out.append(Claim(body, tuple(dict.fromkeys(cited)), own))
    if number and out:  # no item followed: the number was the last claim's own ("The panel has members: 27.")
        out[-1] = Claim(f"{out[-1].text} {number}", out[-1].cited + tuple(c for c in carried if c not in out[-1].cited), out[-1].number)
    return out


def _normalized(text: str) -> str:
    """``text`` on one line, single-spaced, no blank before punctuation."""
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split()))


def numbers(text: str) -> set[str]:
    """The numbers in ``text``, thousands separators removed ("20 000 000" → "20000000"); a
    decimal point stays ("1.5"); "20 million" also gives "20000000"."""
    found = set()
    for match in _SCALED.finditer(text):  # "EUR 20 million" states 20000000 as well as 20
        value = float(match.group(1).replace(",", ".")) * _SCALE[match.group(2).lower()]
        found.add(str(round(value)))
    for match in _NUMBER.finditer(text):
        token = match.group(0)
        if _GROUPED.match(token):
            found.add(re.sub(r"[ \u00a0\u202f,]", "", token))
            continue
        for part in re.split(r"[ \u00a0\u202f]|,(?!\d{3}\b)", token):
            if part:
                found.add(part.replace(",", ""))
    return found


_DOTTED = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{3})+(?![\d.])")  # "6.000", "10.000.000": German thousands, or a decimal
_DECADE = re.compile(r"(?<![\d.,])['’]?(\d0)['’]?s\b")  # "70's", "'70s", "80s": a decade, its century unsaid


def unmatched_numbers(claim: str, evidence: str) -> set[str]:
    """The claim's numbers that the evidence does not state in any form ("20 million" is
    matched by "20 000 000"; the 20 of "20 million" then needs no match of its own). "6.000" is
    six thousand in German and six in English: either reading matches.

    >>> unmatched_numbers("zwischen 6.000 und 10.000 Kilowattstunden", "mehr als 6 000 und höchstens 10 000 Kilowattstunden")
    set()
    >>> unmatched_numbers("between 6 000 and 10 000 kWh", "zwischen 6.000 und 10.000 kWh"), unmatched_numbers("6.5 %", "6 500")
    (set(), {'6.5'})
    >>> unmatched_numbers("Who was popular in the 70's?", "a bestseller of the 1970s"), unmatched_numbers("in the 70s", "70 years")
    (set(), set())
    >>> unmatched_numbers("the 80s", "in 1970")
    {'80'}
    """
    stated = numbers(evidence) | {dotted.replace(".", "") for dotted in _DOTTED.findall(evidence)}
    missing = numbers(claim) - stated
    for match in _DOTTED.finditer(claim):
        if match.group(0).replace(".", "") in stated:
            missing.discard(match.group(0))
    for match in _SCALED.finditer(claim):
        value = str(round(float(match.group(1).replace(",", ".")) * _SCALE[match.group(2).lower()]))
        if value in stated:
            missing -= {match.group(1).replace(",", "."), match.group(1), value}
    for match in _DECADE.finditer(claim):  # "the 70's" is the decade "1970s" states
        if stated & {f"19{match.group(1)}", f"20{match.group(1)}"}:
            missing.discard(match.group(1))
    return missing


def figures_found(claim: str, evidence: str) -> bool:
    """Whether ``evidence`` states every number of ``claim`` (:func:`unmatched_numbers`), and a
    number the claim states as a value as a value too, not only inside a reference: "The AI Office
    takes 2." is not backed by "Article 2" (:func:`spr.references.without_references`).

    >>> figures_found("The AI Office takes 2.", "Under Article 2, the AI Office shall take measures.")
    False
    >>> figures_found("Article 2 lets the AI Office act within 2 months.", "Under Article 2, it acts within two months or 2 months.")
    True
    """
    return not unmatched_numbers(claim, evidence) and not unmatched_numbers(without_references(claim), without_references(evidence))


def coverage(claim: str, evidence: str) -> float:
    """Share of the claim's distinct content words that the evidence contains; 1.0 for a claim
    without content words ("Yes.")."""
    words = set(content_words(claim))
    if not words:
        return 1.0
    return len(words & set(content_words(evidence))) / len(words)


@dataclass
class SupportChecker:
    """The support test above. ``embedder`` None = coverage and numbers only (then the score is
    coverage alone). ``threshold``: least score for support ([answer] min_support)."""

    embedder: Embedder | None
    threshold: float

    def support(self, claim: str, evidence: Sequence[str]) -> Support:
        joined = "\n".join(evidence)
        if not joined.strip():
            return Support(0.0, 0.0, False, 0.0, False)
        cov = coverage(claim, joined)
        found = figures_found(claim, joined)
        sim = self._similarity(claim, evidence) if self.embedder is not None else None
        score = cov if sim is None else (cov + max(sim, 0.0)) / 2
        return Support(cov, sim or 0.0, found, score, found and score >= self.threshold)

    def _similarity(self, claim: str, evidence: Sequence[str]) -> float:
        pool = [text[a:b] for text in evidence for a, b in sentence_spans(text)]
        if not pool:
            return 0.0
        if len(pool) > MAX_SENTENCES:  # embed only the sentences most likely to match
            words = set(content_words(claim))
            pool = sorted(pool, key=lambda s: -len(words & set(content_words(s))))[:MAX_SENTENCES]
        vectors = np.asarray(self.embedder.embed_many([claim, *pool]))  # type: ignore[union-attr]
        return float(np.max(vectors[1:] @ vectors[0]))


# --- ALCE citation measures ------------------------------------------------------------------------
@dataclass(frozen=True)
class CitationScores:
    """Citation recall: share of claims that cite something and are supported by what they cite.
    Citation precision: share of citations (claim, id) that are needed. None without claims or
    citations, respectively."""

    recall: float | None
    precision: float | None
    claims: int
    citations: int


def needed_citations(claim: str, cited: Sequence[int], evidence: Mapping[int, str], checker: SupportChecker) -> list[int]:
    """The citations of a supported ``claim`` that it needs, in their order: those that support it
    alone; if none does, a smallest-first-found set that supports it together, every one of which
    the others cannot do without (so each is needed by :func:`citation_scores`' rule). A model
    citing "[1][2]" where only [2] states the fact keeps "[2]"."""
    if len(cited) < 2:
        return list(cited)
    alone = [c for c in cited if checker.support(claim, [evidence[c]]).supported]
    if alone:
        return alone
    keep = list(cited)
    for c in cited:
        rest = [o for o in keep if o != c]
        if rest and checker.support(claim, [evidence[o] for o in rest]).supported:
            keep = rest
    return keep


def citation_scores(answer: str, evidence: Mapping[int, str], checker: SupportChecker) -> CitationScores:
    """ALCE citation recall and precision of ``answer`` given the text behind each citation id.

    A citation is needed when it supports its claim alone, or when the claim's other citations
    do not support it without this one while all of them do."""
    parts = claims(answer)
    if not parts:
        return CitationScores(None, None, 0, 0)
    supported = 0
    needed = total = 0
    for claim in parts:
        cited = [c for c in claim.cited if c in evidence]
        total += len(claim.cited)  # a marker pointing at no evidence counts, and is never needed
        if not cited:
            continue
        whole = checker.support(claim.text, [evidence[c] for c in cited]).supported
        supported += whole
        for c in cited:
            if checker.support(claim.text, [evidence[c]]).supported:
                needed += 1
            elif whole and len(cited) > 1:
                rest = [evidence[o] for o in cited if o != c]
                needed += not checker.support(claim.text, rest).supported
    return CitationScores(supported / len(parts), needed / total if total else None, len(parts), total)
