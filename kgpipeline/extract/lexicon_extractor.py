"""The default extractor: deterministic, offline, driven by the category ontology's lexicon.

Mentions come from these patterns, each typed from the ontology (:mod:`kgpipeline.extract.lexicon`):
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

* ``canonical`` is :func:`kgpipeline.extract.lexicon.normalize_name` of the name (casefolded, articles
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
from collections.abc import Iterator
from dataclasses import replace

from kgpipeline.extract.base import Attribute, ChunkExtraction, Mention, Relation, day_lexical
from kgpipeline.extract.lexicon import (
    ADMIN_UNITS,
    EU_CANONICAL,
    EU_NAMES,
    LEVEL_ADJECTIVES,
    NATIONAL,
    CategoryLexicon,
    Trigger,
    build_lexicon,
    normalize_name,
    trie_pattern,
)  # fmt: skip
from kgpipeline.extract.mentions import (
    ACRONYM_DEF,
    TRAILING_ACRONYM,
    Candidate,
    DocContext,
    find_spans,
    named_spans,
    place_spans,
    sentences,
    word_start,
)  # fmt: skip
from kgpipeline.ontology import OntologySet
from kgpipeline.records import Chunk, SourceDocument

__all__ = ["DocContext", "LexiconExtractor", "attributes_for", "canonical_and_scope", "doc_context", "mention_from_span",
           "sentences"]  # fmt: skip

_META_KEYS = ("jurisdiction", "spatial", "coverage", "country", "region", "issuer", "publisher",
              "department", "author", "authority")  # fmt: skip


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
    for m in ACRONYM_DEF.finditer(text):
        acronym = m.group(1)
        if acronym in out:
            continue
        window = text[max(0, m.start() - 150) : m.end()]
        named = [c for c in named_spans(window, lex) if c.end == len(window) and not c.generic]
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
    places = sorted(place_spans(text, lex), key=lambda c: (c.start, -c.end))
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
    name = TRAILING_ACRONYM.sub("", name)
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
            if not word_start(text, trig.start()):
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
            datatype = lex.datatypes[date_value]
            yield Attribute(m, date_value, day_lexical(m.canonical, datatype), datatype, evidence)
        elif target_value and m.class_iri in (lex.role("target"), lex.role("indicator")) and m.scope.startswith("doc:"):
            value = _QUANTITY_VALUE.search(m.text)
            if value:
                yield Attribute(m, target_value, " ".join(value.group(0).split()), lex.datatypes[target_value], evidence)


_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_QUANTITY_VALUE = re.compile(r"(?:EUR|€|USD|\$)?\s?\d[\d.,]*\s?(?:%|per ?cent|[A-Za-z°]{1,8}(?:\(A\))?)?"
                             r"(?:\s(?:million|billion))?")  # fmt: skip
