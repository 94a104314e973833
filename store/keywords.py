"""The keyword layer (IKG) in the store: written by kgpipeline (keywords stage), walked by spr.

Layout, all in one named graph (``<base>graph/keywords``, replaced on every rebuild)::

    <chunk> pkb:hasKeyword <keyword> .
    <keyword> a pkb:Keyword ; skos:prefLabel "personal data"@en ; pkb:keywordKey "personal data" ;
              pkb:chunkFrequency 41 .
    <document> dcterms:language "en" .

One keyword node per normalized key (:func:`keyword_key`), so a keyword found in two documents
joins their chunks: that is what Informed Keyword Search walks. ``chunkFrequency`` is the
keyword's document frequency counted over chunks; the readers skip keywords too frequent to say
anything (the fan-out limits of :mod:`spr.retrieval.docgraph`), the store keeps them all.

The document tree the expansions also walk (document → sections → chunks) is written with each
document (:mod:`kgpipeline.write`): ``<section> pkb:sectionOf <parent>``, ``<chunk> pkb:inSection
<section>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from store.base import RDFStore
from store.vocab import DCTERMS, PKB, RDF, SKOS, XSD, mint, values_clause

_A = NamedNode(RDF + "type")
_INT = NamedNode(XSD + "integer")
HAS_KEYWORD = NamedNode(PKB + "hasKeyword")
KEY = NamedNode(PKB + "keywordKey")
FREQUENCY = NamedNode(PKB + "chunkFrequency")


def keyword_key(text: str) -> str:
    """The matching key of a keyword: casefolded, whitespace collapsed.

    >>> keyword_key("  Member   State ")
    'member state'
    """
    return " ".join(text.casefold().split())


def keywords_graph(base_iri: str) -> NamedNode:
    return NamedNode(f"{base_iri.rstrip('/#')}/graph/keywords")


def keyword_iri(base_iri: str, key: str) -> NamedNode:
    return mint(base_iri, "keyword", key, label=key)


@dataclass(frozen=True)
class ChunkKeywords:
    """The keywords extracted from one chunk, best first, in the text's own casing."""

    chunk: str
    keywords: tuple[str, ...]


def keyword_quads(
    found: Sequence[ChunkKeywords], languages: Mapping[str, str], base_iri: str
) -> list[Quad]:
    """The quads of the keyword graph for ``found`` and the documents' ``languages``."""
    g = keywords_graph(base_iri)
    label: dict[str, str] = {}
    chunks: dict[str, set[str]] = {}
    for item in found:
        for text in item.keywords:
            key = keyword_key(text)
            if key:
                label.setdefault(key, " ".join(text.split()))  # the first casing seen names the node
                chunks.setdefault(key, set()).add(item.chunk)
    quads: list[Quad] = []
    for key in sorted(label):
        k = keyword_iri(base_iri, key)
        quads += [
            Quad(k, _A, NamedNode(PKB + "Keyword"), g),
            Quad(k, NamedNode(SKOS + "prefLabel"), Literal(label[key]), g),
            Quad(k, KEY, Literal(key), g),
            Quad(k, FREQUENCY, Literal(str(len(chunks[key])), datatype=_INT), g),
        ]
        quads += [Quad(NamedNode(c), HAS_KEYWORD, k, g) for c in sorted(chunks[key])]
    quads += [Quad(NamedNode(d), NamedNode(DCTERMS + "language"), Literal(lang), g) for d, lang in sorted(languages.items())]
    return quads


def write_keywords(store: RDFStore, found: Sequence[ChunkKeywords], languages: Mapping[str, str], base_iri: str) -> int:
    """Replace the keyword graph; returns the number of quads written."""
    quads = keyword_quads(found, languages, base_iri)
    store.drop_graph(keywords_graph(base_iri))
    return store.extend(quads)


def has_keywords(store: RDFStore) -> bool:
    """Whether the keyword layer was built (the ``keywords`` stage has run on this KB)."""
    return bool(store.select(f"SELECT ?k WHERE {{ ?k <{FREQUENCY.value}> ?n }} LIMIT 1").rows)


def keyword_neighbours(store: RDFStore, seeds: Iterable[str], max_frequency: int) -> list[tuple[str, str, str, int]]:
    """(seed, keyword key, other chunk, keyword's chunk frequency) for every chunk sharing a
    keyword with a seed; keywords in more than ``max_frequency`` chunks are not followed."""
    seeds = [s for s in seeds if s]
    if not seeds:
        return []
    rows = store.select(
        f"SELECT ?seed ?key ?c ?n WHERE {{ {values_clause('seed', sorted(set(seeds)))} ?seed <{HAS_KEYWORD.value}> ?k . "
        f"?k <{FREQUENCY.value}> ?n . FILTER(?n <= {int(max_frequency)}) "
        f"?k <{KEY.value}> ?key . ?c <{HAS_KEYWORD.value}> ?k . FILTER(?c != ?seed) }}"
    ).rows
    return [(r["seed"].value, r["key"].value, r["c"].value, int(r["n"].value)) for r in rows]  # type: ignore[union-attr]


def keyword_chunks(store: RDFStore, keys: Iterable[str], max_frequency: int) -> list[tuple[str, str, int]]:
    """(keyword key, chunk, chunk frequency) for the keywords with these keys (normalized with
    :func:`keyword_key`); keywords in more than ``max_frequency`` chunks are left out."""
    unique = sorted({keyword_key(k) for k in keys} - {""})
    if not unique:
        return []
    values = "VALUES ?key { " + " ".join(str(Literal(k)) for k in unique) + " }"
    rows = store.select(
        f"SELECT ?key ?c ?n WHERE {{ {values} ?k <{KEY.value}> ?key ; <{FREQUENCY.value}> ?n . "
        f"FILTER(?n <= {int(max_frequency)}) ?c <{HAS_KEYWORD.value}> ?k }}"
    ).rows
    return [(r["key"].value, r["c"].value, int(r["n"].value)) for r in rows]  # type: ignore[union-attr]


def chunk_count(store: RDFStore) -> int:
    rows = store.select(f"SELECT (COUNT(?c) AS ?n) WHERE {{ ?c a <{PKB}Chunk> }}").rows
    return int(rows[0]["n"].value) if rows else 0  # type: ignore[union-attr]
