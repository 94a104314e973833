"""Retrieval units: each chunk as the text indexes and readers see, with its heading path.

A unit is one chunk (``pkb:Chunk``) with its document title and the headings above it, e.g.
``("Regulation (EU) 2024/1689", "Chapter III", "Article 6 Classification rules")``, and its text
free of source markup (:func:`core.text.reading_text`). The dense index, BM25 and the graph
signal all index :attr:`Unit.index_text` — heading path first, because questions name acts and
articles that the chunk body often does not repeat. Offsets stay those of the stored chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from core.text import reading_text
from store.base import RDFStore
from store.vocab import DCTERMS, PKB, values_clause

PATH_SEPARATOR = " › "

_SECTIONS = (
    f"SELECT ?s ?parent ?heading WHERE {{ ?s a <{PKB}Section> ; <{PKB}sectionOf> ?parent ; <{PKB}heading> ?heading }}"
)
_TITLES = (
    f"SELECT ?d ?title ?short WHERE {{ ?d <{DCTERMS}title> ?title ; <{DCTERMS}identifier> ?id "
    f"OPTIONAL {{ ?d <{DCTERMS}alternative> ?short }} }}"
)


def shown_title(title: str, shorts: Iterable[str] = ()) -> str:
    """A document's title as heading paths show it: with the short titles it is cited by, which
    questions use and its text may never write ("Gesetz für den Ausbau erneuerbarer Energien
    (EEG 2014)"); a short title the title already holds is not repeated.

    >>> shown_title("Gesetz für den Ausbau erneuerbarer Energien", ["EEG 2014"])
    'Gesetz für den Ausbau erneuerbarer Energien (EEG 2014)'
    >>> shown_title("Regulation (EU) 2016/679 (GDPR)", ["GDPR"]), shown_title("", ["KSG"])
    ('Regulation (EU) 2016/679 (GDPR)', 'KSG')
    """
    extra = [s for s in dict.fromkeys(" ".join(s.split()) for s in shorts) if s and s.casefold() not in title.casefold()]
    if not title:
        return "; ".join(extra)
    return f"{title} ({'; '.join(extra)})" if extra else title


def document_titles(store: RDFStore) -> dict[str, str]:
    """Document IRI → its title as heading paths show it (:func:`shown_title`), free of markup."""
    titles: dict[str, str] = {}
    shorts: dict[str, list[str]] = {}
    for row in store.select(_TITLES).rows:
        doc = row["d"].value  # type: ignore[union-attr]
        titles[doc] = reading_text(row["title"].value)  # type: ignore[union-attr]
        if row.get("short") is not None:
            shorts.setdefault(doc, []).append(reading_text(row["short"].value))  # type: ignore[union-attr]
    return {doc: shown_title(title, sorted(shorts.get(doc, ()))) for doc, title in titles.items()}


@dataclass(frozen=True)
class Unit:
    """One chunk for indexing: ``iri``, its ``document`` IRI, ``path`` (document title with its
    short titles, :func:`shown_title`, then the headings from the top down) and ``text`` (the chunk
    text without markup)."""

    iri: str
    document: str
    path: tuple[str, ...]
    text: str

    @property
    def heading_path(self) -> str:
        return PATH_SEPARATOR.join(self.path)

    @property
    def index_text(self) -> str:
        """Heading path, then the text; the path's last heading is left out when the text starts
        with it already (a section's chunk begins with its own heading line)."""
        path = list(self.path)
        if path and self.text.startswith(path[-1]):
            path.pop()
        head = PATH_SEPARATOR.join(path)
        return f"{head}\n{self.text}" if head else self.text


def _sections(store: RDFStore) -> tuple[dict[str, str], dict[str, str]]:
    parent: dict[str, str] = {}
    heading: dict[str, str] = {}
    for row in store.select(_SECTIONS).rows:
        s = row["s"].value  # type: ignore[union-attr]
        parent[s] = row["parent"].value  # type: ignore[union-attr]
        heading[s] = reading_text(row["heading"].value)  # type: ignore[union-attr]
    return parent, heading


def _path(section: str | None, parent: Mapping[str, str], heading: Mapping[str, str]) -> tuple[str, ...]:
    out: list[str] = []
    seen: set[str] = set()
    while section and section in heading and section not in seen:  # `seen`: a malformed tree cannot loop
        seen.add(section)
        out.append(heading[section])
        section = parent.get(section)
    return tuple(reversed(out))


def read_units(store: RDFStore, iris: Iterable[str] | None = None) -> list[Unit]:
    """Every chunk of the KB as a unit (ordered by IRI), or only those in ``iris``."""
    where = ""
    if iris is not None:
        unique = sorted(set(iris))
        if not unique:
            return []
        where = values_clause("c", unique) + " "
    rows = store.select(
        f"SELECT ?c ?doc ?text ?section WHERE {{ {where}?c a <{PKB}Chunk> ; <{PKB}partOfDocument> ?doc ; "
        f"<{PKB}text> ?text . OPTIONAL {{ ?c <{PKB}inSection> ?section }} }} ORDER BY ?c"
    ).rows
    parent, heading = _sections(store) if rows else ({}, {})
    titles = document_titles(store) if rows else {}
    units: dict[str, Unit] = {}
    for row in rows:
        iri, doc = row["c"].value, row["doc"].value  # type: ignore[union-attr]
        section = row["section"].value if row.get("section") is not None else None  # type: ignore[union-attr]
        title = titles.get(doc, "")
        path = ((title,) if title else ()) + _path(section, parent, heading)
        units.setdefault(iri, Unit(iri, doc, path, reading_text(row["text"].value)))  # type: ignore[union-attr]
    return list(units.values())


def heading_paths(store: RDFStore, iris: Iterable[str]) -> dict[str, str]:
    """Chunk IRI → its heading path as one string ("Title › Chapter II › Article 5 Penalties"),
    for the given chunks only (one query: the query path stays cheap on a large KB)."""
    unique = sorted(set(iris))
    if not unique:
        return {}
    rows = store.select(
        f"SELECT ?c ?title ?short ?level ?heading WHERE {{ {values_clause('c', unique)} ?c <{PKB}partOfDocument> ?doc . "
        f"OPTIONAL {{ ?doc <{DCTERMS}title> ?title }} OPTIONAL {{ ?doc <{DCTERMS}alternative> ?short }} "
        f"OPTIONAL {{ ?c <{PKB}inSection>/<{PKB}sectionOf>* ?s . ?s a <{PKB}Section> ; <{PKB}heading> ?heading ; "
        f"<{PKB}sectionLevel> ?level }} }}"
    ).rows
    parts: dict[str, list[tuple[float, str]]] = {}
    titles: dict[str, str] = {}
    shorts: dict[str, set[str]] = {}
    for row in rows:
        iri = row["c"].value  # type: ignore[union-attr]
        if row.get("title") is not None:
            titles.setdefault(iri, reading_text(row["title"].value))  # type: ignore[union-attr]
        if row.get("short") is not None:
            shorts.setdefault(iri, set()).add(reading_text(row["short"].value))  # type: ignore[union-attr]
        if row.get("heading") is not None:
            level = float(row["level"].value)  # type: ignore[union-attr]
            parts.setdefault(iri, []).append((level, reading_text(row["heading"].value)))  # type: ignore[union-attr]
    out = {}
    for iri in unique:
        title = shown_title(titles.get(iri, ""), sorted(shorts.get(iri, ())))
        path = ([title] if title else []) + [h for _, h in sorted(set(parts.get(iri, [])))]
        out[iri] = PATH_SEPARATOR.join(path)
    return out


def chapter_chunks(store: RDFStore, seeds: Iterable[str], up: int = 0) -> list[tuple[str, int, str, int]]:
    """(seed, its start offset, other chunk, its start offset) for every chunk in the seed's
    section — or, with ``up`` = n, in the section n levels above it (its chapter) — seeds
    themselves left out. A seed of a document without sections has the document's other chunks."""
    seeds = [s for s in seeds if s]
    if not seeds:
        return []
    path = "/".join([f"<{PKB}inSection>"] + [f"<{PKB}sectionOf>"] * up)
    part = f"<{PKB}partOfDocument>"
    # The node n levels up must be a section, not the document (a tree shallower than n gives none).
    rows = store.select(
        f"SELECT ?seed ?at ?c ?start WHERE {{ {values_clause('seed', sorted(set(seeds)))} ?seed <{PKB}startOffset> ?at . "
        f"{{ ?seed {path} ?s . ?s a <{PKB}Section> . ?c {path} ?s }} UNION "
        f"{{ ?seed {part} ?d . FILTER NOT EXISTS {{ ?seed <{PKB}inSection> ?any }} ?c {part} ?d }} "
        f"?c <{PKB}startOffset> ?start . FILTER(?c != ?seed) }}"
    ).rows
    return [(r["seed"].value, int(r["at"].value), r["c"].value, int(r["start"].value)) for r in rows]  # type: ignore[union-attr]
