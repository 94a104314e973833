"""Deterministic latent questions: extracted facts and key sentences turned into natural questions.

Facts are phrased from the ontology, never from a fixed list of relations: a property's label
("establishes") and its verb altLabels ("set up", "create") give several phrasings per fact, the
classes give the question word (an Actor is asked about with "who", a place with "where", a date
or deadline with "when") and the noun of "which <class>" questions. Key sentences give the
questions a fact cannot: an obligation with a deadline ("When must ...?"), an obligation ("Who
must ...?"), a definition ("What is X?", cues from the ontology's definition properties) and a
"The <noun phrase> is ..." statement ("What is <noun phrase>?").

Phrasings come back ranked; :func:`interleave` takes the first phrasing of every fact and
sentence before any second one, so a per-chunk cap drops paraphrases before it drops facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from core.text import split_sentences, verb_base
from kgpipeline.extract.lexicon import verb_forms
from kgpipeline.ontology import OntologySet
from store.vocab import PKB

# Class (local name) → question word; the first ancestor found in this order wins.
WH_WORDS = (("Actor", "Who"), ("GeographicalArea", "Where"), ("Deadline", "When"), ("Date", "When"),
            ("Funds", "How much"))  # fmt: skip
NO_ARTICLE = frozenset({"GeographicalArea", "Date", "Deadline", "Funds"})  # proper places and values
MODALS = r"shall|must|should|will|is required to|are required to|has to|have to"
DETERMINERS = frozenset({"the", "a", "an", "this", "these", "that", "those", "each", "every", "all", "its", "their"})
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
DATE = (
    rf"(?:\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?|{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|{_MONTH}\s+\d{{4}}"
    r"|\d{4}-\d{2}-\d{2}|\d{4})"
)
_MARKUP = re.compile(r"^\s*(?:#+\s.*|[-*•]\s+|\d+[.)]\s+|\(\w{1,4}\)\s+)")
_TERM_HEADING = re.compile(r"^\s*#*\s*\d+(?:\.\d+)+\.?\s+(?P<term>[^\d\s][^.;:]{1,60})$")
PRONOUNS = frozenset({"it", "they", "this", "these", "he", "she", "we", "you"})


@dataclass(frozen=True)
class EntityView:
    """An entity as one chunk shows it: ``names`` are its surface forms there, longest first."""

    iri: str
    class_iri: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class FactView:
    """One extracted triple of a chunk; ``object`` is None for an attribute (then ``value``)."""

    subject: EntityView
    property_iri: str
    object: EntityView | None = None
    value: str = ""


@dataclass(frozen=True)
class PropertyPhrases:
    label: str  # "establishes"
    base: str  # "establish"; "" when the label is not a verb phrase
    alternatives: tuple[tuple[str, str], ...]  # (third person, past) of other verb altLabels


@dataclass(frozen=True)
class Phrasebook:
    """What the templates need from the ontology, compiled once."""

    properties: Mapping[str, PropertyPhrases]
    wh: Mapping[str, str]  # class IRI → question word
    class_label: Mapping[str, str]  # class IRI → lowercase label
    bare: frozenset[str]  # classes named without an article
    definition_cues: tuple[str, ...]  # verbs: "means", "is defined as"
    glossary_cues: tuple[str, ...]  # headings of a definitions section: "terms and definitions"
    synonyms: Mapping[str, tuple[str, ...]]  # verb phrase → other verb altLabels of its properties
    deadline_cues: tuple[str, ...]

    @classmethod
    def from_ontology(cls, onto: OntologySet) -> Phrasebook:
        wh: dict[str, str] = {}
        bare: set[str] = set()
        for iri in onto.classes:
            lineage = {iri, *onto.ancestors(iri)}
            wh[iri] = next((w for name, w in WH_WORDS if PKB + name in lineage), "What")
            if any(PKB + name in lineage for name in NO_ARTICLE):
                bare.add(iri)
        props = {iri: _phrases(p.label, p.alt_labels) for iri, p in onto.properties.items() if p.label}

        def cues(*locals_: str) -> tuple[str, ...]:
            found = {a.lower() for n in locals_ if PKB + n in onto.properties for a in onto.properties[PKB + n].alt_labels}
            return tuple(sorted(found, key=len, reverse=True))

        definition_all = cues("definitionText", "defines")
        glossary = tuple(c for c in definition_all if "definition" in c)
        # Cues that read as a statement ("means", "is defined as"); a bare "define" would turn
        # "The Commission shall define ..." into a definition of "The Commission shall".
        definition = tuple(c for c in definition_all if "definition" not in c and (" " in c or c.endswith("s")))
        deadline = tuple(c for c in cues("hasDeadline") if c not in {"deadline", "within"})
        return cls(
            MappingProxyType(props),
            MappingProxyType(wh),
            MappingProxyType({i: c.label.lower() for i, c in onto.classes.items() if c.label}),
            frozenset(bare),
            definition or ("means", "is defined as", "refers to"),
            glossary or ("definitions",),
            # Synonyms only among relations: datatype labels ("report" → "summary") are nouns.
            MappingProxyType(_synonyms({i: v for i, v in props.items() if onto.properties[i].kind == "object"})),
            deadline or ("by", "no later than", "before"),
        )


def _phrases(label: str, alt_labels: Iterable[str]) -> PropertyPhrases:
    base = ""
    alternatives: list[tuple[str, str]] = []
    for alt in sorted({a.strip().lower() for a in alt_labels if a.strip()}):
        forms = list(verb_forms(alt))
        # Not a plain verb: "in accordance with", "be subject to", "print and distribute".
        first = alt.split()[0]
        inflected = (first.endswith("s") and not first.endswith("ss")) or first.endswith("ed")  # "applies to"
        if len(forms) < 3 or alt.startswith("be ") or " and " in alt or inflected:
            continue
        if label.lower() in forms:
            base = alt
            continue
        past = next((f for f, participle in verb_forms(alt).items() if participle), forms[0])
        alternatives.append((forms[1], past))
    return PropertyPhrases(label.lower(), base, tuple(alternatives))


def _synonyms(props: Mapping[str, PropertyPhrases]) -> dict[str, tuple[str, ...]]:
    groups: dict[str, set[str]] = {}
    for p in props.values():
        verbs = {p.base} if p.base else set()
        verbs |= {next(iter(verb_forms(_base_of(third))), "") for third, _ in p.alternatives}
        verbs.discard("")
        for v in verbs:
            groups.setdefault(v, set()).update(verbs - {v})
    return {v: tuple(sorted(others, key=lambda s: (len(s), s))) for v, others in groups.items()}


def _base_of(third: str) -> str:
    """Undo the third person of a verb phrase ("sets up" → "set up", "applies to" → "apply to")."""
    first, _, rest = third.partition(" ")
    return f"{verb_base(first)} {rest}".strip()


# --- facts ------------------------------------------------------------------------------------


def mention(entity: EntityView, book: Phrasebook, shortest: bool = False) -> str:
    name = entity.names[-1] if shortest else entity.names[0]
    first = name.split(" ", 1)[0]
    if entity.class_iri in book.bare or first.lower() in DETERMINERS or name[:1].isdigit() or first.isupper():
        return name
    return "the " + name


def fact_questions(fact: FactView, book: Phrasebook) -> list[str]:
    """Ranked phrasings of one fact (empty when the property has no label)."""
    phrases = book.properties.get(fact.property_iri)
    if phrases is None:
        return []
    s, s_short = mention(fact.subject, book), mention(fact.subject, book, shortest=True)
    wh_s = book.wh.get(fact.subject.class_iri, "What")
    s_class = book.class_label.get(fact.subject.class_iri, "body")
    if fact.object is None:
        return [f"What is the {phrases.label} of {s}?"] if wh_s != "When" else []
    o, o_short = mention(fact.object, book), mention(fact.object, book, shortest=True)
    wh_o = book.wh.get(fact.object.class_iri, "What")
    label = phrases.label
    if phrases.base:
        out = [f"{wh_s} {label} {o}?", f"{wh_o} does {s} {phrases.base}?"]
        for third, past in phrases.alternatives:
            out += [f"Which {s_class} {past} {o_short}?", f"{wh_s} {third} {o}?"]
        if s_short != s or o_short != o:
            out.append(f"{wh_s} {label} {o_short}?")
        return out
    words = label.split()
    if words[0] == "has" and len(words) > 1:
        noun = " ".join(words[1:])
        lead = f"When is the {noun} for {s}?" if wh_o == "When" else f"What is the {noun} of {s}?"
        return [lead, f"What {noun} does {s_short} have?", f"Which {s_class} has {o} as {noun}?"]
    if words[0].endswith("ed"):  # a participle: "located in", "measured by"
        tail = " ".join(words[:-1]) if wh_o == "Where" and len(words) > 1 else label
        return [f"{wh_o} is {s} {tail}?", f"{wh_s} is {label} {o}?"]
    return [f"{wh_s} {label} {o}?", f"What is the {label} of {s}?"]


# --- key sentences ------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    """Sentences of a chunk, headings and list markers dropped."""
    out: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        line = _MARKUP.sub("", line).strip()
        out += [s for s in split_sentences(line) if len(s.split()) >= 3]
    return out


def defined_terms(text: str, book: Phrasebook) -> list[list[str]]:
    """Questions about the terms of a glossary ("3.1 inverter" under "Terms and definitions"):
    numbered sub-headings count as terms only in a chunk that names such a section."""
    if not any(cue in text.casefold() for cue in book.glossary_cues):
        return []
    out = []
    for line in text.splitlines():
        found = _TERM_HEADING.match(line)
        if found and len(found["term"].split()) <= 6 and not any(c in found["term"].casefold() for c in book.glossary_cues):
            term = found["term"].strip()
            out.append([f"What is {term}?", f"How is {term} defined?", f"What does {term} mean?"])
    return out


def _lead(phrase: str) -> str:
    """A sentence-initial noun phrase for the middle of a question ("The X" → "the X")."""
    first, _, rest = phrase.partition(" ")
    return (first.lower() if first.lower() in DETERMINERS or first == "It" else first) + (f" {rest}" if rest else "")


def _clause(text: str, max_words: int = 18) -> str:
    """The first clause of a predicate, at most ``max_words`` words, without final punctuation."""
    text = re.split(r"[;:]|,\s+(?:and|but|which|while|where)\s|\.\s", text.strip(), maxsplit=1)[0]
    return " ".join(text.split()[:max_words]).rstrip(" .,!?")


def _core(action: str) -> str:
    """The verb and its object without trailing adjuncts ("establish a Center in the city of
    Aldby" → "establish a Center"): short questions match short user questions better."""
    cut = re.search(r"(?<!\bup)\s(?:in|at|on|to|from|for|with|within|under|through|during|every|each)\s", action)
    if cut is None or len(action[: cut.start()].split()) < 2:
        return action
    return action[: cut.start()]


def _head_names(text: str) -> str:
    """Long capitalized names cut to their last two words ("a National Energy Monitoring Center" →
    "a Monitoring Center"): user questions name things briefly, and MiniLM rewards that."""
    return re.sub(r"\b(?:[A-Z][\w-]*\s+)+([A-Z][\w-]*\s+[A-Z][\w-]*)\b", r"\1", text)


def _variants(action: str, book: Phrasebook, limit: int = 4) -> list[str]:
    """``action`` itself (when it changed) and with its verb replaced by ontology synonyms."""
    lower = action.lower()
    verb = max((v for v in book.synonyms if lower == v or lower.startswith(v + " ")), key=len, default="")
    out = [action]
    if verb:
        out += [s + action[len(verb) :] for s in book.synonyms[verb][:limit]]
    return out


def sentence_questions(sentence: str, book: Phrasebook) -> list[str]:
    """Ranked questions one key sentence answers; [] for a sentence that is not a key sentence."""
    text = sentence.strip().rstrip(".!?; ")
    deadline = re.compile(
        rf"\s*,?\s*\b(?:{'|'.join(map(re.escape, book.deadline_cues))})\s+(?:the\s+end\s+of\s+)?{DATE}\b"
        r"(?:\s+(?:of|in)\s+(?:each|every|the)\s+year)?", re.I,
    )  # fmt: skip
    definition = re.match(
        rf"^(?:for the purposes? of [^,]+,\s*)?[\"“‘']?(?P<term>[^\"”’',]{{2,80}}?)[\"”’']?\s+"
        rf"(?:{'|'.join(map(re.escape, book.definition_cues))})\s+\S",
        text, re.I,
    )  # fmt: skip
    if definition and len(definition["term"].split()) <= 8 and not re.search(rf"\b(?:{MODALS})\b", definition["term"]):
        term = _lead(definition["term"].strip())
        return [f"What is {term}?", f"What does {term} mean?", f"How is {term} defined?"]
    modal = re.search(rf"\s\b(?P<modal>{MODALS})\b\s+(?:not\s+)?", text)
    if modal:
        subject, predicate = text[: modal.start()].strip(), text[modal.end() :]
        subject = re.sub(r"^(?:\w+\s?){1,2},\s+", "", subject)  # "First, it ..." / "In addition, the ..."
        if not subject or len(subject.split()) > 12:
            return []
        subj = _lead(subject)
        has_deadline = deadline.search(predicate) is not None
        action = _clause(deadline.sub("", predicate))
        if not action:
            return []
        out = [f"When must {subj} {action}?", f"By when shall {subj} {action}?"] if has_deadline else []
        out.append(f"Who must {action}?")
        short = _core(action)
        if short != action:
            out.append(f"Who must {short}?")
        out += [f"Who must {v}?" for v in _variants(_head_names(short), book)]
        if subj.split()[0].lower() not in PRONOUNS:
            out.append(f"What must {subj} do?")
        if has_deadline:
            out.append(f"What is the deadline for {subj} to {action}?")
        return out
    copula = re.match(r"^(?P<subj>\S+\s[^,;:]{2,80}?)\s+(?P<cop>is|are|was|were|will be)\s+(?P<rest>\S.*)$", text)
    if copula and copula["subj"].split()[0].lower() in DETERMINERS - {"this", "these", "that", "those"}:
        if len(copula["subj"].split()) <= 10:
            verb = "are" if copula["cop"] in ("are", "were") else "is"
            rest = copula["rest"].split()[0]
            if rest.endswith("ed") and not rest[:1].isdigit():  # passive: ask for the participle phrase
                return [f"What {verb} {_clause(copula['rest'], 10)}?"]
            return [f"What {verb} {_lead(copula['subj'])}?"]
    return []


def interleave(ranked: Sequence[Sequence[tuple[str, str]]], limit: int) -> list[tuple[str, str]]:
    """Round-robin over ranked lists of (question, origin), exact duplicates (casefolded) dropped."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    depth = max((len(r) for r in ranked), default=0)
    for rank in range(depth):
        for phrasings in ranked:
            if rank < len(phrasings):
                text, origin = phrasings[rank]
                q = " ".join(text.split())
                if q.casefold() not in seen:
                    seen.add(q.casefold())
                    out.append((q, origin))
                    if len(out) >= limit:
                        return out
    return out


_CLAUSE_SUBJECT = re.compile(
    r"^(?P<subj>[A-Z\"“][^,;:()]{1,70}?)\s+(?P<verb>is|are|was|were|has|have|had|[a-z]{3,}(?:ed|es|s))\s+(?P<rest>\S.{3,})$"
)


def generic_questions(sentence: str) -> list[str]:
    """Fallback questions for a plain declarative sentence that no policy pattern matched.

    Descriptive text (encyclopaedic passages, recitals) rarely has modals or definitions, and a
    chunk without latent questions is unreachable through the question bank. So a sentence
    "<Subject> <verb> <rest>" yields the two questions it answers: one about its subject ("What
    is known about <Subject>?") and one asking for the subject ("Who or what <verb> <rest>?").
    """
    text = " ".join(sentence.split()).rstrip(".!?; ")
    match = _CLAUSE_SUBJECT.match(text)
    if not match:
        return []
    subject = match["subj"].strip("\"“” ")
    first = subject.split()[0].lower()
    if first in PRONOUNS or len(subject.split()) > 10:
        return []
    verb, rest = match["verb"], _clause(match["rest"], 14)
    topic = _lead(subject)
    return [f"What is known about {topic}?", f"Who or what {verb} {rest}?"]
