"""RDF vocabulary shared by the writer (kgpipeline) and the reader (spr), and IRI minting.

Ontology terms live in one namespace (prefix ``pkb:``); each category ontology is a separate OWL
file importing ``core``. Instance IRIs are minted under a configurable base, deterministically, so
re-ingesting the same content yields the same IRIs.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

from pyoxigraph import NamedNode

PKB = "https://w3id.org/policykb/ontology#"
ONTOLOGY_BASE = "https://w3id.org/policykb/ontology/"  # + core | general-policy | legal-regulation | standard

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
DCTERMS = "http://purl.org/dc/terms/"
PROV = "http://www.w3.org/ns/prov#"
ELI = "http://data.europa.eu/eli/ontology#"
SH = "http://www.w3.org/ns/shacl#"

PREFIXES: dict[str, str] = {
    "pkb": PKB,
    "rdf": RDF,
    "rdfs": RDFS,
    "owl": OWL,
    "xsd": XSD,
    "skos": SKOS,
    "dcterms": DCTERMS,
    "prov": PROV,
    "eli": ELI,
    "sh": SH,
}


_DECLARED = re.compile(r"PREFIX\s+([\w-]*)\s*:", re.IGNORECASE)
_IRIS_AND_STRINGS = re.compile(r"<[^<>\s]*>|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")


def declare_prefixes(query: str) -> str:
    """Declare the well-known :data:`PREFIXES` that a SPARQL query or update uses but does not
    declare; explicit declarations win.

    They go on the query's first line, so error positions keep their line numbers:

    >>> declare_prefixes("SELECT * WHERE { ?s a pkb:Policy }")
    'PREFIX pkb: <https://w3id.org/policykb/ontology#> SELECT * WHERE { ?s a pkb:Policy }'
    >>> declare_prefixes('SELECT * WHERE { ?s ?p "skos:x" }')  # not inside strings or IRIs
    'SELECT * WHERE { ?s ?p "skos:x" }'
    """
    code = _IRIS_AND_STRINGS.sub(" ", query)  # "PREFIX pkb:" or "pkb:x" inside a string is text
    declared = {m.lower() for m in _DECLARED.findall(code)}
    missing = [
        f"PREFIX {p}: <{iri}>"
        for p, iri in PREFIXES.items()
        if p not in declared and re.search(rf"(?<![\w.:-]){p}:", code)
    ]
    return (" ".join(missing) + " " + query) if missing else query


def values_clause(name: str, iris: Iterable[str]) -> str:
    """``VALUES ?name { <a> <b> … }`` for ``iris`` in their order, without repeats. Each IRI is
    validated by ``NamedNode``, so its printed form is safe to put in a query."""
    return f"VALUES ?{name} {{ " + " ".join(str(NamedNode(i)) for i in dict.fromkeys(iris)) + " }"


def pkb(local: str) -> NamedNode:
    return NamedNode(PKB + local)


def slug(text: str, max_len: int = 48) -> str:
    """ASCII slug: lower-case, words joined by '-'. Empty input gives 'x'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[A-Za-z0-9]+", ascii_text.lower())
    return "-".join(words)[:max_len].strip("-") or "x"


def content_hash(*parts: str, length: int = 12) -> str:
    """Stable short hex digest of the parts (joined with NUL, so ('a','b') != ('ab',))."""
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:length]


def mint(base: str, kind: str, *key: str, label: str = "") -> NamedNode:
    """Deterministic instance IRI: ``<base><kind>/<slug(label)>-<hash(key)>``.

    The slug keeps IRIs readable; the hash of ``key`` keeps them unique (two "Energy Bureau"
    entities of different jurisdiction get different keys, hence different IRIs).
    """
    if not base.endswith(("/", "#")):
        base += "/"
    readable = f"{slug(label)}-" if label else ""
    return NamedNode(f"{base}{kind}/{readable}{content_hash(kind, *key)}")
