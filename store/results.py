"""Render query results: SPARQL 1.1 JSON/CSV/TSV result formats and a plain-text table."""

from __future__ import annotations

import csv
import io
import json

from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from store.base import AskResult, GraphResult, QueryResult, SelectResult, Term

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


def term_to_json(term: Term) -> dict:
    """A term in the SPARQL 1.1 Query Results JSON format."""
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, Literal):
        out: dict = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value not in (_XSD_STRING, _RDF_LANG_STRING):
            out["datatype"] = term.datatype.value
        return out
    if isinstance(term, Triple):
        return {
            "type": "triple",
            "value": {k: term_to_json(getattr(term, k)) for k in ("subject", "predicate", "object")},
        }
    raise TypeError(f"not an RDF term: {term!r}")


def to_json(result: QueryResult) -> str:
    if isinstance(result, AskResult):
        return json.dumps({"head": {}, "boolean": result.value})
    if isinstance(result, GraphResult):
        result = _triples_as_select(result)
    bindings = [
        {name: term_to_json(value) for name, value in row.items() if value is not None} for row in result.rows
    ]
    return json.dumps({"head": {"vars": list(result.variables)}, "results": {"bindings": bindings}}, ensure_ascii=False)


def to_delimited(result: QueryResult, delimiter: str = ",") -> str:
    """CSV (plain values, as SPARQL 1.1 CSV) or TSV (N-Triples-encoded terms, as SPARQL 1.1 TSV)."""
    if isinstance(result, AskResult):
        return f"{'true' if result.value else 'false'}\n"
    if isinstance(result, GraphResult):
        result = _triples_as_select(result)
    buffer = io.StringIO()
    if delimiter == ",":
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(result.variables)
        for row in result.rows:
            writer.writerow(["" if row.get(v) is None else _plain(row[v]) for v in result.variables])
    else:
        buffer.write("\t".join(f"?{v}" for v in result.variables) + "\n")
        for row in result.rows:
            buffer.write("\t".join("" if row.get(v) is None else str(row[v]) for v in result.variables) + "\n")
    return buffer.getvalue()


def to_table(result: QueryResult, max_width: int = 60) -> str:
    """A fixed-width text table for terminals; long values are cut with '…'."""
    if isinstance(result, AskResult):
        return "true" if result.value else "false"
    if isinstance(result, GraphResult):
        result = _triples_as_select(result)
    header = list(result.variables)
    cells = [[_cut(_plain(row[v]) if row.get(v) is not None else "", max_width) for v in header] for row in result.rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    rule = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join([line, rule, *body, f"({len(cells)} row{'s' if len(cells) != 1 else ''})"])


def _plain(term: Term) -> str:
    if isinstance(term, (NamedNode, BlankNode, Literal)):
        return term.value
    return str(term)


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _triples_as_select(result: GraphResult) -> SelectResult:
    rows = tuple({"subject": t.subject, "predicate": t.predicate, "object": t.object} for t in result.triples)
    return SelectResult(("subject", "predicate", "object"), rows)
