"""A small typed reader of the policykb ontologies (``ontologies/*.owl``).

Later stages drive extraction and prompts from it: each class and property comes with its label,
definition (``rdfs:comment``), lexical cues (``skos:altLabel``), and for properties the domain and
range as tuples of class IRIs (a tuple of several members is an ``owl:unionOf``). It reads the
RDF/XML with rdflib, so no Java or owlready2 is needed here.

    >>> from pathlib import Path
    >>> onto = read_ontologies(Path("ontologies"))
    >>> issues = onto.properties[PKB + "issues"]
    >>> issues.domain == (PKB + "Actor",)
    True
    >>> PKB + "Authority" in onto.ancestors(PKB + "Agency")
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal as TypingLiteral

from rdflib import Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SKOS
from rdflib.term import BNode, Node

from core.errors import InputError
from store.vocab import ONTOLOGY_BASE, PKB

# Category document classes → the ontology that holds their entity types and relations.
CATEGORY_ONTOLOGY: Mapping[str, str] = MappingProxyType(
    {
        PKB + "GeneralPolicy": "general-policy",
        PKB + "LegalRegulation": "legal-regulation",
        PKB + "StandardDocument": "standard",
    }
)

PropertyKind = TypingLiteral["object", "datatype"]


@dataclass(frozen=True)
class OntologyClass:
    """An OWL class of the pkb namespace.

    ``superclasses`` are the asserted named superclasses (pkb or external, e.g. ``prov:Entity``);
    use :meth:`OntologySet.ancestors` for the transitive closure.
    """

    iri: str
    label: str
    comment: str
    alt_labels: tuple[str, ...]
    superclasses: tuple[str, ...]
    ontology: str  # short name of the defining ontology, e.g. "core"

    @property
    def local_name(self) -> str:
        return _local(self.iri)


@dataclass(frozen=True)
class OntologyProperty:
    """An object or datatype property of the pkb namespace.

    ``domain``/``range`` list class IRIs (object properties) or one XSD datatype IRI (datatype
    properties); more than one member means their union. Empty means none was declared.
    """

    iri: str
    label: str
    comment: str
    alt_labels: tuple[str, ...]
    kind: PropertyKind
    domain: tuple[str, ...]
    range: tuple[str, ...]
    superproperties: tuple[str, ...]
    ontology: str

    @property
    def local_name(self) -> str:
        return _local(self.iri)


@dataclass(frozen=True)
class OntologyFile:
    """One ``.owl`` file: ``name`` is the last segment of its IRI and the file's stem."""

    name: str
    iri: str
    path: Path
    imports: tuple[str, ...]  # short names


@dataclass(frozen=True)
class OntologySet:
    """All ontologies of a directory, with their pkb classes and properties keyed by IRI."""

    files: tuple[OntologyFile, ...]
    classes: Mapping[str, OntologyClass]
    properties: Mapping[str, OntologyProperty]
    graph: Graph = field(repr=False, compare=False)  # the union of the files' triples

    def ancestors(self, class_iri: str) -> frozenset[str]:
        """Transitive named superclasses of a class (the class itself excluded)."""
        seen: set[str] = set()
        todo = [class_iri]
        while todo:
            current = self.classes.get(todo.pop())
            for sup in current.superclasses if current else ():
                if sup not in seen:
                    seen.add(sup)
                    todo.append(sup)
        return frozenset(seen)

    def descendants(self, class_iri: str) -> frozenset[str]:
        """Transitive subclasses of a class (the class itself excluded)."""
        return frozenset(c for c in self.classes if class_iri in self.ancestors(c))

    def scope(self, name: str) -> tuple[str, ...]:
        """Short names of an ontology and everything it imports, transitively, in import order."""
        by_name = {f.name: f for f in self.files}
        order: list[str] = []

        def visit(n: str) -> None:
            if n in order:
                return
            for imported in by_name[n].imports:
                visit(imported)
            order.append(n)

        if name not in by_name:
            raise InputError(f"no ontology named {name!r}; known: {sorted(by_name)}")
        visit(name)
        return tuple(order)

    def classes_for(self, name: str) -> list[OntologyClass]:
        """Classes visible in one ontology (its own and its imports'), sorted by IRI."""
        names = set(self.scope(name))
        return sorted((c for c in self.classes.values() if c.ontology in names), key=lambda c: c.iri)

    def properties_for(self, name: str) -> list[OntologyProperty]:
        """Properties visible in one ontology (its own and its imports'), sorted by IRI."""
        names = set(self.scope(name))
        return sorted((p for p in self.properties.values() if p.ontology in names), key=lambda p: p.iri)

    def entity_types(self, name: str) -> list[OntologyClass]:
        """Classes an extractor may assign in one ontology's scope: pkb:Entity and its subclasses."""
        entity = PKB + "Entity"
        return [c for c in self.classes_for(name) if c.iri == entity or entity in self.ancestors(c.iri)]

    def relations(self, name: str) -> list[OntologyProperty]:
        """Object properties an extractor may emit between entities in one ontology's scope: the
        domain is all entity types and the range has at least one (``issues`` may also point to a
        Document; ``mentionedIn`` and the structural links are left out)."""
        types = {c.iri for c in self.entity_types(name)}
        return [
            p
            for p in self.properties_for(name)
            if p.kind == "object" and set(p.domain) <= types and set(p.range) & types
        ]

    def ontology_for_document_class(self, class_iri: str) -> str:
        """The category ontology for a document class or any subclass (pkb:Notice → general-policy)."""
        for category, name in CATEGORY_ONTOLOGY.items():
            if class_iri == category or category in self.ancestors(class_iri):
                return name
        raise InputError(f"{class_iri} is not a document category class")

    def lint(self) -> list[str]:
        """Human-readable gaps: terms without label, definition or cues; properties without
        domain or range; references to pkb classes that are not declared."""
        problems: list[str] = []
        for term in [*self.classes.values(), *self.properties.values()]:
            name = f"{term.ontology}: pkb:{term.local_name}"
            if not term.label:
                problems.append(f"{name} has no rdfs:label")
            if not term.comment:
                problems.append(f"{name} has no rdfs:comment")
            if not term.alt_labels:
                problems.append(f"{name} has no skos:altLabel")
        for cls in self.classes.values():
            problems += [
                f"{cls.ontology}: pkb:{cls.local_name} has undeclared superclass {s}"
                for s in cls.superclasses
                if s.startswith(PKB) and s not in self.classes
            ]
        for prop in self.properties.values():
            name = f"{prop.ontology}: pkb:{prop.local_name}"
            for role, members in (("domain", prop.domain), ("range", prop.range)):
                if not members:
                    problems.append(f"{name} has no rdfs:{role}")
                problems += [
                    f"{name} {role} refers to undeclared class {m}"
                    for m in members
                    if m.startswith(PKB) and m not in self.classes
                ]
        return sorted(problems)


def read_ontologies(ontology_dir: Path) -> OntologySet:
    """Read every ``*.owl`` file of a directory. Raises :class:`InputError` when the directory or
    a file is unusable, an import is not among the files, or a domain/range is not a named class
    or a union of named classes (the only forms the shape generator understands)."""
    ontology_dir = Path(ontology_dir)
    paths = sorted(ontology_dir.glob("*.owl"))
    if not paths:
        raise InputError(f"no .owl files in {ontology_dir}")
    union = Graph()
    files: list[OntologyFile] = []
    classes: dict[str, OntologyClass] = {}
    properties: dict[str, OntologyProperty] = {}
    for path in paths:
        graph = _parse(path)
        union += graph
        info = _file_info(graph, path)
        files.append(info)
        for cls in _classes(graph, info.name):
            _put(classes, cls, path)
        for prop in _properties(graph, info.name, path):
            _put(properties, prop, path)
    names = {f.name for f in files}
    for f in files:
        missing = [i for i in f.imports if i not in names]
        if missing:
            raise InputError(f"{f.path.name} imports {missing}, which are not in {ontology_dir}")
    return OntologySet(
        files=tuple(files),
        classes=MappingProxyType(classes),
        properties=MappingProxyType(properties),
        graph=union,
    )


def _parse(path: Path) -> Graph:
    graph = Graph()
    try:
        graph.parse(path, format="xml")
    except Exception as exc:  # rdflib raises several unrelated types for bad XML
        raise InputError(f"cannot parse ontology {path}: {exc}") from exc
    return graph


def _file_info(graph: Graph, path: Path) -> OntologyFile:
    onts = [o for o in graph.subjects(RDF.type, OWL.Ontology) if isinstance(o, URIRef)]
    if len(onts) != 1:
        raise InputError(f"{path} must declare exactly one owl:Ontology, found {len(onts)}")
    iri = str(onts[0])
    name = _short_name(iri, path)
    # owlready2 resolves an import by looking for <last IRI segment>.owl, so the names must agree.
    if name != path.stem:
        raise InputError(f"{path.name} declares ontology {iri}; the file must be named {name}.owl")
    imports = tuple(sorted(_short_name(str(i), path) for i in graph.objects(onts[0], OWL.imports)))
    return OntologyFile(name=name, iri=iri, path=path, imports=imports)


def _short_name(iri: str, path: Path) -> str:
    if not iri.startswith(ONTOLOGY_BASE):
        raise InputError(f"{path}: ontology IRI {iri} is not under {ONTOLOGY_BASE}")
    return iri[len(ONTOLOGY_BASE) :]


def _classes(graph: Graph, onto: str) -> list[OntologyClass]:
    out = []
    for s in set(graph.subjects(RDF.type, OWL.Class)):
        if not _is_pkb(s):
            continue
        out.append(
            OntologyClass(
                iri=str(s),
                label=_text(graph, s, RDFS.label),
                comment=_text(graph, s, RDFS.comment),
                alt_labels=_texts(graph, s, SKOS.altLabel),
                superclasses=tuple(sorted(str(o) for o in graph.objects(s, RDFS.subClassOf) if isinstance(o, URIRef))),
                ontology=onto,
            )
        )
    return out


def _properties(graph: Graph, onto: str, path: Path) -> list[OntologyProperty]:
    out = []
    for rdf_type, kind in ((OWL.ObjectProperty, "object"), (OWL.DatatypeProperty, "datatype")):
        for s in set(graph.subjects(RDF.type, rdf_type)):
            if not _is_pkb(s):
                continue
            out.append(
                OntologyProperty(
                    iri=str(s),
                    label=_text(graph, s, RDFS.label),
                    comment=_text(graph, s, RDFS.comment),
                    alt_labels=_texts(graph, s, SKOS.altLabel),
                    kind=kind,  # type: ignore[arg-type]
                    domain=_class_expression(graph, s, RDFS.domain, path),
                    range=_class_expression(graph, s, RDFS.range, path),
                    superproperties=tuple(sorted(str(o) for o in graph.objects(s, RDFS.subPropertyOf))),
                    ontology=onto,
                )
            )
    return out


def _class_expression(graph: Graph, prop: Node, predicate: URIRef, path: Path) -> tuple[str, ...]:
    values = list(graph.objects(prop, predicate))
    if not values:
        return ()
    # Several rdfs:domain statements would mean an intersection; we keep to one named class or union.
    if len(values) > 1:
        raise InputError(f"{path}: {prop} has {len(values)} rdfs:{_local(str(predicate))} axioms; use one owl:unionOf")
    value = values[0]
    if isinstance(value, URIRef):
        return (str(value),)
    union = graph.value(value, OWL.unionOf) if isinstance(value, BNode) else None
    if union is None:
        raise InputError(f"{path}: {prop} rdfs:{_local(str(predicate))} must be a named class or owl:unionOf")
    members = list(Collection(graph, union))
    if not members or not all(isinstance(m, URIRef) for m in members):
        raise InputError(f"{path}: {prop} union members must be named classes")
    return tuple(sorted(str(m) for m in members))


def _text(graph: Graph, s: Node, p: URIRef) -> str:
    texts = _texts(graph, s, p)
    return texts[0] if texts else ""


def _texts(graph: Graph, s: Node, p: URIRef) -> tuple[str, ...]:
    """English (or untagged) literal values, sorted for a stable order."""
    return tuple(
        sorted(str(o) for o in graph.objects(s, p) if isinstance(o, Literal) and o.language in (None, "en"))
    )


def _put(table: dict, term: OntologyClass | OntologyProperty, path: Path) -> None:
    # One namespace spans all files, so a term defined twice would silently merge; refuse it.
    if term.iri in table:
        raise InputError(f"{path.name}: {term.iri} is already defined in ontology {table[term.iri].ontology}")
    table[term.iri] = term


def _is_pkb(node: Node) -> bool:
    return isinstance(node, URIRef) and str(node).startswith(PKB)


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
