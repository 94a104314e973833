"""What an extractor returns for one chunk, and the interface every extractor implements.

Offsets in these records index into ``Chunk.text`` (``chunk.text[m.start:m.end] == m.text``), so a
triple's evidence can always be quoted exactly; add ``chunk.start`` for document offsets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kgpipeline.records import Chunk, SourceDocument
from store.vocab import XSD

# Dates are written as xsd:dateTime at midnight with no time zone: xsd:date is outside the OWL 2
# datatype map, so HermiT (Protégé's default reasoner) would reject the ontologies' date ranges.
DATE_TIME = XSD + "dateTime"


def day_lexical(day: str, datatype: str = DATE_TIME) -> str:
    """The lexical form of the calendar day ``day`` ("2030-12-31") in ``datatype``.

    >>> day_lexical("2030-12-31"), day_lexical("2030-12-31", XSD + "date")
    ('2030-12-31T00:00:00', '2030-12-31')
    """
    return f"{day}T00:00:00" if datatype == DATE_TIME else day


@dataclass(frozen=True)
class Mention:
    """An entity mention.

    ``canonical``: the normalized name that identifies the entity together with its class and
    ``scope`` (e.g. "energy bureau"). ``scope``: the context that tells homonyms apart — for an
    actor named without its jurisdiction ("the Energy Bureau"), the jurisdiction the document
    speaks for ("westmark province"); "" when the name is unambiguous by itself. ``label``: the
    entity's name as the text writes it ("Regulation (EU) 2016/679"), when the extractor knows it;
    else the writer builds one from ``canonical``. A mention with ``start == end`` is named by the
    document's metadata rather than quoted (the document's own act, its issuers): ``text`` is that name.
    """

    text: str
    class_iri: str
    start: int
    end: int
    canonical: str
    scope: str = ""
    label: str = ""


@dataclass(frozen=True)
class Relation:
    """``subject --property--> object`` stated in the sentence at ``evidence`` (chunk offsets)."""

    subject: Mention
    property_iri: str
    object: Mention
    evidence: tuple[int, int]
    cue: str  # the trigger phrase or the model that produced it


@dataclass(frozen=True)
class Attribute:
    """A datatype property value, e.g. a Deadline's ``pkb:dateValue "2030-12-31T00:00:00"^^xsd:dateTime``."""

    subject: Mention
    property_iri: str
    value: str  # lexical form, already valid for ``datatype``
    datatype: str  # XSD datatype IRI
    evidence: tuple[int, int]


@dataclass(frozen=True)
class ChunkExtraction:
    chunk_id: str
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()
    attributes: tuple[Attribute, ...] = ()


class Extractor(Protocol):
    """Turns one chunk into typed mentions and relations, guided by a category ontology."""

    name: str

    def extract(self, chunk: Chunk, document: SourceDocument, category: str) -> ChunkExtraction: ...
