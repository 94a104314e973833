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
    policy       What does 'personal data' mean under the GDPR?      (JOIN (R [ definition ]) [ personal data (GDPR) ])
                 Within how many hours must one notify the breach?  (JOIN (R [ time limit ]) [ notify the breach ])

Policy facts (kgpipeline/extract/policy_facts.py) are asked about in the shapes of
:mod:`spr.parsing.policy_forms`, so a trained parser learns what the rule parser already knows.

Examples are split by S-expression (every phrasing of one logical form on the same side), so the
dev split measures parsing of unseen forms, not recall of seen ones.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.text import past_participle, plural, third_person, verb_base
from spr.grounding.relations import EXCLUDED, term_for
from spr.grounding.sexpr import Class, Label, to_text
from spr.parsing.policy_forms import question_label
from store.base import RDFStore
from store.vocab import PKB, RDF, RDFS, SKOS, XSD
from store.vocabulary import Term


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
    """Entity-to-entity relation triples with the entities' labels and most specific types.

    Three flat queries (the relation triples, the labels, the types) joined here: one query with
    OPTIONAL labels × types and GROUP BY ran for minutes on a 20k-triple KB.
    """
    triples = store.select(
        f"""SELECT DISTINCT ?s ?p ?o WHERE {{ GRAPH ?g {{ ?s ?p ?o }}
            FILTER(isIRI(?o) && !STRSTARTS(STR(?s), "{PKB}") && !STRSTARTS(STR(?o), "{PKB}")) }}"""
    ).rows
    labels: dict[str, str] = {}
    alt: dict[str, str] = {}
    types: dict[str, str] = {}
    # The smallest value wins, so the result does not depend on the store's order.
    for table, query in ((labels, f"?e <{SKOS}prefLabel>|<{RDFS}label> ?l"), (alt, f"?e <{SKOS}altLabel> ?l"),
                         (types, f"?e <{RDF}type> ?l")):  # fmt: skip
        for r in store.select(f"SELECT ?e ?l WHERE {{ {query} }}").rows:
            e, v = r["e"].value, r["l"].value  # type: ignore[union-attr]
            if e not in table or v < table[e]:
                table[e] = v
    facts = []
    for s, p, o in sorted({(r["s"].value, r["p"].value, r["o"].value) for r in triples}):  # type: ignore[union-attr]
        if p in EXCLUDED or s not in labels or o not in labels:
            continue
        facts.append(_Fact(s, p, o, alt.get(s) or labels[s], alt.get(o) or labels[o], types.get(s, ""), types.get(o, "")))
        if len(facts) >= limit:
            break
    return facts


def read_dates(store: RDFStore, limit: int = 2000) -> list[tuple[str, str, str]]:
    """(property, date lexical "YYYY-MM-DD", subject type) of date-valued attributes: xsd:dateTime
    (what policykb writes) or xsd:date (KBs built by older versions)."""
    rows = store.select(
        f"""SELECT DISTINCT ?p ?d ?t WHERE {{ ?s ?p ?o FILTER(DATATYPE(?o) IN (<{XSD}dateTime>, <{XSD}date>))
            BIND(SUBSTR(STR(?o), 1, 10) AS ?d) OPTIONAL {{ ?s <{RDF}type> ?t }} }} ORDER BY ?p ?d LIMIT {int(limit)}"""
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


# Policy-fact relations and how questions about them are asked ({x}: the term, or the provision's action).
_POLICY_ASK: dict[str, tuple[str, ...]] = {
    "definition": ("What does '{x}' mean{act}?", "How is '{x}' defined{act}?", "What is meant by '{x}'{act}?",
                   "What is a '{x}'{act}?"),
    "time limit": ("Within how many days must one {x}?", "What is the time limit to {x}?", "How long is there to {x}?",
                   "Is there a time limit to {x}, and how long is it?"),
    "amount": ("How much is at stake when they {x}?", "What is the maximum amount where they {x}?",
               "Could they be fined where they {x}, and up to how much?"),
    "percentage": ("What percentage applies where they {x}?", "What share is set where they {x}?"),
    "target amount": ("What is the target for {x}?", "What target is set for {x}, and for which year?",
                        "By how much must {x} change?"),
    "has deadline": ("By when must one {x}?", "What is the deadline to {x}?", "By what date must they {x}?"),
    "has date": ("From what date does it {x}?", "When does it {x}?"),
    "addressee": ("Who must {x}?", "Who shall {x}?", "Which authority must {x}?", "Is anyone required to {x}, and who?"),
}
_POLICY_PROPERTIES = {"definition": "definition", "timeLimit": "time limit", "amount": "amount", "percentage": "percentage",
                      "hasDeadline": "has deadline", "hasDate": "has date", "addressee": "addressee",
                      "targetAmount": "target amount"}  # fmt: skip


def read_policy_facts(store: RDFStore, limit: int = 3000) -> list[tuple[str, str]]:
    """(relation label, what the question names) for the KB's policy facts: a defined term's label,
    the first words of a provision's action (its label holds the whole clause), or what a
    target measures."""
    values = " ".join(f"<{PKB}{local}>" for local in _POLICY_PROPERTIES)
    rows = store.select(
        f"""SELECT DISTINCT ?p ?l WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?o .
            {{ ?s <{PKB}action> ?l }} UNION {{ ?s a <{PKB}DefinedTerm> ; <{SKOS}prefLabel> ?l }}
            UNION {{ ?s <{PKB}targetScope> ?l }} }}
            ORDER BY ?p ?l LIMIT {int(limit)}"""
    ).rows
    out = []
    for r in rows:
        label, name = _POLICY_PROPERTIES[r["p"].value[len(PKB) :]], " ".join(r["l"].value.split())  # type: ignore[union-attr]
        out.append((label, name if label == "definition" else " ".join(name.split()[:10]).rstrip(",.;")))
    return out


def synthesize_policy(facts: Sequence[tuple[str, str]], seed: int = 13, per_form: int = 2, per_relation: int = 150) -> list[Example]:
    """Questions in the policy shapes with their S-expressions (at most ``per_relation`` facts each). Pure."""
    rng = random.Random(seed)
    out: list[Example] = []
    used: dict[str, int] = {}
    for label, name in facts:
        if used.get(label, 0) >= per_relation or not name:
            continue
        used[label] = used.get(label, 0) + 1
        if label == "definition":
            term, _, act = name.partition(" (")
            x, act_text = term, f" under the {act.rstrip(')')}" if act else ""
        else:
            x, act_text = name[:1].lower() + name[1:], ""
        asks = _POLICY_ASK[label]
        for template in rng.sample(asks, min(per_form, len(asks))):
            question = template.format(x=x, act=act_text)
            target = name if label == "definition" else question_label(question)  # as the rule parser labels it
            out.append(Example(question, f"(JOIN (R [ {label} ]) {to_text(Label(target))})", "policy"))
    return out


def split_dev(examples: Sequence[Example], dev_fraction: float = 0.1, seed: int = 13) -> tuple[list[Example], list[Example]]:
    """(train, dev), grouped by S-expression: a logical form is never on both sides."""
    cut = int(dev_fraction * 1000)
    train, dev = [], []
    for ex in examples:
        bucket = zlib.crc32(f"{seed}:{ex.sexpr}".encode()) % 1000
        (dev if bucket < cut else train).append(ex)
    return train, dev
