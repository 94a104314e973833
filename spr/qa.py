"""The public Python API: open a knowledge base, ask it questions, get answers with citations.

    >>> from spr.qa import KnowledgeBase
    >>> with KnowledgeBase.open("kb") as kb:                       # doctest: +SKIP
    ...     answer = kb.ask("Who issues the National Solar Plan?")
    ...     print(answer.text, [c.quote for c in answer.citations])

Opening is cheap: the store opens at once; the embedder, the LLM and each retriever load on first
use. One ``ask`` is retrieve (no LLM) → fuse (pure) → generate (at most one LLM reply) → the
model's check ([answer] model_check: one yes/no call, before an LLM reply is written).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.abbreviations import Abbreviations
from core.config import ANSWER_KINDS, MAX_K, Config, load_config
from core.errors import InputError
from core.usage import UsageScope, UsageTotals, UsageTracker
from spr.answerable import Verdict, check_applies
from spr.deepen import Deepened, deepen
from spr.fuse import FusedContext, fuse
from spr.generate import Draft, ExtractiveGenerator, check_answerable, renumber
from spr.llm_answer import LLMGenerator, focus, prompt_overhead
from spr.model_check import model_check
from spr.records import ABSTAIN, Answer, AnswerDone, AnswerToken, AnswerUsage, AskEvent, Retrieval, abstention, clean_question
from spr.retrieval.base import Retriever, elapsed_ms
from spr.retrieval.neighbours import packed_neighbours_only, with_neighbours
from spr.retrieval.registry import RETRIEVERS, mode_name
from spr.scoring import AbbreviatingScorer, BestOfScorer, EmbeddingScorer, HybridScorer, LexicalScorer, SentenceScorer
from spr.translate import LANGUAGE_NAMES, Translator, kb_language, needs_translation
from spr.verify import SupportChecker
from store.base import RDFStore
from store.freshness import stale_since
from store.layout import KBLayout
from store.vocabulary import read_terms

if TYPE_CHECKING:
    from core.embed import Embedder
    from core.llm import LLM

# What KnowledgeBase.warm_up asks: any question exercises the same path; a broad one is typical.
WARM_UP_QUESTION = "What do these documents require, and by when?"


@dataclass
class _Run:
    """One question between retrieval and generation."""

    question: str
    mode: str
    kind: str
    found: Retrieval
    context: FusedContext
    timings: dict[str, float]
    usage: UsageScope  # this question's model calls alone (the tracker is shared across threads)
    started: float
    verdict: Verdict | None = None  # the answerability check over the context, when it ran before generation
    translation: str | None = None  # the question in the KB's language (spr.translate), when it differs
    checked: bool = True  # the answerability check applies (an English or German question and [answer] check_answerable)


class KnowledgeBase:
    """A KB ready for questions. Components are injected or built from ``config`` on first use."""

    def __init__(
        self,
        config: Config,
        store: RDFStore,
        *,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        tracker: UsageTracker | None = None,
        owns_store: bool = False,
        retrievers: Mapping[str, Retriever] | None = None,
    ):
        self.config = config
        self.store = store
        self.tracker = tracker if tracker is not None else UsageTracker()
        self._embedder = embedder
        self._llm = llm
        self._owns_store = owns_store
        self._retrievers: dict[str, Retriever] = dict(retrievers or {})
        self._labels: dict[str, dict[str, str]] = {}
        self._language: str | None = None  # of the KB's documents, guessed on first use
        self._abbreviations: Abbreviations | None = None  # read on first use
        self._lock = threading.RLock()  # lazy loading from several server threads

    @classmethod
    def open(cls, kb: str | Path | Config = "kb", **kwargs) -> KnowledgeBase:
        """Open a KB directory (its ``policykb.toml`` applies) or the KB a Config names, read-only."""
        from store.open import open_store

        config = kb if isinstance(kb, Config) else load_config(kb_dir=Path(kb))
        if config.store.backend == "oxigraph" and not KBLayout(config.kb_dir).store.is_dir():
            raise InputError(f"no knowledge base at {config.kb_dir}; run `policykb ingest` first")
        return cls(config, open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri, read_only=True), owns_store=True, **kwargs)

    def close(self) -> None:
        if self._owns_store:
            self.store.close()
            self._owns_store = False

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- lazily built services (the spr.retrieval.base.Services protocol) -------------------------------
    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                from core.embed import make_embedder

                self._embedder = make_embedder(self.config.embed, KBLayout(self.config.kb_dir).embed_cache, self.tracker)
            return self._embedder

    @property
    def llm(self) -> LLM:
        with self._lock:
            if self._llm is None:
                from core.llm import make_llm

                self._llm = make_llm(self.config.llm, KBLayout(self.config.kb_dir).llm_cache, self.tracker)
            return self._llm

    @property
    def property_labels(self) -> Mapping[str, str]:
        """``rdfs:label`` of every property of the ontologies in the store (the one source of the
        labels answers use; ``policykb init`` and ``ingest`` load the ontologies there)."""
        return self._term_labels("property")

    @property
    def term_labels(self) -> Mapping[str, str]:
        """Labels of the properties and classes in the store (for verbalizing ``rdf:type`` too)."""
        return {**self._term_labels("class"), **self._term_labels("property")}

    def _term_labels(self, kind) -> dict[str, str]:
        with self._lock:
            if kind not in self._labels:
                self._labels[kind] = {iri: term.label for iri, term in read_terms(self.store, kind).items()}
            return self._labels[kind]

    def retriever(self, mode: str) -> Retriever:
        with self._lock:
            mode = mode_name(mode)
            if mode not in self._retrievers:
                self._retrievers[mode] = RETRIEVERS[mode](self)
            return self._retrievers[mode]

    # --- asking ---------------------------------------------------------------------------------
    def ask(self, question: str, mode: str | None = None, answer: str | None = None, k: int | None = None) -> Answer:
        """Answer ``question`` from the KB.

        ``mode``: retrieval — any name of :data:`spr.retrieval.registry.MODES` ("dual" by default).
        ``answer``: "extractive" (the documents' sentences; the default) or "llm" (one reply of the [llm]
        model); either may be declined by the model's check ([answer] model_check).
        ``k``: text chunks to retrieve (default ``[answer] k``).
        """
        run = self._prepare(question, mode, answer, k)
        mark = time.perf_counter()
        with run.usage.active():
            draft = self._declined(run) or self._generator(run).generate(run.question, run.context)
            draft = self._fallback(run, self._checked(run, draft))
        return self._finish(run, draft, mark)

    def ask_stream(self, question: str, mode: str | None = None, answer: str | None = None, k: int | None = None) -> Iterator[AskEvent]:
        """:meth:`ask`, yielding an LLM answer's text as the model writes it (:class:`AnswerToken`),
        then the checked answer (:class:`AnswerDone`). An extractive answer is one AnswerDone.
        Input errors are raised before the first event."""
        run = self._prepare(question, mode, answer, k)
        return self._stream(run)

    def _stream(self, run: _Run) -> Iterator[AskEvent]:
        mark = time.perf_counter()
        generator = self._generator(run)
        with run.usage.active():
            declined = self._declined(run)
        if declined is not None:
            yield AnswerDone(self._finish(run, declined, mark))
            return
        if isinstance(generator, LLMGenerator):
            stream = generator.stream(run.question, run.context)
            while True:
                try:
                    with run.usage.active():  # per step: the scope must not stay set across a yield
                        piece = next(stream)
                except StopIteration as stop:
                    draft = stop.value
                    break
                if "first_token" not in run.timings:
                    run.timings["first_token"] = elapsed_ms(run.started)
                yield AnswerToken(piece)
            with run.usage.active():
                draft = self._fallback(run, draft)
        else:
            with run.usage.active():
                draft = generator.generate(run.question, run.context)
                draft = self._checked(run, draft)
        yield AnswerDone(self._finish(run, draft, mark))

    def warm_up(self, mode: str | None = None, answer: str | None = None) -> dict[str, float]:
        """Load now what the first question would wait for; milliseconds per step.

        One extractive answer to a probe question in ``mode`` (default ``[answer] mode``) opens the
        embedder, the mode's retrievers and their indexes (vectors, BM25, the entity graph, the
        parser) and the sentence scorer. When ``answer`` (default ``[answer] answer``) is "llm" the
        model is loaded too, and writes nothing. The probe is not translated: a question in
        another language than the KB's would make it an LLM call."""
        kind = answer or self.config.answer.answer
        if kind not in ANSWER_KINDS:
            raise InputError(f"unknown answer kind {kind!r}; known: {', '.join(ANSWER_KINDS)}")
        timings: dict[str, float] = {}
        mark = time.perf_counter()
        run = self._prepare(WARM_UP_QUESTION, mode, "extractive", None, translate=False)
        with run.usage.active():
            self._generator(run).generate(run.question, run.context)  # extractive: checks inside
        timings["retrieve_and_answer"] = elapsed_ms(mark)
        if kind == "llm" or self.config.answer.model_check == "all":  # the model check reads extractive answers too
            mark = time.perf_counter()
            _ = self.llm
            timings["llm"] = elapsed_ms(mark)
        return timings

    def _prepare(self, question: str, mode: str | None, answer: str | None, k: int | None, *, translate: bool = True) -> _Run:
        """Validate, retrieve and fuse: everything before generation."""
        cfg = self.config.answer
        mode = mode_name(mode or cfg.mode)
        kind = answer or cfg.answer
        if kind not in ANSWER_KINDS:
            raise InputError(f"unknown answer kind {kind!r}; known: {', '.join(ANSWER_KINDS)}")
        if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K):
            raise InputError(f"k must be an integer between 1 and {MAX_K}")
        text = clean_question(question, cfg.max_question_chars)
        retriever = self.retriever(mode)
        usage = UsageScope()
        timings: dict[str, float] = {}

        started = time.perf_counter()
        with usage.active():
            found, translation = self._retrieve(retriever, text, k or cfg.k, timings, translate)
            neighbours = cfg.llm_neighbours if kind == "llm" else cfg.extractive_neighbours
            if neighbours:
                found = with_neighbours(self.store, found, neighbours)
            timings["retrieve"] = elapsed_ms(started)  # the translation and the neighbours included

            mark = time.perf_counter()
            context = fuse(found.evidence, self._budget(text), fact_share=cfg.fact_share)
            if neighbours:
                found = packed_neighbours_only(found, context)
            timings["fuse"] = elapsed_ms(mark)

            # The check runs here when something before the generator needs it: the deeper look,
            # the LLM's evidence focus and its decline (extractive answers check in their generator).
            # It reads English and German questions; a translated question is checked in the
            # documents' language, where its names and units are written as the evidence writes them.
            verdict = None
            checked_text = translation or text
            checked = cfg.check_answerable and check_applies(checked_text)
            if checked and (kind == "llm" or cfg.deepen_k > (k or cfg.k)):
                mark = time.perf_counter()
                verdict = check_answerable(checked_text, context)
                deeper = self._deepen(checked_text, retriever, found, verdict, k or cfg.k)
                if deeper is not None:
                    found, context = deeper.found, deeper.context
                    verdict = check_answerable(checked_text, context)
                timings["check"] = elapsed_ms(mark)
            if kind == "llm" and cfg.llm_evidence_tokens:
                mark = time.perf_counter()
                prefer = verdict.answers if verdict is not None else ()
                context = focus(text, context, self._scorer(translation), cfg.llm_evidence_tokens, prefer=prefer)
                timings["fuse"] += elapsed_ms(mark)
        return _Run(text, mode, kind, found, context, timings, usage, started, verdict, translation, checked)

    @property
    def language(self) -> str:
        """The language most of the KB's documents are written in (:func:`spr.translate.kb_language`)."""
        with self._lock:
            if self._language is None:
                self._language = kb_language(self.store)
            return self._language

    def _retrieve(
        self, retriever: Retriever, question: str, k: int, timings: dict[str, float], translate: bool = True
    ) -> tuple[Retrieval, str | None]:
        """The question's evidence, and its translation when it was retrieved by one: a question
        asked in another language than the KB's is translated into it ([answer]
        translate_questions, :mod:`spr.translate`)."""
        translation = None
        if translate and self.config.answer.translate_questions == "auto" and needs_translation(question, self.language):
            mark = time.perf_counter()
            translation = Translator(self.llm).translate(question, self.language)
            timings["translate"] = elapsed_ms(mark)
        found = retriever.search(translation or question, k)
        notes = []
        if translation is not None:
            notes.append(f"question translated into {LANGUAGE_NAMES[self.language]}: {translation}")
        if since := stale_since(self.config.kb_dir):
            notes.append(f"the indexes predate a change to the store ({since}): `policykb reindex` brings them up to date")
        return found.noted(*notes), translation

    def _deepen(self, question: str, retriever: Retriever, found: Retrieval, verdict: Verdict, k: int) -> Deepened | None:
        """When no sentence of the top k states the asked value, the top ``[answer] deepen_k`` may:
        one more search, used only when what it adds passes the check (:mod:`spr.deepen`)."""
        cfg = self.config.answer
        if verdict.answerable or cfg.deepen_k <= k:
            return None
        budget = self._budget(question)
        deep = retriever.search(question, cfg.deepen_k)
        return deepen(question, found, verdict, deep, lambda ev: fuse(ev, budget, fact_share=cfg.fact_share), self._scorer())

    def _declined(self, run: _Run) -> Draft | None:
        """An LLM answer not asked for: the rule check's verdict (:mod:`spr.answerable`), then the model's reading
        of what the extractive answer would quote. Extractive answers check in their generator, then :meth:`_checked`."""
        if run.kind == "llm" and run.verdict is not None and not run.verdict.answerable:
            return Draft(ABSTAIN, (), True, abstain_reason=run.verdict.reason)
        return self._model_declined(run, lambda: self._extractive(run).generate(run.question, run.context)) if run.kind == "llm" else None

    def _checked(self, run: _Run, draft: Draft) -> Draft:
        """An extractive ``draft``, or its abstention when the model reads it as not answering."""
        return draft if run.kind == "llm" else self._model_declined(run, lambda: draft) or draft

    def _model_declined(self, run: _Run, quoted: Callable[[], Draft]) -> Draft | None:
        """[answer] model_check (:mod:`spr.model_check`), where the rule checks run and reading what they read."""
        cfg = self.config.answer
        if not run.checked or cfg.model_check == "off" or (cfg.model_check == "llm" and run.kind != "llm"):
            return None
        mark = time.perf_counter()
        verdict = model_check(lambda: self.llm, run.translation or run.question, quoted(), cfg.model_check_threshold)
        run.timings["model_check"] = elapsed_ms(mark)
        run.found = run.found.noted(verdict.note)  # --explain shows how sure the model was of an answer it let stand
        return verdict.declined

    def _fallback(self, run: _Run, draft: Draft) -> Draft:
        """An LLM reply the support check withheld whole ([answer] llm_fallback): the extractive
        answer over the same passages instead, quotes a reader can check. A model that declined
        by itself is believed."""
        if run.kind != "llm" or not draft.abstained or not draft.draft or self.config.answer.llm_fallback != "extractive":
            return draft
        quoted = self._extractive(run).generate(run.question, run.context)
        if quoted.abstained:
            return draft
        note = "the model's reply was withheld: no sentence of it was supported by its evidence; the evidence is quoted instead"
        return replace(quoted, model=draft.model, draft=draft.draft, unsupported=draft.unsupported, note=note)

    def _finish(self, run: _Run, draft: Draft, generate_started: float) -> Answer:
        draft = renumber(draft)
        run.timings["generate"] = elapsed_ms(generate_started)
        run.timings["total"] = elapsed_ms(run.started)
        run.timings.update(run.found.trace.timings_ms)
        return self._answer(run.question, run.mode, run.kind, run.found, run.context, draft, run.timings, run.usage.totals)

    def _budget(self, question: str) -> int:
        cfg = self.config.answer
        if cfg.context_tokens:
            return cfg.context_tokens
        # The embedded model's window must hold the prompt, the evidence and the answer.
        return max(64, self.config.llm.context_size - cfg.answer_tokens - prompt_overhead(question))

    def _generator(self, run: _Run) -> ExtractiveGenerator | LLMGenerator:
        cfg = self.config.answer
        if run.kind == "llm":
            checker = SupportChecker(self.embedder, cfg.min_support) if cfg.check_citations else None
            return LLMGenerator(
                self.llm, max_tokens=cfg.answer_tokens, require_citations=cfg.require_citations, checker=checker,
                unsupported=cfg.unsupported, end_on_citation=cfg.llm_end_on_citation,
            )
        return self._extractive(run)

    def _extractive(self, run: _Run) -> ExtractiveGenerator:
        cfg = self.config.answer
        return ExtractiveGenerator(
            self._scorer(run.translation), max_facts=cfg.max_facts, max_sentences=cfg.max_sentences, check=run.checked,
            list_chars=cfg.list_chars, check_question=run.translation, fact_confidence=self.config.retrieval.facts_min_confidence,
        )

    def _scorer(self, translation: str | None = None) -> SentenceScorer:
        """Sentence relevance to the question ([answer] scoring): extractive picks, LLM evidence.
        With a translation, a sentence scores by the version of the question it matches best."""
        cfg = self.config.answer
        if cfg.scoring == "hybrid":
            scorer: SentenceScorer = HybridScorer(self.embedder, cfg.min_score)
        elif cfg.scoring == "embedding":
            scorer = EmbeddingScorer(self.embedder, cfg.min_similarity)
        else:
            scorer = LexicalScorer(cfg.min_overlap)
        if self.abbreviations:
            scorer = AbbreviatingScorer(scorer, self.abbreviations.expansions)
        return BestOfScorer(scorer, (translation,)) if translation else scorer

    @property
    def abbreviations(self) -> Abbreviations:
        """The abbreviations the KB's documents define (read with the BM25 index; empty with
        ``[retrieval] abbreviations = false``): BM25 and the answer's sentence scoring read a
        spelled-out long form's short form too."""
        with self._lock:
            if self._abbreviations is None:
                from store.keyword_index import read_abbreviations

                enabled = self.config.retrieval.abbreviations
                self._abbreviations = read_abbreviations(KBLayout(self.config.kb_dir).index("bm25")) if enabled else Abbreviations()
            return self._abbreviations

    def _answer(self, question, mode, kind, found: Retrieval, context: FusedContext, draft: Draft, timings, spent: UsageTotals) -> Answer:
        usage = AnswerUsage(
            # what the answer costs, whether the cache served it this time or not
            llm_calls=spent.requests,
            llm_cache_hits=spent.cache_hits,
            prompt_tokens=spent.usage.prompt_tokens + spent.saved.prompt_tokens,
            completion_tokens=spent.usage.completion_tokens + spent.saved.completion_tokens,
            context_tokens=context.tokens,
        )
        return Answer(
            question=question,
            # a German question's abstention in German; answers are already in its language
            text=abstention(question) if draft.abstained else draft.text,
            mode=mode,
            kind=kind,  # type: ignore[arg-type]
            citations=draft.citations,
            triples=tuple(p.evidence.fact for p in context.facts if p.evidence.fact is not None),
            evidence=found.evidence,
            trace=replace(found.trace, timings_ms=dict(found.trace.timings_ms), note="; ".join(filter(None, (found.trace.note, draft.note)))),
            abstained=draft.abstained,
            timings_ms=timings,
            usage=usage,
            model=draft.model,
            draft=draft.draft,
            attributed=draft.attributed,
            unsupported=draft.unsupported,
            confidence=draft.confidence,
            abstain_reason=draft.abstain_reason,
        )


def ask(question: str, kb: str | Path | Config = "kb", **kwargs) -> Answer:
    """Open ``kb``, answer one question, close it. Keyword arguments go to :meth:`KnowledgeBase.ask`."""
    with KnowledgeBase.open(kb) as base:
        return base.ask(question, **kwargs)

