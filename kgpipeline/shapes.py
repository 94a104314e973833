"""Generate SHACL shapes from the ontologies' domain and range axioms.

One Turtle file per ontology (``shapes/generated/<name>.ttl``), covering the properties that
ontology defines. Per property ``p`` two shapes, both targeting ``sh:targetSubjectsOf p``:

- ``pkbsh:<p>-domain`` (node shape): the subject must be ``sh:class`` the domain;
- ``pkbsh:<p>-range`` (property shape, ``sh:path p``): every value must be ``sh:class`` the range
  (object properties) or have ``sh:datatype`` the range (datatype properties).

The range shape targets subjects rather than ``sh:targetObjectsOf p`` on purpose: its results then
carry focus node, path and value, i.e. the whole offending triple, which ingest records as a
conflict (a ``targetObjectsOf`` result names only the object, or a bare literal).

A union domain or range becomes ``sh:or`` over named member shapes (``pkbsh:class-<C>``). The text
is written directly rather than through rdflib's serializer so that it is byte-stable: sorted,
every shape an IRI, no blank-node labels. ``policykb shapes`` calls :func:`write_shapes`; a test
fails when the checked-in files differ from :func:`generate_shapes`.
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError
from kgpipeline.ontology import OntologyProperty, OntologySet, read_ontologies
from store.vocab import PKB, XSD

SHAPES_NS = "https://w3id.org/policykb/shapes#"
GENERATED_DIR = "generated"

_PREFIXES = {
    "pkb": PKB,
    "pkbsh": SHAPES_NS,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "sh": "http://www.w3.org/ns/shacl#",
    "xsd": XSD,
}


def generate_shapes(ontology_dir: Path) -> dict[str, str]:
    """``{"<ontology>.ttl": turtle_text}`` for every ontology in ``ontology_dir``, deterministic."""
    onto = read_ontologies(Path(ontology_dir))
    return {f"{f.name}.ttl": _render(onto, f.name) for f in sorted(onto.files, key=lambda f: f.name)}


def write_shapes(ontology_dir: Path, shapes_dir: Path) -> list[Path]:
    """Write the generated shapes to ``<shapes_dir>/generated/`` and return the written paths.

    Generated files that no longer correspond to an ontology are removed, so a renamed ontology
    leaves no stale shapes behind. Hand-written shapes in ``shapes_dir`` itself are not touched.
    """
    files = generate_shapes(ontology_dir)
    out_dir = Path(shapes_dir) / GENERATED_DIR
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for stale in out_dir.glob("*.ttl"):
            if stale.name not in files:
                stale.unlink()
        written = []
        for name, text in sorted(files.items()):
            path = out_dir / name
            path.write_text(text, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise InputError(f"cannot write shapes to {out_dir}: {exc}") from exc
    return written


def _render(onto: OntologySet, name: str) -> str:
    props = sorted((p for p in onto.properties.values() if p.ontology == name), key=lambda p: p.iri)
    lines = [f"@prefix {p}: <{iri}> ." for p, iri in sorted(_PREFIXES.items())]
    lines += [
        "",
        f"# Generated from ontologies/{name}.owl by `policykb shapes`; do not edit by hand.",
        "# Domain and range of each property as constraints on its subjects and objects.",
    ]
    members: set[str] = set()
    for prop in props:
        lines += ["", f"# pkb:{prop.local_name} ({prop.kind} property)"]
        domain = _node_shape(prop, "domain", prop.domain, members)
        range_ = _node_shape(prop, "range", prop.range, members)
        lines += [*domain, *([""] if domain and range_ else []), *range_]
    if members:
        lines += ["", "# Members of sh:or lists: one class each."]
        for cls in sorted(members):
            lines += ["", f"{_member_shape(cls)} a sh:NodeShape ;", f"    sh:class {_curie(cls)} ."]
    return "\n".join(lines) + "\n"


def _node_shape(prop: OntologyProperty, role: str, members: tuple[str, ...], used: set[str]) -> list[str]:
    if not members:
        return []  # nothing declared, nothing to check; lint() reports the gap
    p = _curie(prop.iri)
    datatype = prop.kind == "datatype" and role == "range"
    if datatype and len(members) != 1:
        raise InputError(f"{prop.iri}: a datatype property needs exactly one datatype range")
    if datatype:
        constraint = f"sh:datatype {_curie(members[0])}"
    elif len(members) == 1:
        constraint = f"sh:class {_curie(members[0])}"
    else:
        used.update(members)
        constraint = "sh:or ( " + " ".join(_member_shape(m) for m in members) + " )"
    expected = " or ".join(_curie(m) for m in members)
    if role == "domain":
        head = [f"{_shape_iri(prop, role)} a sh:NodeShape ;", f"    sh:targetSubjectsOf {p} ;"]
        message = f"Subject of {p} must be a {expected} (rdfs:domain)"
    else:
        head = [f"{_shape_iri(prop, role)} a sh:PropertyShape ;", f"    sh:targetSubjectsOf {p} ;"]
        head.append(f"    sh:path {p} ;")
        kind = "of datatype" if datatype else "a"
        message = f"Value of {p} must be {kind} {expected} (rdfs:range)"
    return [*head, f"    {constraint} ;", f'    sh:message "{message}"@en .']


def _shape_iri(prop: OntologyProperty, role: str) -> str:
    return f"pkbsh:{prop.local_name}-{role}"


def _member_shape(cls: str) -> str:
    # pkb classes get short names; another vocabulary's class keeps its prefix to stay distinct.
    curie = _curie(cls)
    if curie.startswith("<"):
        raise InputError(f"cannot name a shape after {cls}: no known prefix")
    prefix, local = curie.split(":", 1)
    return f"pkbsh:class-{local}" if prefix == "pkb" else f"pkbsh:class-{prefix}-{local}"


def _curie(iri: str) -> str:
    for prefix, ns in sorted(_PREFIXES.items()):
        if iri.startswith(ns) and _safe_local(iri[len(ns) :]):
            return f"{prefix}:{iri[len(ns):]}"
    return f"<{iri}>"


def _safe_local(local: str) -> bool:
    return bool(local) and local.replace("_", "").replace("-", "").isalnum() and not local[0].isdigit()
