"""Policy facts by deterministic patterns: what policy questions ask about, as typed facts.

Legal text states its facts in a few fixed forms, so patterns are precise on it. Four kinds:

* **Acts and cross-references.** "Regulation (EU) 2016/679", "Directive 95/46/EC", "Council
  Directive 84/253/EEC", lists such as "Regulations (EC) No 1060/2009, (EU) No 648/2012 and (EU)
  2016/1011" → ``pkb:Legislation`` entities identified by type, year and number
  (:mod:`kgpipeline.extract.acts`; every spelling of one act is one IRI), labelled in the text's own casing ("Regulation (EU) No 648/2012"). The
  document's own act comes from its CELEX number (metadata ``celex``/``identifier``) or its title,
  with the short name of the metadata (``act``) or of the title ("(‘European Climate Law’)") as a
  surface form. Typed links, where the text says so: "X is repealed" → the document's act
  ``pkb:repeals`` X; "X is amended as follows" / "Amendments to X" → ``pkb:amends``; a citation
  "Y of … amending X and repealing Z" → Y amends X, Y repeals Z; any other reference → ``pkb:cites``.
  The title's own "amending …"/"repealing …" and the act's issuers (``pkb:issues``: the metadata's,
  else the formal title's "of the European Parliament and of the Council", "Commission Implementing
  Regulation …") and the adoption day of its formal title (``pkb:adoptionDate``) are stated once,
  in the document's first chunk.
* **Definitions.** "‘X’ means …" (any quotes) → a ``pkb:DefinedTerm`` "X", scoped to the act that
  defines it (the AI Act's "provider" is not the CRA's), with ``pkb:definition`` (the text up to
  the item's end) and ``pkb:definedIn`` the act.
* **Provisions.** A sentence with "shall", "shall not", "must", "may" or "may not" → a
  ``pkb:Provision`` node: ``pkb:modality``, ``pkb:action`` (the clause after the modal; also its
  label, which entity linking matches questions against), ``pkb:addressee`` (the actor the lexicon
  found just before the modal), ``pkb:hasDeadline`` / ``pkb:hasDate`` (a deadline / another date in the clause), ``pkb:timeLimit``
  ("72 hours", "one month" after "within"/"not later than"), ``pkb:amount`` with
  ``pkb:amountValue`` ("EUR 20 000 000" → 20000000), ``pkb:percentage`` ("4 %" → 4), and
  ``pkb:provisionOf`` the act.
* **Quantified targets** (:mod:`kgpipeline.extract.targets`): value, unit, target year, base year
  and scope of "reduce … by at least 40 % by 2030 as compared to 1990".

Mentions the text does not quote — the document's act and its issuers, named by metadata — have
``start == end == 0`` (see :class:`kgpipeline.extract.base.Mention`). Everything is emitted per
chunk, with the chunk as provenance; the properties here are owned by this module
(:data:`PROPERTIES`), so the lexicon extractor does not also trigger them on their wording.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from core.text import sentence_spans
from kgpipeline.extract.acts import ActRef, act_references, own_act, title_adoption
from kgpipeline.extract.base import DATE_TIME, Attribute, ChunkExtraction, Mention, Relation, day_lexical
from kgpipeline.extract.lexicon import PATTERN_PROPERTIES, CategoryLexicon, normalize_name
from kgpipeline.extract.mentions import DocContext, find_spans
from kgpipeline.extract.targets import target_facts
from kgpipeline.records import Chunk, SourceDocument
from store.vocab import PKB, XSD

__all__ = ["PROPERTIES", "PolicyFactExtractor", "extract_policy_facts"]

LEGISLATION, DEFINED_TERM, PROVISION = PKB + "Legislation", PKB + "DefinedTerm", PKB + "Provision"
AMENDS, REPEALS, CITES, ISSUES = PKB + "amends", PKB + "repeals", PKB + "cites", PKB + "issues"
ADOPTION_DATE = PKB + "adoptionDate"
DEFINED_IN, DEFINITION = PKB + "definedIn", PKB + "definition"
ADDRESSEE, PROVISION_OF, HAS_DEADLINE, HAS_DATE = PKB + "addressee", PKB + "provisionOf", PKB + "hasDeadline", PKB + "hasDate"
MODALITY, ACTION, TIME_LIMIT = PKB + "modality", PKB + "action", PKB + "timeLimit"
AMOUNT, AMOUNT_VALUE, PERCENTAGE = PKB + "amount", PKB + "amountValue", PKB + "percentage"
PROPERTIES = PATTERN_PROPERTIES  # stated only here; the lexicon extractor skips their trigger words
_STRING, _DECIMAL = XSD + "string", XSD + "decimal"

# --- the extractor ----------------------------------------------------------------------------

_QUOTED = r"[‘'“\"](?P<term>[^’'”\"\n]{2,80})[’'”\"]"
_DEFINITION = re.compile(_QUOTED + r"(?:\s*(?:or|and)\s*[‘'“\"][^’'”\"\n]{2,80}[’'”\"])?"
                         r"(?:\s+(?:of|in|for|by)\s+(?:the\s+)?[a-z][\w\- ]{1,40}?)?\s+(?:means|shall mean|refers to)\s+")  # "‘consent’ of the data subject means"
_DEF_END = re.compile(r";|\.\s+(?=[A-Z(])|\s\(\d+\)\s|\s\([a-z]\)\s[‘'“\"]|$")
_MODAL = re.compile(r"\b(?P<modal>shall not|shall|must not|must|may not|may)\b(?!\s+be\s+(?:the\s+case|necessary))")
_TIME_LIMIT = re.compile(r"\b(?:within|not later than|no later than|at the latest)\s+(?P<limit>(?:\d+|one|two|three|four|five|six|"
                         r"seven|eight|nine|ten|twelve|fifteen|thirty)\s+(?:working\s+|calendar\s+)?(?:minutes?|hours?|days?|"
                         r"weeks?|months?|years?))\b", re.I)  # fmt: skip
_MONEY = re.compile(r"(?:(?P<cur1>EUR|€)\s?(?P<n1>\d{1,3}(?:[ \u00a0,.]\d{3})+|\d+)(?:\s?(?P<m1>million|billion))?|"
                    r"(?P<n2>\d{1,3}(?:[ \u00a0,.]\d{3})+|\d+)(?:\s?(?P<m2>million|billion))?\s?(?P<cur2>EUR|euros?)\b)")  # fmt: skip
_PERCENT = re.compile(r"(?<![\d.,])(?P<n>\d{1,3}(?:[.,]\d+)?)\s?(?:%|per\s?cent\b)")
_ACTION_CHARS = 220
_LABEL_CHARS = 300


def _implied(text: str, class_iri: str, canonical: str, label: str, scope: str = "") -> Mention:
    return Mention(text, class_iri, 0, 0, canonical, scope, label)


def _act_mention(ref: ActRef, text: str) -> Mention:
    return Mention(text[ref.start : ref.end], LEGISLATION, ref.start, ref.end, ref.key, "", ref.label)


def extract_policy_facts(chunk: Chunk, document: SourceDocument, base: ChunkExtraction, lex: CategoryLexicon,
                         ctx: DocContext) -> ChunkExtraction:  # fmt: skip
    """``base`` (another extractor's output for this chunk) plus the policy facts of the chunk."""
    text = chunk.text
    act = own_act(document)
    own = None
    mentions: list[Mention] = []
    relations: list[Relation] = []
    attributes: list[Attribute] = []
    if act is not None:
        key, label, names = act
        own = _implied(names[0] if names else label, LEGISLATION, key, label)
        mentions += [own] + [_implied(n, LEGISLATION, key, label) for n in names[1:]]
    refs = list(act_references(text))
    ref_mentions = {(r.start, r.end): _act_mention(r, text) for r in refs if own is None or r.key != own.canonical}
    mentions += ref_mentions.values()
    # The act named by its identifier in its own text (its title heading, "Article 2(1) of Regulation
    # (EU) 2021/1119") is the document's act: one entity, whatever the other extractor made of it.
    own_named = [replace(own, text=text[r.start : r.end], start=r.start, end=r.end) for r in refs if own is not None and r.key == own.canonical]
    mentions += own_named
    if chunk.ordinal == 0 and own is not None:
        mentions_, relations_, attributes_ = _document_facts(document, own, lex)
        mentions += mentions_
        relations += relations_
        attributes += attributes_
    relations += _reference_relations(text, refs, ref_mentions, own)
    m, r, a = _definitions(text, own, ctx)
    mentions, relations, attributes = mentions + m, relations + r, attributes + a
    m, r, a = _provisions(chunk, base.mentions, own, lex.actor_classes | {lex.role('geo') or ''})
    mentions, relations, attributes = mentions + m, relations + r, attributes + a
    m, a = target_facts(chunk, document)
    mentions, attributes = mentions + m, attributes + a
    base = _merge_acts(base, [*ref_mentions.values(), *own_named])
    return ChunkExtraction(
        chunk.chunk_id,
        tuple(dict.fromkeys([*base.mentions, *mentions])),
        tuple(dict.fromkeys([*base.relations, *relations])),
        tuple(dict.fromkeys([*base.attributes, *attributes])),
    )


def _merge_acts(base: ChunkExtraction, acts: Sequence[Mention]) -> ChunkExtraction:
    """The other extractor's mentions of an act this module identified ("Directive 2000/31" out
    of "Directive 2000/31/EC") become that act: one entity, one label, its relations kept."""
    if not acts:
        return base
    same: dict[Mention, Mention] = {}
    for m in base.mentions:
        if m.class_iri == LEGISLATION and m.start < m.end:
            act = next((a for a in acts if a.start < m.end and m.start < a.end), None)
            if act is not None:
                same[m] = act
    if not same:
        return base
    swap = lambda m: same.get(m, m)  # noqa: E731
    return ChunkExtraction(
        base.chunk_id,
        tuple(m for m in base.mentions if m not in same),
        tuple(replace(r, subject=swap(r.subject), object=swap(r.object)) for r in base.relations
              if swap(r.subject) != swap(r.object)),  # fmt: skip
        tuple(replace(a, subject=swap(a.subject)) for a in base.attributes),
    )


def _document_facts(document: SourceDocument, own: Mention, lex: CategoryLexicon) -> tuple[list[Mention], list[Relation], list[Attribute]]:
    """The title's "amending …"/"repealing …", the act's issuers (metadata, else the formal title:
    :func:`kgpipeline.extract.acts.title_adoption`) and the adoption day its title states, as
    facts of the act."""
    mentions: list[Mention] = []
    relations: list[Relation] = []
    title = document.title or ""
    adoption = title_adoption(title)
    attributes = [Attribute(own, ADOPTION_DATE, day_lexical(adoption.date), DATE_TIME, (0, 0))] if adoption and adoption.date else []
    refs = [r for r in act_references(title) if r.key != own.canonical]
    for ref in refs:
        verb = _verb_before(title, ref.start)
        obj = _implied(title[ref.start : ref.end], LEGISLATION, ref.key, ref.label)
        mentions.append(obj)
        relations.append(Relation(own, verb or CITES, obj, (0, 0), "title"))
    meta = document.metadata or {}
    actor = lex.role("actor")
    if actor is None:
        return mentions, relations, attributes
    issuers: list[tuple[str, str]] = []  # (name, where it was read)
    for key in ("department", "issuer", "issued_by", "author", "publisher"):
        value = meta.get(key)
        for name in (value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []):
            issuers.append((" ".join(str(name).split()), f"metadata {key}"))
    if not issuers and adoption is not None:
        issuers = [(name, "title") for name in adoption.issuers]  # "… of the European Parliament and of the Council of …"
    for name, where in issuers:
        if not name or len(name) > 120:
            continue
        typed = next((c for c in find_spans(name, lex) if c.start == 0 and c.end == len(name) and c.class_iri in lex.actor_classes), None)
        who = _implied(name, typed.class_iri if typed else actor, normalize_name(name), name)
        mentions.append(who)
        relations.append(Relation(who, ISSUES, own, (0, 0), where))
    return mentions, relations, attributes


_AMENDING = re.compile(r"\b(amending|repealing|amendments? (?:to|of)|is amended|are amended|is repealed|are repealed|"
                       r"is hereby repealed)\b", re.I)  # fmt: skip


_REFS_AND_SEPARATORS = re.compile(r"(?:(?:Council|Commission)\s+)?(?:Regulations?|Directives?|Decisions?)?\s*"
                                  r"(?:\((?:EU|EC|EEC|Euratom)\)\s*)?(?:No\.?\s*)?\d+/\d+(?:/[A-Za-z]+)?|,|\band\b|\s+")  # fmt: skip


def _verb_before(text: str, start: int) -> str | None:
    """amends/repeals when the act at ``start`` is governed by "amending"/"repealing" (possibly
    as a later item of its list), else None."""
    window = text[max(0, start - 240) : start]
    hits = list(_AMENDING.finditer(window))
    if not hits:
        return None
    last = hits[-1]
    if _REFS_AND_SEPARATORS.sub("", window[last.end() :]).strip():
        return None  # something else stands between: the verb governs an earlier act
    return REPEALS if "repeal" in last.group().lower() else AMENDS


def _reference_relations(text: str, refs: Sequence[ActRef], mentions: dict[tuple[int, int], Mention],
                         own: Mention | None) -> Iterator[Relation]:  # fmt: skip
    """Typed links between the acts of ``refs`` and the document's act (see the module docstring)."""
    governed = [_verb_before(text, r.start) for r in refs]
    for i, ref in enumerate(refs):
        obj = mentions.get((ref.start, ref.end))
        if obj is None:  # the document's own act, named in its own text
            continue
        after = text[ref.end : ref.end + 60]
        cut = max(text.rfind(". ", 0, ref.start), text.rfind("; ", 0, ref.start))
        sentence = (cut + 2 if cut >= 0 else 0, ref.end)
        if (hit := re.match(r"\s+(?:is|are)\s+(?:hereby\s+)?(repealed|amended)\b", after)) and own is not None:
            yield Relation(own, REPEALS if hit.group(1) == "repealed" else AMENDS, obj, (sentence[0], ref.end + hit.end()), hit.group().strip())
            continue
        verb = governed[i]
        if verb is None:
            if own is not None:
                yield Relation(own, CITES, obj, sentence, "reference")
            continue
        # "Y of <date> on … amending X and repealing Z": the subject is the nearest earlier act of
        # the same citation that no such verb governs (the citation's head).
        head = next((j for j in range(i - 1, -1, -1) if governed[j] is None), None)
        if head is not None and not re.search(r"\(\s*OJ\b|[.;]\s", text[refs[head].end : ref.start]):
            subject = mentions.get((refs[head].start, refs[head].end), own)
            if subject is not None and subject.canonical != obj.canonical:
                yield Relation(subject, verb, obj, (refs[head].start, ref.end), "citation")
        elif own is not None and re.search(r"Amendments? (?:to|of)\s*$", text[max(0, ref.start - 20) : ref.start]):
            yield Relation(own, AMENDS, obj, (max(0, ref.start - 20), ref.end), "amendments to")
        elif own is not None:
            yield Relation(own, CITES, obj, sentence, "reference")


def _definitions(text: str, own: Mention | None, ctx: DocContext) -> tuple[list[Mention], list[Relation], list[Attribute]]:
    mentions, relations, attributes = [], [], []
    scope = own.canonical if own is not None else f"doc:{ctx.doc_id}"
    for m in _DEFINITION.finditer(text):
        term = " ".join(m.group("term").split()).strip(" ,")
        if not term or not term[0].isalnum() or len(term.split()) > 10:
            continue
        end = _DEF_END.search(text, m.end())
        body = " ".join(text[m.end() : end.start() if end else len(text)].split())[:600].rstrip(" ,")
        if len(body) < 3:
            continue
        suffix = own.text if own is not None else ""
        mention = Mention(text[m.start("term") : m.end("term")], DEFINED_TERM, m.start("term"), m.end("term"),
                          normalize_name(term), scope, f"{term} ({suffix})" if suffix else term)  # fmt: skip
        mentions.append(mention)
        evidence = (m.start(), end.start() if end else len(text))
        attributes.append(Attribute(mention, DEFINITION, body, _STRING, evidence))
        if own is not None:
            relations.append(Relation(mention, DEFINED_IN, own, evidence, "means"))
    return mentions, relations, attributes


# The subject noun phrase just before a modal when the lexicon found no actor there: "the
# controller shall", "Providers of high-risk AI systems shall". Role nouns of legal text are not
# ontology classes, so the phrase becomes an actor scoped to the act (its meaning is the act's).
_SUBJECT = re.compile(r"(?:^|[,;:]\s+|\.\s+|\b(?:where|if|when|that|and|or)\s+[^,]{0,120},\s+)"
                      r"(?P<np>(?:[Tt]he|[Aa]n?|[Ee]ach|[Ee]very|[Aa]ny|[Aa]ll|[Ss]uch)\s+[a-z][\w\-]*(?:\s+(?:of\s+|for\s+)?"
                      r"[a-zA-Z][\w\-]*){0,5}|[A-Z][a-z][\w\-]*(?:\s+(?:of\s+|for\s+)?[a-zA-Z][\w\-]*){0,5})\s*$")  # fmt: skip
_NOT_A_SUBJECT = re.compile(r"\b(?:it|they|this|these|that|those|there|which|who|whom|whose|what|is|are|was|were|be|been|"
                            r"has|have|had|not|measures?|information|data|processing|report|decision|request|notification|"
                            r"list|plan|period|amount|fines?|infringements?|obligations?|provisions?|article|paragraph|"
                            r"regulation|directive|act|annex|chapter|section|point|case|use|target|share|consumption|emissions?|law|declaration|"
                            r"documentation|certificates?|mandate|establishment|transfer|assessment|system|product|procedure)\b",
                            re.I)  # fmt: skip
_PASSIVE = re.compile(r"\s+(?:not\s+)?(?:also\s+)?be\s+(?:\w+ly\s+)?(?:\w+ed|made|taken|done|set|given|held|kept|laid|"
                      r"drawn|shown|known|brought|sent|paid|subject|amended|considered|deemed)\b")  # fmt: skip
_DATE_IN_NAME = re.compile(r"\b[A-Z][\w\-]*\s+of\s+$")  # "Agreement of 13 April 2016": a date in a name


def _clauses(text: str, s0: int, s1: int) -> Iterator[tuple[re.Match[str], int]]:
    """(modal, clause end) for every modal of the sentence [s0, s1). A clause ends at ";", the
    sentence end, or where the next modal's own clause begins (its comma or "while"/"and"); a
    colon that opens a list ("shall submit: (a) …") keeps the list in the clause."""
    modals = [m for m in _MODAL.finditer(text, s0, s1)]
    for i, modal in enumerate(modals):
        stop = s1
        if i + 1 < len(modals):
            nxt = modals[i + 1]
            seg = max(text.rfind(", ", modal.end(), nxt.start()), text.rfind(" while ", modal.end(), nxt.start()),
                      text.rfind(" and ", modal.end(), nxt.start()))  # fmt: skip
            stop = seg if seg > modal.end() else nxt.start()
        end = re.compile(r";|\.\s|\.$").search(text, modal.end(), stop)
        yield modal, (end.start() if end and end.start() > modal.end() else stop)


def _provisions(chunk: Chunk, found: Sequence[Mention], own: Mention | None,
                actor_classes: frozenset[str]) -> tuple[list[Mention], list[Relation], list[Attribute]]:  # fmt: skip
    text = chunk.text
    mentions, relations, attributes = [], [], []
    actors = [m for m in found if m.start < m.end]
    for s0, s1 in sentence_spans(text, require_capital=False):
        first = True
        for modal, c1 in _clauses(text, s0, s1):
            if _DEFINITION.search(text, s0, modal.start()):
                break
            action = " ".join(text[modal.end() : c1].split()).strip(" ,")
            if len(action.split()) < 2:
                continue
            a0 = modal.end() + len(text[modal.end() : c1]) - len(text[modal.end() : c1].lstrip(" ,"))
            a1 = min(c1, a0 + _ACTION_CHARS)
            # The action is the provision's mention; its identity is its chunk and position. Its
            # label is the whole clause, subject included, and the act: what questions describe.
            node = Mention(text[a0:a1], PROVISION, a0, a1, f"{chunk.chunk_id}:{modal.start()}", "",
                           _provision_label(text, s0 if first else _clause_start(text, s0, modal.start()), c1, own))  # fmt: skip
            evidence = (s0, c1)
            mentions.append(node)
            attributes.append(Attribute(node, MODALITY, modal.group("modal"), _STRING, evidence))
            attributes.append(Attribute(node, ACTION, action[:600], _STRING, evidence))
            if own is not None:
                relations.append(Relation(node, PROVISION_OF, own, evidence, modal.group("modal")))
            who = _addressee(text, s0, modal, actors, actor_classes, own)
            if who is not None:
                mentions.extend([who] if who not in actors else [])
                relations.append(Relation(node, ADDRESSEE, who, evidence, "subject"))
            # Dates of the clause, and in the first clause those before the modal ("By 17 October 2024, …").
            lo = s0 if first else modal.end()
            for m in actors:
                if lo <= m.start < c1 and m.class_iri in (PKB + "Deadline", PKB + "Date") and not _DATE_IN_NAME.search(text, max(0, m.start - 60), m.start):
                    relations.append(Relation(node, HAS_DEADLINE if m.class_iri == PKB + "Deadline" else HAS_DATE, m, evidence, "date"))
            clause = text[modal.end() : c1]
            for t in _TIME_LIMIT.finditer(clause):
                attributes.append(Attribute(node, TIME_LIMIT, " ".join(t.group("limit").split()).lower(), _STRING, evidence))
            for money in _MONEY.finditer(clause):
                value = _money_value(money)
                if value is not None:
                    attributes.append(Attribute(node, AMOUNT, " ".join(money.group().split()), _STRING, evidence))
                    attributes.append(Attribute(node, AMOUNT_VALUE, value, _DECIMAL, evidence))
            for pct in _PERCENT.finditer(clause):
                attributes.append(Attribute(node, PERCENTAGE, pct.group("n").replace(",", "."), _DECIMAL, evidence))
            first = False
    return mentions, relations, attributes


def _clause_start(text: str, s0: int, at: int) -> int:
    """Where the clause holding offset ``at`` begins (after the last ", " / " while " / " and ")."""
    cut = max(text.rfind(", ", s0, at), text.rfind(" while ", s0, at), text.rfind(" and ", s0, at))
    return cut + 1 if cut >= 0 else s0


def _provision_label(text: str, c0: int, c1: int, own: Mention | None) -> str:
    clause = " ".join(text[c0:c1].split()).strip(" ,")
    clause = re.sub(r"^(?:\(?[0-9a-z]{1,3}[.)]\s+)+", "", clause)  # a list or paragraph number
    if len(clause) > _LABEL_CHARS:
        clause = clause[:_LABEL_CHARS].rsplit(" ", 1)[0] + " …"
    if own is None:
        return clause
    return f"{clause} ({own.text}, {own.label})" if own.label and own.label != own.text else f"{clause} ({own.text})"


def _addressee(text: str, s0: int, modal: re.Match[str], actors: Sequence[Mention], actor_classes: frozenset[str],
               own: Mention | None) -> Mention | None:  # fmt: skip
    """The actor the lexicon found right before the modal, else the subject noun phrase."""
    near = [m for m in actors if s0 <= m.start and m.end <= modal.start() and m.class_iri in actor_classes
            and re.fullmatch(r"[\s,]*(?:(?:also|therefore|then|only|each|not)\s+)?", text[m.end : modal.start()])]  # fmt: skip
    if near:
        return near[-1]
    if _PASSIVE.match(text, modal.end()):
        return None  # "The reports shall be made public": the subject is not who is obliged
    m = _SUBJECT.search(text[s0 : modal.start()])  # a slice: "^" must match at the sentence start
    if m is None:
        return None
    np = m.group("np")
    if len(np.split()) > 6 or _NOT_A_SUBJECT.search(np):
        return None
    start = s0 + m.start("np")
    name = re.sub(r"^(?:the|a|an|each|every|any|all|such)\s+", "", np, flags=re.I)
    scope = own.canonical if own is not None else ""
    return Mention(np, PKB + "Actor", start, start + len(np), normalize_name(name), scope, name[:1].lower() + name[1:] if name[:1].isupper() and not name[1:2].isupper() else name)


def _money_value(m: re.Match[str]) -> str | None:
    digits = re.sub(r"[ \u00a0,.]", "", m.group("n1") or m.group("n2") or "")
    if not digits:
        return None
    value = int(digits) * {"million": 10**6, "billion": 10**9}.get((m.group("m1") or m.group("m2") or "").lower(), 1)
    return str(value)


class PolicyFactExtractor:
    """Any extractor's output plus the policy facts of each chunk (``[ingest] policy_facts``)."""

    def __init__(self, inner, lexicon):  # an Extractor, and the LexiconExtractor that holds lexicons
        self.inner = inner
        self.lexicons = lexicon
        self.name = f"{inner.name}+policy-facts"

    def extract(self, chunk: Chunk, document: SourceDocument, category: str) -> ChunkExtraction:
        base = self.inner.extract(chunk, document, category)
        lex = self.lexicons.lexicon(category)
        return extract_policy_facts(chunk, document, base, lex, self.lexicons.context(document, category))
