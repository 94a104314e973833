"""Persona-based test sets generated from a KB's own chunks (EGD GraphRAG's evaluation set-up).

Seven personas (:data:`PERSONAS`) ask questions of the corpus, each in two shapes:

- **single-hop**: one chunk, picked seeded-randomly among those long enough to ask about;
- **multi-hop**: two chunks that share an entity (``pkb:mentionedIn``) or a keyword
  (``pkb:hasKeyword``) — chunks of other documents preferred, terms that occur in more than
  ``max_fanout`` chunks skipped (they join everything) — else two chunks of the same document.

The [llm] model gets the persona's description and the chunk text(s) and writes JSON
``{question, reference, quotes}`` (:data:`SCHEMA`, at most 3 quotes; a multi-hop reply has one list
per passage, :data:`MULTI_SCHEMA`, 1-2 quotes each, so the model cannot skip the second passage). Every quote must be a
verbatim substring of one of the chunks shown (:func:`spr.eval.testset.locate_quote`: exact, else with whitespace
runs matched loosely and the first letter in either case; a quote cut by the schema's length bound
may lose its last one or two words; the exact substring of the chunk and its offsets are stored); unverified
quotes are dropped, and an item keeps only when a quote is verified (a multi-hop one: in each
of its two chunks). Questions are de-duplicated (:func:`spr.eval.testset.is_duplicate`: the same words, or a
token-set Jaccard of at least ``near``; with an embedder also a cosine of at least ``cosine``).

The output (:func:`spr.eval.testset.write_testset`) is JSONL in the harness's generic format
(:func:`spr.eval.datasets.load_jsonl`): ``question``, ``answers`` (the reference answer),
``contexts`` (the quotes: QR@k and gold resolution), ``gold_ids`` (the quoted chunks' document
ids, ``dcterms:identifier``), ``kind`` (the hop type), plus ``persona``, ``hop``, ``chunks``,
``quotes`` with offsets and ``via`` (what joins a multi-hop pair). Run it with
``policykb eval --dataset FILE.jsonl --corpus <the KB's corpus>``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import InputError, ModelError, ModelNotFoundError, ModelOutputError, ModelUnavailableError
from spr.eval.testset import GeneratedQuestion, is_duplicate, verify_quotes, write_testset
from store.units import Unit, read_units
from store.vocab import DCTERMS, PKB, SKOS

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder
    from core.llm import LLM
    from store.base import RDFStore

PERSONAS: dict[str, str] = {
    "policymaker": (
        "Policymaker: a national or EU official who drafts, negotiates or evaluates legislation. Wants to know what an "
        "instrument requires, of whom, by when, and how it interacts with other rules."
    ),
    "academic-researcher": (
        "Academic Researcher: studies regulation and governance. Asks precise questions about definitions, scope, "
        "criteria, exceptions and the reasoning behind provisions."
    ),
    "climate-advocacy-worker": (
        "Climate Advocacy Worker: campaigns for an NGO on climate, environmental and social issues. Looks for "
        "commitments, reporting and transparency duties, enforcement and how actors can be held accountable."
    ),
    "general-citizen": (
        "General Citizen: an ordinary person without legal training. Asks plainly what the rules mean for them: "
        "their rights, what they can do, whom to contact."
    ),
    "industry-representative": (
        "Industry Representative: speaks for companies that must comply. Asks about obligations, deadlines, "
        "thresholds, penalties, exemptions and the cost of compliance."
    ),
    "journalist": (
        "Journalist: reports on policy for a general audience. Asks who is responsible, what changes, what the key "
        "figures and dates are, and what is controversial or new."
    ),
    "local-government-official": (
        "Local Government Official: works for a city or region that implements EU and national rules. Asks what "
        "public authorities must do, which powers and procedures apply, and what support or deadlines exist."
    ),
}
HOPS = ("single", "multi")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "maxLength": 300},
        "reference": {"type": "string", "maxLength": 500},
        "quotes": {"type": "array", "items": {"type": "string", "maxLength": 250}, "maxItems": 3},  # QUOTE_LENGTH
    },
    "required": ["question", "reference", "quotes"],
}
_QUOTE = {"type": "string", "maxLength": 250}
MULTI_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": SCHEMA["properties"]["question"],
        "reference": SCHEMA["properties"]["reference"],
        "quotes_1": {"type": "array", "items": _QUOTE, "minItems": 1, "maxItems": 2},
        "quotes_2": {"type": "array", "items": _QUOTE, "minItems": 1, "maxItems": 2},
    },
    "required": ["question", "reference", "quotes_1", "quotes_2"],
}
QUOTE_LENGTH = 250  # the schemas' bound on one quote
SYSTEM = (
    "You write evaluation questions for a question-answering system over policy documents. Every question must be "
    "answerable from the passages given, and every quote must be copied word for word from them."
)
REJECTIONS = ("invalid_output", "model_error", "empty", "no_verified_quote", "multi_hop_one_chunk", "duplicate", "no_partner")


# --- picking chunks ------------------------------------------------------------------------------------
@dataclass
class ChunkPool:
    """The KB's chunks for generation: ``units`` by IRI (those of at least ``min_words`` words in
    ``eligible``), document ids, and the shared terms of each chunk (entities and keywords
    occurring in 2..``max_fanout`` chunks) with their labels."""

    units: dict[str, Unit]
    eligible: list[str]
    doc_ids: dict[str, str]
    terms: dict[str, set[str]] = field(default_factory=dict)  # chunk -> terms
    chunks_of: dict[str, set[str]] = field(default_factory=dict)  # term -> chunks
    labels: dict[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, store: RDFStore, *, min_words: int = 40, max_fanout: int = 20) -> ChunkPool:
        units = {u.iri: u for u in read_units(store)}
        eligible = sorted(i for i, u in units.items() if len(u.text.split()) >= min_words)
        docs = {r["d"].value: r["id"].value for r in store.select(f"SELECT ?d ?id WHERE {{ ?d <{DCTERMS}identifier> ?id }}").rows}  # type: ignore[union-attr]
        pool = cls(units, eligible, docs)
        queries = {
            "entity": f"SELECT ?t ?c ?l WHERE {{ ?t <{PKB}mentionedIn> ?c . OPTIONAL {{ ?t <{SKOS}prefLabel> ?l }} }}",
            "keyword": f"SELECT ?t ?c ?l WHERE {{ ?c <{PKB}hasKeyword> ?t . OPTIONAL {{ ?t <{SKOS}prefLabel> ?l }} }}",
        }
        for kind, query in queries.items():
            for row in store.select(query).rows:
                term, chunk = row["t"].value, row["c"].value  # type: ignore[union-attr]
                if chunk not in units:
                    continue
                pool.chunks_of.setdefault(term, set()).add(chunk)
                if row.get("l") is not None and term not in pool.labels:
                    pool.labels[term] = f"{kind}: {row['l'].value}"  # type: ignore[union-attr]
                pool.labels.setdefault(term, f"{kind}: {term.rsplit('/', 1)[-1]}")
        for term, chunks in list(pool.chunks_of.items()):
            if not 2 <= len(chunks) <= max_fanout:
                del pool.chunks_of[term]
                continue
            for chunk in chunks:
                pool.terms.setdefault(chunk, set()).add(term)
        return pool

    def doc_id(self, chunk: str) -> str:
        return self.doc_ids.get(self.units[chunk].document, "")

    def link_rank(self, term: str) -> tuple[int, int]:
        """How specific a link ``term`` is (lower is better): an entity, then a keyword of several
        words, then a one-word keyword; rarer first within each."""
        label = self.labels.get(term, "")
        kind = 0 if label.startswith("entity:") else 1 if len(label.split(": ", 1)[-1].split()) > 1 else 2
        return kind, len(self.chunks_of.get(term, ()))

    def partner(self, chunk: str, rng: random.Random, used: set[str]) -> tuple[str, str] | None:
        """A second chunk for a multi-hop question and what joins them: one sharing a term with
        ``chunk`` in another document if any, else in the same one, else another chunk of the same
        document; chunks in ``used`` only when nothing else is left. Among the candidates of a
        tier, those joined by the most specific kind of link (:meth:`link_rank`) are drawn from."""
        eligible = set(self.eligible)
        doc = self.units[chunk].document
        by_term: dict[str, str] = {}  # candidate -> its most specific shared term
        for term in sorted(self.terms.get(chunk, ()), key=lambda t: (self.link_rank(t), t)):
            for other in sorted(self.chunks_of[term]):
                if other != chunk and other in eligible:
                    by_term.setdefault(other, term)
        tiers = [
            [c for c in by_term if self.units[c].document != doc],
            [c for c in by_term if self.units[c].document == doc],
            [c for c in self.eligible if c != chunk and self.units[c].document == doc and c not in by_term],
        ]
        for fresh in (True, False):
            for tier in tiers:
                candidates = sorted(c for c in tier if (c not in used) == fresh)
                if candidates:
                    linked = [c for c in candidates if c in by_term]
                    if linked:
                        best = min(self.link_rank(by_term[c])[0] for c in linked)
                        candidates = [c for c in linked if self.link_rank(by_term[c])[0] == best]
                    other = rng.choice(candidates)
                    return other, self.labels[by_term[other]] if other in by_term else "same document"
        return None


# --- prompting --------------------------------------------------------------------------------------
def _excerpt(text: str, max_words: int) -> str:
    words = text.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def prompt(persona: str, chunks: Sequence[Unit], *, max_words: int = 200, via: str = "") -> list[dict[str, str]]:
    """The chat messages asking for one question of ``persona`` over ``chunks``."""
    passages = "\n\n".join(
        f"Passage {i} (source: {u.heading_path or 'document'}):\n{_excerpt(u.text, max_words)}" for i, u in enumerate(chunks, 1)
    )
    if len(chunks) > 1:
        task = (
            "Write ONE question this person would ask whose answer needs BOTH passages: it must combine a fact from "
            "passage 1 with a fact from passage 2" + (f" (they are linked by {via.split(': ', 1)[-1]})" if via and via != "same document" else "")
            + ". Then the reference answer (at most 60 words, only from the passages), and the short quotes (a sentence "
            "or phrase each) copied word for word that support it: 'quotes_1' (1 or 2) from passage 1 and 'quotes_2' (1 or 2) "
            "from passage 2."
        )
    else:
        task = (
            "Write ONE question this person would ask that the passage answers. Then the reference answer (at most 60 "
            "words, only from the passage), and 1 to 3 short quotes (a sentence or phrase each) copied word for word from "
            "the passage that support it."
        )
    keys = "'quotes_1' and 'quotes_2' (lists of strings)" if len(chunks) > 1 else "'quotes' (a list of strings)"
    user = (
        f"Persona: {PERSONAS[persona]}\n\n{passages}\n\n{task} The question must make sense without seeing the passages "
        f"(name the act or topic instead of saying 'the passage'). Reply as JSON with keys 'question', 'reference', {keys}."
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def generate_one(
    llm: LLM, persona: str, chunks: Sequence[Unit], *, max_words: int = 200, via: str = "", max_tokens: int = 400,
    temperature: float | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """One model reply (question, reference, quotes: a multi-hop reply's two lists joined) or None
    and the rejection reason."""
    schema = MULTI_SCHEMA if len(chunks) > 1 else SCHEMA
    try:
        reply = llm.complete_json(prompt(persona, chunks, max_words=max_words, via=via), schema, max_tokens=max_tokens, temperature=temperature)
    except (ModelUnavailableError, ModelNotFoundError):
        raise
    except ModelError as exc:
        return None, "invalid_output" if isinstance(exc, ModelOutputError) else "model_error"
    question, reference = str(reply.get("question") or "").strip(), str(reply.get("reference") or "").strip()
    quotes = reply.get("quotes") if len(chunks) == 1 else [*(reply.get("quotes_1") or []), *(reply.get("quotes_2") or [])]
    if len(question.split()) < 4 or not reference or not isinstance(quotes, list):
        return None, "empty"
    return {"question": question, "reference": reference, "quotes": [q for q in quotes if isinstance(q, str)]}, ""


def generate_testset(
    kb_store: RDFStore,
    llm: LLM,
    *,
    per_persona: int,
    seed: int = 0,
    hops: Sequence[str] = HOPS,
    personas: Sequence[str] | None = None,
    attempts: int = 3,
    min_words: int = 40,
    max_words: int = 200,
    max_fanout: int = 20,
    near: float = 0.8,
    embedder: Embedder | None = None,
    cosine: float = 0.95,
    rejected: MutableMapping[str, int] | None = None,
    progress=None,
) -> list[GeneratedQuestion]:
    """``per_persona`` questions of each hop type for every persona (ids ``<persona>-<hop>-<n>``),
    interleaved (round n of every persona and hop before round n + 1, so a cut-short run stays
    balanced). A slot tries up to ``attempts`` fresh chunk picks until one yields a verified,
    non-duplicate item (``near``: the Jaccard bound of :func:`is_duplicate`; with an ``embedder``
    also ``cosine``). ``rejected`` (a Counter, say) receives the count of each rejection reason
    (:data:`REJECTIONS`; ``bad_quotes``: quotes dropped from kept and rejected items alike);
    ``progress(done, total)`` is called after each slot."""
    unknown = [h for h in hops if h not in HOPS] + [p for p in personas or () if p not in PERSONAS]
    if unknown:
        raise InputError(f"unknown persona or hop type {unknown[0]!r}; personas: {', '.join(PERSONAS)}; hops: {', '.join(HOPS)}")
    rejects = rejected if rejected is not None else Counter()
    pool = ChunkPool.read(kb_store, min_words=min_words, max_fanout=max_fanout)
    if not pool.eligible:
        raise InputError(f"no chunk of at least {min_words} words to generate questions from")
    rng = random.Random(seed)
    order = rng.sample(pool.eligible, len(pool.eligible))
    used: set[str] = set()
    cursor = 0
    items: list[GeneratedQuestion] = []
    vectors: list[Any] = []
    slots = [(n, p, h) for n in range(1, per_persona + 1) for p in (personas or list(PERSONAS)) for h in hops]
    for done, (n, persona, hop) in enumerate(slots, 1):
        for _ in range(attempts):
            first = order[cursor % len(order)]
            cursor += 1
            used.add(first)
            picked, via = [first], ""
            if hop == "multi":
                other = pool.partner(first, rng, used)
                if other is None:
                    rejects["no_partner"] = rejects.get("no_partner", 0) + 1
                    continue
                picked.append(other[0])
                via = other[1]
                used.add(other[0])
            units = [pool.units[c] for c in picked]
            reply, why = generate_one(llm, persona, units, max_words=max_words, via=via)
            if reply is None:
                rejects[why] = rejects.get(why, 0) + 1
                continue
            quotes, bad = verify_quotes(reply["quotes"], units, cut_at=QUOTE_LENGTH)
            rejects["bad_quotes"] = rejects.get("bad_quotes", 0) + bad
            if not quotes:
                rejects["no_verified_quote"] = rejects.get("no_verified_quote", 0) + 1
                continue
            if hop == "multi" and len({q.chunk for q in quotes}) < 2:
                rejects["multi_hop_one_chunk"] = rejects.get("multi_hop_one_chunk", 0) + 1
                continue
            vector = embedder.embed_many([reply["question"]])[0] if embedder is not None else None
            if is_duplicate(reply["question"], [q.question for q in items], near=near, vectors=vectors if embedder else None, vector=vector, cosine=cosine):
                rejects["duplicate"] = rejects.get("duplicate", 0) + 1
                continue
            quoted = [c for c in picked if any(q.chunk == c for q in quotes)]
            items.append(
                GeneratedQuestion(
                    f"{persona}-{hop}-{n}", persona, hop, reply["question"], reply["reference"], tuple(quotes), tuple(picked),
                    tuple(dict.fromkeys(d for d in (pool.doc_id(c) for c in quoted) if d)), via,
                )
            )
            if vector is not None:
                vectors.append(vector)
            break
        if progress is not None:
            progress(done, len(slots))
    return items


# --- statistics ------------------------------------------------------------------------------------
def persona_stats(items: Sequence[GeneratedQuestion], rejected: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Counts per persona × hop (personas in :data:`PERSONAS` order, hops in :data:`HOPS` order),
    totals, the rejection counts, and mean words per question / reference and quotes per question."""
    counts: dict[str, dict[str, int]] = {}
    for persona in list(PERSONAS) + [q.persona for q in items if q.persona not in PERSONAS]:
        row = {h: sum(1 for q in items if q.persona == persona and q.hop == h) for h in HOPS}
        if any(row.values()) or persona in PERSONAS:
            counts[persona] = row
    n = max(1, len(items))
    return {
        "counts": counts,
        "by_hop": {h: sum(1 for q in items if q.hop == h) for h in HOPS},
        "total": len(items),
        "rejected": {k: int(v) for k, v in (rejected or {}).items() if v},
        "question_words": sum(len(q.question.split()) for q in items) / n,
        "reference_words": sum(len(q.reference.split()) for q in items) / n,
        "quotes_per_question": sum(len(q.quotes) for q in items) / n,
        "documents": len({d for q in items for d in q.doc_ids}),
    }


def stats_markdown(stats: Mapping[str, Any]) -> str:
    """The statistics as a Markdown table (persona × hop) and a line of rejections."""
    lines = ["| persona | single-hop | multi-hop | total |", "|---|---|---|---|"]
    for persona, row in stats["counts"].items():
        lines.append(f"| {persona} | {row.get('single', 0)} | {row.get('multi', 0)} | {sum(row.values())} |")
    hop = stats["by_hop"]
    lines.append(f"| **all** | {hop.get('single', 0)} | {hop.get('multi', 0)} | {stats['total']} |")
    rejected = ", ".join(f"{k} {v}" for k, v in stats["rejected"].items()) or "none"
    lines += [
        "",
        f"{stats['documents']} documents quoted; {stats['quotes_per_question']:.2f} verified quotes per question; "
        f"{stats['question_words']:.1f} words per question, {stats['reference_words']:.1f} per reference. Rejected: {rejected}.",
    ]
    return "\n".join(lines)


def generate_file(
    config: Config, out: Path, *, per_persona: int, seed: int = 0, hops: Sequence[str] = HOPS, personas: Sequence[str] | None = None,
    cosine: float | None = None, llm: LLM | None = None, progress=None,
) -> dict[str, Any]:
    """:func:`generate_testset` over the KB ``config`` names (opened read-only; the model is its
    [llm], with the KB's response cache unless ``llm`` is given), written to ``out`` with
    :func:`write_testset`; returns :func:`persona_stats` (with ``out``). ``cosine``: also drop
    questions whose embedding cosine with a kept one reaches it (the KB's embedder)."""
    from spr.qa import KnowledgeBase

    rejected: Counter[str] = Counter()
    with KnowledgeBase.open(config) as kb:
        items = generate_testset(
            kb.store, llm or kb.llm, per_persona=per_persona, seed=seed, hops=hops, personas=personas,
            embedder=kb.embedder if cosine is not None else None, cosine=cosine or 0.95, rejected=rejected, progress=progress,
        )
    write_testset(items, out)
    return {**persona_stats(items, rejected), "out": str(out)}
