"""HTTP content negotiation for SPARQL results and RDF graphs.

SELECT/ASK results come as SPARQL JSON, XML, CSV or TSV; CONSTRUCT/DESCRIBE graphs (and Graph
Store reads) as Turtle, N-Triples, JSON-LD or RDF/XML. The client's ``Accept`` header picks one by
q-value (RFC 9110); a header that admits none of them is answered with 406.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pyoxigraph import QueryResultsFormat, RdfFormat

Kind = Literal["results", "graph"]


@dataclass(frozen=True)
class Format:
    media_type: str  # what the response's Content-Type says
    native: QueryResultsFormat | RdfFormat
    aliases: tuple[str, ...] = ()  # other media types that select this format

    @property
    def content_type(self) -> str:
        textual = self.media_type.startswith("text/") or self.media_type.endswith(("json", "xml", "triples"))
        return f"{self.media_type}; charset=utf-8" if textual else self.media_type


# Server preference order: the first entry is the default for `*/*` or no Accept header.
RESULT_FORMATS: tuple[Format, ...] = (
    Format("application/sparql-results+json", QueryResultsFormat.JSON, ("application/json",)),
    Format("application/sparql-results+xml", QueryResultsFormat.XML, ("application/xml", "text/xml")),
    Format("text/csv", QueryResultsFormat.CSV),
    Format("text/tab-separated-values", QueryResultsFormat.TSV),
)
GRAPH_FORMATS: tuple[Format, ...] = (
    Format("text/turtle", RdfFormat.TURTLE, ("application/x-turtle",)),
    Format("application/n-triples", RdfFormat.N_TRIPLES),
    # SPARQLWrapper asks for plain JSON/XML when a CONSTRUCT's return format is JSON/XML.
    Format("application/ld+json", RdfFormat.JSON_LD, ("application/json",)),
    Format("application/rdf+xml", RdfFormat.RDF_XML, ("application/xml", "text/xml")),
)
FORMATS: dict[Kind, tuple[Format, ...]] = {"results": RESULT_FORMATS, "graph": GRAPH_FORMATS}

# RDF syntaxes accepted in request bodies (Graph Store Protocol writes).
UPLOAD_FORMATS: dict[str, RdfFormat] = {
    "text/turtle": RdfFormat.TURTLE,
    "application/x-turtle": RdfFormat.TURTLE,
    "application/n-triples": RdfFormat.N_TRIPLES,
    "text/plain": RdfFormat.N_TRIPLES,
    "application/ld+json": RdfFormat.JSON_LD,
    "application/rdf+xml": RdfFormat.RDF_XML,
    "text/n3": RdfFormat.N3,
}


def parse_accept(header: str | None) -> list[tuple[str, float]]:
    """``Accept`` as (media range, q) pairs in header order; empty means 'anything'."""
    ranges: list[tuple[str, float]] = []
    for part in (header or "").split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        q = 1.0
        for param in fields[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    q = 0.0
        ranges.append((media if "/" in media else f"{media}/*", q))
    return ranges


def _quality(media_type: str, ranges: list[tuple[str, float]]) -> tuple[float, int]:
    """q of the most specific range matching ``media_type``, and that range's position."""
    kind = media_type.split("/")[0]
    best: tuple[int, float, int] | None = None  # (specificity, q, position)
    for position, (media, q) in enumerate(ranges):
        if media == media_type:
            specificity = 2
        elif media == f"{kind}/*":
            specificity = 1
        elif media == "*/*":
            specificity = 0
        else:
            continue
        if best is None or specificity > best[0]:
            best = (specificity, q, position)
    return (0.0, len(ranges)) if best is None else (best[1], best[2])


@lru_cache(maxsize=256)  # clients repeat the same few Accept headers; this runs per request
def negotiate(accept: str | None, kind: Kind) -> Format | None:
    """The best format of ``kind`` for an Accept header, or None when it admits none (→ 406)."""
    ranges = parse_accept(accept)
    candidates = FORMATS[kind]
    if not ranges:
        return candidates[0]
    best: tuple[float, int, int] | None = None  # (q, -position in Accept, -server preference)
    chosen: Format | None = None
    for preference, fmt in enumerate(candidates):
        for media in (fmt.media_type, *fmt.aliases):
            q, position = _quality(media, ranges)
            if q <= 0:
                continue
            # An alias ranks below the format's own media type when both match equally.
            score = (q, -position, -preference * 2 - (media != fmt.media_type))
            if best is None or score > best:
                best, chosen = score, fmt
    return chosen


@lru_cache(maxsize=256)
def acceptable_at_all(accept: str | None) -> bool:
    """Whether any query form could be answered: checked before running a query."""
    return negotiate(accept, "results") is not None or negotiate(accept, "graph") is not None


def offered(kind: Kind) -> str:
    return ", ".join(f.media_type for f in FORMATS[kind])
