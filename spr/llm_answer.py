"""LLM answers: the prompt, the evidence the model reads (:func:`focus`) and the generator.

One completion over the context (its passages first cut to the sentences most relevant to the
question) with a prompt that asks for ``[n]`` citations. A reply that cites no evidence is
attributed sentence by sentence to the evidence sentence sharing most of its words (when enough
do); then every sentence is checked against the evidence it cites (:mod:`spr.cite`). A reply of
which nothing stands is replaced by the abstention (kept in ``Draft.draft``).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from spr.cite import attribute, check_claims, drop_unknown_markers, evidence_texts, llm_citations
from spr.fuse import FusedContext, estimate_tokens
from spr.generate import Candidate, Draft, candidates, cited_ids
from spr.lists import Lines, list_block, shown
from spr.records import ABSTAIN, is_abstention
from spr.scoring import SentenceScorer
from spr.verify import SupportChecker

if TYPE_CHECKING:
    from core.llm import LLM


# --- LLM -------------------------------------------------------------------------------------------
# No "if the evidence does not answer, say ..." clause: measured on the EU-law dev set, the 1.5B
# Qwen then declined 11 of 13 answerable questions whose evidence held the answer (docs/answers.md
# "Answers"). Abstention comes from the check instead: a reply whose sentences the cited evidence
# does not support is withheld (check_citations); a model that declines anyway is understood.
SYSTEM_PROMPT = (
    "You answer questions about policy documents using only the numbered evidence you are given. "
    "Answer in one to three sentences. After every sentence, write the number of the evidence it "
    "comes from in square brackets, for example [1] or [2][3]. Do not use outside knowledge."
)


# Where a reply may end: on a citation marker (and a full stop), or on the abstention sentence.
# The prompt asks for a marker after every sentence; a model about to stop after an uncited one
# must cite first (the model layer's ``end_after``). One that cites anyway writes the same; what
# it cites is checked like any citation (spr.cite.check_claims).
CITED_END = r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]\.?|The documents do not say\."


def build_messages(question: str, context: FusedContext) -> list[dict[str, str]]:
    user = f"Evidence:\n{context.render()}\n\nQuestion: {question}\n{answer_cue(question)}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def answer_cue(question: str) -> str:
    """The prompt's last line. A question in another language than English asks for the answer in
    it: unasked, the 1.5B model answered German questions in English strewn with German words.

    >>> answer_cue("How long is the certificate valid?"), answer_cue("Wie lange gilt der Energieausweis?")
    ('Answer with citations:', 'Answer in German with citations:')
    """
    from core.keywords import question_language
    from spr.translate import LANGUAGE_NAMES

    language = question_language(question)
    name = LANGUAGE_NAMES.get(language) if language != "en" else None
    return f"Answer in {name} with citations:" if name else "Answer with citations:"


def prompt_overhead(question: str) -> int:
    """Estimated tokens of everything in the prompt except the evidence (chat template included)."""
    return estimate_tokens(SYSTEM_PROMPT) + estimate_tokens(question) + 40


@dataclass
class LLMGenerator:
    """One completion per answer through the model layer (cache and usage accounting included),
    then the reply is checked: markers to unknown evidence go, an uncited reply is attributed,
    and with a ``checker`` every sentence must be supported by what it cites (else it is re-cited
    to the evidence that supports it, or dropped / marked: ``unsupported``)."""

    llm: LLM
    max_tokens: int  # [answer] answer_tokens
    require_citations: bool  # [answer] require_citations
    checker: SupportChecker | None = None  # [answer] check_citations, min_support
    unsupported: str = "drop"  # [answer] unsupported: "drop" or "mark"
    min_support: float = 0.6  # least lexical support for attributing an uncited reply sentence
    end_on_citation: bool = False  # [answer] llm_end_on_citation: the reply ends on CITED_END where the model can

    @property
    def _end_after(self) -> str | None:
        return CITED_END if self.end_on_citation else None

    def generate(self, question: str, context: FusedContext) -> Draft:
        model = getattr(self.llm, "model_id", "")
        if not context.pieces:
            return Draft(ABSTAIN, (), True, model=model)  # nothing to ground an answer on: no call
        reply = self.llm.complete(build_messages(question, context), max_tokens=self.max_tokens, end_after=self._end_after)
        return self.finish(reply.text, reply.model, context, question)

    def stream(self, question: str, context: FusedContext) -> Generator[str, None, Draft]:
        """Yield the reply as the model writes it; the return value is the checked draft."""
        model = getattr(self.llm, "model_id", "")
        if not context.pieces:
            return Draft(ABSTAIN, (), True, model=model)
        pieces: list[str] = []
        for piece in self.llm.stream(build_messages(question, context), max_tokens=self.max_tokens, end_after=self._end_after):
            pieces.append(piece)
            yield piece
        return self.finish("".join(pieces), model, context, question)

    def finish(self, reply: str, model: str, context: FusedContext, question: str = "") -> Draft:
        """The draft from a raw reply to ``question`` (pure apart from the checker's embedder)."""
        text = reply.strip()
        valid = [i for i in cited_ids(text) if i in context.sources]
        if is_abstention(text) and not valid:
            return Draft(ABSTAIN, (), True, model=model)
        attributed = False
        if not valid:
            # Small models often answer right but forget the markers: cite each reply sentence
            # by the evidence sentence that shares most of its words, if one shares enough. Only
            # words: the model forgets its markers most when guessing, and the support test below
            # (which accepts paraphrases) released more wrong uncited answers than right ones.
            text = attribute(text, context, self.min_support)
            attributed = bool(cited_ids(text))
            if not attributed and self.require_citations:
                return Draft(ABSTAIN, (), True, draft=reply.strip(), model=model)
        text = drop_unknown_markers(text, context)
        dropped: tuple[str, ...] = ()
        if self.checker is not None:
            text, dropped = check_claims(text, evidence_texts(context), self.checker, self.unsupported, question)
            if not cited_ids(text) and self.require_citations:
                return Draft(ABSTAIN, (), True, draft=reply.strip(), model=model, unsupported=dropped)
        citations = tuple(llm_citations(text, cited_ids(text), context))
        return Draft(text, citations, False, model=model, attributed=attributed, unsupported=dropped)


PREFERRED = 2  # value-stating sentences focus() takes before all others


def focus(question: str, context: FusedContext, scorer: SentenceScorer, budget: int, prefer: Sequence[str] = ()) -> FusedContext:
    """``context`` with each passage cut to its sentences most relevant to the question.

    A small model on two cores reads ~75 prompt tokens/s, so whole EU-law articles mean 20 s before
    the first answer token. The sentences are chosen by ``scorer`` across all passages, best first,
    until ``budget`` estimated tokens; each passage keeps its chosen sentences in text order,
    joined by " … ", under its own citation id. Facts stay as they are. Citations still point to
    the whole chunk (``context.sources``), so quotes and offsets stay exact. ``budget`` 0 = as is.

    ``prefer``: sentences that state the value the question asks for (the answerability check's
    answers); the best :data:`PREFERRED` of them are taken first. A long provision's sentence that
    states "72 hours" often shares few words with the question and would be cut for its neighbours.
    """
    pool = [c for c in candidates(context) if not c.is_fact]
    if budget <= 0 or not pool:
        return context
    scores = scorer.score(question, [c.text for c in pool])
    wanted = set(prefer)
    by_score = sorted(range(len(pool)), key=lambda i: (-scores[i], i))
    first = [i for i in by_score if pool[i].text in wanted][:PREFERRED]
    picked: dict[int, list[Candidate]] = {}
    taken: set[int] = set()
    split: dict[int, Lines] = {}  # citation id → its passage's lines
    used = 0
    for i in first + [i for i in by_score if i not in first]:
        if i in taken:
            continue
        # A list item is read under its lead-in ("… shall not support:"), or not at all.
        group = [j for j in _lead_in(pool, i, split) if j not in taken] + [i]
        cost = sum(estimate_tokens(pool[j].text) + 1 for j in group)
        if used + cost > budget:
            continue
        for j in group:
            picked.setdefault(pool[j].cid, []).append(pool[j])
        taken.update(group)
        used += cost
    pieces = []
    for piece in context.pieces:
        if piece.kind != "chunk":
            pieces.append(piece)
        elif piece.cid in picked:
            chosen = sorted(picked[piece.cid], key=lambda c: c.span.start if c.span else 0)
            text = " … ".join(shown(c.text) for c in chosen)
            title = piece.evidence.chunk.title if piece.evidence.chunk is not None else ""
            text = f"({title}) {text}" if title else text
            pieces.append(replace(piece, text=text, tokens=estimate_tokens(text) + 2))
    kept = {p.cid for p in pieces}
    sources = {cid: chunk for cid, chunk in context.sources.items() if cid in kept}
    return replace(context, pieces=tuple(pieces), sources=sources, tokens=sum(p.tokens for p in pieces))


def _lead_in(pool: Sequence[Candidate], i: int, split: dict[int, Lines]) -> list[int]:
    """The indices in ``pool`` of the lead-in of the list ``pool[i]`` is an item of (none when it
    is in no list, or is the lead-in). ``split`` caches each passage's lines."""
    cand = pool[i]
    if cand.source is None or cand.span is None:
        return []
    if cand.cid not in split:
        split[cand.cid] = Lines.of(cand.source.text)
    lines = split[cand.cid]
    k = lines.at(cand.span.start)
    block = None if k is None else list_block(lines, k)
    if block is None or k == block[0]:
        return []
    lead = lines.spans[block[0]]  # may be two candidates: a bare "1." and the rest of its line
    return [j for j, c in enumerate(pool) if c.cid == cand.cid and c.span is not None and lead.start <= c.span.start < lead.end]
