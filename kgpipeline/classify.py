"""Classifier: assign each document one of the three categories that pick its ontology.

Precedence: ``doc.category`` (metadata front matter, or a CLI override set by the caller) →
an LLM, when one is passed → transparent rules. The rules add weights per category:

- title: the *first* document-type word in the title is its head ("Notice on implementing the
  Renewable Energy Act" is a notice) and weighs 3; later type words weigh 1;
- metadata type fields (``rank``, ``type``, ``resource_type``, ``doc_type``) weigh 3;
- structure: Article/§ headings, "entry into force", penalties → legal-regulation; "Terms and
  definitions", "Normative references", "Scope" headings and numbered x.y clauses → standard;
  plan language (targets, "by 2030", "will") → general-policy; dense "shall" adds to both
  prescriptive categories.

Ties and empty evidence fall back to general-policy, the broadest ontology. Pure apart from the
optional LLM call; the LLM's failures are caught and the rules decide.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Protocol

from kgpipeline.records import CATEGORIES, Classification, SourceDocument
from kgpipeline.segment import find_headings

log = logging.getLogger(__name__)

GENERAL, LEGAL, STANDARD = "general-policy", "legal-regulation", "standard"


class JSONCompleter(Protocol):
    """What the classifier needs from an LLM (core.llm's class satisfies it)."""

    def complete_json(self, messages: list[dict], schema: dict) -> object: ...


# (pattern, category) — order does not matter; the earliest match position in the title is the head.
_TYPE_WORDS: tuple[tuple[str, str], ...] = (
    (r"code of practice|technical specifications?|specifications?|standards?|norms?"
     r"|iso(?:/iec)? \d+|en \d{3,}|din \d+|technical requirements|technische regeln?", STANDARD),
    (r"regulations?|directives?|acts?|laws?|codes?|decrees?|ordinances?|statutes?|decisions?"
     r"|rules|measures|bills?|\w*gesetz(?:es|buch)?|\w*verordnung|verordnung|richtlinie", LEGAL),
    (r"notices?|circulars?|guidelines?|guidance|opinions?|plans?|strateg(?:y|ies)|communications?"
     r"|programmes?|programs?|roadmaps?|white papers?|green papers?|polic(?:y|ies)|reports?"
     r"|announcements?|action plans?|agenda|konzept|strategie|plan", GENERAL),
)
_TYPE_RE = [(re.compile(rf"(?<!\w)(?:{p})(?!\w)", re.I), c) for p, c in _TYPE_WORDS]
_META_TYPE_FIELDS = ("rank", "type", "resource_type", "doc_type", "document_type", "genre")

_SHALL = re.compile(r"\b(?:shall|must|muss|müssen)\b", re.I)
_WILL = re.compile(r"\bwill\b", re.I)
_WORD = re.compile(r"\w+")
_PLAN_WORDS = re.compile(r"\b(?:targets?|objectives?|goals?|by 20[2-5]\d|milestones?|action|priorit(?:y|ies))\b", re.I)
_PENALTY = re.compile(r"\b(?:penalt(?:y|ies)|fines?|sanctions?|infringements?|bußgeld\w*|ordnungswidrig\w*)\b", re.I)
_FORCE = re.compile(r"\b(?:enters? into force|entry into force|in kraft)\b", re.I)


def _title_cues(title: str, add) -> None:
    # Longest match first at each position, overlaps dropped ("code of practice" beats "code").
    found = sorted(((m.start(), -len(m.group()), m.group(), c) for rx, c in _TYPE_RE for m in rx.finditer(title)))
    hits, taken_to = [], -1
    for start, neg_len, word, cat in found:
        if start >= taken_to:
            hits.append((start, word, cat))
            taken_to = start - neg_len
    for i, (_, word, cat) in enumerate(hits):
        add(cat, 3.0 if i == 0 else 1.0, f"title {'head ' if i == 0 else ''}{word.lower()!r}")


def rule_scores(doc: SourceDocument) -> tuple[dict[str, float], list[str]]:
    """Per-category scores and the cues that fired (pure)."""
    scores = dict.fromkeys(CATEGORIES, 0.0)
    cues: list[str] = []

    def add(cat: str, weight: float, cue: str) -> None:
        scores[cat] += weight
        cues.append(f"{cue} → {cat} +{weight:g}")

    _title_cues(doc.title, add)
    for field in _META_TYPE_FIELDS:
        value = str(doc.metadata.get(field) or "")
        for rx, cat in _TYPE_RE:
            if value and rx.search(value):
                add(cat, 3.0, f"metadata {field}={value!r}")
                break
    if str(doc.metadata.get("resource_type", "")).upper() in ("REG", "DIR", "DEC"):
        add(LEGAL, 1.0, f"metadata resource_type={doc.metadata['resource_type']!r}")

    headings = find_headings(doc.text)
    articles = sum(h.kind in ("article",) or h.number.lower().startswith(("article", "art.", "§")) for h in headings)
    if articles >= 2:
        add(LEGAL, min(4.0, 1.0 + articles / 5), f"{articles} Article/§ headings")
    texts = [h.text.lower() for h in headings]
    if any("terms and definitions" in t or "begriffe" == t for t in texts):
        add(STANDARD, 3.0, "'Terms and definitions' heading")
    if any("normative references" in t or "normative verweisungen" in t for t in texts):
        add(STANDARD, 3.0, "'Normative references' heading")
    if any(re.fullmatch(r"\d+\.? scope", t) for t in texts):
        add(STANDARD, 1.0, "numbered 'Scope' clause")
    clauses = sum(h.kind in ("numbered", "markdown") and "." in h.number for h in headings)
    if clauses >= 3 and not articles:
        add(STANDARD, 1.5, f"{clauses} numbered x.y clauses")

    sample = doc.text[:60_000]  # densities are stable long before the end of a big document
    words = max(1, len(_WORD.findall(sample)))
    shall = 1000 * len(_SHALL.findall(sample)) / words
    will = 1000 * len(_WILL.findall(sample)) / words
    plan = 1000 * len(_PLAN_WORDS.findall(sample)) / words
    if shall >= 5:
        add(LEGAL, 1.0, f"'shall' density {shall:.1f}/1000 words")
        add(STANDARD, 1.0, f"'shall' density {shall:.1f}/1000 words")
    if plan >= 4:
        add(GENERAL, 1.0 + min(1.0, plan / 10), f"plan language {plan:.1f}/1000 words")
    if will >= 3 and will > shall:
        add(GENERAL, 1.0, f"'will' density {will:.1f} > 'shall' {shall:.1f}")
    if _PENALTY.search(sample):
        add(LEGAL, 1.0, "penalty provisions")
    if _FORCE.search(sample):
        add(LEGAL, 1.5, "entry-into-force clause")
    return scores, cues


def _decide(scores: dict[str, float]) -> str:
    best = max(scores.values())
    if best <= 0:
        return GENERAL
    winners = [c for c in CATEGORIES if scores[c] == best]
    return GENERAL if len(winners) > 1 and GENERAL in winners else winners[0]


_SCHEMA = {
    "type": "object",
    "properties": {"category": {"type": "string", "enum": list(CATEGORIES)}},
    "required": ["category"],
}


def _ask_llm(llm: JSONCompleter, doc: SourceDocument) -> str:
    heads = "\n".join(h.text for h in find_headings(doc.text)[:20])
    messages = [
        {"role": "system", "content": (
            "Classify the policy document. general-policy: notices, guidelines, opinions, plans, "
            "strategies, communications. legal-regulation: laws, acts, regulations, directives, "
            "rules, measures, decisions. standard: technical standards and specifications. "
            "Answer with JSON.")},
        {"role": "user", "content": f"Title: {doc.title}\nHeadings:\n{heads}\n\nText:\n{doc.text[:1500]}"},
    ]
    out: Any = llm.complete_json(messages, _SCHEMA)
    category = out.get("category") if isinstance(out, dict) else None
    if category not in CATEGORIES:
        raise ValueError(f"LLM answered {out!r}")
    return category


def classify(doc: SourceDocument, *, llm: JSONCompleter | None = None) -> Classification:
    """The document's category, the per-category rule scores and the cues that fired."""
    scores, cues = rule_scores(doc)
    if doc.category:
        return Classification(doc.category, scores, (f"metadata category={doc.category!r}", *cues), "metadata")
    if llm is not None:
        try:
            return Classification(_ask_llm(llm, doc), scores, ("llm", *cues), "llm")
        except Exception as exc:  # any model failure: the rules decide
            log.warning("LLM classification of %s failed (%s); using rules", doc.doc_id, exc)
            cues.insert(0, f"llm failed: {type(exc).__name__}")
    return Classification(_decide(scores), scores, tuple(cues), "rules")
