"""Grounding: a labelled S-expression → ranked grounded variants (labels replaced by IRIs).

Bottom-up over the tree, keeping at most ``beam`` alternatives per node, each with a score in
[0, 1] (product of its entity, class and relation scores):

- an entity label → the linker's top-k1 entities;
- a JOIN → for each alternative of its argument, the *anchors* (the linked entity, or up to
  ``anchor_limit`` members of the grounded sub-expression, found by running it), then the top-k2
  relations adjacent to those anchors. A JOIN over an entity label also links it constrained by
  the relation (``constrained_k``): among the label's wider top matches, the entities that have
  the best-matching relation compete too — "the time limit of <a provision's wording>" needs the
  provision that has a time limit, which plain top-k1 linking over thousands of look-alike
  provisions rarely holds. Multi-hop questions are grounded hop by hop this way: the
  second relation is chosen among those the first hop's results actually have;
- ARGMAX/ARGMIN/TC/comparisons → literal-valued relations of the members (or of the KB);
- a class label → the closest ontology classes; AND also offers the other side alone, with a
  penalty, so an unmatched type constraint cannot empty every variant.

Alternatives whose anchors come back empty are dropped early: they could only execute empty.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from pyoxigraph import NamedNode

from spr.grounding.compile import compile_query
from spr.grounding.link import EntityCandidate, EntityLinker
from spr.grounding.relations import ClassMatcher, RelationCandidate, RelationMatcher
from spr.grounding.sexpr import TC, And, Arg, Class, Compare, Count, Entity, Expr, Iri, Join, Label, Relation, Value
from spr.lexical import lexical_scores
from store.base import RDFStore

Node = Expr | Entity | Class | Value


@dataclass(frozen=True)
class Grounding:
    """One grounded alternative of a (sub-)expression with the choices that built it."""

    node: Node
    score: float
    entities: tuple[EntityCandidate, ...] = ()
    relations: tuple[RelationCandidate, ...] = ()


@dataclass(frozen=True)
class GroundingOptions:
    """From ``[spr]``: ``beam``, ``anchor_limit``, ``class_drop_penalty`` (see :class:`core.config.SPRConfig`)."""

    beam: int
    anchor_limit: int
    class_drop_penalty: float
    constrained_k: int = 0


class Grounder:
    def __init__(
        self,
        store: RDFStore,
        linker: EntityLinker,
        relations: RelationMatcher,
        classes: ClassMatcher,
        options: GroundingOptions,
    ):
        self.store = store
        self.linker = linker
        self.relations = relations
        self.classes = classes
        self.options = options

    def ground(self, expr: Expr) -> list[Grounding]:
        """Grounded variants of an expression, best first (at most ``beam``)."""
        return self._ground(expr)

    # --- per node -----------------------------------------------------------------------------
    def _ground(self, node: Node) -> list[Grounding]:
        match node:
            case Value():
                return [Grounding(node, 1.0)]
            case Entity(Iri()) | Class(Iri()):
                return [Grounding(node, 1.0)]
            case Entity(Label(text)):
                return [Grounding(Entity(Iri(c.entity)), c.score, (c,)) for c in self._link(text) if c.score > 0]
            case Class(Label(text)):
                return [Grounding(Class(Iri(iri)), max(sim, 0.0)) for iri, sim in self.classes.match(text)]
            case Join(relation, arg):
                return self._join(relation, arg)
            case And(left, right):
                return self._and(left, right)
            case Count(arg):
                return [replace(g, node=Count(g.node)) for g in self._ground(arg)]  # type: ignore[arg-type]
            case Arg(op, arg, relation):
                return self._attribute(arg, relation, lambda a, r: Arg(op, a, r))
            case TC(arg, relation, year):
                return self._attribute(arg, relation, lambda a, r: TC(a, r, year))
            case Compare(op, relation, value):
                return self._compare(op, relation, value)
        raise TypeError(f"cannot ground {node!r}")

    def _join(self, relation: Relation, arg: Node) -> list[Grounding]:
        out: list[Grounding] = []
        for alt in self._ground(arg):
            if isinstance(relation.ref, Iri):
                out.append(replace(alt, node=Join(relation, alt.node)))  # type: ignore[arg-type]
                continue
            anchors = self._anchors(alt.node)
            if not anchors:
                continue
            for cand in self.relations.match(relation.ref.text, anchors, relation.reverse):
                grounded = Join(Relation(Iri(cand.relation), cand.reverse), alt.node)  # type: ignore[arg-type]
                out.append(Grounding(grounded, alt.score * cand.score, alt.entities, alt.relations + (cand,)))
        if isinstance(arg, Entity) and isinstance(arg.ref, Label) and not isinstance(relation.ref, Iri) and self.options.constrained_k:
            out += self._constrained(relation, arg.ref.text)
        return self._top(out)

    def _constrained(self, relation: Relation, text: str) -> list[Grounding]:
        """Relation-constrained linking (module docstring): the wide candidates that have the
        best relation, scored like any other alternative."""
        wide = self.linker.link(text, wide=self.options.constrained_k)
        best = self.relations.match(relation.ref.text, [c.entity for c in wide], relation.reverse)[:1]  # type: ignore[union-attr]
        if not best:
            return []
        having = self.relations.having(best[0], [c.entity for c in wide])
        out = []
        for c in _with_words(text, [c for c in wide if c.entity in having]):
            grounded = Join(Relation(Iri(best[0].relation), best[0].reverse), Entity(Iri(c.entity)))
            out.append(Grounding(grounded, c.score * best[0].score, (c,), (best[0],)))
            if len(out) >= self.options.beam:
                break
        return out

    def _link(self, text: str) -> list[EntityCandidate]:
        return _with_words(text, self.linker.link(text))

    def _and(self, left: Node, right: Node) -> list[Grounding]:
        lefts, rights = self._ground(left), self._ground(right)
        out = [
            Grounding(And(a.node, b.node), a.score * b.score, a.entities + b.entities, a.relations + b.relations)  # type: ignore[arg-type]
            for a, b in itertools.product(lefts, rights)
        ]
        penalty = self.options.class_drop_penalty
        if isinstance(left, Class) and not isinstance(right, Class):
            out += [replace(b, score=b.score * penalty) for b in rights]
        if isinstance(right, Class) and not isinstance(left, Class):
            out += [replace(a, score=a.score * penalty) for a in lefts]
        return self._top(out)

    def _attribute(self, arg: Node, relation: Relation, build) -> list[Grounding]:
        out: list[Grounding] = []
        for alt in self._ground(arg):
            if isinstance(relation.ref, Iri):
                out.append(replace(alt, node=build(alt.node, relation)))
                continue
            members = self._anchors(alt.node)
            if not members:
                continue
            for cand in self.relations.match_attribute(relation.ref.text, members):
                grounded = build(alt.node, Relation(Iri(cand.relation), relation.reverse))
                out.append(Grounding(grounded, alt.score * cand.score, alt.entities, alt.relations + (cand,)))
        return self._top(out)

    def _compare(self, op: str, relation: Relation, value: Value) -> list[Grounding]:
        if isinstance(relation.ref, Iri):
            return [Grounding(Compare(op, relation, value), 1.0)]  # type: ignore[arg-type]
        return [
            Grounding(Compare(op, Relation(Iri(c.relation), relation.reverse), value), c.score, (), (c,))  # type: ignore[arg-type]
            for c in self.relations.match_attribute(relation.ref.text, None)
        ]

    # --- helpers ------------------------------------------------------------------------------
    def _anchors(self, node: Node) -> list[str]:
        """IRIs a grounded node denotes: the entity itself, or the first members of a set."""
        if isinstance(node, Entity) and isinstance(node.ref, Iri):
            return [node.ref.value]
        if isinstance(node, (Value, Class)) or isinstance(node, Entity):
            return []
        compiled = compile_query(node, limit=self.options.anchor_limit * 4)
        seen: dict[str, None] = {}
        for row in self.store.select(compiled.sparql).rows:
            term = row.get(compiled.answer_var)
            if isinstance(term, NamedNode):
                seen[term.value] = None
            if len(seen) >= self.options.anchor_limit:
                break
        return list(seen)

    def _top(self, items: list[Grounding]) -> list[Grounding]:
        unique: dict[Node, Grounding] = {}
        for g in sorted(items, key=lambda g: -g.score):
            unique.setdefault(g.node, g)
        return list(unique.values())[: self.options.beam]


def _with_words(text: str, candidates: list[EntityCandidate]) -> list[EntityCandidate]:
    """Candidates re-scored by their wording too, not by the embedding alone: 0.7 × linking score
    + 0.3 × the share of the label's words the surface form contains, best first. A described
    entity (a provision: "by when must the Commission adopt limited assurance standards …") is
    told from its neighbours by the words they share; an exact name keeps its lead."""
    words = lexical_scores(text, [c.surface for c in candidates])
    scored = [replace(c, score=round(0.7 * c.score + 0.3 * w, 6)) for c, w in zip(candidates, words, strict=True)]
    return sorted(scored, key=lambda c: -c.score)
