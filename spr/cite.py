"""An LLM reply made into a cited answer: markers to unknown evidence removed, an uncited reply
attributed sentence by sentence, and every sentence checked against the evidence it cites
(:mod:`spr.verify`) — re-cited to a single sentence that supports it, or dropped or marked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.text import sentence_spans
from spr.countries import countries, other_countries
from spr.fuse import FusedContext, sentences
from spr.generate import MARKER, candidates, cited_ids, support_citation
from spr.lexical import lexical_scores
from spr.records import Citation, is_abstention
from spr.references import without_references
from spr.verify import Claim, SupportChecker, claims, coverage, needed_citations

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


def check_claims(
    text: str, evidence: dict[int, str], checker: SupportChecker, policy: str, question: str = ""
) -> tuple[str, tuple[str, ...]]:
    """Each sentence of ``text`` kept with the citations that support it (only those it needs:
    :func:`spr.verify.needed_citations`). A sentence that cites nothing, or whose citations do not
    support it, is cited to other evidence only if one *sentence* of it supports the claim on its
    own (:func:`recite`), else dropped (``policy`` "drop") or kept uncited with
    :data:`UNSUPPORTED_MARK` ("mark"). Returns the new text and the unsupported sentences.

    A sentence about other countries than the ones the question names (:func:`spr.countries.countries`)
    is unsupported whatever it cites: "The Greek government has been committed to shutting down
    lignite-fired plants by 2028 [1]." does not answer when Bulgaria closes its plants. So is one
    naming a country its evidence does not name.

    Two kinds of sentence state nothing to check: a pointer to the evidence ("This is stated in
    [1].", :func:`is_pointer`) goes, and a sentence that opens with "This"/"It"/"They" right after
    an unsupported one goes with it — what it refers to is no longer there ("… if they were
    subject to Article 19a [dropped]. This was until 6 January 2030 [1].")."""
    out: list[tuple[Claim, str]] = []
    dropped: list[str] = []
    previous_dropped = False
    asked = countries(question)
    for claim in claims(text):
        if is_abstention(claim.text):
            out.append((claim, claim.text))
            continue
        if is_pointer(claim.text, question):
            continue
        cited = [c for c in claim.cited if c in evidence]
        supported: list[int] | None = None
        if previous_dropped and _ANAPHOR.match(claim.text):
            pass  # its referent was dropped
        elif asked and other_countries(claim.text, asked):
            pass  # about another country than the question's: Greece's lignite exit for Bulgaria's
        elif cited and _names_its_countries(claim.text, [evidence[c] for c in cited]) and checker.support(
            claim.text, [evidence[c] for c in cited]
        ).supported:
            # a citation the sentence does not need would send the reader to text that does not say it
            supported = needed_citations(claim.text, cited, evidence, checker)
        elif (alternative := recite(claim.text, {
            c: t for c, t in evidence.items() if c not in cited and _names_its_countries(claim.text, [t])
        }, checker)) is not None:
            supported = [alternative]
        previous_dropped = supported is None
        if supported is not None:
            out.append((claim, _with_markers(claim.shown, supported)))
            continue
        dropped.append(claim.shown)
        if policy == "mark":
            out.append((claim, _with_markers(claim.shown, [], UNSUPPORTED_MARK)))
    return join_claims(out), tuple(dropped)


def join_claims(sentences: Sequence[tuple[Claim, str]]) -> str:
    """The checked sentences (each claim with its text as shown, markers included) as one
    answer; a list item, its number first ("2. Respect …"), on a line of its own as the model
    wrote it.

    >>> items = [(Claim("It requires:", ()), "It requires: [1]"), (Claim("Compliance.", (), "1."), "1. Compliance [2]."),
    ...          (Claim("Records.", (), "2."), "2. Records [2]."), (Claim("Done.", ()), "Done [1].")]
    >>> print(join_claims(items))
    It requires: [1]
    1. Compliance [2].
    2. Records [2]. Done [1].
    """
    return "".join(("\n" if i and claim.number else " " if i else "") + shown for i, (claim, shown) in enumerate(sentences))


# A sentence that only says where the answer stands: a demonstrative or "the evidence" as subject,
# a verb of saying, then nothing but places (articles, passages, acts and their names).
_POINTER = re.compile(
    r"^(?:this|that|it|these|those|which|the (?:above |following )?(?:evidence|information|answer|passages?|sources?)"
    r"(?: for (?:this|that|it))?|as)\b(?: (?:is|are|was|were|can be|has been|have been))?(?: (?:also|clearly|explicitly))?"
    r" (?:stated|mentioned|specified|provided|found|given|shown|indicated|described|set out|laid down|explained|"
    r"supported|confirmed|outlined|noted|cited|based)\b",
    re.IGNORECASE,
)
_PLACES = frozenset(
    "in on at by from of and or the a an this that these those above following below see passage passages evidence "
    "information source sources text texts document documents article articles paragraph paragraphs subparagraph "
    "point points annex annexes recital recitals chapter section title act regulation directive decision law "
    "provision provisions context number numbers part parts page pages table tables heading section sections "
    "first second third fourth fifth last same one under within which that is are was cited quoted mentioned "
    "stated given provided referenced".split()
)
_QUOTED = re.compile(r"[\"“”][^\"“”]*[\"“”]|‘[^’]*’")  # a quoted title names a place
# A question asking where something is laid down is answered by a place.
_ASKS_PLACE = re.compile(r"\b(?:where|which (?:article|provision|annex|act|law|regulation|directive|document|part))\b", re.IGNORECASE)
_ANAPHOR = re.compile(r"^(?:this|that|these|those|it|its|they|their|such|he|she)\b", re.IGNORECASE)


def is_pointer(sentence: str, question: str = "") -> bool:
    """Whether ``sentence`` (markers removed) only points at the evidence: a small model writes
    "This is stated in [1]." or "The evidence for this is provided in passages [2] and [3]." after
    its claim. Its word "stated" is found in any text of "Member States", so the support test
    would pass it, and an answer whose claims were all dropped would still show it. Not when the
    question asks where something is laid down: then the place is the answer.

    >>> is_pointer("This is stated in Article 13 of the Cyber Resilience Act.")
    True
    >>> is_pointer("The evidence for this is provided in passages and.")
    True
    >>> is_pointer("This is stated in Article 14 of the Cyber Resilience Act, which is cited in evidence.")
    True
    >>> is_pointer('This is stated in the first passage, under the section "Renewable energy targets".')
    True
    >>> is_pointer("This is stated in Article 58, which sets out how sandboxes work.")
    False
    >>> is_pointer("It is laid down in Article 83.", "Which article sets the fines?")
    False
    """
    match = _POINTER.match(sentence.strip())
    if match is None or _ASKS_PLACE.search(question):
        return False
    rest = _QUOTED.sub(" ", without_references(sentence[match.end() :]))
    return all(word.lower() in _PLACES or word[0].isupper() for word in re.findall(r"[A-Za-z]+", rest))


def _names_its_countries(claim: str, evidence: Sequence[str]) -> bool:
    """Whether ``evidence`` names every country ``claim`` names: a figure from Spain's plan does not
    support "Luxembourg plans to close its last coal-fired power plant by 2021", however many of
    its words and numbers the passage shares."""
    named = countries(claim)
    return not named or named <= countries(" ".join(evidence))


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
