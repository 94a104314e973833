"""Graph writer: one document's records → RDF quads, grouped by the named graph they belong to.

Graph layout (the README's data model):
- the document graph ``<doc>`` holds the document, its section tree and its chunks;
- each chunk graph ``<chunk>`` holds what was extracted from that chunk: the mentioned entities
  (type, canonical label, the surface forms seen there, ``pkb:mentionedIn``), their relations and
  attributes. The graph name *is* the provenance of every extracted triple.

Entities are repeated in every chunk graph that mentions them, so deleting one document never
strips the type or label of an entity that another document still mentions. Entity IRIs come from
(class, canonical name, scope): homonyms of different type or jurisdiction stay distinct, and the
same entity gets the same IRI in every document.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from kgpipeline.extract.acts import title_adoption
from kgpipeline.extract.base import DATE_TIME, ChunkExtraction, Mention, day_lexical
from kgpipeline.records import Segmentation, SourceDocument
from store.vocab import DCTERMS, ELI, PKB, RDF, RDFS, SKOS, XSD, mint

CATEGORY_CLASS = {
    "general-policy": PKB + "GeneralPolicy",
    "legal-regulation": PKB + "LegalRegulation",
    "standard": PKB + "StandardDocument",
}

_A = NamedNode(RDF + "type")
_INT = NamedNode(XSD + "integer")
_DATE = NamedNode(DATE_TIME)  # dates are xsd:dateTime at midnight (see extract.base)


def _p(iri: str) -> NamedNode:
    return NamedNode(iri)


P_TITLE, P_ISSUED, P_IDENT = _p(DCTERMS + "title"), _p(DCTERMS + "issued"), _p(DCTERMS + "identifier")
P_PUBLISHER, P_LOCAL_ID, P_SEE_ALSO = _p(DCTERMS + "publisher"), _p(ELI + "id_local"), _p(RDFS + "seeAlso")
P_ALTERNATIVE = _p(DCTERMS + "alternative")
P_PREF, P_ALT = _p(SKOS + "prefLabel"), _p(SKOS + "altLabel")
P_PART, P_IN_SECTION, P_SECTION_OF = _p(PKB + "partOfDocument"), _p(PKB + "inSection"), _p(PKB + "sectionOf")
P_HEADING, P_ORDER, P_LEVEL = _p(PKB + "heading"), _p(PKB + "order"), _p(PKB + "sectionLevel")
P_TEXT, P_START, P_END, P_TOKENS = _p(PKB + "text"), _p(PKB + "startOffset"), _p(PKB + "endOffset"), _p(PKB + "tokenCount")
P_HASH, P_SOURCE, P_MENTIONED = _p(PKB + "contentHash"), _p(PKB + "sourceFile"), _p(PKB + "mentionedIn")


@dataclass(frozen=True)
class DocumentGraphs:
    """All quads of one document; ``graphs`` lists every named graph they use (doc graph first)."""

    doc_iri: NamedNode
    graphs: tuple[NamedNode, ...]
    quads: tuple[Quad, ...]


def doc_iri(base: str, doc_id: str) -> NamedNode:
    return mint(base, "doc", doc_id, label=doc_id)


def chunk_iri(base: str, chunk_id: str) -> NamedNode:
    return mint(base, "chunk", chunk_id)


def section_iri(base: str, section_id: str) -> NamedNode:
    return mint(base, "section", section_id)


def entity_iri(base: str, mention: Mention) -> NamedNode:
    label = f"{mention.canonical} {mention.scope}".strip()
    return mint(base, "entity", mention.class_iri, mention.canonical, mention.scope, label=label)


def display_label(mention: Mention) -> str:
    """The canonical label: the same string wherever the entity appears (skos:prefLabel is unique).

    The extractor's ``label`` when it set one; else the canonical name, each word capitalized and
    in upper case where the mention writes it so ("(eu)" → "(EU)", "ict" → "ICT").

    >>> display_label(Mention("Regulation (EU) 2023/1115", "x", 0, 25, "regulation (eu) 2023/1115"))
    'Regulation (EU) 2023/1115'
    """
    if mention.label:
        return mention.label
    upper = {w.strip("()").lower() for w in mention.text.split() if w.strip("()").isupper() and len(w.strip("()")) > 1}
    if mention.text.isupper():
        upper = set()  # a heading in capitals says nothing about acronyms
    name = " ".join(w.upper() if w.strip("()") in upper else w if w.isupper() else w[:1].upper() + w[1:]
                    for w in mention.canonical.split())  # fmt: skip
    if mention.scope.startswith("doc:"):  # a generic noun, scoped to the document that uses it
        return f"{name} (in {mention.scope[4:]})"
    if mention.scope:
        scope = " ".join(w[:1].upper() + w[1:] for w in mention.scope.split())
        return f"{name} ({scope})"
    return name


def build_document_graphs(
    doc: SourceDocument,
    category: str,
    segmentation: Segmentation,
    extractions: Iterable[ChunkExtraction],
    base: str,
) -> DocumentGraphs:
    d = doc_iri(base, doc.doc_id)
    quads: list[Quad] = []
    add = quads.append

    add(Quad(d, _A, NamedNode(CATEGORY_CLASS[category]), d))
    add(Quad(d, P_TITLE, Literal(doc.title or doc.doc_id), d))
    add(Quad(d, P_IDENT, Literal(doc.doc_id), d))
    add(Quad(d, P_HASH, Literal(doc.content_hash), d))
    add(Quad(d, P_SOURCE, Literal(doc.source), d))
    # An EU act's formal title states who adopted it and when where the metadata does not.
    adoption = title_adoption(doc.title or "")
    issued = issued_date(doc.metadata) or (adoption.date if adoption else None)
    if issued:
        add(Quad(d, P_ISSUED, Literal(day_lexical(issued), datatype=_DATE), d))
    for issuer in metadata_values(doc.metadata, _ISSUER_KEYS) or (adoption.issuers if adoption else ()):
        add(Quad(d, P_PUBLISHER, Literal(issuer), d))
    # The short titles people cite a document by ("EEG 2014" for the German renewables act):
    # questions name it so, and its text may never write them.
    for short in short_titles(doc.metadata, doc.title or ""):
        add(Quad(d, P_ALTERNATIVE, Literal(short), d))
    # dcterms:identifier stays the one document id (evidence maps back through it); the others
    # are ELI local ids (a CELEX number) or, when they are URLs, rdfs:seeAlso links (an ELI URI).
    for ident in metadata_values(doc.metadata, _IDENTIFIER_KEYS):
        link = _iri(ident)
        if link is not None:
            add(Quad(d, P_SEE_ALSO, link, d))
        elif ident != doc.doc_id:
            add(Quad(d, P_LOCAL_ID, Literal(ident), d))

    for section in segmentation.sections:
        s = section_iri(base, section.section_id)
        parent = section_iri(base, section.parent_id) if section.parent_id else d
        add(Quad(s, _A, NamedNode(PKB + "Section"), d))
        add(Quad(s, P_PART, d, d))
        add(Quad(s, P_SECTION_OF, parent, d))
        add(Quad(s, P_HEADING, Literal(section.heading or section.number or "(untitled)"), d))
        add(Quad(s, P_ORDER, Literal(str(section.order), datatype=_INT), d))
        add(Quad(s, P_LEVEL, Literal(str(section.level), datatype=_INT), d))

    graphs = [d]
    for chunk in segmentation.chunks:
        c = chunk_iri(base, chunk.chunk_id)
        add(Quad(c, _A, NamedNode(PKB + "Chunk"), d))
        add(Quad(c, P_PART, d, d))
        add(Quad(c, P_TEXT, Literal(chunk.text), d))
        add(Quad(c, P_START, Literal(str(chunk.start), datatype=_INT), d))
        add(Quad(c, P_END, Literal(str(chunk.end), datatype=_INT), d))
        add(Quad(c, P_TOKENS, Literal(str(chunk.tokens), datatype=_INT), d))
        if chunk.section_id:
            add(Quad(c, P_IN_SECTION, section_iri(base, chunk.section_id), d))

    for extraction in extractions:
        c = chunk_iri(base, extraction.chunk_id)
        chunk_quads = list(_extraction_quads(extraction, c, base))
        if chunk_quads:
            graphs.append(c)
            quads.extend(chunk_quads)
    return DocumentGraphs(d, tuple(graphs), tuple(dict.fromkeys(quads)))


def _extraction_quads(extraction: ChunkExtraction, graph: NamedNode, base: str) -> Iterable[Quad]:
    for m in extraction.mentions:
        e = entity_iri(base, m)
        yield Quad(e, _A, NamedNode(m.class_iri), graph)
        yield Quad(e, P_PREF, Literal(display_label(m), language="en"), graph)
        if m.text.strip():
            yield Quad(e, P_ALT, Literal(m.text, language="en"), graph)
        yield Quad(e, P_MENTIONED, graph, graph)
    for r in extraction.relations:
        yield Quad(entity_iri(base, r.subject), NamedNode(r.property_iri), entity_iri(base, r.object), graph)
    for a in extraction.attributes:
        value = Literal(a.value, datatype=NamedNode(a.datatype))
        yield Quad(entity_iri(base, a.subject), NamedNode(a.property_iri), value, graph)


# Metadata keys naming who issued a document, and its identifiers (CELEX number, ELI, source URL).
_ISSUER_KEYS = ("issuer", "issued_by", "publisher", "author", "department", "authority")
_IDENTIFIER_KEYS = ("identifier", "celex", "eli", "source", "url")
# Metadata keys of a document's short titles: Dublin Core's name, common spellings, and
# ``jurabk`` (the official abbreviation of a German law, as gesetze-im-internet.de gives it).
_SHORT_TITLE_KEYS = ("alternative", "short_title", "shorttitle", "abbreviation", "acronym", "jurabk", "amtabk")
MAX_SHORT_TITLE = 120  # characters: a longer value is a summary, not a name
MAX_SHORT_TITLES = 3  # every heading path shows them: a long list of aliases would bury the headings


def short_titles(metadata, title: str) -> list[str]:
    """The short titles ``metadata`` gives a document (the first :data:`MAX_SHORT_TITLES`), except
    any its ``title`` already is.

    >>> short_titles({"jurabk": "EEG 2014", "short_title": ["EEG 2014", "Stromsteuergesetz"]}, "Stromsteuergesetz")
    ['EEG 2014']
    >>> len(short_titles({"acronym": [f"A{i}" for i in range(50)]}, "Act"))  # at most MAX_SHORT_TITLES
    3
    """
    shorts = [t for t in metadata_values(metadata, _SHORT_TITLE_KEYS) if len(t) <= MAX_SHORT_TITLE and t.casefold() != title.casefold()]
    return shorts[:MAX_SHORT_TITLES]


def metadata_values(metadata, keys: tuple[str, ...]) -> list[str]:
    """The non-empty string values of ``keys`` in ``metadata`` (lists flattened), de-duplicated.

    >>> metadata_values({"department": "Council, Parliament", "eli": ["x", "x"]}, ("department", "eli"))
    ['Council, Parliament', 'x']
    """
    out: list[str] = []
    for key in keys:
        value = metadata.get(key) if hasattr(metadata, "get") else None
        for item in value if isinstance(value, (list, tuple)) else [value]:
            text = " ".join(str(item).split()) if isinstance(item, (str, int)) and not isinstance(item, bool) else ""
            if text and len(text) <= 500 and text not in out:
                out.append(text)
    return out


def _iri(text: str) -> NamedNode | None:
    if not text.startswith(("http://", "https://")) or any(c in text for c in ' <>"{}|\\^`'):
        return None
    try:
        return NamedNode(text)
    except ValueError:
        return None


def issued_date(metadata) -> str | None:
    """The document date from metadata as ``YYYY-MM-DD``, if one parses."""
    for key in ("date", "issued", "date_document", "date_publication", "adopted", "published"):
        value = metadata.get(key) if hasattr(metadata, "get") else None
        if not value:
            continue
        text = str(value).strip()[:10]
        try:
            return dt.date.fromisoformat(text).isoformat()
        except ValueError:
            continue
    return None
