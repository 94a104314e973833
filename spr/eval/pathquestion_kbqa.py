"""PathQuestion as KBQA: the question files with gold relation paths, their KBs as RDF, and a split.

Used by ``bench/eval_pathquestion.py`` (training and evaluation of the semantic parsing retriever)
and by anything that trains a parser adapter for PathQuestion elsewhere (e.g. on a GPU machine): the
split is a pure function of the files and the seed, so both sides agree on it.

The KB file becomes RDF: entity IRIs with ``skos:prefLabel`` "adelaide of lowenstein" and
``skos:altLabel`` "adelaide_of_lowenstein" (the form the questions use); relations declared as
``owl:ObjectProperty`` with an ``rdfs:label`` ("cause of death"); each subject's facts form one
chunk (text and named graph), so provenance and the weights stage work as for documents. The gold S-expression of a path ``subject#r1#e1#r2#e2`` is
``(JOIN (R [ r2 ]) (JOIN (R [ r1 ]) [ subject ]))``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from core.errors import InputError
from spr.eval.pathquestion import VARIANTS, fact_sentence, parse_answers, parse_path, read_facts, readable
from spr.grounding.sexpr import Entity, Join, Label, Relation, to_text

BASE = "https://w3id.org/policykb/pq/"


@dataclass(frozen=True)
class KBQAQuestion:
    question: str
    answers: tuple[str, ...]  # readable forms, head answer first
    path: str  # the raw gold path field (questions on one path are paraphrases)
    sexpr: str  # gold S-expression (labels)

    @property
    def hops(self) -> int:
        return len(self.sexpr.split("(JOIN")) - 1


def gold_sexpr(path: list[str]) -> str:
    """subject#r1#e1#r2#e2 → (JOIN (R [ r2 ]) (JOIN (R [ r1 ]) [ subject ]))."""
    expr = Entity(Label(path[0]))
    for rel in path[1::2]:
        expr = Join(Relation(Label(readable(rel)), reverse=True), expr)
    return to_text(expr)


def files(data_dir: Path, variant: str) -> tuple[Path, Path]:
    """(question file, KB file) of a variant under ``data_dir`` (the pathquestion folder)."""
    if variant not in VARIANTS:
        raise InputError(f"unknown PathQuestion variant {variant!r}; known: {', '.join(VARIANTS)}")
    q_file, kb_file = (Path(data_dir) / f for f in VARIANTS[variant])
    for f in (q_file, kb_file):
        if not f.is_file():
            raise InputError(f"dataset file not found: {f}")
    return q_file, kb_file


def load_questions(q_file: Path) -> list[KBQAQuestion]:
    out = []
    for line in Path(q_file).read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) >= 3:
            path = cols[2].strip()
            out.append(KBQAQuestion(cols[0].strip(), parse_answers(cols[1]), path, gold_sexpr(parse_path(path))))
    return out


def split_by_path(
    questions: list[KBQAQuestion], seed: int = 13, held_share: float = 0.2
) -> tuple[list[KBQAQuestion], list[KBQAQuestion]]:
    """(train, held-out): a seeded share of the gold paths is held out whole, so no paraphrase of a
    test question is seen in training (harder than the usual random split of questions)."""
    paths = sorted({q.path for q in questions})
    random.Random(seed).shuffle(paths)
    held = set(paths[: int(len(paths) * held_share)])
    return [q for q in questions if q.path not in held], [q for q in questions if q.path in held]


def entity_iri(name: str) -> str:
    return BASE + "e/" + quote(name, safe="")


def relation_iri(name: str) -> str:
    return BASE + "r/" + quote(name, safe="")


def kb_quads(kb_file: Path) -> list[Any]:
    """The KB file as pyoxigraph quads in policykb's data model: one chunk per subject entity (its
    facts as sentences, "abaqa khan children arghun."), the facts in the chunk's named graph, and
    every entity ``pkb:mentionedIn`` the chunks that state it — so the real "weights" stage counts
    surface forms in text and finds Louvain communities over the facts, as for documents."""
    from pyoxigraph import Literal, NamedNode, Quad

    from store.vocab import OWL, PKB, RDF, RDFS, SKOS

    facts = read_facts(kb_file)
    doc, labels = NamedNode(BASE + "kb"), NamedNode(BASE + "labels")
    quads = [Quad(doc, NamedNode(RDF + "type"), NamedNode(PKB + "Document"), doc)]
    names, rels = set(), set()
    for s, pairs in facts.items():
        chunk = NamedNode(BASE + "chunk/" + quote(s, safe=""))
        text = " ".join(fact_sentence(s, r, o) for r, o in pairs)
        quads += [
            Quad(chunk, NamedNode(RDF + "type"), NamedNode(PKB + "Chunk"), doc),
            Quad(chunk, NamedNode(PKB + "partOfDocument"), doc, doc),
            Quad(chunk, NamedNode(PKB + "text"), Literal(text), doc),
        ]
        for r, o in pairs:
            quads.append(Quad(NamedNode(entity_iri(s)), NamedNode(relation_iri(r)), NamedNode(entity_iri(o)), chunk))
            rels.add(r)
        for e in {s, *(o for _, o in pairs)}:
            quads.append(Quad(NamedNode(entity_iri(e)), NamedNode(PKB + "mentionedIn"), chunk, chunk))
            names.add(e)
    for name in sorted(names):
        quads.append(Quad(NamedNode(entity_iri(name)), NamedNode(SKOS + "prefLabel"), Literal(readable(name)), labels))
        quads.append(Quad(NamedNode(entity_iri(name)), NamedNode(SKOS + "altLabel"), Literal(name), labels))
    for r in sorted(rels):
        quads.append(Quad(NamedNode(relation_iri(r)), NamedNode(RDF + "type"), NamedNode(OWL + "ObjectProperty"), labels))
        quads.append(Quad(NamedNode(relation_iri(r)), NamedNode(RDFS + "label"), Literal(readable(r)), labels))
    return quads


def relation_labels(kb_file: Path) -> list[str]:
    """The readable label of every relation of the KB file, as :func:`kb_quads` writes them (what
    the parser factory reads from a KB's properties)."""
    return sorted({readable(r) for pairs in read_facts(kb_file).values() for r, _ in pairs})


def answer_scores(predicted: list[str], gold: tuple[str, ...]) -> dict[str, float]:
    """Hits@1 (the first answer is gold), set F1 and set exact match, case-insensitive."""
    pred = list(dict.fromkeys(p.casefold() for p in predicted))
    gold_set = {g.casefold() for g in gold}
    hit = float(bool(pred) and pred[0] in gold_set)
    overlap = len(set(pred) & gold_set)
    p = overlap / len(pred) if pred else 0.0
    r = overlap / len(gold_set) if gold_set else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {"hits@1": hit, "f1": f1, "em": float(set(pred) == gold_set)}
