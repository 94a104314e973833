"""Citation recall and precision of an answer (ALCE), read from the final :class:`spr.records.Answer`.

ALCE (Gao et al. 2023, "Enabling Large Language Models to Generate Text with Citations") scores
each sentence (claim) of an answer against the passages it cites:

- **citation recall** = |claims supported by the union of what they cite| / |claims| (a claim that
  cites nothing, or only ids with no evidence behind them, is unsupported);
- **citation precision** = |needed citations| / |citations|: a citation is needed when it supports
  its claim alone, or when the claim's other citations do not support it without this one while
  all of them do. A marker to an id with no evidence behind it is never needed. An answer with
  claims but no citation at all scores 0, as in ALCE's code.

"Supported" is decided by a :class:`spr.verify.SupportChecker` (word coverage, cosine, every
number present: ``[answer] min_support``) in place of ALCE's NLI model, or, under ``--judge``,
by the judge model (:class:`spr.eval.judge.LLMSupport`). The arithmetic is
:func:`spr.verify.citation_scores`; this module builds its inputs from an answer:

- the text behind each citation id (:func:`cited_evidence`): the title and text of the chunk the
  citation points at (``Citation.chunk``, looked up among ``Answer.evidence``; the generator shows
  each passage under its title, and the check in the product reads it too) plus the verbalized facts
  retrieved from that chunk (the generator showed both under that number), else the citation's
  quote;
- the claims: the answer's sentences (:func:`spr.verify.claims`), with a marker written after the
  sentence's full stop ("... 2030. [1]", as extractive answers and many LLM replies write it)
  given to that sentence, not to the next one.

An abstention (``Answer.abstained``, or a text that :func:`spr.records.is_abstention` calls one,
the rule the abstention metrics use too), or an answer without claims, is not scored (None).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from spr.records import Answer, is_abstention
from spr.verify import SupportChecker, citation_scores

# "[1]", "[2, 3]", "[2;3]" and the generator's "[unsupported]" mark, with the blanks before them
_MARKERS = re.compile(r"\s*\[(?:\d{1,3}(?:\s*[,;]\s*\d{1,3})*|unsupported)\]")
_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


def plain_text(text: str) -> str:
    """The answer without its citation markers and ``[unsupported]`` marks: what EM/F1 and the
    judge's faithfulness read.

    >>> plain_text("Fines reach 4 % [2]. They apply yearly. [1][3] Members report [1, 2].")
    'Fines reach 4 %. They apply yearly. Members report.'
    """
    return " ".join(_BEFORE_PUNCT.sub(r"\1", _MARKERS.sub("", text)).split())


def cited_evidence(answer: Answer) -> dict[int, str]:
    """Citation id → the text behind it: the cited chunk's title and text and the facts retrieved from that
    chunk (``Answer.evidence``), else the citation's quote. An id whose source has no text (a fact
    of a plain RDF file) is left out: its markers then cite no evidence."""
    by_chunk: dict[str, list[str]] = {}
    for e in answer.evidence:
        if e.chunk is None:
            continue
        # the title too: the model and the reader see each passage under it ("NIS2 Directive Article 23")
        texts = by_chunk.setdefault(e.chunk.iri, [e.chunk.title, e.chunk.text] if e.chunk.title else [e.chunk.text])
        if e.text and e.text not in texts:
            texts.append(e.text)
    out: dict[int, str] = {}
    for c in answer.citations:
        found = by_chunk.get(c.chunk) if c.chunk else None
        text = "\n".join(found) if found else c.quote
        if text.strip() and c.id not in out:
            out[c.id] = text
    return out


def citation_metrics(answer: Answer, checker: SupportChecker, *, abstained: bool | None = None, suffix: str = "") -> dict[str, float | None]:
    """``citation_recall<suffix>`` and ``citation_precision<suffix>`` of ``answer``, with
    ``checker`` deciding support; both None for an abstention (``abstained``, default
    ``answer.abstained``; an abstention text counts too) or an answer without claims."""
    gave_up = answer.abstained if abstained is None else abstained
    return citation_values(answer.text, cited_evidence(answer), checker, gave_up, suffix)


def citation_values(text: str, evidence: Mapping[int, str], checker: SupportChecker, abstained: bool = False, suffix: str = "") -> dict[str, float | None]:
    """:func:`citation_metrics` given the answer text and the text behind each citation id."""
    recall, precision = f"citation_recall{suffix}", f"citation_precision{suffix}"
    if abstained or is_abstention(text):
        return {recall: None, precision: None}
    # claims() gives a marker after the full stop to its sentence and drops [unsupported] marks
    s = citation_scores(text, evidence, checker)
    if not s.claims:
        return {recall: None, precision: None}
    return {recall: s.recall, precision: s.precision if s.citations else 0.0}
