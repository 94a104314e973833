"""The Semantic Parsing Retriever (SPR-RAG, Algorithm 1).

    parse the question → ranked labelled S-expressions (LoRA beams, or the rule parser)
    for each parse, best first:
        ground it: entities by similarity × disambiguation weight (top-k1), relations among
        those adjacent to the candidates (top-k2), hop by hop → ranked grounded variants
        for each variant (at most ``max_variants`` over the whole question):
            compile to SPARQL, execute; the first non-empty result wins
    return the answers, the hop triples with their chunk graphs (provenance), what was tried

Retrieval makes no LLM call besides the parser's own decoding.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import Literal, NamedNode

from core.config import SPRConfig
from core.embed import Embedder
from spr.grounding.compile import CompiledQuery, Var, compile_query
from spr.grounding.ground import Grounder, Grounding, GroundingOptions
from spr.grounding.link import EntityCandidate, EntityLinker, LinkOptions
from spr.grounding.relations import ClassMatcher, RelationCandidate, RelationMatcher, term_for
from spr.grounding.sexpr import to_text
from spr.lexical import lexical_scores
from spr.parsing.candidate import ParseCandidate, SemanticParser
from spr.parsing.factory import load_parser, parse_stages
from spr.records import Fact
from spr.verbalize import date_text
from store.base import RDFStore
from store.disambiguation import read_link_weights
from store.terms import named_node, sparql_term
from store.vocab import PKB, RDFS, SKOS
from store.vocabulary import Term, label_from_iri, read_terms

_MAX_EVIDENCE_CHUNKS = 200  # chunks read to order several answers by their evidence


@dataclass(frozen=True)
class AnswerValue:
    """One answer: an entity IRI (``is_literal`` False) or a literal's lexical form."""

    value: str
    label: str
    is_literal: bool = False
    datatype: str = ""


@dataclass(frozen=True)
class SPRResult:
    """What the retriever found and how.

    ``parser`` names the parser used ("lora" or "rules"); ``parses`` are its ranked outputs.
    ``sexpr``/``grounded``/``sparql`` belong to the variant that answered (or, when none did, the
    top parse and the first variant tried). ``triples`` are the hop triples with the chunk graphs
    that state them. ``entities``/``relations`` are the candidates of the answering variant (all
    candidates considered for the top parse when nothing answered). ``timings_ms``: parse, ground,
    execute, total. ``note`` says why nothing was found.
    """

    question: str
    parser: str
    parses: tuple[str, ...]
    sexpr: str = ""
    grounded: str = ""
    sparql: str = ""
    answers: tuple[AnswerValue, ...] = ()
    count: int | None = None
    triples: tuple[Fact, ...] = ()
    entities: tuple[EntityCandidate, ...] = ()
    relations: tuple[RelationCandidate, ...] = ()
    score: float = 0.0
    parse_score: float = 0.0  # the answering parse's rank score in [0, 1]
    variants_tried: int = 0
    weights_used: bool = False
    note: str = ""
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return bool(self.answers) or bool(self.count)


class SemanticParsingRetriever:
    """Constructor-injected store and embedder; the parser defaults to the KB's configuration."""

    def __init__(
        self,
        store: RDFStore,
        embedder: Embedder,
        kb_dir: Path,
        config: SPRConfig | None = None,
        parser: SemanticParser | None = None,
    ):
        self.store = store
        self.config = config or SPRConfig()
        c = self.config
        self.properties: dict[str, Term] = read_terms(store, "property")
        weights = read_link_weights(store) if c.use_weights else []
        self.linker = EntityLinker.from_kb(kb_dir, embedder, weights, LinkOptions.from_config(c))
        self.grounder = Grounder(
            store,
            self.linker,
            RelationMatcher(store, embedder, self.properties, top_k=c.relation_top_k, flip_penalty=c.flip_penalty,
                            min_similarity=c.relation_min_similarity),
            ClassMatcher(embedder, read_terms(store, "class")),
            GroundingOptions(c.beam, c.anchor_limit, c.class_drop_penalty, c.constrained_k),
        )
        self.parser = parser or load_parser(
            c.parser, kb_dir, self.properties, c.parser_beams, c.max_new_tokens, c.shapes_first, c.parser_dtype,
            c.parser_int8_rows,
        )

    def retrieve(self, question: str) -> SPRResult:
        """Parse, ground, query: the first candidate whose query answers wins. The parser's
        candidates come in stages (:func:`parse_stages`), so a learned parser decodes only when the
        policy shapes found no answer."""
        started = time.perf_counter()
        parses: list[ParseCandidate] = []  # every candidate decoded so far, in order
        clock = {"parse": 0.0}
        ground_s = execute_s = 0.0
        tried = 0
        first: tuple[ParseCandidate, Grounding | None, CompiledQuery | None] | None = None
        considered: list[Grounding] = []
        for candidate in self._candidates(question, parses, clock):
            if tried >= self.config.max_variants:
                break
            t0 = time.perf_counter()
            variants = self.grounder.ground(candidate.expr)
            ground_s += time.perf_counter() - t0
            if first is None:
                considered = variants
                first = (candidate, variants[0] if variants else None, None)
            for variant in variants:
                if tried >= self.config.max_variants:
                    break
                tried += 1
                t0 = time.perf_counter()
                compiled = compile_query(variant.node, self.config.result_limit)  # type: ignore[arg-type]
                if first[2] is None:
                    first = (first[0], first[1], compiled)
                rows = self.store.select(compiled.sparql).rows
                answered = _answered(rows, compiled)
                if answered:
                    result = self._result(question, parses, candidate, variant, compiled, rows, tried)
                    execute_s += time.perf_counter() - t0
                    return _timed(result, started, clock["parse"], ground_s, execute_s)
                execute_s += time.perf_counter() - t0
        note = "the parser did not understand the question" if not parses else (
            "no entity or relation could be grounded" if not considered else f"all {tried} grounded queries were empty"
        )
        empty = SPRResult(
            question, self.parser.name, tuple(p.text for p in parses),
            sexpr=first[0].text if first else "",
            grounded=to_text(first[1].node) if first and first[1] else "",
            sparql=first[2].sparql if first and first[2] else "",
            entities=tuple(dict.fromkeys(e for g in considered for e in g.entities)),
            relations=tuple(dict.fromkeys(r for g in considered for r in g.relations)),
            variants_tried=tried, weights_used=self.linker.has_weights, note=note,
        )
        return _timed(empty, started, clock["parse"], ground_s, execute_s)

    def _candidates(self, question: str, parses: list[ParseCandidate], clock: dict[str, float]):
        """The parser's candidates one by one, decoding a stage only when the walk reaches it;
        each stage is appended to ``parses`` and its decoding time added to ``clock["parse"]``."""
        stages = parse_stages(self.parser, question)
        while True:
            t0 = time.perf_counter()
            stage = next(stages, None)
            clock["parse"] += time.perf_counter() - t0
            if stage is None:
                return
            parses.extend(stage)
            yield from stage

    # --- results ------------------------------------------------------------------------------
    def _result(self, question, parses, candidate, variant, compiled, rows, tried) -> SPRResult:
        evidence_rows = rows if not compiled.aggregate else self.store.select(compiled.evidence_sparql).rows
        facts = _facts(evidence_rows, compiled)
        answer_terms = [] if compiled.aggregate else list(dict.fromkeys(r[compiled.answer_var] for r in rows))
        iris = {t.value for f in facts for t in (f[0], f[2]) if isinstance(t, NamedNode)}
        iris |= {t.value for t in answer_terms if isinstance(t, NamedNode)}
        names = self._names(iris)
        if len(answer_terms) > 1:
            answer_terms = self._by_evidence(question, answer_terms, facts, names)
            rank = {a: i for i, a in enumerate(answer_terms)}  # the facts in the answers' order
            facts = dict(sorted(facts.items(), key=lambda f: min(rank.get(f[0][0], len(rank)), rank.get(f[0][2], len(rank)))))
        return SPRResult(
            question, self.parser.name, tuple(p.text for p in parses),
            sexpr=candidate.text, grounded=to_text(variant.node), sparql=compiled.sparql,
            answers=tuple(_answer(t, names) for t in answer_terms if t is not None),
            count=int(rows[0][compiled.answer_var].value) if compiled.aggregate else None,  # type: ignore[union-attr]
            triples=tuple(self._fact(f, graphs, names) for f, graphs in facts.items()),
            entities=variant.entities, relations=variant.relations, score=round(variant.score, 6),
            parse_score=candidate.score, variants_tried=tried, weights_used=self.linker.has_weights,
        )

    def _fact(self, triple, graphs: list[str], names: Mapping[str, str]) -> Fact:
        s, p, o = triple
        literal = isinstance(o, Literal)
        return Fact(
            s.value, p.value, o.value,
            names.get(s.value, label_from_iri(s.value)), term_for(p.value, self.properties).label,
            date_text(o.value, o.datatype.value) if literal else names.get(o.value, label_from_iri(o.value)),
            literal, tuple(sorted(graphs)),
        )

    def _by_evidence(self, question: str, answers: list, facts: dict[tuple, list[str]], names: Mapping[str, str]) -> list:
        """:func:`order_answers`, with each answer's evidence chunks read from the store."""
        labels = [names.get(a.value, label_from_iri(a.value)) if isinstance(a, NamedNode) else str(getattr(a, "value", ""))
                  for a in answers]  # fmt: skip
        graphs = {a: [g for (s, _, o), gs in facts.items() if a in (s, o) for g in gs] for a in answers}
        chunks = sorted({g for gs in graphs.values() for g in gs})[:_MAX_EVIDENCE_CHUNKS]
        texts: dict[str, str] = {}
        if chunks:
            values = " ".join(sparql_term(named_node(c)) for c in chunks)
            rows = self.store.select(f"SELECT ?c ?t WHERE {{ VALUES ?c {{ {values} }} ?c <{PKB}text> ?t }}").rows
            texts = {r["c"].value: r["t"].value for r in rows}  # type: ignore[union-attr]
        evidence = [[texts[g] for g in graphs[a] if g in texts] for a in answers]
        return [answers[i] for i in order_answers(question, labels, evidence)]

    def _names(self, iris: set[str]) -> dict[str, str]:
        """Display labels (skos:prefLabel, else rdfs:label) of the IRIs, in one query."""
        if not iris:
            return {}
        values = " ".join(sparql_term(named_node(i)) for i in sorted(iris))
        rows = self.store.select(
            f"SELECT ?e ?p ?l WHERE {{ VALUES ?e {{ {values} }} VALUES ?p {{ <{SKOS}prefLabel> <{RDFS}label> }} ?e ?p ?l }}"
        ).rows
        names: dict[str, str] = {}
        for r in sorted(rows, key=lambda r: (r["p"].value != SKOS + "prefLabel", r["l"].value)):  # type: ignore[union-attr]
            names.setdefault(r["e"].value, r["l"].value)  # type: ignore[union-attr]
        return names


def order_answers(question: str, labels: list[str], evidence: list[list[str]]) -> list[int]:
    """The order of several answers: the one whose label and evidence texts share most of the
    question's words first. The label carries the answer's kind ("Which *regulation* does the
    CSRD amend?" puts "Regulation (EU) No 537/2014" before the directives it amends); the evidence
    its context ("… so that administrators of critical benchmarks …" picks the act amended in the
    article about benchmarks, not the first one the title lists). Stable: equal scores keep the
    query's order.

    >>> order_answers("Which regulation does the CSRD amend?", ["Directive 2013/34/EU", "Regulation (EU) No 537/2014"], [[], []])
    [1, 0]
    """
    by_label = lexical_scores(question, labels)
    texts = sorted({t for ts in evidence for t in ts})
    score = dict(zip(texts, lexical_scores(question, texts), strict=True))
    best = [max((score[t] for t in ts), default=0.0) for ts in evidence]
    return sorted(range(len(labels)), key=lambda i: -(by_label[i] + best[i]))


def _answered(rows, compiled: CompiledQuery) -> bool:
    if compiled.aggregate:
        return bool(rows) and rows[0][compiled.answer_var] is not None and int(rows[0][compiled.answer_var].value) > 0
    return any(r[compiled.answer_var] is not None for r in rows)


def _facts(rows, compiled: CompiledQuery) -> dict[tuple, list[str]]:
    """(subject, predicate, object) terms → the graphs stating them, over every row and hop."""
    facts: dict[tuple, list[str]] = {}
    for row in rows:
        for hop in compiled.hops:
            s = row.get(hop.subject.name) if isinstance(hop.subject, Var) else hop.subject
            o = row.get(hop.object.name) if isinstance(hop.object, Var) else hop.object
            g = row.get(hop.graph.name)
            if s is None or o is None:
                continue
            graphs = facts.setdefault((s, hop.predicate, o), [])
            if g is not None and g.value not in graphs:
                graphs.append(g.value)
    return facts


def _answer(term, names: Mapping[str, str]) -> AnswerValue:
    if isinstance(term, Literal):
        return AnswerValue(term.value, date_text(term.value, term.datatype.value), True, term.datatype.value)  # no midnight time
    return AnswerValue(term.value, names.get(term.value, label_from_iri(term.value)))


def _timed(result: SPRResult, started: float, parse_s: float, ground_s: float, execute_s: float) -> SPRResult:
    from dataclasses import replace

    total = time.perf_counter() - started
    timings = {
        "parse": round(parse_s * 1000, 1),
        "ground": round(ground_s * 1000, 1),
        "execute": round(execute_s * 1000, 1),
        "total": round(total * 1000, 1),
    }
    return replace(result, timings_ms=timings)
