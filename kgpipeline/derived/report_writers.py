"""What a community report rests on, read once from the store, and the extractive report writer.

:func:`read_view` loads the entities (prefLabel, surface forms, type, mentioning chunks), their
relations and attributes per chunk graph, the chunk texts and the ontology labels. :func:`gather`
turns one community into :class:`Evidence`: its members ranked by degree within the community's
induced subgraph (a stated relation weighs 1, a shared chunk 0.25, as in the weights stage), its
internal relations ranked by how many chunks state them, and its key sentences: sentences of the
chunks that mention the most members, best when they name two members or more.

Every quoted sentence is a verbatim substring of its chunk's reading text
(:func:`core.text.reading_text` of ``pkb:text``, what :func:`store.units.read_units` returns), and
it is only credited to members the chunk mentions (``pkb:mentionedIn``), so each finding names
the entities and chunks that make it checkable.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from pyoxigraph import Literal

from core.text import plural, reading_text, sentence_spans
from store.base import RDFStore
from store.communities import Community, Finding, Report
from store.vocab import DCTERMS, PKB, RDF, RDFS, SKOS

EXTRACTIVE = "extractive"
COMENTION_WEIGHT = 0.25  # a shared chunk counts a quarter of a stated relation (weights stage)
MAX_QUOTE_WORDS = 45  # longer sentences make unreadable findings (and overrun the embedder's window)
MIN_QUOTE_WORDS = 5  # shorter ones are headings or list stubs
BRIEF_WORDS = 12  # longer labels (a provision's clause) are cut in relation sentences
_LEAD = re.compile(r"^(?:[-*\u2022]\s+|\[\^[^\]\s]{1,40}\]:\s*)+")  # bullets, footnote labels
_LINK = re.compile(r"\s*\(?\[")  # a Markdown link or footnote reference starts here
_OF_THE = re.compile(r"^(\S.{4,58}?\d\S*)\s+of\s+the\s+")  # "Regulation (EU) 2021/783 of the European Parliament ..."
_SCOPE = re.compile(r"\s*\([^()]*\)\s*$")  # the writer's "Name (Scope)" display labels
_SKIP = (RDF + "type", SKOS + "prefLabel", SKOS + "altLabel", PKB + "mentionedIn")


@dataclass
class Entity:
    iri: str
    label: str = ""
    names: set[str] = field(default_factory=set)  # surface forms, for finding the entity in sentences
    types: set[str] = field(default_factory=set)
    chunks: set[str] = field(default_factory=set)
    _pattern: re.Pattern | None = field(default=None, repr=False, compare=False)

    def pattern(self) -> re.Pattern | None:
        if self._pattern is None:
            forms = sorted({n for n in self.names | {_SCOPE.sub("", self.label)} if len(n) >= 3}, key=lambda n: (-len(n), n))
            if forms:
                self._pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, forms)) + r")(?!\w)", re.I)
        return self._pattern


@dataclass(frozen=True)
class Chunk:
    iri: str
    document: str  # its title
    text: str  # reading text
    order: tuple[str, int]  # (document IRI, start offset): reading order


@dataclass(frozen=True)
class Relation:
    subject: str
    predicate: str
    object: str  # an entity IRI, or a literal value when ``literal``
    chunks: tuple[str, ...]
    literal: bool = False


@dataclass
class KBView:
    entities: dict[str, Entity]
    relations: list[Relation]
    chunks: dict[str, Chunk]
    labels: dict[str, str]  # class / property IRI → rdfs:label
    valued: set[str] = field(default_factory=set)  # entities with a literal attribute (dates, targets)
    _by_entity: dict[str, list[Relation]] | None = field(default=None, repr=False, compare=False)

    def relations_of(self, entity: str) -> list[Relation]:
        """The relations and attributes with ``entity`` at either end."""
        if self._by_entity is None:
            self._by_entity = defaultdict(list)
            for r in self.relations:
                self._by_entity[r.subject].append(r)
                if not r.literal and r.object != r.subject:
                    self._by_entity[r.object].append(r)
        return self._by_entity.get(entity, [])

    def term(self, iri: str) -> str:
        if iri in self.labels:
            return self.labels[iri]
        local = re.split(r"[#/]", iri.rstrip("/#"))[-1]
        return " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local).replace("_", " ").split()).lower()

    def label(self, entity: str) -> str:
        e = self.entities.get(entity)
        return e.label if e is not None and e.label else self.term(entity)

    def value_like(self, entity: str) -> int:
        """0 = a named entity, 1 = a generic noun scoped to one document ("Act (in x)"), 2 = a value
        (a date, an amount, a target figure): titles prefer the named ones."""
        label = self.label(entity)
        if label[:1].isdigit() or label.lower().startswith(("eur ", "usd ")) or entity in self.valued:
            return 2
        return 1 if label.endswith(")") and "(in " in label else 0

    def type_label(self, entity: str) -> str:
        types = sorted(self.entities[entity].types) if entity in self.entities else []
        return self.term(types[0]).lower() if types else "entity"

    def brief(self, entity: str) -> str:
        """The label, cut to its first :data:`BRIEF_WORDS` words ("…") when longer: a provision is
        labelled with its whole clause, which every relation sentence would otherwise repeat."""
        words = self.label(entity).split()
        return " ".join(words) if len(words) <= BRIEF_WORDS else " ".join(words[:BRIEF_WORDS]) + " …"

    def verbalize(self, r: Relation, it: str | None = None) -> str:
        """One relation as a sentence of (brief) labels; ``it``: the entity a description is about,
        written "It" where its label is long."""
        def name(entity: str) -> str:
            return "It" if entity == it and len(self.label(entity).split()) > BRIEF_WORDS else self.brief(entity)

        obj = r.object if r.literal else name(r.object)
        return f"{name(r.subject)} {self.term(r.predicate)} {obj}."


def read_view(store: RDFStore) -> KBView:
    """Everything the reports and descriptions need, in a handful of queries."""
    entities: dict[str, Entity] = {}
    for r in store.select(f"SELECT ?e ?c WHERE {{ ?e <{PKB}mentionedIn> ?c }}").rows:
        entities.setdefault(r["e"].value, Entity(r["e"].value)).chunks.add(r["c"].value)  # type: ignore[union-attr]
    for r in store.select(
        f"SELECT DISTINCT ?e ?p ?l WHERE {{ ?e <{PKB}mentionedIn> ?c ; ?p ?l . "
        f"VALUES ?p {{ <{SKOS}prefLabel> <{SKOS}altLabel> <{RDF}type> }} }}"
    ).rows:
        e, p, value = entities[r["e"].value], r["p"].value, r["l"].value  # type: ignore[union-attr]
        if p == SKOS + "prefLabel":
            e.label = min(e.label, value, key=lambda v: (v == "", len(v), v)) if e.label else value
        elif p == SKOS + "altLabel":
            e.names.add(value)
        else:
            e.types.add(value)
    grouped: dict[tuple[str, str, str, bool], set[str]] = defaultdict(set)
    skip = ", ".join(f"<{p}>" for p in _SKIP)
    for r in store.select(
        f"SELECT ?c ?s ?p ?o WHERE {{ GRAPH ?c {{ ?s ?p ?o . ?s <{PKB}mentionedIn> ?c }} FILTER(?p NOT IN ({skip})) }}"
    ).rows:
        o, literal = r["o"], isinstance(r["o"], Literal)
        if r["s"].value == o.value or (not literal and o.value not in entities):  # type: ignore[union-attr]
            continue
        grouped[r["s"].value, r["p"].value, o.value, literal].add(r["c"].value)  # type: ignore[union-attr]
    relations = [Relation(s, p, o, tuple(sorted(c)), lit) for (s, p, o, lit), c in sorted(grouped.items())]
    title_rows = store.select(f"SELECT ?d ?t WHERE {{ ?d <{DCTERMS}title> ?t }}").rows
    titles = {r["d"].value: reading_text(r["t"].value) for r in title_rows}  # type: ignore[union-attr]
    chunks: dict[str, Chunk] = {}
    for r in store.select(
        f"SELECT ?c ?d ?t ?start WHERE {{ ?c a <{PKB}Chunk> ; <{PKB}partOfDocument> ?d ; <{PKB}text> ?t . "
        f"OPTIONAL {{ ?c <{PKB}startOffset> ?start }} }}"
    ).rows:
        c, d = r["c"].value, r["d"].value  # type: ignore[union-attr]
        start = int(r["start"].value) if r.get("start") is not None else 0  # type: ignore[union-attr]
        chunks.setdefault(c, Chunk(c, titles.get(d, ""), reading_text(r["t"].value), (d, start)))  # type: ignore[union-attr]
    labels: dict[str, str] = {}
    for r in store.select(
        f'SELECT ?x ?l WHERE {{ ?x <{RDFS}label> ?l FILTER(lang(?l) = "" || langMatches(lang(?l), "en")) }}'
    ).rows:
        x, value = r["x"].value, r["l"].value  # type: ignore[union-attr]
        labels[x] = min(labels.get(x, value), value, key=lambda v: (len(v), v))
    return KBView(entities, relations, chunks, labels, {r.subject for r in relations if r.literal})


@dataclass(frozen=True)
class Quote:
    text: str  # a verbatim substring of the chunk's reading text
    chunk: str
    entities: tuple[str, ...]  # the members it names (all mentioned in the chunk)


@dataclass(frozen=True)
class Evidence:
    """One community as a report writer sees it."""

    community: Community
    central: tuple[str, ...]  # members, most central first
    relations: tuple[Relation, ...]  # between members, best supported first
    quotes: tuple[Quote, ...]  # best first
    chunks: tuple[str, ...]  # chunks mentioning two members or more, most members first


def quotable(sentence: str, max_words: int = MAX_QUOTE_WORDS, strict: bool = True) -> str | None:
    """The sentence as a quote, or None for what reads badly as one. Only cut, never edited, so a
    quote stays a substring of its chunk: a leading bullet or footnote label goes, and the text
    stops before a link or footnote reference. Table rows and sentences outside [5, ``max_words``]
    words are refused; ``strict`` also refuses headings (no final . ; ! ?, or all capitals)."""
    quote = _LEAD.sub("", sentence.strip())
    if (cut := _LINK.search(quote)) is not None:
        quote = quote[: cut.start()].rstrip(" ,(")
    if "|" in quote or not MIN_QUOTE_WORDS <= len(quote.split()) <= max_words:
        return None
    if strict and (not quote.endswith((".", ";", "!", "?")) or quote.upper() == quote):
        return None
    return quote


def short_title(title: str, max_words: int = 10) -> str:
    """A document title short enough to name a source: its identifier when "of the" follows one
    early ("Regulation (EU) 2021/783"), else its first ``max_words`` words."""
    if (m := _OF_THE.match(title)) is not None:
        return m.group(1)
    words = title.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def named_members(view: KBView, sentence: str, candidates: list[str]) -> tuple[str, ...]:
    return tuple(m for m in candidates if (p := view.entities[m].pattern()) is not None and p.search(sentence))


def gather(view: KBView, community: Community, max_chunks: int = 6, max_quotes: int = 8) -> Evidence:
    members = [m for m in community.members if m in view.entities]
    inside = set(members)
    weight: dict[tuple[str, str], float] = {}
    relations = [r for m in members for r in view.relations_of(m) if r.subject == m and not r.literal and r.object in inside]
    for r in relations:
        weight[tuple(sorted((r.subject, r.object)))] = 1.0  # type: ignore[index]
    mentions: dict[str, list[str]] = defaultdict(list)
    for m in members:
        for c in view.entities[m].chunks:
            mentions[c].append(m)
    for group in mentions.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                weight.setdefault(tuple(sorted((a, b))), COMENTION_WEIGHT)  # type: ignore[arg-type]
    degree: Counter[str] = Counter()
    for (a, b), w in weight.items():
        degree[a] += w
        degree[b] += w
    central = sorted(members, key=lambda m: (-degree[m], -len(view.entities[m].chunks), view.label(m)))
    rank = {m: i for i, m in enumerate(central)}
    relations.sort(key=lambda r: (-len(r.chunks), rank[r.subject] + rank[r.object], r.subject, r.predicate, r.object))
    shared = sorted((c for c, g in mentions.items() if len(g) >= 2 and c in view.chunks),
                    key=lambda c: (-len(mentions[c]), view.chunks[c].order))  # fmt: skip
    if not shared:  # no chunk names two members: the members' first chunks
        shared = sorted({c for c in mentions if c in view.chunks}, key=lambda c: view.chunks[c].order)
    quotes: list[Quote] = []
    # Headings and unfinished lines only when nothing better is found; then windows of long sentences.
    for strict in (True, False, None):
        seen: set[str] = set()
        for c in shared[:max_chunks]:
            text, candidates = view.chunks[c].text, sorted(mentions[c], key=rank.__getitem__)
            for a, b in sentence_spans(text):
                sentence = quotable(text[a:b], strict=strict) if strict is not None else window(view, text[a:b], candidates)
                if sentence is None or sentence in seen:
                    continue
                named = named_members(view, sentence, candidates)
                if named:
                    seen.add(sentence)
                    quotes.append(Quote(sentence, c, named))
        if quotes:
            break
    quotes.sort(key=lambda q: (-min(len(q.entities), 3), -len(mentions[q.chunk]), view.chunks[q.chunk].order))
    return Evidence(community, tuple(central), tuple(relations), tuple(quotes[:max_quotes]), tuple(shared))


def window(view: KBView, sentence: str, candidates: list[str]) -> str | None:
    """A ``MAX_QUOTE_WORDS`` window of a long sentence around its first member name (a substring)."""
    hits = [h for m in candidates if (p := view.entities[m].pattern()) is not None and (h := p.search(sentence))]
    if not hits or len(sentence.split()) <= MAX_QUOTE_WORDS:
        return None
    first = min(hits, key=lambda h: h.start())
    return _LEAD.sub("", excerpt(sentence, first.start(), first.end(), MAX_QUOTE_WORDS))


def headline(view: KBView, ev: Evidence, n: int) -> list[str]:
    """The ``n`` most central members, named entities before generic nouns before values."""
    order = sorted(range(len(ev.central)), key=lambda i: (view.value_like(ev.central[i]), i))
    return [ev.central[i] for i in order[:n]]


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def relation_findings(view: KBView, ev: Evidence) -> list[Finding]:
    """One finding per (subject, property) of the ranked relations: "A supports B and C."."""
    groups: dict[tuple[str, str], list[Relation]] = {}
    for r in ev.relations:
        groups.setdefault((r.subject, r.predicate), []).append(r)
    out = []
    for (s, p), rs in groups.items():
        rs = rs[:3]
        text = f"{view.brief(s)} {view.term(p)} {_join([view.brief(r.object) for r in rs])}."
        chunks = sorted({c for r in rs for c in r.chunks})[:3]
        out.append(Finding(text, tuple(sorted({s, *(r.object for r in rs)})), tuple(chunks)))
    return out


def quote_findings(ev: Evidence) -> list[Finding]:
    return [Finding(q.text, tuple(sorted(q.entities)), (q.chunk,)) for q in ev.quotes]


def extractive_report(view: KBView, ev: Evidence, findings: int) -> Report:
    """Title from the central members, a two-sentence summary, then relations and key sentences
    alternating (relations first) up to ``findings``."""
    c = ev.community
    top = [view.brief(m) for m in headline(view, ev, 3)]
    title = _join(top)
    kinds = Counter(view.type_label(m) for m in ev.central)
    ranked = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    types = ", ".join(f"{n} {plural(t) if n > 1 and not t.endswith('s') else t}" for t, n in ranked)
    summary = f"A community of {len(c.members)} entities ({types}) centred on {_join(top)}."
    docs = [short_title(d) for d, _ in Counter(view.chunks[ch].document for ch in ev.chunks if view.chunks[ch].document).most_common(2)]
    where = f" in {_join(docs)}" if docs else ""
    shared = sum(1 for ch in ev.chunks if sum(ch in view.entities[m].chunks for m in ev.central) >= 2)
    links = []
    if ev.relations:
        props = [view.term(p) for p, _ in Counter(r.predicate for r in ev.relations).most_common(3)]
        links.append(f"{len(ev.relations)} stated relation{'s' if len(ev.relations) > 1 else ''} ({', '.join(props)})")
    if shared:
        links.append(f"{shared} shared passage{'s' if shared > 1 else ''}{where}")
    if links:
        summary += f" They are connected by {' and '.join(links)}."
    rel, quo = relation_findings(view, ev), quote_findings(ev)
    picked: list[Finding] = []
    while (rel or quo) and len(picked) < findings:
        for source in (rel, quo):
            if source and len(picked) < findings:
                picked.append(source.pop(0))
    return Report(c.iri, title, summary, tuple(picked), EXTRACTIVE, 0, 0, 0.0, c.members_hash)


def excerpt(text: str, start: int, end: int, max_words: int) -> str:
    """About ``max_words`` words of ``text`` around ``text[start:end]``, cut at blanks (so still a
    substring of it)."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    hit = next((i for i, (a, b) in enumerate(words) if b > start), 0)
    first = max(0, min(hit - max_words // 3, len(words) - max_words))
    last = min(len(words), first + max_words) - 1
    return text[words[first][0] : words[last][1]] if words else ""


def _said(quote: str, label: str) -> bool:
    """Whether ``label`` already holds the start of ``quote`` (past an opening "… ")."""
    head = quote.removeprefix("… ")[:60]
    return len(head) >= 20 and head in label


def describe(view: KBView, entity: str, max_relations: int = 3, max_words: int = 35) -> str:
    """"<Label> is a <type>. <relations verbalized> First mentioned in <doc>: <sentence>": the
    sentence is the first quotable one of its first chunk that names it, else an excerpt of about
    ``max_words`` words around its first mention ("…" where cut)."""
    label, kind = view.label(entity), view.type_label(entity)
    parts = [f"{label} is {'an' if kind[:1] in 'aeiou' else 'a'} {kind}."]
    mine = [r for r in view.relations_of(entity) if not (r.literal and r.object in label)]
    mine.sort(key=lambda r: (-len(r.chunks), r.subject != entity, r.predicate, r.object))
    parts += [view.verbalize(r, it=entity) for r in mine[:max_relations]]
    chunks = sorted((c for c in view.entities[entity].chunks if c in view.chunks), key=lambda c: view.chunks[c].order)
    pattern = view.entities[entity].pattern()
    if pattern is None:
        return " ".join(parts)
    for strict in (True, False, None):  # None: an excerpt of a long sentence
        for c in chunks:
            text = view.chunks[c].text
            for a, b in sentence_spans(text):
                if strict is None:
                    hit = pattern.search(text, a, b)
                    quote = excerpt(text[a:b], hit.start() - a, hit.end() - a, max_words) if hit else None
                    if quote:
                        whole = text[a:b].strip()
                        quote = ("" if whole.startswith(quote) else "… ") + quote + ("" if whole.endswith(quote) else " …")
                else:
                    quote = quotable(text[a:b], max_words, strict)
                    quote = quote if quote is not None and pattern.search(quote) else None
                if quote:
                    where = f" in {short_title(view.chunks[c].document)}" if view.chunks[c].document else ""
                    if _said(quote, label):  # a provision's label is its clause: the quote would repeat it
                        return " ".join(parts + [f"First mentioned{where}."])
                    return " ".join(parts + [f"First mentioned{where}: {quote}"])
    return " ".join(parts)
