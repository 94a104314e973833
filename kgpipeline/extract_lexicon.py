"""The default extractor: deterministic, offline, driven by the category ontology's lexicon.

Mentions come from these patterns, each typed from the ontology (:mod:`kgpipeline.lexicon`):
capitalized noun phrases typed by their head noun ("National Solar Plan 2025-2030" → Plan,
"Energy Bureau of Westmark Province" → Agency; an untyped head is no entity), lowercase noun
phrases with a determiner for the category's own classes ("the fine" → Penalty), references to
the document itself ("this Notice", "the Plan" in a plan), places ("city of Aldby", EU member
states), dates (Date, or Deadline after "by"/"no later than"/... with ``pkb:dateValue`` when day
and month are known), amounts of money (Funds) and quantities with units (Target after a target
cue, else Indicator, where the category has them, with ``pkb:targetValue``), and acronyms the
document defines after a typed name ("Just Transition Fund (JTF)" → a later "JTF" is the same
Funds). Overlaps keep the earlier, then the longer span.

Relations: a property's trigger (its altLabels, inflected) links the nearest mention before it
that fits the domain to the nearest one after it that fits the range, within one sentence;
"X is issued by Y" (participle + "by") swaps the roles; one-word triggers ("of", "in", "by") only
link adjacent mentions. Nothing is emitted whose types do not fit (subclasses count).

Canonical names and scopes (what identifies an entity together with its class):

* ``canonical`` is :func:`kgpipeline.lexicon.normalize_name` of the name (casefolded, articles
  dropped, "centre" → "center").
* Actors: a jurisdiction written in the name moves to ``scope`` — "Energy Bureau of Westmark
  Province", "Westmark Provincial Energy Bureau" and "Westmark Province Energy Bureau" all give
  canonical "energy bureau", scope "westmark province"; "National X"/"Federal X" give scope
  "national", "European X" scope "european union", "Provincial X" the document's jurisdiction
  when that is a province. An actor named without a jurisdiction ("the Energy Bureau") takes
  the document's jurisdiction: the first place (or "National") found in the title, else in the
  metadata (jurisdiction, spatial, coverage, country, issuer, publisher, ...); "" when none.
  A leading bare place name equal to the document's ("Westmark Energy Bureau" in a Westmark
  document) counts as that jurisdiction.
* A reference to the document itself takes the document's name (from its title) as canonical.
* Generic mentions (lowercase nouns, a bare head like "the Fund", amounts, quantities) are local
  to their document: scope ``doc:<doc_id>``. Places, dates and other names have scope "".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date

from kgpipeline.extraction import Attribute, ChunkExtraction, Mention, Relation
from kgpipeline.lexicon import (
    ADMIN_UNITS, EU_CANONICAL, EU_MEMBER_STATES, EU_NAMES, LEVEL_ADJECTIVES, NATIONAL,
    CategoryLexicon, Trigger, build_lexicon, normalize_name, singular, trie_pattern,
)  # fmt: skip
from kgpipeline.ontology import OntologySet
from kgpipeline.records import Chunk, SourceDocument

__all__ = ["DocContext", "LexiconExtractor", "attributes_for", "canonical_and_scope", "doc_context", "mention_from_span",
           "sentences"]  # fmt: skip

_META_KEYS = ("jurisdiction", "spatial", "coverage", "country", "region", "issuer", "publisher",
              "department", "author", "authority")  # fmt: skip


@dataclass(frozen=True)
class DocContext:
    """What the document says about itself: its jurisdiction, and its own name and class for
    self-references ("this Plan")."""

    doc_id: str
    jurisdiction: str
    self_canonical: str
    self_class: str | None
    self_head: str  # singular head noun of the title's name ("plan")
    aliases: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)  # "JTF" → (class, canonical, scope)
    alias_re: re.Pattern[str] | None = None


class LexiconExtractor:
    """Ontology-lexicon extractor (see the module docstring). Lexicons are compiled once per
    category on first use; document contexts are cached per document."""

    name = "lexicon"

    def __init__(self, ontology: OntologySet):
        self.ontology = ontology
        self._lexicons: dict[str, CategoryLexicon] = {}
        self._contexts: dict[tuple[str, str, str], DocContext] = {}

    def lexicon(self, category: str) -> CategoryLexicon:
        if category not in self._lexicons:
            self._lexicons[category] = build_lexicon(self.ontology, category)
        return self._lexicons[category]

    def context(self, document: SourceDocument, category: str) -> DocContext:
        key = (document.doc_id, document.content_hash or str(len(document.text)), category)
        if key not in self._contexts:
            if len(self._contexts) > 4096:  # bounded: documents arrive one after another
                self._contexts.clear()
            self._contexts[key] = doc_context(document, self.lexicon(category))
        return self._contexts[key]

    def extract(self, chunk: Chunk, document: SourceDocument, category: str) -> ChunkExtraction:
        lex = self.lexicon(category)
        ctx = self.context(document, category)
        text = chunk.text
        mentions = [_mention(text, c, lex, ctx) for c in find_spans(text, lex, ctx)]
        spans = sentences(text)
        relations = sorted(_relations(text, mentions, spans, lex), key=_relation_key)
        # One relation per (subject, property, object); the first cue in sorted order stays.
        relations = list({(r.subject.start, r.property_iri, r.object.start): r for r in reversed(relations)}.values())[::-1]
        attributes = attributes_for(mentions, spans, lex)
        return ChunkExtraction(chunk.chunk_id, tuple(mentions), tuple(relations), tuple(attributes))


def doc_context(document: SourceDocument, lex: CategoryLexicon) -> DocContext:
    """The jurisdiction and self-name of a document, from its title and metadata."""
    meta = document.metadata or {}
    sources = [document.title or str(meta.get("title", ""))]
    sources += [v for k in _META_KEYS for v in _strings(meta.get(k))]
    jurisdiction = next((j for s in sources if (j := jurisdiction_in(s, lex))), "")
    title = sources[0]
    own = next((c for c in find_spans(title, lex) if c.class_iri in lex.titled_classes and not c.generic), None)
    if own is None:
        ctx = DocContext(document.doc_id, jurisdiction, normalize_name(title), None, "")
    else:
        ctx = DocContext(document.doc_id, jurisdiction, canonical_and_scope(title[own.start : own.end], own.class_iri, lex,
                         DocContext(document.doc_id, "", "", None, ""))[0], own.class_iri, own.head)  # fmt: skip
    aliases = _aliases(document.text, lex, ctx)
    if not aliases:
        return ctx
    return replace(ctx, aliases=aliases, alias_re=re.compile(r"\b(?:" + trie_pattern(sorted(aliases)) + r")\b"))


def _aliases(text: str, lex: CategoryLexicon, ctx: DocContext) -> dict[str, tuple[str, str, str]]:
    """Acronyms the document defines after a typed name ("Just Transition Fund (JTF)"), so that
    a later bare "JTF" is the same entity. The first definition of an acronym wins."""
    out: dict[str, tuple[str, str, str]] = {}
    for m in _ACRONYM_DEF.finditer(text):
        acronym = m.group(1)
        if acronym in out:
            continue
        window = text[max(0, m.start() - 150) : m.end()]
        named = [c for c in _named(window, lex) if c.end == len(window) and not c.generic]
        if named:
            name = window[named[-1].start : named[-1].end]
            out[acronym] = (named[-1].class_iri, *canonical_and_scope(name, named[-1].class_iri, lex, ctx))
    return out


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def jurisdiction_in(text: str, lex: CategoryLexicon) -> str:
    """The first place named in ``text`` (canonical), else "national"/"european union" for a
    "National ..."/"European ..." name, else ""."""
    places = sorted(_places(text, lex), key=lambda c: (c.start, -c.end))
    if places:
        return geo_canonical(text[places[0].start : places[0].end], lex)
    for word in re.findall(r"\b[A-Z][a-z]+\b", text):
        level = LEVEL_ADJECTIVES.get(word.lower())
        if level in (NATIONAL, EU_CANONICAL):
            return level
    return ""


def geo_canonical(name: str, lex: CategoryLexicon) -> str:
    """"Province of Westmark" and "Westmark Province" → "westmark province"; "city of Aldby" →
    "aldby"; the EU's names → "european union"."""
    name = " ".join(name.split())
    if name in EU_NAMES or name.lower() in ("the union", "the european union"):
        return EU_CANONICAL
    if name.lower().startswith("member state"):
        return "member state"  # one canonical for "Member State" and "Member States"
    m = re.match(r"(?i)(?:the\s+)?(\w+)\s+of\s+(?:the\s+)?(.+)$", name)
    if m and (m.group(1).lower() in lex.geo_units or m.group(1).lower() in ("republic", "kingdom")):
        unit, rest = m.group(1).lower(), normalize_name(m.group(2))
        return f"{rest} {unit}" if unit in ADMIN_UNITS else rest
    return normalize_name(name)


def canonical_and_scope(name: str, class_iri: str, lex: CategoryLexicon, ctx: DocContext) -> tuple[str, str]:
    """Canonical name and scope of a named mention (rules in the module docstring)."""
    name = _TRAILING_ACRONYM.sub("", name)
    if class_iri == lex.role("geo"):
        return geo_canonical(name, lex), ""
    if class_iri not in lex.actor_classes:
        return normalize_name(name), ""
    words = name.split()
    # "X of <place>": the jurisdiction is written after the name.
    m = re.match(r"(.+?)\s+of\s+(?:the\s+)?(.+)$", name)
    if m and (place := _place(m.group(2), lex)):
        return normalize_name(m.group(1)), place
    # "<place> X": "Westmark Province Energy Bureau", "Sweden's ..."
    for n in range(len(words) - 1, 0, -1):
        if place := _place(" ".join(words[:n]), lex):
            return normalize_name(" ".join(words[n:])), place
    # "<Name> Provincial X", "National X", "European X"
    for i, word in enumerate(words[:3]):
        level = LEVEL_ADJECTIVES.get(word.lower())
        if level and i + 1 < len(words):
            rest = normalize_name(" ".join(words[i + 1 :]))
            if i == 0:
                return rest, ctx.jurisdiction if level in ADMIN_UNITS and ctx.jurisdiction.endswith(level) else (
                    level if level in (NATIONAL, EU_CANONICAL) else "")  # fmt: skip
            return rest, f"{normalize_name(' '.join(words[:i]))} {level}"
    # "Westmark Energy Bureau" in a Westmark Province document.
    place_name = ctx.jurisdiction.rsplit(" ", 1)[0] if ctx.jurisdiction.split(" ")[-1] in ADMIN_UNITS else ""
    if place_name and len(words) > 1 and normalize_name(words[0]) == place_name:
        return normalize_name(" ".join(words[1:])), ctx.jurisdiction
    return normalize_name(name), ctx.jurisdiction


def _place(text: str, lex: CategoryLexicon) -> str:
    """Canonical place when the whole of ``text`` is one place name, else ""."""
    cands = find_spans(text, lex)
    if len(cands) == 1 and cands[0].class_iri == lex.role("geo") and cands[0].start == 0 and cands[0].end == len(text):
        return geo_canonical(text, lex)
    return ""


def _mention(text: str, cand: Candidate, lex: CategoryLexicon, ctx: DocContext) -> Mention:
    surface = text[cand.start : cand.end]
    if cand.self_ref:
        return Mention(surface, ctx.self_class or cand.class_iri, cand.start, cand.end, ctx.self_canonical, "")
    if cand.alias:
        cls, canonical, scope = ctx.aliases[cand.alias]
        return Mention(surface, cls, cand.start, cand.end, canonical, scope)
    if cand.value:  # dates are global; amounts and quantities belong to their document
        scope = "" if cand.class_iri in (lex.role("date"), lex.role("deadline")) else f"doc:{ctx.doc_id}"
        return Mention(surface, cand.class_iri, cand.start, cand.end, cand.value, scope)
    if cand.generic and cand.class_iri not in lex.actor_classes:
        return Mention(surface, cand.class_iri, cand.start, cand.end, normalize_name(surface), f"doc:{ctx.doc_id}")
    canonical, scope = canonical_and_scope(surface, cand.class_iri, lex, ctx)
    return Mention(surface, cand.class_iri, cand.start, cand.end, canonical, scope)


def mention_from_span(text: str, start: int, end: int, class_iri: str, lex: CategoryLexicon, ctx: DocContext) -> Mention:
    """A mention of ``text[start:end]`` typed ``class_iri`` by someone else (e.g. a model), with
    the same canonical/scope rules as this extractor's own mentions."""
    surface = text[start:end]
    whole = next((c for c in find_spans(surface, lex, ctx) if c.start == 0 and c.end == len(surface)), None)
    if whole is not None:
        cand = replace(whole, start=start, end=end, class_iri=class_iri)
    else:
        cand = Candidate(start, end, class_iri, 2, generic=surface[:1].islower())
    return _mention(text, cand, lex, ctx)


# --- relations --------------------------------------------------------------------------------

_GAP = re.compile(r"[\s,]*(?:(?:the|a|an|its|their)\s+)?$", re.I)  # what may separate adjacent mentions
_AUX_BEFORE = re.compile(r"\b(?:be|is|are|was|were|been|being)\s+(?:[a-z]+ly\s+)?$")
_BY = re.compile(r"\s+by\s+(?:the\s+)?", re.I)


def _relations(text: str, mentions: list[Mention], spans: list[tuple[int, int]], lex: CategoryLexicon) -> Iterator[Relation]:
    if lex.trigger_re is None or not mentions:
        return
    for s0, s1 in spans:
        inside = [m for m in mentions if s0 <= m.start < s1]
        if len(inside) < 2:
            continue
        for trig in lex.trigger_re.finditer(text, s0, s1):
            if not _word_start(text, trig.start()):
                continue
            form = " ".join(trig.group(0).lower().split())
            for t in lex.triggers.get(form, ()):
                pair = _bind(text, trig, form, t, inside, s0, lex)
                if pair is not None and pair[0] is not pair[1] and pair[0].canonical != pair[1].canonical:
                    yield Relation(pair[0], t.property_iri, pair[1], _trim(text, s0, s1), form)


def _bind(text: str, trig: re.Match[str], form: str, t: Trigger, inside: list[Mention], s0: int,
          lex: CategoryLexicon) -> tuple[Mention, Mention] | None:  # fmt: skip
    """Subject and object of one trigger occurrence, or None."""
    rule = lex.rules[t.property_iri]
    before = [m for m in inside if m.end <= trig.start()]
    after = [m for m in inside if m.start >= trig.end()]
    covering = next((m for m in inside if m.start < trig.end() and trig.start() < m.end), None)
    subj = obj = None
    if covering is not None:
        # A trigger inside a mention counts only as a generic mention's own noun ("sets a target
        # of 12 GW": "target" is both hasTarget's trigger and the Target's cue).
        if covering.scope.startswith("doc:") and form in lex.class_cues.get(covering.class_iri, ()):
            obj = covering if covering.class_iri in rule.range_ok else None
            subj = _nearest(reversed([m for m in before if m.end <= covering.start]), rule.domain_ok)
    elif t.participle and (by := _BY.match(text, trig.end())):
        # "X is issued by Y": the agent after "by" is the subject.
        subj = next((m for m in after if m.start == by.end() and m.class_iri in rule.domain_ok), None)
        obj = _nearest(reversed(before), rule.range_ok)
    elif t.participle and _AUX_BEFORE.search(text, max(s0, trig.start() - 24), trig.start()):
        return None  # passive without "by": the agent is not named
    elif t.adjacent:
        # One-word triggers ("by", "in", "of") link only mentions right next to them; a deadline
        # belongs to the nearest thing before it that is not itself a place or a date.
        obj = after[0] if after and _adjacent(text, trig.end(), after[0].start) and after[0].class_iri in rule.range_ok else None
        if obj is not None and rule.range_ok <= {lex.role("date"), lex.role("deadline")}:
            modifiers = {lex.role("date"), lex.role("deadline"), lex.role("geo")}
            subj = _nearest(reversed([m for m in before if m.class_iri not in modifiers]), rule.domain_ok)
        elif before and _adjacent(text, before[-1].end, trig.start()) and before[-1].class_iri in rule.domain_ok:
            subj = before[-1]
    else:
        subj = _nearest(reversed(before), rule.domain_ok)
        obj = _nearest(after, rule.range_ok)
    return (subj, obj) if subj is not None and obj is not None else None


def _adjacent(text: str, a: int, b: int) -> bool:
    return a <= b and _GAP.match(text[a:b]) is not None and len(text[a:b]) < 12


def _nearest(mentions, allowed: frozenset[str]) -> Mention | None:
    return next((m for m in mentions if m.class_iri in allowed), None)


def _trim(text: str, s0: int, s1: int) -> tuple[int, int]:
    while s0 < s1 and text[s0].isspace():
        s0 += 1
    while s1 > s0 and text[s1 - 1].isspace():
        s1 -= 1
    return s0, s1


def _relation_key(r: Relation) -> tuple:
    return (r.evidence, r.subject.start, r.property_iri, r.object.start, r.cue)


def attributes_for(mentions: list[Mention], spans: list[tuple[int, int]], lex: CategoryLexicon) -> list[Attribute]:
    """Datatype values the mentions carry: ``dateValue`` of dates with a known day, ``targetValue``
    of targets and indicators with a quantity; sorted."""
    return sorted(set(_attributes(mentions, spans, lex)), key=lambda a: (a.subject.start, a.property_iri))


def _attributes(mentions: list[Mention], spans: list[tuple[int, int]], lex: CategoryLexicon) -> Iterator[Attribute]:
    date_value, target_value = lex.role("date_value"), lex.role("target_value")
    for m in mentions:
        evidence = next(((a, b) for a, b in spans if a <= m.start < b), (m.start, m.end))
        if date_value and m.class_iri in (lex.role("date"), lex.role("deadline")) and _ISO.match(m.canonical):
            yield Attribute(m, date_value, m.canonical, lex.datatypes[date_value], evidence)
        elif target_value and m.class_iri in (lex.role("target"), lex.role("indicator")) and m.scope.startswith("doc:"):
            value = _QUANTITY_VALUE.search(m.text)
            if value:
                yield Attribute(m, target_value, " ".join(value.group(0).split()), lex.datatypes[target_value], evidence)


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_QUANTITY_VALUE = re.compile(r"(?:EUR|€|USD|\$)?\s?\d[\d.,]*\s?(?:%|per ?cent|[A-Za-z°]{1,8}(?:\(A\))?)?"
                             r"(?:\s(?:million|billion))?")  # fmt: skip


# --- spans ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A typed span before canonicalization. ``priority`` breaks ties between equal spans
    (lower wins); ``value`` is the canonical form of dates, amounts and quantities."""

    start: int
    end: int
    class_iri: str
    priority: int
    head: str = ""  # singular head noun
    generic: bool = False  # a lowercase common noun, or a bare head ("the Fund")
    self_ref: bool = False
    value: str = ""
    alias: str = ""  # an acronym the document defined (see DocContext.aliases)


# The lookbehinds come after the punctuation so that they run only there, not at every position.
_SENT_END = re.compile(r"\n+|[.!?;](?=\s)(?<!\bNo\.)(?<!\bArt\.)(?<!\bp\.)(?<!\bpp\.)(?<!\bcf\.)"
                       r"(?<!e\.g\.)(?<!i\.e\.)(?<!\bvs\.)")  # fmt: skip
_CAP = r"[A-Z][\w'\u2019\-]*\+?"
_CODE = r"(?:\([A-Z][A-Za-z]*\)[ \t]*)?(?:No\.?[ \t]*)?\d+(?:[/:.\-\u2013]\d+)*(?!\w)"
_ACRONYM = r"\([A-Z][A-Z0-9+\-]*\)"
_NP = re.compile(rf"{_CAP}(?:[ \t]+(?:(?:of|for|on|in|and|to|de)[ \t]+(?:the[ \t]+)?)?{_CAP}|[ \t]+{_CODE}"
                 rf"|[ \t]+of[ \t]+(?:19|20)\d\d(?![\w/\-])|[ \t]*{_ACRONYM})*")  # fmt: skip
_ACRONYM_DEF = re.compile(r"[ \t]\(([A-Z][A-Z0-9+\-]{1,9})\)(?!\s*(?:No\.?\s*)?\d)")  # not "(EU) 2021/1119"
_TRAILING_ACRONYM = re.compile(r"\s*\([A-Z][A-Z0-9+\-]*\)$")
_DET_JUST_BEFORE = re.compile(r"\b(?i:the|this|these|that|its|their)\s+$")
_TOKEN = re.compile(r"\([^)\s]*\)|[^\s]+")
_ROMAN = re.compile(r"[IVXLC]+\.?")
_PREPS = frozenset({"of", "for", "on", "in", "to", "de"})
_LEAD = frozenset({"The", "This", "These", "That", "Those", "A", "An", "Each", "Every", "Any", "All", "Such", "Its",
                   "Their", "Our", "In", "On", "By", "For", "With", "Under", "Where", "When", "If", "Upon", "As", "At",
                   "From", "To", "And", "Or", "But", "Whereas", "Having", "Article", "Chapter", "Section", "Annex",
                   "Part", "Title", "Point", "Paragraph", "Recital", "Table", "Figure"})  # fmt: skip
_DETERMINERS = frozenset({"the", "this", "these", "that", "those", "its", "their"})
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")  # fmt: skip
# Dates are found from their month name (a cheap literal scan), then the day and year around it.
_MONTH = re.compile(r"(?:" + trie_pattern([m.capitalize() for m in _MONTHS]) + r")\b")
_DAY_BEFORE = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+$")
_AFTER_MONTH = re.compile(r"\s+(?:(\d{1,2}),\s+)?((?:19|20)\d\d)\b")
_ISO_DATE = re.compile(r"(?:19|20)\d\d-[01]\d-[0-3]\d\b")
_YEAR = re.compile(r"(?:19|20)\d\d\b(?![\-/\u2013]\d)")
_YEAR_CUE = re.compile(r"\b(?:[Bb]y|in|from|until|till|since|before|after|to|and|end of)\s+$")  # "by 2030", not "No 2030"
_NUMBER = r"(?:\d{1,3}(?:[ \u00a0,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"  # "7 500 000 000", "50,000", "1.5"
_MONEY = re.compile(r"(?:EUR|USD|GBP|CHF|SEK|DKK|PLN|[€$£])\s?" + _NUMBER + r"(?:\s?(?:million|billion|thousand)\b)?")
_MONEY_AFTER = re.compile(_NUMBER + r"(?:\s(?:million|billion|thousand))?\s(?:euros?|dollars)\b")  # "5 million euro"
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)?\s?(?:%|per ?cent\b|(?:GW|MW|kW|TW|GWh|MWh|kWh|TWh|Mt|kt|tonnes?"
                       r"|km|ha|hectares|square metres|m2|metres|ms|degrees Celsius|MtCO2e|CO2e)\b|dB\(A\))")  # fmt: skip
_GAZETTEER = re.compile(r"(?:" + trie_pattern(["European Union", "Member State", "Member States", "EU", "Union",
                                                *EU_MEMBER_STATES]) + r")\b")  # fmt: skip
# A determiner and up to two modifiers before a generic cue noun ("the", "an administrative").
_DET_BEFORE = re.compile(r"\b(?i:a|an|the|this|these|such|its|their|any|each|every|no)\s+(?:(?!(?:shall|must|may|will|be|is|are"
                         r"|of|and|or|to|in|on|for|by|with|that|which|not)\b)[a-z][a-z\-]+\s+){0,2}$")  # fmt: skip
_CAPWORD = re.compile(r"[A-Z][\w\-]*")
_NAME_BEFORE = re.compile(r"(?:[A-Z][\w\-]*[ \t]+)+$")
_OF_AMOUNT = re.compile(r"\s+of\s+(?:up to\s+|at least\s+|at most\s+|about\s+)?")


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans: cut at line breaks and at . ! ? ; before whitespace (not after "No", "e.g")."""
    out, start = [], 0
    for m in _SENT_END.finditer(text):
        if out and not text[start : m.end()].strip():
            out[-1] = (out[-1][0], m.end())  # a line break after a full stop joins its sentence
        elif m.end() > start:
            out.append((start, m.end()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out


def find_spans(text: str, lex: CategoryLexicon, ctx: DocContext | None = None) -> list[Candidate]:
    """Typed, non-overlapping spans of ``text``, sorted by position."""
    self_head = ctx.self_head if ctx is not None else ""
    cands: list[Candidate] = []
    if ctx is not None and ctx.alias_re is not None:
        for m in ctx.alias_re.finditer(text):
            cands.append(Candidate(m.start(), m.end(), ctx.aliases[m.group()][0], 2, m.group(), alias=m.group()))
    cands += _named(text, lex)
    cands += _places(text, lex)
    cands += _values(text, lex)
    cands += _generic(text, lex)
    if lex.deictic_re is not None:
        for m in lex.deictic_re.finditer(text):
            if not _word_start(text, m.start()):
                continue
            head = singular(m.group(2))
            det = m.group(1).lower()
            cls = lex.head_cues.get((head,))
            if cls and (det in ("this", "these") or (det == "the" and head == self_head)):
                cands.append(Candidate(m.start(2), m.end(), cls, 0, head, self_ref=True))
    cands.sort(key=lambda c: (c.start, -c.end, c.priority, c.class_iri))
    kept: list[Candidate] = []
    for c in cands:
        if not kept or c.start >= kept[-1].end:
            kept.append(c)
    return kept


def _named(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    for m in _NP.finditer(text):
        word = m.group()
        if " " not in word and "\t" not in word:
            # Fast path for the commonest match, one capitalized word: only a cue word after a
            # determiner ("the Commission") is a mention.
            cls = lex.head_cues.get((singular(word),)) if word not in _LEAD and not word.isupper() else None
            if cls is not None and _DET_JUST_BEFORE.search(text, max(0, m.start() - 7), m.start()):
                yield Candidate(m.start(), m.end(), cls, 2, singular(word), generic=True)
            continue
        toks = [(t.start() + m.start(), t.end() + m.start(), t.group()) for t in _TOKEN.finditer(m.group())]
        det = bool(_DET_JUST_BEFORE.search(text, max(0, m.start() - 7), m.start()))
        part: list[tuple[int, int, str]] = []
        seen_prep = False
        for tok in [*toks, None]:
            if tok is not None and not part and (tok[2] in _LEAD or tok[2] in _DETERMINERS or tok[2][:1].isdigit()
                                                 or _ROMAN.fullmatch(tok[2])):  # fmt: skip
                det = det or tok[2].lower() in _DETERMINERS
                continue
            if tok is None or (tok[2] == "and" and not seen_prep):
                if part:
                    cand = _type_name(part, det, lex)
                    if cand is not None:
                        yield cand
                part, seen_prep, det = [], False, False
                continue
            seen_prep = seen_prep or tok[2] in _PREPS
            part.append(tok)


def _type_name(toks: list[tuple[int, int, str]], det: bool, lex: CategoryLexicon) -> Candidate | None:
    words = [t[2] for t in toks]
    p = next((i for i, w in enumerate(words) if w in _PREPS), len(words))
    h = p - 1
    while h >= 0 and _is_code(words[h]):
        h -= 1
    if h < 0:
        return None
    cls, n = None, 0
    for n in range(min(lex.max_cue_len, h + 1), 0, -1):
        if cls := lex.head_cues.get(tuple(singular(w) for w in words[h - n + 1 : h + 1])):
            break
    if cls is None or words[h].isupper() and len(words[h]) > 1:
        return None
    end = p - 1
    if p < len(words) and end == h and cls != lex.role("geo"):
        # "X of Y" runs on for every name; "on/for/in" only for document-like names (titles).
        end = len(words) - 1
        if cls not in lex.titled_classes:
            end = next((i - 1 for i in range(p + 1, len(words)) if words[i] in _PREPS - {"of"}), end)
    while words[end] in _PREPS or words[end] == "the":
        end -= 1
    bare = h - n + 1 == 0 and end == h
    if bare and not det:
        return None  # a lone cue word without a determiner is a heading or a common noun
    return Candidate(toks[0][0], toks[end][1], cls, 2, singular(words[h]), generic=bare)


def _is_code(word: str) -> bool:
    return word[:1].isdigit() or word.startswith("(") or word in ("No", "No.") or (word.isupper() and len(word) > 1)


def _places(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    geo = lex.role("geo")
    if geo is None:
        return
    for m in lex.geo_of_re.finditer(text):
        if _word_start(text, m.start()):
            yield Candidate(m.start(), m.end(), geo, 1, "place")
    for m in _GAZETTEER.finditer(text):
        # a bare "Union" is the EU only as "the Union"
        if _word_start(text, m.start()) and (m.group() != "Union" or text[max(0, m.start() - 4) : m.start()] == "the "):
            yield Candidate(m.start(), m.end(), geo, 1, "place")
    for m in lex.geo_name_re.finditer(text):
        # "Westmark Province": read the capitalized name backwards from the unit noun.
        name = _NAME_BEFORE.search(text, max(0, m.start() - 80), m.start()) if _word_start(text, m.start()) else None
        if name is not None:
            first = next((w for w in _CAPWORD.finditer(text, name.start(), name.end()) if w.group() not in _LEAD), None)
            if first is not None:  # "The Westmark Province" → "Westmark Province"
                yield Candidate(first.start(), m.end(), geo, 1, "place")


def _word_start(text: str, i: int) -> bool:
    """No letter, digit or underscore right before ``i`` (the patterns leave out a leading
    ``\\b``, which would disable the regex engine's first-character scan)."""
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")


def _values(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    if lex.role("date") is not None:
        for start, end, value in _dates(text):
            yield Candidate(start, end, _date_class(text, start, lex), 1, "date", value=value)
        for m in _YEAR.finditer(text):
            if m.start() and text[m.start() - 1].isspace() and _YEAR_CUE.search(text, max(0, m.start() - 8), m.start()):
                yield Candidate(m.start(), m.end(), _date_class(text, m.start(), lex), 1, "year", value=m.group())
    if funds := lex.role("funds"):
        for pattern in (_MONEY, _MONEY_AFTER):
            for m in pattern.finditer(text):
                if _word_start(text, m.start()):
                    yield Candidate(m.start(), m.end(), funds, 1, "amount", value=normalize_name(m.group()))
    target, indicator = lex.role("target"), lex.role("indicator")
    if target or indicator:
        for m in _QUANTITY.finditer(text):
            if m.start() and text[m.start() - 1] in ".,/" or not _word_start(text, m.start()):
                continue
            start = text.rfind("\n", 0, m.start()) + 1
            cue = lex.target_re is not None and lex.target_re.search(text, max(start, m.start() - 120), m.start())
            cls = target if cue and target else indicator or target
            yield Candidate(m.start(), m.end(), cls, 1, "quantity", value=normalize_name(m.group()))


def _date_class(text: str, start: int, lex: CategoryLexicon) -> str:
    deadline = lex.role("deadline")
    if deadline and lex.deadline_re.search(text[max(0, start - 30) : start]):
        return deadline
    return lex.role("date") or ""


def _dates(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, value) of dates: "1 June 2025", "June 1, 2025", "June 2025", "15 January",
    "2025-06-01". The value is YYYY-MM-DD when day, month and year are known (and valid), else
    the normalized text."""
    for m in _ISO_DATE.finditer(text):
        if _word_start(text, m.start()):
            yield m.start(), m.end(), _iso(m.group()[:4], int(m.group()[5:7]), m.group()[8:10], m.group())
    for m in _MONTH.finditer(text):
        if not _word_start(text, m.start()):
            continue
        month = _MONTHS.index(m.group().lower()) + 1
        day = _DAY_BEFORE.search(text, max(0, m.start() - 6), m.start())
        after = _AFTER_MONTH.match(text, m.end())
        if day is not None:
            year = after.group(2) if after is not None and after.group(1) is None else ""
            end = after.end() if year else m.end()
            yield day.start(1), end, _iso(year, month, day.group(1), text[day.start(1) : end])
        elif after is not None:
            yield m.start(), after.end(), _iso(after.group(2), month, after.group(1) or "", text[m.start() : after.end()])


def _iso(year: str, month: int, day: str, surface: str) -> str:
    try:
        return date(int(year), month, int(day)).isoformat()
    except ValueError:  # a part is missing or out of range: keep the text
        return normalize_name(surface)


def _generic(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    if lex.generic_re is None:
        return
    for m in lex.generic_re.finditer(text):
        if not _word_start(text, m.start()):
            continue
        det = _DET_BEFORE.search(text, max(0, m.start() - 48), m.start())
        if det is None and " " not in m.group():
            continue  # a one-word cue needs a determiner; "technical requirements" does not
        # The determiner stays out of the mention; its modifiers ("administrative fine") stay in.
        mods = text[det.start() : det.end()].split(None, 1) if det is not None and " " not in m.group() else []
        start = det.end() - len(mods[1]) if len(mods) > 1 else m.start()
        words = text[start : m.end()].split()
        cls = None
        for n in range(min(lex.max_cue_len, len(words)), 0, -1):
            if cls := lex.head_cues.get(tuple(singular(w) for w in words[-n:])):
                break
        if cls is None:
            continue
        end = m.end()
        # "a fine of up to EUR 50,000", "a target of 12 GW": the amount belongs to the noun.
        if (of := _OF_AMOUNT.match(text, end)) and (num := _MONEY.match(text, of.end()) or _QUANTITY.match(text, of.end())):
            end = num.end()
        yield Candidate(start, end, cls, 3, singular(words[-1]), generic=True)
