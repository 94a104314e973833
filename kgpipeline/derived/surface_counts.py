"""Surface forms → candidate entities, and how often each surface form means each entity.

The dictionary comes from the written triples: every ``skos:altLabel`` of an entity (the text the
extractor saw) and its ``skos:prefLabel``, plus the prefLabel without its trailing "(scope)" — the
writer labels homonyms "Energy Bureau (National)" / "Energy Bureau (Westmark Province)", so the
bare name is the surface form they share.

Counting links every surface form over the whole corpus text, not only where the extractor found
a mention. Matching works on word tokens (``\\w+``, casefolded): a dictionary keyed by the first
token lists the token lengths of its forms, so a scan costs a few hash look-ups per token whatever
the dictionary size (the effect of one regex per length bucket, without a regex engine's
alternation limits). Matches are leftmost-longest and do not overlap: "National Energy Bureau"
counts for that form, not also for "energy bureau".

Homonyms: an occurrence of a form with several candidates goes to the one its context names, in
this order, each step narrowing the candidates left by the one before:
  1. the candidates the extractor recorded with this very surface form in this chunk's graph;
  2. the candidates mentioned in this chunk (``pkb:mentionedIn``);
  3. the candidates mentioned anywhere in the same document;
  4. otherwise the most frequent sense: the candidate mentioned in most chunks (then the smallest
     IRI, so reruns agree). Counts stay integers, as the prior's definition wants.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from store.base import RDFStore
from store.disambiguation import normalize_surface
from store.vocab import PKB, SKOS

_TOKEN = re.compile(r"\w+")
_SCOPE_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")


def token_key(text: str) -> str:
    """Matching key of a text: its casefolded word tokens joined by one space."""
    return " ".join(_TOKEN.findall(text.casefold()))


def surface_variants(pref_label: str) -> tuple[str, ...]:
    """Normalized surface forms a canonical label contributes: itself and, for "Name (Scope)", the
    bare name."""
    forms = [normalize_surface(pref_label)]
    bare = _SCOPE_SUFFIX.sub("", pref_label)
    if bare and bare != pref_label:
        forms.append(normalize_surface(bare))
    return tuple(f for f in forms if f)


@dataclass(frozen=True)
class SurfaceDictionary:
    """``candidates``: normalized surface form → entity IRIs (sorted). ``forms_by_key``: matching
    key → the surface forms with that key. ``lengths``: first token → token lengths of its keys,
    longest first."""

    candidates: Mapping[str, tuple[str, ...]]
    forms_by_key: Mapping[str, tuple[str, ...]]
    lengths: Mapping[str, tuple[int, ...]]

    @classmethod
    def build(cls, labels: Mapping[str, Iterable[str]]) -> SurfaceDictionary:
        """``labels``: entity IRI → its normalized surface forms."""
        by_form: dict[str, set[str]] = defaultdict(set)
        for entity, forms in labels.items():
            for form in forms:
                if token_key(form):
                    by_form[form].add(entity)
        forms_by_key: dict[str, set[str]] = defaultdict(set)
        lengths: dict[str, set[int]] = defaultdict(set)
        for form in by_form:
            key = token_key(form)
            forms_by_key[key].add(form)
            tokens = key.split(" ")
            lengths[tokens[0]].add(len(tokens))
        return cls(
            candidates={f: tuple(sorted(e)) for f, e in by_form.items()},
            forms_by_key={k: tuple(sorted(v)) for k, v in forms_by_key.items()},
            lengths={t: tuple(sorted(v, reverse=True)) for t, v in lengths.items()},
        )

    def key_candidates(self, key: str) -> tuple[str, ...]:
        """Every entity any form with this matching key may denote."""
        return tuple(sorted({e for f in self.forms_by_key.get(key, ()) for e in self.candidates[f]}))


def find_keys(text: str, dictionary: SurfaceDictionary) -> list[str]:
    """Matching keys found in ``text``, leftmost-longest, non-overlapping, in text order."""
    tokens = _TOKEN.findall(text.casefold())
    found: list[str] = []
    i, n = 0, len(tokens)
    lengths, keys = dictionary.lengths, dictionary.forms_by_key
    while i < n:
        step = 1
        for length in lengths.get(tokens[i], ()):
            if i + length <= n:
                key = tokens[i] if length == 1 else " ".join(tokens[i : i + length])
                if key in keys:
                    found.append(key)
                    step = length
                    break
        i += step
    return found


@dataclass(frozen=True)
class CorpusChunk:
    """What linking needs to know about one chunk: its text, document and recorded mentions.

    ``surfaces``: entity IRI → matching keys of the surface forms the extractor recorded for it in
    this chunk's graph.
    """

    iri: str
    document: str
    text: str
    mentioned: frozenset[str] = frozenset()
    surfaces: Mapping[str, frozenset[str]] = field(default_factory=dict)


def resolve(
    key: str,
    candidates: tuple[str, ...],
    chunk: CorpusChunk,
    doc_entities: frozenset[str],
    popularity: Mapping[str, int],
) -> str:
    """The entity one occurrence of ``key`` in ``chunk`` stands for (the module docstring's rule)."""
    left = candidates
    for context in (
        {e for e in left if key in chunk.surfaces.get(e, ())},
        chunk.mentioned,
        doc_entities,
    ):
        narrowed = tuple(e for e in left if e in context)
        if len(narrowed) == 1:
            return narrowed[0]
        if narrowed:
            left = narrowed
    return min(left, key=lambda e: (-popularity.get(e, 0), e))


def count_links(chunks: Iterable[CorpusChunk], dictionary: SurfaceDictionary) -> Counter[tuple[str, str]]:
    """``count(s, e)`` for every surface form ``s`` and entity ``e`` over the corpus. An occurrence
    of a matching key counts for each surface form sharing that key that can denote the chosen
    entity."""
    chunks = list(chunks)
    doc_entities: dict[str, set[str]] = defaultdict(set)
    popularity: Counter[str] = Counter()
    for chunk in chunks:
        doc_entities[chunk.document] |= chunk.mentioned
        popularity.update(chunk.mentioned)
    frozen_docs = {d: frozenset(e) for d, e in doc_entities.items()}
    key_candidates: dict[str, tuple[str, ...]] = {}
    by_key: Counter[tuple[str, str]] = Counter()
    for chunk in chunks:
        for key in find_keys(chunk.text, dictionary):
            cands = key_candidates.get(key)
            if cands is None:
                cands = key_candidates[key] = dictionary.key_candidates(key)
            entity = cands[0] if len(cands) == 1 else resolve(key, cands, chunk, frozen_docs[chunk.document], popularity)
            by_key[key, entity] += 1
    counts: Counter[tuple[str, str]] = Counter()
    for (key, entity), n in by_key.items():
        for form in dictionary.forms_by_key[key]:
            if entity in dictionary.candidates[form]:
                counts[form, entity] += n
    return counts


# --- reading the store ------------------------------------------------------------------------


def read_labels(store: RDFStore) -> dict[str, set[str]]:
    """Entity IRI → normalized surface forms (altLabels, prefLabel and its bare name)."""
    rows = store.select(
        f"""SELECT DISTINCT ?e ?p ?l WHERE {{
            ?e <{PKB}mentionedIn> ?c ; ?p ?l . VALUES ?p {{ <{SKOS}prefLabel> <{SKOS}altLabel> }} }}"""
    ).rows
    labels: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        text = r["l"].value
        forms = surface_variants(text) if r["p"].value == SKOS + "prefLabel" else (normalize_surface(text),)
        labels[r["e"].value].update(f for f in forms if f)
    return dict(labels)


def read_corpus(store: RDFStore) -> list[CorpusChunk]:
    """Every chunk with its document, text, mentioned entities and recorded surface forms."""
    chunks = store.select(
        f"SELECT ?c ?d ?t WHERE {{ ?c a <{PKB}Chunk> ; <{PKB}partOfDocument> ?d ; <{PKB}text> ?t }}"
    ).rows
    mentions = store.select(
        f"""SELECT ?e ?c ?l WHERE {{ ?e <{PKB}mentionedIn> ?c .
            OPTIONAL {{ GRAPH ?c {{ ?e <{SKOS}altLabel> ?l }} }} }}"""
    ).rows
    mentioned: dict[str, set[str]] = defaultdict(set)
    surfaces: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for r in mentions:
        chunk, entity = r["c"].value, r["e"].value
        mentioned[chunk].add(entity)
        if r["l"] is not None:
            surfaces[chunk][entity].add(token_key(r["l"].value))
    return [
        CorpusChunk(
            iri=r["c"].value,
            document=r["d"].value,
            text=r["t"].value,
            mentioned=frozenset(mentioned.get(r["c"].value, ())),
            surfaces={e: frozenset(k) for e, k in surfaces.get(r["c"].value, {}).items()},
        )
        for r in sorted(chunks, key=lambda r: r["c"].value)
    ]


def read_relation_pairs(store: RDFStore) -> list[tuple[str, str]]:
    """(subject, object) of every relation triple between two entities, as asserted per chunk
    graph (the writer puts both ends of a relation among the chunk's mentions)."""
    rows = store.select(
        f"""SELECT DISTINCT ?s ?o WHERE {{ GRAPH ?c {{ ?s ?p ?o . ?s <{PKB}mentionedIn> ?c .
            ?o <{PKB}mentionedIn> ?c }} FILTER(?p != <{PKB}mentionedIn> && ?s != ?o) }}"""
    ).rows
    return [(r["s"].value, r["o"].value) for r in rows]
