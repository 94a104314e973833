"""An LLM reply made into a cited answer: markers to unknown evidence removed, an uncited reply
attributed sentence by sentence, and every sentence checked against the evidence it cites
(:mod:`spr.verify`) — re-cited to a single sentence that supports it, or dropped or marked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.text import sentence_spans
from spr.fuse import FusedContext, sentences
from spr.generate import MARKER, candidates, cited_ids, support_citation
from spr.lexical import lexical_scores
from spr.records import Citation, is_abstention
from spr.verify import SupportChecker, claims, coverage, needed_citations

UNSUPPORTED_MARK = "[unsupported]"


def evidence_texts(context: FusedContext) -> dict[int, str]:
    """Citation id → everything that id stands for in the context: the pieces given to the model
    (a verbalized fact, a passage) and the full text of the chunk behind it."""
    out: dict[int, list[str]] = {}
    for piece in context.pieces:
        out.setdefault(piece.cid, []).append(piece.text)
    for cid, chunk in context.sources.items():
        if chunk is not None and chunk.text not in out.get(cid, []):
            out.setdefault(cid, []).append(chunk.text)
    return {cid: "\n".join(texts) for cid, texts in out.items()}


RECITE_TRIES = 3  # evidence sentences tried (most shared words first) for a sentence to re-cite


def check_claims(text: str, evidence: dict[int, str], checker: SupportChecker, policy: str) -> tuple[str, tuple[str, ...]]:
    """Each sentence of ``text`` kept with the citations that support it (only those it needs:
    :func:`spr.verify.needed_citations`). A sentence that cites nothing, or whose citations do not
    support it, is cited to other evidence only if one *sentence* of it supports the claim on its
    own (:func:`recite`), else dropped (``policy`` "drop") or kept uncited with
    :data:`UNSUPPORTED_MARK` ("mark"). Returns the new text and the unsupported sentences."""
    out: list[str] = []
    dropped: list[str] = []
    for claim in claims(text):
        if is_abstention(claim.text):
            out.append(claim.text)
            continue
        cited = [c for c in claim.cited if c in evidence]
        if cited and checker.support(claim.text, [evidence[c] for c in cited]).supported:
            # a citation the sentence does not need would send the reader to text that does not say it
            out.append(_with_markers(claim.text, needed_citations(claim.text, cited, evidence, checker)))
            continue
        alternative = recite(claim.text, {c: t for c, t in evidence.items() if c not in cited}, checker)
        if alternative is not None:
            out.append(_with_markers(claim.text, [alternative]))
            continue
        dropped.append(claim.text)
        if policy == "mark":
            out.append(_with_markers(claim.text, [], UNSUPPORTED_MARK))
    return " ".join(out), tuple(dropped)


def recite(claim: str, evidence: dict[int, str], checker: SupportChecker) -> int | None:
    """The id of the evidence with a single sentence that supports ``claim`` by the checker's test,
    trying the :data:`RECITE_TRIES` sentences that share most of its words; None if none does.

    Sentence level, where a cited claim is tested against its whole cited passage: the model did
    not point at this evidence, and a whole article shares words with almost any claim (a
    sentence "… must be approved by the European Parliament" against an act whose last line is
    "For the European Parliament The President")."""
    pool = [(cid, text[a:b]) for cid, text in evidence.items() for a, b in sentence_spans(text)]
    ranked = sorted(pool, key=lambda item: -coverage(claim, item[1]))[:RECITE_TRIES]
    return next((cid for cid, sentence in ranked if checker.support(claim, [sentence]).supported), None)


def _with_markers(sentence: str, ids: Sequence[int], marks: str = "") -> str:
    """``sentence`` with its markers before the closing punctuation: "The fine is EUR 5 [2]."."""
    marks = marks or "".join(f"[{i}]" for i in ids)
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} {marks}{sentence[-1]}"
    return f"{sentence} {marks}"


def attribute(text: str, context: FusedContext, min_support: float) -> str:
    """``text`` with a ``[n]`` after each sentence that some evidence sentence supports: one whose
    words cover at least ``min_support`` of the reply sentence's (weighted) content words."""
    pool = candidates(context)
    if not pool:
        return text
    out = []
    for span in sentences(text):
        scores = lexical_scores(span.text, [c.text for c in pool])
        best = max(range(len(pool)), key=lambda i: (scores[i], -i))
        marker = f" [{pool[best].cid}]" if scores[best] >= min_support else ""
        body = span.text
        if marker and body[-1:] in ".!?":
            body = body[:-1] + marker + body[-1]
        else:
            body += marker
        out.append(body)
    return " ".join(out)


def drop_unknown_markers(text: str, context: FusedContext) -> str:
    """Remove markers that point to no evidence (a small model sometimes invents [7])."""

    def keep(match: re.Match[str]) -> str:
        ids = [p.strip() for p in re.split(r"[,;]", match.group(1))]
        known = [i for i in ids if int(i) in context.sources]
        return f"[{', '.join(known)}]" if known else ""

    return re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", MARKER.sub(keep, text))).strip()


def llm_citations(text: str, ids: Sequence[int], context: FusedContext) -> list[Citation]:
    """For each cited id, quote the source sentence closest to the answer sentences citing it."""
    claims: dict[int, list[str]] = {}
    for span in sentences(text):
        for cid in cited_ids(span.text):
            claims.setdefault(cid, []).append(MARKER.sub("", span.text))
    out = []
    for cid in ids:
        claim = " ".join(claims.get(cid, [text]))
        out.append(support_citation(cid, context.sources.get(cid), claim, context))
    return out
