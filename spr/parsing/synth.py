"""Training data for the LoRA parser, synthesized from the ontology and the KB.

Facts come from the KB: relation triples between labelled entities (``r(s, o)``) and literal
date attributes. Phrasings come from the ontology: a property's ``rdfs:label`` and
``skos:altLabel`` values, read as verbs when the label is one ("issues" → "issued", "issue")
and as nouns otherwise ("the deadline of X"); entity names are their labels in the KB. Forms:

    1-hop        What does S issue?                  (JOIN (R [ issues ]) [ S ])
    reversed     Who issued O?                       (JOIN [ issues ] [ O ])
    2-hop        What is the deadline of what S established?  (JOIN (R [ has deadline ]) (JOIN (R [ establishes ]) [ S ]))
    count        How many policies did S issue?      (COUNT (AND [ policy ] (JOIN (R [ issues ]) [ S ])))
    typed        Which agency issued O?              (AND [ agency ] (JOIN [ issues ] [ O ]))
    dated        Which deadline has a date value before 2026-01-01?   (AND [ deadline ] (lt [ date value ] 2026-01-01))

Examples are split by S-expression (every phrasing of one logical form on the same side), so the
dev split measures parsing of unseen forms, not recall of seen ones.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.text import past_participle, plural, third_person, verb_base
from spr.grounding.relations import EXCLUDED, Term, term_for
from spr.grounding.sexpr import Class, Label, to_text
from store.base import RDFStore
from store.vocab import PKB, RDF, RDFS, SKOS, XSD


@dataclass(frozen=True)
class Example:
    question: str
    sexpr: str  # canonical S-expression text with labels
    form: str


@dataclass(frozen=True)
class _Fact:
    s: str
    p: str
    o: str
    s_name: str
    o_name: str
    s_type: str
    o_type: str


# Cue words of altLabels that are not nouns ("due by", "no later than", "as of").
_FUNCTION = frozenset("by before after within no later than of in on as at least due to for from until".split())


def verb_forms(label: str, base: bool = False) -> tuple[str, str, str] | None:
    """(base, third person, past participle) of a verbal label in the third person ("issues" →
    issue/issues/issued) or, with ``base``, in the base form ("set up"); None for labels that do
    not read as a verb here (nouns such as "children", "has deadline", participles)."""
    words = label.split()
    if not words or words[0] in ("has", "is") or words[0].endswith("ed"):
        return None
    head, rest = words[0], " ".join(words[1:])
    base_head = head if base else verb_base(head)
    if base_head == head and not base:
        return None  # not a third person
    forms = (base_head, third_person(base_head), past_participle(base_head))
    return tuple(f"{w} {rest}".strip() for w in forms)  # type: ignore[return-value]


def noun_of(label: str) -> str:
    """The noun a non-verbal label names: "has deadline" → "deadline"."""
    words = label.split()
    return " ".join(words[1:]) if len(words) > 1 and words[0] in ("has", "is") else label


def read_facts(store: RDFStore, limit: int = 5000) -> list[_Fact]:
    """Entity-to-entity relation triples with the entities' labels and most specific types."""
    rows = store.select(
        f"""SELECT ?s ?p ?o (COALESCE(SAMPLE(?sa), SAMPLE(?sl)) AS ?sn) (COALESCE(SAMPLE(?oa), SAMPLE(?ol)) AS ?on)
          (SAMPLE(?st) AS ?stype) (SAMPLE(?ot) AS ?otype)
        WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER(isIRI(?o) && !STRSTARTS(STR(?s), "{PKB}") && !STRSTARTS(STR(?o), "{PKB}"))
          ?s <{SKOS}prefLabel>|<{RDFS}label> ?sl . ?o <{SKOS}prefLabel>|<{RDFS}label> ?ol .
          OPTIONAL {{ ?s <{SKOS}altLabel> ?sa }} OPTIONAL {{ ?o <{SKOS}altLabel> ?oa }}
          OPTIONAL {{ ?s <{RDF}type> ?st }} OPTIONAL {{ ?o <{RDF}type> ?ot }} }}
        GROUP BY ?s ?p ?o ORDER BY ?s ?p ?o LIMIT {int(limit)}"""
    ).rows
    facts = []
    for r in rows:
        if r["p"].value in EXCLUDED:  # type: ignore[union-attr]
            continue
        get = lambda k, r=r: r[k].value if r[k] is not None else ""  # noqa: E731
        facts.append(_Fact(get("s"), get("p"), get("o"), get("sn"), get("on"), get("stype"), get("otype")))
    return facts


def read_dates(store: RDFStore, limit: int = 2000) -> list[tuple[str, str, str]]:
    """(property, date lexical, subject type) of date-valued attributes."""
    rows = store.select(
        f"""SELECT DISTINCT ?p ?d ?t WHERE {{ ?s ?p ?d FILTER(DATATYPE(?d) = <{XSD}date>)
            OPTIONAL {{ ?s <{RDF}type> ?t }} }} ORDER BY ?p ?d LIMIT {int(limit)}"""
    ).rows
    return [(r["p"].value, r["d"].value, r["t"].value if r["t"] is not None else "") for r in rows]  # type: ignore[union-attr]


def synthesize(
    facts: Sequence[_Fact],
    dates: Sequence[tuple[str, str, str]],
    properties: Mapping[str, Term],
    classes: Mapping[str, Term],
    seed: int = 13,
    per_form: int = 2,
) -> list[Example]:
    """Questions with their S-expressions, ``per_form`` phrasings per fact and form. Pure."""
    rng = random.Random(seed)
    out: list[Example] = []

    def name_of_class(iri: str) -> str:
        return term_for(iri, classes).label if iri else "entity"

    def phrase(p: str) -> tuple[str, list[str], list[tuple[str, str, str]]]:
        """(label, noun phrasings, verb phrasings): a verbal property (its label is a verb in
        the third person) is asked about with verbs, any other with nouns."""
        term = term_for(p, properties)
        main = verb_forms(term.label) if p in properties else None
        if main is None:
            nouns = [noun_of(t) for t in (term.label, *term.alt_labels) if len(t.split()) <= 3 and not set(t.split()) <= _FUNCTION]
            return term.label, list(dict.fromkeys(nouns)), []
        verbs = [main] + [
            f for f in (verb_forms(a) or verb_forms(a, base=True) for a in term.alt_labels if not a.split()[0].endswith("ed")) if f
        ]
        return term.label, [], list(dict.fromkeys(verbs))

    def add(form: str, questions: list[str], expr: str) -> None:
        for q in rng.sample(questions, min(per_form, len(questions))):
            out.append(Example(q, expr, form))

    by_subject: dict[str, list[_Fact]] = {}
    for f in facts:
        by_subject.setdefault(f.s, []).append(f)
    for f in facts:
        label, nouns, verbs = phrase(f.p)
        rel, s_lab, o_lab = f"[ {label} ]", to_text(Label(f.s_name)), to_text(Label(f.o_name))
        forward = [f"What is the {n} of {f.s_name}?" for n in nouns] + [f"{f.s_name} 's {n}?" for n in nouns[:2]]
        backward = [f"Whose {n} is {f.o_name}?" for n in nouns[:2]]
        o_cls, s_cls = name_of_class(f.o_type), name_of_class(f.s_type)
        typed_fw, typed_bw, counted = [], [], []
        for base, third, past in verbs:
            forward += [f"What does {f.s_name} {base}?", f"What did {f.s_name} {base}?", f"What is {past} by {f.s_name}?"]
            backward += [f"Who {past} {f.o_name}?", f"What {third} {f.o_name}?", f"By whom was {f.o_name} {past}?"]
            typed_fw += [f"Which {o_cls} does {f.s_name} {base}?", f"Which {o_cls} was {past} by {f.s_name}?"]
            typed_bw += [f"Which {s_cls} {past} {f.o_name}?"]
            counted += [f"How many {plural(o_cls)} did {f.s_name} {base}?", f"How many {plural(o_cls)} are {past} by {f.s_name}?"]
        one_hop = f"(JOIN (R {rel}) {s_lab})"
        add("1-hop", forward, one_hop)
        add("reversed", backward, f"(JOIN {rel} {o_lab})")
        if typed_fw:
            add("typed", typed_fw, f"(AND {to_text(Class(Label(o_cls)))} {one_hop})")
            add("typed", typed_bw, f"(AND {to_text(Class(Label(s_cls)))} (JOIN {rel} {o_lab}))")
            add("count", counted, f"(COUNT (AND {to_text(Class(Label(o_cls)))} {one_hop}))")
        for g in by_subject.get(f.o, [])[:3]:
            label2, nouns2, verbs2 = phrase(g.p)
            two = [f"What is the {n2} of the {n1} of {f.s_name}?" for n1 in nouns[:2] for n2 in nouns2[:2]]
            two += [f"{f.s_name} 's {n1} 's {n2}?" for n1 in nouns[:1] for n2 in nouns2[:2]]
            two += [f"What is the {n2} of what {f.s_name} {v[2]}?" for v in verbs[:1] for n2 in nouns2[:2]]
            two += [f"What does what {f.s_name} {v1[2]} {v2[0]}?" for v1 in verbs[:1] for v2 in verbs2[:2]]
            if not two:
                continue
            add("2-hop", two, f"(JOIN (R [ {label2} ]) {one_hop})")
    per_property: dict[str, int] = {}
    for p, day, typ in dates:
        per_property[p] = per_property.get(p, 0) + 1
        if per_property[p] > 12:  # a few dates per property teach the form; more only skew the mix
            continue
        label, nouns, verbs = phrase(p)
        texts = (nouns or [v[2] for v in verbs] or [label])[:1]
        cls = to_text(Class(Label(name_of_class(typ))))
        noun = name_of_class(typ)
        add("dated", [f"Which {noun} has a {t} before {day}?" for t in texts[:3]], f"(AND {cls} (lt [ {label} ] {day}))")
        add("dated", [f"Which {noun} has a {t} after {day}?" for t in texts[:3]], f"(AND {cls} (gt [ {label} ] {day}))")
        add("dated", [f"Which {noun} has a {t} in {day[:4]}?" for t in texts[:3]], f"(TC {cls} [ {label} ] {day[:4]})")
    return list(dict.fromkeys(out))


def split_dev(examples: Sequence[Example], dev_fraction: float = 0.1, seed: int = 13) -> tuple[list[Example], list[Example]]:
    """(train, dev), grouped by S-expression: a logical form is never on both sides."""
    cut = int(dev_fraction * 1000)
    train, dev = [], []
    for ex in examples:
        bucket = zlib.crc32(f"{seed}:{ex.sexpr}".encode()) % 1000
        (dev if bucket < cut else train).append(ex)
    return train, dev
