"""LLM extractor: the category ontology becomes a prompt and a JSON schema; the answer is mapped
back onto the chunk text and checked against the ontology.

For capable configured models (the embedded 135M model is weak at open extraction; the lexicon
extractor is the default). The prompt lists the category's entity classes and relations with
their ``rdfs:comment`` definitions and domain/range, plus two short worked examples; the schema
restricts types and properties to enums of local names and bounds both arrays (``maxItems``), so
grammar-constrained decoding always ends.

Mapping the answer: an entity becomes a mention at each place its name occurs in the chunk
(exact, else case-insensitive) — a name that does not occur is dropped, so the model cannot add
entities that the text does not contain; canonical names and scopes follow the lexicon
extractor's rules (:func:`kgpipeline.extract.lexicon_extractor.mention_from_span`). A relation is kept
only when both ends are extracted entities and their classes fit the property's domain and range.
Malformed items are dropped and counted in :attr:`LLMExtractor.dropped`; a failing model call
(:class:`core.errors.ModelError`) propagates, for the controller to retry or skip.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from core.errors import ModelOutputError
from kgpipeline.extract.base import ChunkExtraction, Mention, Relation
from kgpipeline.extract.lexicon import CategoryLexicon
from kgpipeline.extract.lexicon_extractor import DocContext, LexiconExtractor, attributes_for, mention_from_span, sentences
from kgpipeline.ontology import OntologySet
from kgpipeline.records import Chunk, SourceDocument
from store.vocab import PKB

__all__ = ["LLMExtractor", "build_messages", "build_schema", "map_answer"]

NAME_MAX_CHARS = 120
# Worked examples in neutral wording; an example is shown only when every type and property in
# it exists in the category.
_EXAMPLES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("The Energy Agency of Eastland issues the Eastland Wind Strategy.",
     {"entities": [{"name": "Energy Agency of Eastland", "type": "Agency"},
                   {"name": "Eastland Wind Strategy", "type": "Policy"}],
      "relations": [{"subject": "Energy Agency of Eastland", "property": "issues", "object": "Eastland Wind Strategy"}]}),
    ("The Ministry shall adopt the Grid Code by 30 June 2026.",
     {"entities": [{"name": "Ministry", "type": "Authority"}, {"name": "Grid Code", "type": "Legislation"},
                   {"name": "30 June 2026", "type": "Deadline"}],
      "relations": [{"subject": "Ministry", "property": "issues", "object": "Grid Code"},
                    {"subject": "Grid Code", "property": "hasDeadline", "object": "30 June 2026"}]}),
)  # fmt: skip


class JSONModel(Protocol):
    """What this extractor needs of :class:`core.llm.LLM`."""

    def complete_json(self, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any]) -> Any: ...


class LLMExtractor:
    """Ontology-guided extraction with a language model (see the module docstring).

    ``max_items`` bounds the entities and the relations the model may return per chunk;
    ``definition_chars`` shortens the definitions in the prompt; 0 lists names and domain/range
    only (for small context windows).
    ``dropped`` counts discarded answer items by reason, over the extractor's lifetime.
    """

    name = "llm"

    def __init__(self, ontology: OntologySet, llm: JSONModel, max_items: int = 12, definition_chars: int = 110):
        self.ontology = ontology
        self.llm = llm
        self.max_items = max_items
        self.definition_chars = definition_chars
        self.dropped: Counter[str] = Counter()
        self._lexicon = LexiconExtractor(ontology)  # shares lexicons and document contexts

    def extract(self, chunk: Chunk, document: SourceDocument, category: str) -> ChunkExtraction:
        lex = self._lexicon.lexicon(category)
        ctx = self._lexicon.context(document, category)
        messages = build_messages(self.ontology, lex, chunk.text, document.title, self.definition_chars)
        answer = self.llm.complete_json(messages, build_schema(lex, self.max_items))
        mentions, relations, dropped = map_answer(answer, chunk.text, lex, ctx, self.max_items)
        self.dropped.update(dropped)
        attributes = attributes_for(list(mentions), sentences(chunk.text), lex)
        return ChunkExtraction(chunk.chunk_id, mentions, relations, tuple(attributes))


def _local(iri: str) -> str:
    return iri[len(PKB) :] if iri.startswith(PKB) else iri.rsplit("#", 1)[-1]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def build_schema(lex: CategoryLexicon, max_items: int) -> dict[str, Any]:
    """JSON schema of the answer: entity types and properties are enums of the category's local
    names; both arrays and all names are bounded."""
    name = {"type": "string", "minLength": 1, "maxLength": NAME_MAX_CHARS}
    return {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "maxItems": max_items,
                "items": {
                    "type": "object",
                    "properties": {"name": name, "type": {"enum": sorted(_local(c) for c in lex.mention_classes)}},
                    "required": ["name", "type"],
                },
            },
            "relations": {
                "type": "array",
                "maxItems": max_items,
                "items": {
                    "type": "object",
                    "properties": {"subject": name, "property": {"enum": sorted(_local(p) for p in lex.rules)},
                                   "object": name},  # fmt: skip
                    "required": ["subject", "property", "object"],
                },
            },
        },
        "required": ["entities", "relations"],
    }


def build_messages(
    onto: OntologySet, lex: CategoryLexicon, text: str, title: str = "", definition_chars: int = 110
) -> list[dict[str, str]]:
    """System prompt from the category ontology (definitions, domain/range, examples) and the
    chunk as the user message."""
    classes = sorted(lex.mention_classes, key=_local)
    lines = ["You extract entities and relations from policy text for a knowledge graph.",
             "Use only these entity types:"]  # fmt: skip
    for iri in classes:
        cls = onto.classes[iri]
        definition = f": {_short(cls.comment or cls.label, definition_chars)}" if definition_chars else ""
        lines.append(f"- {cls.local_name}{definition}")
    lines.append("Use only these relations (subject type -> object type):")
    for iri in sorted(lex.rules, key=_local):
        prop = onto.properties[iri]
        dom = "|".join(_local(d) for d in prop.domain)
        rng = "|".join(_local(r) for r in prop.range)
        definition = f": {_short(prop.comment or prop.label, definition_chars)}" if definition_chars else ""
        lines.append(f"- {prop.local_name} ({dom} -> {rng}){definition}")
    lines.append("Copy each entity name exactly as written in the text. Do not add entities that are not in the text.")
    local_classes = {_local(c) for c in lex.mention_classes}
    local_props = {_local(p) for p in lex.rules}
    for example_text, answer in _EXAMPLES:
        if all(e["type"] in local_classes for e in answer["entities"]) and all(
            r["property"] in local_props for r in answer["relations"]
        ):
            lines.append(f"Example text: {example_text}\nExample answer: {json.dumps(answer)}")
    user = (f"Document: {title}\n" if title else "") + f"Text:\n{text}"
    return [{"role": "system", "content": "\n".join(lines)}, {"role": "user", "content": user}]


def map_answer(
    answer: Any, text: str, lex: CategoryLexicon, ctx: DocContext, max_items: int
) -> tuple[tuple[Mention, ...], tuple[Relation, ...], Counter[str]]:
    """Mentions and relations from a parsed model answer (see the module docstring), sorted,
    with a count of the dropped items by reason. Raises ModelOutputError when the answer is not
    an object at all."""
    if not isinstance(answer, dict):
        raise ModelOutputError(f"extraction answer is {type(answer).__name__}, not an object")
    dropped: Counter[str] = Counter()
    classes = {_local(c): c for c in lex.mention_classes}
    properties = {_local(p): p for p in lex.rules}
    by_name: dict[str, list[Mention]] = {}
    taken: list[tuple[int, int]] = []
    for item in _items(answer, "entities", max_items, dropped):
        name, kind = item.get("name"), item.get("type")
        if not isinstance(name, str) or not name.strip() or kind not in classes:
            dropped["malformed entity"] += 1
            continue
        spans = _occurrences(text, name.strip())
        if not spans:
            dropped["entity not in text"] += 1
            continue
        found = [mention_from_span(text, a, b, classes[kind], lex, ctx) for a, b in spans
                 if not any(a < y and x < b for x, y in taken)]  # fmt: skip
        taken += [(m.start, m.end) for m in found]
        by_name.setdefault(_key(name), []).extend(found)
    mentions = sorted({m for ms in by_name.values() for m in ms}, key=lambda m: (m.start, m.end, m.class_iri))
    spans = sentences(text)
    relations: set[Relation] = set()
    for item in _items(answer, "relations", max_items, dropped):
        subj, prop, obj = item.get("subject"), item.get("property"), item.get("object")
        if not isinstance(subj, str) or not isinstance(obj, str) or prop not in properties:
            dropped["malformed relation"] += 1
            continue
        subjects, objects = by_name.get(_key(subj), []), by_name.get(_key(obj), [])
        if not subjects or not objects:
            dropped["relation end not an entity"] += 1
            continue
        rule = lex.rules[properties[prop]]
        pairs = [(s, o) for s in subjects for o in objects
                 if s.class_iri in rule.domain_ok and o.class_iri in rule.range_ok and s != o]  # fmt: skip
        if not pairs:
            dropped["relation type mismatch"] += 1
            continue
        s, o = min(pairs, key=lambda p: (abs(p[0].start - p[1].start), p[0].start))  # the closest pair
        relations.add(Relation(s, properties[prop], o, _evidence(spans, s, o), "llm"))
    ordered = sorted(relations, key=lambda r: (r.evidence, r.subject.start, r.property_iri, r.object.start))
    return tuple(mentions), tuple(ordered), dropped


def _items(answer: dict, key: str, max_items: int, dropped: Counter[str]) -> list[dict]:
    value = answer.get(key, [])
    if not isinstance(value, list):
        dropped[f"malformed {key}"] += 1
        return []
    items = [v for v in value[:max_items] if isinstance(v, dict)]
    if len(items) < len(value[:max_items]):
        dropped[f"malformed {key[:-1]}"] += len(value[:max_items]) - len(items)
    if len(value) > max_items:
        dropped[f"{key} over max_items"] += len(value) - max_items
    return items


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    """Spans where ``name`` occurs as whole words: exact matches, else case-insensitive ones."""
    words = [re.escape(w) for w in name.split()]
    if not words:
        return []
    pattern = r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"
    exact = [(m.start(), m.end()) for m in re.finditer(pattern, text)]
    return exact or [(m.start(), m.end()) for m in re.finditer(pattern, text, re.IGNORECASE)]


def _evidence(spans: list[tuple[int, int]], s: Mention, o: Mention) -> tuple[int, int]:
    lo, hi = min(s.start, o.start), max(s.end, o.end)
    start = max((a for a, _ in spans if a <= lo), default=lo)
    end = min((b for _, b in spans if b >= hi), default=hi)
    return start, end
