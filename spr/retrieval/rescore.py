"""Offline reranking of a first stage's top candidates: no model call, ~15–25 ms for 20–50 chunks.

Each candidate is scored against the question by ``w`` × the cosine of the question and the
chunk's best stored window vector (clipped at 0) + (1 − w) × rarity-weighted word overlap
(:func:`spr.lexical.lexical_scores`). Rank fusion decides *which* chunks are candidates well, but
it ranks by position in each signal, not by how well a chunk matches; this rescoring puts the
closest matches first. Measured (docs/retrieval.md "Retrieval"): over `hybrid`'s top 20 it raised R@5 on
HotpotQA, SQuAD and the EU-law dev set. It is the last step of mode ``docgraph`` and, with
``[retrieval] rescore``, of ``hybrid`` (and so of ``dual``).

A candidate that the ``sections`` signal ranks among its first :data:`spr.retrieval.sections.FAVOURED` (a
section of the kind the question asks for: "Entry into force", "Penalties", …;
:mod:`spr.retrieval.sections`) gains ``section_bonus``: such a section often shares few words and
little meaning with the question, and by cosine alone it would lose its place to the act's
articles on the question's topic.

A candidate whose document the question names by its title gains ``named_bonus``: a question
names the thing its first hop is about ("What currency predated the Euro in the country Signmark
is from?" — Signmark's passage says only that Signmark is Finnish, and shares one word with the
question, so it stood 16th by cosine and word overlap; MuSiQue, docs/retrieval.md "Retrieval").

A candidate that the best candidate names — its document's title occurs in the best candidate's
text (the cross-references of :class:`spr.retrieval.graph.EntityGraph`) — gains ``link_bonus``,
the best-scored candidate of each named document only: it is the next hop (never ahead of the
candidate that names it). "Scott Howell is a consultant who has worked with the mayor of what
city?" matches Scott Howell's passage, which names Rudy Giuliani; Giuliani's passage shares
little with the question and stood 7th by cosine and word overlap (HotpotQA, docs/retrieval.md
"Retrieval"). A named document none of whose chunks is a candidate is pulled in (``pull``): its
chunk closest to the question, scored like the others, with the same bonus — the first stage
ranks a next hop by its likeness to the question, which is what a next hop lacks ("What kind of
university did the author of *Alexander and the Terrible, …* attend?": the book's passage names
Judith Viorst, whose passage was not among the top 20).

A question may name documents by the words that set their titles apart (``titled``,
:mod:`spr.retrieval.titles`: "… the country that produced Fist Power …" names "Fist Power";
"Spain's" names the five plans titled "Spain_National Objectives and Targets_…"). Each such
document no candidate is from has its chunk closest to the question pulled in, scored like the
others, without a bonus. (With the named bonus as well, every chunk of a named plan went first,
also where the answer stood in a document whose title does not name the country; measured in
docs/retrieval.md "Documents named by their titles' distinctive words".)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from core.errors import StoreError
from spr.lexical import lexical_scores
from spr.records import ChunkRef, Evidence, Retrieval
from spr.retrieval.base import Retriever, elapsed_ms
from spr.retrieval.fusion import Fused
from spr.retrieval.sections import favoured_section

Cosines = Callable[[str, list[str]], dict[str, float]]  # (question, chunk IRIs) -> cosine per chunk
NamedBy = Callable[[str], Collection[str]]  # a chunk's text -> the documents it names by their title
Pull = Callable[[str, Collection[str]], list[Evidence]]  # (question, documents) -> each one's closest chunk, score = cosine
MAX_PULLED = 10  # documents pulled in per question (a passage may name dozens)
LINK = "named by"  # Evidence.ranks entry of a next hop: ("named by", 1), named by the first candidate
NAMED = "named in question"  # Evidence.ranks entry of a candidate whose document the question names: (NAMED, 1)
TITLED = "title words in question"  # Evidence.ranks entry of a chunk pulled in for its title's distinctive words: (TITLED, 1)


def under_heads(chunk: ChunkRef, text: str) -> str:
    """A candidate's words as a reader sees them: its heading path (the document title first) over
    ``text``. A plan's table of 2030 figures says "Spain" only in its title ("Spain_National
    Objectives and Targets_Decarbonisation"); its words are the question's all the same.

    >>> under_heads(ChunkRef("c", "d", "Spain_Targets", 0, 9, "Table 2.3"), "Table 2.3").splitlines()
    ['Spain_Targets', 'Table 2.3']
    """
    return f"{chunk.heading_path or chunk.title}\n{text}"


def offline_scores(question: str, texts: Sequence[str], cosines: Sequence[float | None], dense_weight: float) -> list[float]:
    """Scores in [0, 1]: ``dense_weight`` × max(0, cosine) + the rest × lexical overlap; a
    candidate without a cosine (None) gets the lexical part alone, scaled to the whole range.

    >>> offline_scores("penalty for late registration", ["the penalty for late registration", "wind farms"], [0.5, 0.5], 0.5)
    [0.75, 0.25]
    """
    lexical = lexical_scores(question, list(texts))
    out = []
    for lex, cos in zip(lexical, cosines, strict=True):
        out.append(lex if cos is None else dense_weight * max(0.0, cos) + (1 - dense_weight) * lex)
    return out


def long_unit_cosines(window: Cosines, sentence: Cosines | None, words: int, texts: dict[str, str]) -> Cosines:
    """``window`` cosines, with the best sentence cosine taking over where it is higher for the
    chunks whose text (``texts``, by IRI) has more than ``words`` words. A law article's window
    vector averages its provisions and blurs the one a question asks about; a Wikipedia paragraph
    is about one thing, and the best of its sentences would only favour longer paragraphs
    (measured: docs/retrieval.md "Sentence cosines in long units"). A KB without sentence
    vectors keeps the window cosines.

    >>> window = lambda q, chunks: {c: 0.5 for c in chunks}
    >>> sentence = lambda q, chunks: {c: 0.8 for c in chunks}
    >>> long_unit_cosines(window, sentence, 3, {"a": "one two three four", "b": "one two"})("q", ["a", "b"])
    {'a': 0.8, 'b': 0.5}
    """
    if sentence is None:
        return window

    def cosines(question: str, chunks: list[str]) -> dict[str, float]:
        out = window(question, chunks)
        long = [c for c in chunks if len(texts.get(c, "").split()) > words]
        try:
            best = sentence(question, long) if long else {}
        except StoreError:
            best = {}
        for chunk, v in best.items():
            out[chunk] = max(out.get(chunk, v), v)
        return out

    return cosines


def rescore(
    question: str, chunks: Sequence[str], texts: Sequence[str], cosines: Cosines | None, dense_weight: float,
    favoured: Collection[str] = (), bonus: float = 0.0,
) -> tuple[list[float], str]:
    """:func:`offline_scores` of the candidates, fetching their cosines, plus ``bonus`` for those
    in ``favoured`` (then all divided by 1 + ``bonus``: scores stay in [0, 1]); a KB without chunk
    vectors (:class:`StoreError`) falls back to the lexical part, and the note says so."""
    note = ""
    cos: dict[str, float] = {}
    if cosines is not None:
        try:
            cos = cosines(question, list(chunks))
        except StoreError as exc:
            note = f"rescored by word overlap only: {exc}"
    scores = offline_scores(question, texts, [cos.get(c) for c in chunks], dense_weight)
    return with_bonus(scores, [c in favoured for c in chunks], bonus), note


def with_bonus(scores: Sequence[float], chosen: Sequence[bool], bonus: float) -> list[float]:
    """``bonus`` added to the ``chosen`` scores, then all divided by 1 + ``bonus`` (scores stay in
    [0, 1]); unchanged when none is chosen.

    >>> with_bonus([0.5, 0.7], [True, False], 0.5)
    [0.6666666666666666, 0.4666666666666666]
    """
    if bonus <= 0 or not any(chosen):
        return list(scores)
    return [(v + bonus if c else v) / (1 + bonus) for v, c in zip(scores, chosen, strict=True)]


def follow_references(
    documents: Sequence[str], texts: Sequence[str], scores: Sequence[float], named_by: NamedBy | None, bonus: float
) -> tuple[list[float], list[int], set[int]]:
    """The candidates reordered after the next hops from the best one gained ``bonus``: of each
    other document the best candidate's text names, that document's best-scored candidate, up to
    the best candidate's own score (it stays first: it leads to them; scores stay in [0, 1]).
    Returns the scores, the order (indices, best first) and the hops' indices (none when
    ``named_by`` is None or ``bonus`` 0).

    >>> names = {"A film by Ann Lee.": ["doc:ann-lee"]}  # what each text names
    >>> follow_references(["doc:film", "doc:ann-lee", "doc:ann-lee", "doc:other"],
    ...                   ["A film by Ann Lee.", "Ann Lee (1950) …", "Ann Lee was born in …", "…"],
    ...                   [0.8, 0.4, 0.5, 0.6], lambda text: names.get(text, []), 0.25)
    ([0.8, 0.4, 0.75, 0.6], [0, 2, 3, 1], {2})
    """
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    if named_by is None or bonus <= 0 or not order:
        return list(scores), order, set()
    head = order[0]
    named = set(named_by(texts[head])) - {documents[head]}
    hops: dict[str, int] = {}
    for i in order:
        if documents[i] in named:
            hops.setdefault(documents[i], i)
    chosen = set(hops.values())
    new = [min(v + bonus, scores[head]) if i in chosen else v for i, v in enumerate(scores)]
    return new, sorted(range(len(new)), key=lambda i: (i != head, -new[i], i)), chosen


def _remembered(named_by: NamedBy | None) -> NamedBy | None:
    """``named_by`` answering each text from memory after its first call (for one search)."""
    if named_by is None:
        return None
    seen: dict[str, Collection[str]] = {}

    def remembered(text: str) -> Collection[str]:
        if text not in seen:
            seen[text] = named_by(text)
        return seen[text]

    return remembered


def closest_chunks(
    question: str, documents: Collection[str], chunks_of: Callable[[str], Sequence[str]], cosines: Cosines,
    evidence: Callable[[list[Fused]], list[Evidence]],
) -> list[Evidence]:
    """Each document's chunk closest to ``question`` (the best window cosine) as evidence with that
    cosine as its score, documents in the given order; one without chunk vectors is left out."""
    chunks = [c for d in documents for c in chunks_of(d)]
    cos = cosines(question, chunks) if chunks else {}
    best = []
    for d in documents:
        scored = [(cos[c], c) for c in chunks_of(d) if c in cos]
        if scored:
            score, chunk = max(scored, key=lambda x: (x[0], x[1]))
            best.append(Fused(chunk, score, (), ()))
    return evidence(best)


class OfflineReranker(Retriever):
    """``inner``'s first ``top_n`` (at least ``k``) candidates, reordered by :func:`rescore`; each
    keeps its first-stage ranks and gains ``("rescore", r)``, a next hop also ``("named by", 1)``
    (:func:`follow_references`; ``named_by`` None: none), and one of a document the question names
    ``(NAMED, 1)``. A document the first names that no candidate is from is pulled in by ``pull``
    (None: not); documents the question names by their titles' distinctive words (``titled``) that
    no candidate is from, by ``pull_named`` (None: not). A candidate of more than ``sentence_words``
    words is scored by the best of its window and ``sentence_cosines`` (:func:`long_unit_cosines`;
    None: windows only). The name stays the inner one's."""

    def __init__(
        self, inner: Retriever, cosines: Cosines | None, *, top_n: int = 20, dense_weight: float = 0.7, section_bonus: float = 0.0,
        named_by: NamedBy | None = None, link_bonus: float = 0.0, named_bonus: float = 0.0, pull: Pull | None = None,
        titled: NamedBy | None = None, pull_named: Pull | None = None, alike: NamedBy | None = None,
        sentence_cosines: Cosines | None = None, sentence_words: int = 0,
    ):
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        self.inner = inner
        self.name = inner.name
        self.cosines = cosines
        self.top_n = top_n
        self.dense_weight = dense_weight
        self.section_bonus = section_bonus
        self.named_by = named_by
        self.link_bonus = link_bonus
        self.named_bonus = named_bonus
        self.pull = pull
        self.titled = titled
        self.pull_named = pull_named
        self.alike = alike
        self.sentence_cosines = sentence_cosines
        self.sentence_words = sentence_words

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        first = self.inner.search(question, max(k, self.top_n))
        started = time.perf_counter()
        candidates = [e for e in first.evidence if e.chunk is not None]
        asked = self._asked(question, candidates)
        titled = set(range(len(candidates), len(candidates) + len(asked)))
        candidates += asked
        iris = [e.chunk.iri for e in candidates]  # type: ignore[union-attr]
        favoured = {iri for iri, e in zip(iris, candidates, strict=True) if favoured_section(e.ranks)}
        texts = [e.text for e in candidates]
        read = [under_heads(e.chunk, e.text) for e in candidates]  # type: ignore[arg-type]
        cosines = None if self.cosines is None else long_unit_cosines(
            self.cosines, self.sentence_cosines, self.sentence_words, dict(zip(iris, texts, strict=True))
        )
        scores, note = rescore(question, iris, read, cosines, self.dense_weight, favoured, self.section_bonus)
        documents = [e.chunk.document for e in candidates]  # type: ignore[union-attr]
        named_by = _remembered(self.named_by)  # the first candidate's text is read for names once, for hops and pulls
        in_question = set(named_by(question)) if named_by is not None and self.named_bonus > 0 else set()
        if self.alike is not None and self.named_bonus > 0:
            in_question |= set(self.alike(question))
        named = [d in in_question for d in documents]
        scores = with_bonus(scores, named, self.named_bonus)
        scores, ranked, hops = follow_references(documents, texts, scores, named_by, self.link_bonus)
        pulled = self._pulled(question, candidates, documents, scores, ranked, named_by)
        if pulled:  # appended as next hops, then ordered with the rest after the first (stable: a candidate first on a tie)
            added = range(len(candidates), len(candidates) + len(pulled))
            candidates += [e for e, _ in pulled]
            scores += [score for _, score in pulled]
            named += [False] * len(pulled)
            hops |= set(added)
            ranked = ranked[:1] + sorted([*ranked[1:], *added], key=lambda i: -scores[i])
        evidence = tuple(
            replace(
                candidates[i], score=scores[i],
                ranks=(
                    *candidates[i].ranks, ("rescore", r), *([(NAMED, 1)] if named[i] else []), *([(LINK, 1)] if i in hops else []),
                    *([(TITLED, 1)] if i in titled else []),
                ),
            )
            for r, i in enumerate(ranked[:k], 1)
        )
        timings = {**dict(first.trace.timings_ms), "rescore": elapsed_ms(started)}
        if asked:
            titles = sorted({e.chunk.title for e in asked})  # type: ignore[union-attr]
            note = "; ".join(n for n in (note, f"pulled in the documents the question names by title: {', '.join(titles)}") if n)
        notes = "; ".join(n for n in (first.trace.note, note) if n)
        return Retrieval(evidence, replace(first.trace, note=notes, timings_ms=timings))

    def _asked(self, question: str, candidates: list[Evidence]) -> list[Evidence]:
        """The chunks closest to ``question`` of the documents it names by their titles'
        distinctive words (``titled``) that no candidate is from; none when more than
        :data:`MAX_PULLED` would come in (words that name that many say little about where to look)."""
        if self.titled is None or self.pull_named is None:
            return []
        have = {e.chunk.document for e in candidates}  # type: ignore[union-attr]
        missing = [d for d in sorted(self.titled(question)) if d not in have]
        if not missing or len(missing) > MAX_PULLED:
            return []
        return self.pull_named(question, missing)

    def _pulled(
        self, question: str, candidates: list[Evidence], documents: list[str], scores: list[float], ranked: list[int],
        named_by: NamedBy | None,
    ) -> list[tuple[Evidence, float]]:
        """The chunks of the documents the first candidate names that no candidate is from, each
        scored as :func:`rescore` scores (the cosine it came with and word overlap) plus the link
        bonus, up to the first's score."""
        if self.pull is None or named_by is None or self.link_bonus <= 0 or not ranked:
            return []
        head = ranked[0]
        have = set(documents)
        missing = [d for d in sorted(set(named_by(candidates[head].text))) if d not in have][:MAX_PULLED]
        if not missing:
            return []
        found = self.pull(question, missing)
        read = [under_heads(e.chunk, e.text) for e in found]  # type: ignore[arg-type]
        offline = offline_scores(question, read, [e.score for e in found], self.dense_weight)
        return [(e, min(v + self.link_bonus, scores[head])) for e, v in zip(found, offline, strict=True)]
