"""Triples as sentences: "National Energy Bureau issues National Solar Plan."

SPR-RAG puts structured facts into the generator's context as text; a sentence built from the
ontology's ``rdfs:label`` of the property and the entities' ``skos:prefLabel`` reads naturally and
can be matched against the question like any other sentence. :func:`verbalize` is pure; the
labels come from the store (``KnowledgeBase.property_labels``).
"""

from __future__ import annotations

import datetime as dt
import re

from spr.records import Fact
from store.vocab import XSD
from store.vocabulary import label_from_iri


def date_text(value: str, datatype: str = "") -> str:
    """A date as "2030-12-31": policykb writes dates as xsd:dateTime at midnight, whose time part
    says nothing; other values, and dateTimes with a time of day, are returned unchanged.

    >>> date_text("2030-12-31T00:00:00", XSD + "dateTime"), date_text("2030-12-31T09:30:00")
    ('2030-12-31', '2030-12-31T09:30:00')
    """
    if datatype in ("", XSD + "dateTime") and re.fullmatch(r"\d{4}-\d{2}-\d{2}T00:00:00(\.0+)?", value):
        return value[:10]
    return value


def format_literal(value: str, datatype: str = "") -> str:
    """Literal values as a person would write them: ISO dates (xsd:date, or xsd:dateTime at
    midnight) become "31 December 2030".

    >>> format_literal("2030-12-31T00:00:00", XSD + "dateTime"), format_literal("2030-12-31", XSD + "date")
    ('31 December 2030', '31 December 2030')
    """
    value = date_text(value, datatype)
    if datatype in ("", XSD + "date", XSD + "dateTime") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            day = dt.date.fromisoformat(value)
            return f"{day.day} {day:%B} {day.year}"
        except ValueError:
            return value
    return value


def verbalize(fact: Fact) -> str:
    """One sentence for a triple, from its labels (falling back to the IRIs' local names)."""
    subject = fact.subject_label or label_from_iri(fact.subject)
    predicate = fact.predicate_label or label_from_iri(fact.predicate)
    obj = fact.object_label or (date_text(fact.object) if fact.object_is_literal else label_from_iri(fact.object))
    sentence = f"{subject} {predicate} {obj}".strip()
    sentence = sentence[:1].upper() + sentence[1:]
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."
