"""The per-category lexicon the extractors run on, built once from the ontology.

Everything the lexicon extractor matches comes from the category's ontology (its own terms plus
``core``'s): class cues are the ``rdfs:label`` and ``skos:altLabel`` values read as head nouns
("energy bureau" → pkb:Agency), relation triggers are the object properties' labels and
altLabels, inflected as verbs ("establish" → establishes / established / establishing). Only two
pieces of knowledge are not in the ontology, both small and listed here: the classes that play
fixed roles (the date, money, quantity and place patterns need to know which class a date is),
and a gazetteer of EU member states (the real corpora are EU and national law).

Mention classes are the visible subclasses of pkb:Entity except the Document classes: a
document mentioned in running text ("the Notice on ...") is typed by the Entity class that stands
in for its category (GeneralPolicy → Policy, LegalRegulation → Legislation, StandardDocument →
Standard), because Document nodes are built from files, not from text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from core.text import past_participle, past_tense, present_participle, singular, third_person
from kgpipeline.ontology import OntologySet
from store.vocab import PKB

# Roles the pattern extractors fill; a role whose class/property the ontology lacks is skipped.
ROLE_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "entity": "Entity",
        "document": "Document",
        "actor": "Actor",
        "geo": "GeographicalArea",
        "date": "Date",
        "deadline": "Deadline",
        "funds": "Funds",
        "target": "Target",
        "indicator": "Indicator",
        "date_value": "dateValue",
        "target_value": "targetValue",
        "has_deadline": "hasDeadline",
    }
)
# Properties that kgpipeline.extract.policy_facts states from its patterns; their wording ("amend",
# "means") never triggers them here, or each fact would come twice and loosely.
PATTERN_PROPERTIES = frozenset(PKB + p for p in (
    "amends", "repeals", "cites", "definedIn", "hasDate", "definition", "addressee", "provisionOf", "modality", "action",
    "timeLimit", "amount", "amountValue", "percentage", "targetQuantity", "targetUnit", "targetYear", "baseYear",
    "targetScope", "targetAmount", "adoptionDate"))  # fmt: skip
PATTERN_CLASSES = frozenset(PKB + c for c in ("DefinedTerm", "Provision", "QuantifiedTarget"))  # their nodes too come only from there
DOCUMENT_STAND_INS: Mapping[str, str] = MappingProxyType(
    {"GeneralPolicy": "Policy", "LegalRegulation": "Legislation", "StandardDocument": "Standard"}
)
EU_MEMBER_STATES = (
    "Austria", "Belgium", "Bulgaria", "Croatia", "Cyprus", "Czechia", "Czech Republic", "Denmark",
    "Estonia", "Finland", "France", "Germany", "Greece", "Hungary", "Ireland", "Italy", "Latvia",
    "Lithuania", "Luxembourg", "Malta", "Netherlands", "Poland", "Portugal", "Romania", "Slovakia",
    "Slovenia", "Spain", "Sweden",
)  # fmt: skip
# Names of the EU itself; all map to one canonical place.
EU_NAMES = ("European Union", "Union", "EU")
EU_CANONICAL = "european union"
NATIONAL = "national"  # scope of "National X" / "Federal X" actors: the national level
# Adjectives that name a jurisdiction level, and the place noun they stand for.
LEVEL_ADJECTIVES: Mapping[str, str] = MappingProxyType(
    {"provincial": "province", "regional": "region", "municipal": "municipality", "county": "county",
     "state": "state", "national": NATIONAL, "federal": NATIONAL, "european": EU_CANONICAL}
)  # fmt: skip
# Place nouns written before the name ("Province of Westmark") normalize to "westmark province";
# settlement/sovereign nouns ("city of Aldby", "Republic of Malta") normalize to the bare name.
ADMIN_UNITS = frozenset({"province", "region", "county", "municipality", "district", "territory", "state"})
# Cues that are modal verbs, phrases or standard-code prefixes ("shall", "in order to", "GB/T"),
# not nouns: never head nouns.
_NOT_A_HEAD = re.compile(r"^(shall|must|be required to|for the purpose of|in order to|by the end of|"
                         r"in charge of|responsible for|applies to|be .*|[A-Z]+/?T?)$")  # fmt: skip
# Single-word triggers that only link adjacent mentions ("X of Y", "X in Y", "by <date>").
FUNCTION_WORDS = frozenset({"of", "in", "by", "on", "before", "within", "under", "about", "to", "for"})
# First words of trigger phrases that are not verbs, so must not be inflected.
_NOT_A_VERB = FUNCTION_WORDS | {
    "no", "not", "at", "with", "due", "is", "are", "means", "applicable", "competent", "responsible",
    "goal", "terms", "normative", "jurisdiction", "deadline", "scope", "key", "as", "community",
    "candidate", "has", "links", "belongs", "member", "tagged", "weighted", "grouped",
}  # fmt: skip
_SPELLING = {"centre": "center", "centres": "centers", "programme": "program", "programmes": "programs",
             "organisation": "organization", "organisations": "organizations", "metre": "meter",
             "metres": "meters", "litre": "liter", "licence": "license"}  # fmt: skip
_LEADING_ARTICLES = re.compile(r"^(?:(?:the|a|an|this|these|that|those)\s+)+", re.I)


@dataclass(frozen=True)
class PropertyRule:
    """An object property usable as a relation: the mention classes that fit its domain and its
    range (subclasses included)."""

    iri: str
    domain_ok: frozenset[str]
    range_ok: frozenset[str]


@dataclass(frozen=True)
class Trigger:
    """One surface form of a property's trigger. ``participle``: a past participle of an active
    verb, so "X is <form> by Y" is passive. ``adjacent``: a one-word function-word trigger ("by",
    "in", "of") that links only the mentions right next to it."""

    property_iri: str
    participle: bool
    adjacent: bool


@dataclass(frozen=True)
class CategoryLexicon:
    """Everything the lexicon extractor needs for one category, compiled once."""

    category: str
    roles: Mapping[str, str]  # role → IRI (only roles the ontology defines)
    mention_classes: frozenset[str]
    head_cues: Mapping[tuple[str, ...], str]  # singular lowercase cue tokens → class IRI
    max_cue_len: int
    generic_re: re.Pattern[str] | None  # own classes' cue nouns; "the fine", "an interim target"
    deictic_re: re.Pattern[str] | None  # "this Notice", "the Plan": document-like cue nouns
    geo_of_re: re.Pattern[str]  # "city of Aldby", "Province of Westmark", "Republic of Malta"
    geo_name_re: re.Pattern[str]  # the unit of "Westmark Province" (the name is read backwards)
    class_cues: Mapping[str, frozenset[str]]  # class IRI → its cue words (for nominal triggers)
    trigger_re: re.Pattern[str] | None
    triggers: Mapping[str, tuple[Trigger, ...]]  # lowercase form → triggers
    rules: Mapping[str, PropertyRule]
    actor_classes: frozenset[str]
    titled_classes: frozenset[str]  # document-like classes whose names run on ("Notice on ...")
    geo_units: frozenset[str]  # single-word place nouns ("province", "city")
    datatypes: Mapping[str, str]  # datatype property IRI → its XSD range
    deadline_re: re.Pattern[str]  # matches cue words just before a date ("by", "no later than")
    target_re: re.Pattern[str] | None  # Target cue words, to tell targets from indicators

    def role(self, name: str) -> str | None:
        return self.roles.get(name)


def normalize_name(text: str) -> str:
    """Canonical form of a name: casefolded, whitespace collapsed, typographic dashes/quotes
    plain, leading articles dropped, trivial British/American variants unified."""
    text = text.replace("\u2019", "'").replace("\u2013", "-").replace("\u2014", "-")
    words = _LEADING_ARTICLES.sub("", " ".join(text.split())).casefold().split(" ")
    return " ".join(_SPELLING.get(w, w) for w in words).strip()


def verb_forms(phrase: str) -> dict[str, bool]:
    """Surface forms of a trigger phrase, inflecting its first word as a verb; the value says
    whether the form is a past participle of an active verb (so "X is <form> by Y" is passive).
    Phrases that do not start with a verb ("in accordance with", "measured by", "deadline")
    are kept as written; "be ..." phrases get the forms of *be*."""
    words = phrase.lower().split()
    verb, rest = words[0], " ".join(words[1:])
    tail = f" {rest}" if rest else ""
    if verb == "be" and rest:
        return {f"{b} {rest}": False for b in ("be", "is", "are", "was", "were", "been", "being")}
    if verb in _NOT_A_VERB or verb.endswith("ed"):
        return {phrase.lower(): False}
    forms: dict[str, bool] = {f + tail: False for f in (verb, third_person(verb), present_participle(verb))}
    for past in dict.fromkeys((past_tense(verb), past_participle(verb))):
        forms[past + tail] = True
    return forms


def build_lexicon(onto: OntologySet, category: str) -> CategoryLexicon:
    """Compile the lexicon of one category (an ontology short name). Raises InputError (from
    :meth:`OntologySet.scope`) for an unknown category."""
    classes = {c.iri: c for c in onto.classes_for(category)}
    by_local = {c.local_name: c.iri for c in classes.values()}
    by_local.update({p.local_name: p.iri for p in onto.properties_for(category)})
    roles = {role: by_local[name] for role, name in ROLE_NAMES.items() if name in by_local}
    entity, document = roles.get("entity"), roles.get("document")

    def is_a(c: str, sup: str | None) -> bool:
        return sup is not None and (c == sup or sup in onto.ancestors(c))

    mention = frozenset(c for c in classes if is_a(c, entity) and not is_a(c, document) and c != entity and c not in PATTERN_CLASSES)
    head_cues, ambiguous = _head_cues(onto, classes, mention, category, by_local, document)
    # Lowercase common nouns become mentions only for the category's own classes (the concepts
    # the category is about: penalties, targets, test methods) and only with unambiguous cues.
    own = sorted({" ".join(k) for k, c in head_cues.items() if classes[c].ontology == category and k not in ambiguous},
                 key=len, reverse=True)  # fmt: skip
    rules, triggers = _rules_and_triggers(onto, category, mention)
    titled = frozenset(c for c in mention for e in DOCUMENT_STAND_INS.values() if is_a(c, by_local.get(e)))
    doc_heads = sorted({k[0] for k, c in head_cues.items() if len(k) == 1 and c in titled}, key=len, reverse=True)
    geo_units = frozenset(k[0] for k, c in head_cues.items() if len(k) == 1 and c == roles.get("geo"))
    forms = sorted(triggers, key=len, reverse=True)
    deadline_words = {w.lower() for name in ("deadline", "has_deadline") if name in roles
                      for w in _labels(onto, roles[name])}  # fmt: skip
    target_words = sorted(_labels(onto, roles["target"]), key=len, reverse=True) if "target" in roles else []
    return CategoryLexicon(
        category=category,
        roles=MappingProxyType(roles),
        mention_classes=mention,
        head_cues=MappingProxyType(head_cues),
        max_cue_len=max((len(k) for k in head_cues), default=1),
        generic_re=re.compile(r"(?:" + trie_pattern(own) + r")(?:s|es)?\b") if own else None,
        deictic_re=re.compile(r"([Tt]h(?:is|ese|e))\s+(" + trie_pattern(_both_cases(doc_heads))
                              + r")(?:s|es)?\b") if doc_heads else None,  # fmt: skip
        geo_of_re=re.compile(r"(?:" + trie_pattern(_both_cases(sorted(geo_units | {"republic", "kingdom"})))
                             + r")\s+of\s+(?:the\s+)?[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)*"),  # fmt: skip
        geo_name_re=re.compile(r"(?:" + trie_pattern([u.capitalize() for u in geo_units]) + r")\b"),
        class_cues=MappingProxyType({c: frozenset(" ".join(k) for k, v in head_cues.items() if v == c) for c in mention}),
        trigger_re=re.compile(r"(?:" + trie_pattern(_both_cases(forms)) + r")\b") if forms else None,
        triggers=MappingProxyType({f: tuple(t) for f, t in triggers.items()}),
        rules=MappingProxyType(rules),
        actor_classes=frozenset(c for c in mention if is_a(c, roles.get("actor"))),
        titled_classes=titled,
        geo_units=geo_units,
        datatypes=MappingProxyType({p.iri: p.range[0] for p in onto.properties_for(category)
                                    if p.kind == "datatype" and len(p.range) == 1}),  # fmt: skip
        deadline_re=re.compile(
            r"\b(?:" + "|".join(map(re.escape, sorted(deadline_words or {"by"}, key=len, reverse=True)))
            + r")\s+(?:(?:the\s+)?end\s+of\s+)?(?:the\s+)?$", re.I),  # fmt: skip
        target_re=_words_re(target_words, plural=True) if target_words else None,
    )


def trie_pattern(words: list[str]) -> str:
    """A regex alternation of ``words`` factored into a prefix tree. Python's ``re`` tries the
    branches of a flat alternation one by one; the tree makes a 300-word trigger list cheap."""
    tree: dict = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        end = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if end:
            return "(?:" + body + ")?" if len(branches) > 1 or len(body) > 1 else body + "?"
        return body

    return emit(tree)


def _both_cases(words: list[str]) -> list[str]:
    # Case-sensitive alternations keep SRE's first-character prefilter (re.I disables it).
    return sorted({w for word in words for w in (word, word[:1].upper() + word[1:])})


def _labels(onto: OntologySet, iri: str) -> list[str]:
    term = onto.classes.get(iri) or onto.properties.get(iri)
    return [x for x in (term.label, *term.alt_labels) if x] if term else []


def _words_re(words: list[str], plural: bool) -> re.Pattern[str]:
    alt = trie_pattern(words)
    return re.compile(r"(?:" + alt + r")" + (r"(?:s|es)?" if plural else "") + r"\b", re.I)


def _head_cues(onto, classes, mention, category, by_local, document):
    """Cue → class, with one class per cue: an exact rdfs:label wins, then the more specific
    class, then the category's own ontology over core, then the IRI (for determinism)."""
    candidates: dict[tuple[str, ...], list[str]] = {}
    for iri, cls in classes.items():
        target = iri if iri in mention else _stand_in(onto, iri, document, by_local, mention)
        if target is None:
            continue
        for cue in {cls.label, *cls.alt_labels}:
            if cue and not _NOT_A_HEAD.match(cue):
                key = tuple(singular(w) for w in cue.lower().split())
                candidates.setdefault(key, []).append(iri)

    def rank(key: tuple[str, ...], iri: str) -> tuple:
        cls = classes[iri]
        is_doc = iri not in mention  # a direct Entity cue beats a document class's cue
        exact = tuple(singular(w) for w in cls.label.lower().split()) == key
        return (is_doc, not exact, -len(onto.ancestors(iri)), cls.ontology != category, iri)

    out: dict[tuple[str, ...], str] = {}
    ambiguous: set[tuple[str, ...]] = set()
    for key, iris in candidates.items():
        resolved = {i if i in mention else _stand_in(onto, i, document, by_local, mention) for i in iris}
        best = min(iris, key=lambda i: rank(key, i))
        out[key] = best if best in mention else _stand_in(onto, best, document, by_local, mention)
        if len(resolved) > 1:
            ambiguous.add(key)
    return out, frozenset(ambiguous)


def _stand_in(onto, iri, document, by_local, mention) -> str | None:
    if document is None or (iri != document and document not in onto.ancestors(iri)):
        return None
    for doc_class, entity_class in DOCUMENT_STAND_INS.items():
        top = by_local.get(doc_class)
        if top and (iri == top or top in onto.ancestors(iri)) and by_local.get(entity_class) in mention:
            return by_local[entity_class]
    return None


def _rules_and_triggers(onto, category, mention) -> tuple[dict[str, PropertyRule], dict[str, list[Trigger]]]:
    """Relations only for object properties whose domain and range admit some mention class;
    structural ones (chunk/section/community links) drop out by that test alone."""
    rules: dict[str, PropertyRule] = {}
    triggers: dict[str, list[Trigger]] = {}
    for prop in onto.properties_for(category):
        if prop.kind != "object" or prop.iri in PATTERN_PROPERTIES:
            continue

        def fitting(members: tuple[str, ...]) -> frozenset[str]:
            return frozenset(c for c in mention if c in members or onto.ancestors(c) & set(members))

        dom, rng = fitting(prop.domain), fitting(prop.range)
        if not dom or not rng:
            continue
        rules[prop.iri] = PropertyRule(prop.iri, dom, rng)
        # The altLabels carry the wording; labels are names ("has deadline", "issues").
        for phrase in {a.strip().lower() for a in prop.alt_labels if a.strip()}:
            adjacent = phrase in FUNCTION_WORDS
            forms = {phrase: False} if adjacent else verb_forms(phrase)
            for form, participle in forms.items():
                triggers.setdefault(form, []).append(Trigger(prop.iri, participle, adjacent))
    for form in triggers:
        triggers[form].sort(key=lambda t: t.property_iri)
    return rules, triggers


def pkb_local(iri: str) -> str:
    """``pkb:Agency`` style short form, for messages and prompts."""
    return "pkb:" + iri[len(PKB) :] if iri.startswith(PKB) else iri
