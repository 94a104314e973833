"""Run systems over a dataset: one KB per dataset (built once, cached by corpus hash), every question
asked in every retrieval mode with the same generator and budgets, each answer scored.

A *system* is a retrieval mode name of :data:`spr.retrieval.registry.RETRIEVERS` ("vector", "naive-kg",
"spr", "questions", "dual", or any strategy registered later): the harness only calls
``KnowledgeBase.ask(question, mode=system, answer=..., k=...)``.

Ingestion is injected (``ingest(config, paths) -> summary``): ``spr`` does not import the indexing
side; the CLI passes the real pipeline (``kgpipeline.pipeline.ingest_summary``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.config import Config
from core.cpu import resolve_dtype
from core.errors import PolicyKBError
from core.text import INLINE_ITEMS
from spr.eval import metrics as m
from spr.eval.citations import citation_metrics, cited_evidence, plain_text
from spr.eval.datasets import write_corpus
from spr.eval.records import EvalDataset, EvalQuestion, EvalSettings, QuestionResult
from spr.verify import SupportChecker

if TYPE_CHECKING:
    from spr.eval.judge import Judge
    from spr.qa import KnowledgeBase
    from spr.records import Answer
    from store.base import RDFStore

Ingest = Callable[[Config, Sequence[Path]], str]
Reindex = Callable[[Config, str], str]  # (config, derived stage name) -> summary
Progress = Callable[[str, int, int], None]
STAMP = "kb.stamp.json"


# --- the KB of a dataset ------------------------------------------------------------------------------
def corpus_digest(dataset: EvalDataset, folder: Path) -> tuple[str, list[Path]]:
    """Write the passages as ``corpus.jsonl`` (or hash the given corpus files); digest and paths."""
    if dataset.passages:
        path = folder / "corpus.jsonl"
        return write_corpus(dataset, path), [path]
    h = hashlib.sha256()
    for root in dataset.corpus_paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for f in files:
            h.update(str(f.relative_to(root) if root.is_dir() else f.name).encode() + b"\0" + f.read_bytes())
    return h.hexdigest(), list(dataset.corpus_paths)


def _build_settings(config: Config) -> str:
    """The configuration that shapes a KB's content: a changed value means a rebuild."""
    parts = {name: getattr(config, name).model_dump(mode="json") for name in ("ontology", "ingest", "embed", "weights", "questions")}
    parts["embed"]["dtype"] = resolve_dtype(parts["embed"]["dtype"])  # what the vectors are, not how it was asked
    if parts["embed"]["dtype"] == "float32":  # the format before the setting existed: cached KBs stay valid
        del parts["embed"]["dtype"]
    parts["embed"].pop("languages", None)  # read at question time only (the fusion's weighting)
    parts["base_iri"] = config.kb.base_iri
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def _refreshable(config: Config) -> dict[str, str]:
    """Derived stages cheap enough to refresh on a cached KB instead of rebuilding it, in run
    order, each with the digest of the settings it depends on (sentence vectors: only sentences
    not embedded before cost time)."""
    d, c = config.docgraph, config.communities
    parts = {
        "sentences": [INLINE_ITEMS],  # how inline list items are read: new readings get embedded
        "graph": [],  # no settings: a KB built before the stage existed gets it once
        "keywords": [d.keywords, d.keyword_backend, d.keywords_per_chunk, d.keyword_ngrams, d.keyword_dedup, d.language],
        "communities": [c.build, c.seed, c.resolution, c.max_cluster_size, c.max_levels, c.comention_weight, c.comention_max_entities],
        "reports": [c.build, c.reports, c.findings, c.min_size, config.llm.model_path if c.reports == "llm" else ""],
    }
    return {name: hashlib.sha256(json.dumps(v).encode()).hexdigest()[:16] for name, v in parts.items()}


# A refreshed stage makes these stale too.
_DEPENDENTS = {"communities": ("reports",)}


def prepare_kb(
    dataset: EvalDataset, base: Config, cache_dir: Path, ingest: Ingest, *, rebuild: bool = False, reindex: Reindex | None = None
) -> tuple[Config, str]:
    """The dataset's KB in ``<cache_dir>/eval/<name>/kb``: reused when the corpus and the build
    settings are unchanged, else built from scratch. When only the settings of cheap derived
    stages changed (sentences, graph, keywords, communities, reports; or the KB predates them) and ``reindex`` is
    given, only those stages run. Returns its config and what was done."""
    precision = resolve_dtype(base.embed.dtype)
    # KBs of float32 and bfloat16 vectors live side by side, so switching does not rebuild either
    folder = Path(cache_dir) / "eval" / (dataset.name if precision == "float32" else f"{dataset.name}-{precision}")
    folder.mkdir(parents=True, exist_ok=True)
    digest, paths = corpus_digest(dataset, folder)
    config = base.model_copy(update={"kb": base.kb.model_copy(update={"dir": folder / "kb"})})
    stamp = {"corpus_sha256": digest, "settings": _build_settings(config), "derived": _refreshable(config)}
    stamp_file = folder / STAMP
    old = json.loads(stamp_file.read_text()) if stamp_file.is_file() else None
    if not rebuild and old is not None and (folder / "kb").is_dir():
        if old == stamp:
            return config, f"reused KB {folder / 'kb'}"
        same_build = {k: old.get(k) for k in ("corpus_sha256", "settings")} == {k: stamp[k] for k in ("corpus_sha256", "settings")}
        if same_build and reindex is not None:
            stale = {n for n, h in stamp["derived"].items() if (old.get("derived") or {}).get(n) != h}
            stale |= {d for n in list(stale) for d in _DEPENDENTS.get(n, ())}
            names = [n for n in stamp["derived"] if n in stale]
            summaries = [f"{n}: {reindex(config, n)}" for n in names]
            stamp_file.write_text(json.dumps(stamp))
            return config, f"reused KB {folder / 'kb'}, refreshed " + "; ".join(summaries)
    stamp_file.unlink(missing_ok=True)  # written again only once the new KB is complete
    shutil.rmtree(folder / "kb", ignore_errors=True)
    (folder / "kb").mkdir(parents=True)
    summary = ingest(config, paths)
    stamp_file.write_text(json.dumps(stamp))
    return config, f"built KB {folder / 'kb'}: {summary}"


# --- mapping evidence to passages ----------------------------------------------------------------------
def document_ids(store: RDFStore) -> dict[str, str]:
    """Document IRI -> its id (``dcterms:identifier``, the JSONL record's id or the file stem)."""
    from store.vocab import DCTERMS

    rows = store.select(f"SELECT ?d ?id WHERE {{ ?d <{DCTERMS}identifier> ?id }}").rows
    return {row["d"].value: row["id"].value for row in rows}  # type: ignore[union-attr]


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def resolve_contexts(store: RDFStore, questions: Sequence[EvalQuestion], doc_ids: Mapping[str, str]) -> tuple[EvalQuestion, ...]:
    """Gold ids for questions whose gold is context text: the documents whose chunks contain a
    probe (start, middle or end, 12 words) of a context. Texts are compared as lower-case words, so
    the ingest's cleaning (spacing, hyphenation at line ends) does not hide a match."""
    if not any(q.gold_contexts and not q.gold_passage_ids for q in questions):
        return tuple(questions)
    from store.vocab import PKB

    rows = store.select(f"SELECT ?d ?t WHERE {{ ?c <{PKB}partOfDocument> ?d ; <{PKB}text> ?t }}").rows
    texts: dict[str, list[str]] = {}
    for row in rows:
        texts.setdefault(doc_ids.get(row["d"].value, ""), []).append(_words(row["t"].value))  # type: ignore[union-attr]
    out = []
    for q in questions:
        if q.gold_contexts and not q.gold_passage_ids:
            gold = []
            for ctx in q.gold_contexts:
                words = _words(ctx).split()
                probes = {" ".join(words[i : i + 12]) for i in (0, max(0, len(words) // 2 - 6), max(0, len(words) - 12))}
                gold += [d for d, chunks in texts.items() if d and any(p and p in c for p in probes for c in chunks)]
            q = replace(q, gold_passage_ids=tuple(dict.fromkeys(gold)))
        out.append(q)
    return tuple(out)


# --- scoring one answer ----------------------------------------------------------------------------------
def score(
    question: EvalQuestion, answer: Answer, doc_of: Mapping[str, str], settings: EvalSettings, checker: SupportChecker | None = None
) -> dict[str, float | None]:
    """Every automatic metric for one answer (pure given the answer and the ``checker``'s
    embedder). With a ``checker`` also ALCE citation recall and precision
    (:mod:`spr.eval.citations`), for every answer kind."""
    ranked = m.dedupe(doc_of.get(e.chunk.document, "") for e in answer.evidence if e.chunk is not None)
    gold = question.gold_passage_ids
    text = plain_text(answer.text)
    pred = m.prediction(text, answer.abstained)
    golds = question.answers if question.answerable else ()
    context = "\n".join(e.text for e in answer.evidence)
    out: dict[str, float | None] = {f"recall@{k}": m.recall_at_k(ranked, gold, k) for k in settings.recall_ks}
    chunk_texts = list({e.chunk.iri: e.chunk.text for e in answer.evidence if e.kind == "chunk" and e.chunk is not None}.values())
    for k in settings.recall_ks:
        out[f"quote_recall@{k}"] = m.quote_recall_at_k(chunk_texts, question.gold_contexts, k) if question.answerable else None
    out[f"mrr@{settings.k}"] = m.mrr_at_k(ranked, gold, settings.k)
    out["context_precision"] = m.context_precision(ranked, gold)
    out["context_recall"] = m.context_recall(ranked, gold)
    out["em"] = m.exact_match(pred, golds)
    out["f1"] = m.f1(pred, golds)
    out["token_recall"] = m.token_recall(pred, golds)
    out["accuracy"] = m.contains_answer(pred, golds)
    out["hits@1"] = m.hits_at_1(answer.trace.answers[0] if answer.trace.answers else None, golds)
    out.update(m.rouge(pred, golds) or {"rouge1": None, "rouge2": None, "rougeL": None})
    out["k_precision"] = m.k_precision(pred, context)
    # abstention is scored where it is the right call (unanswerable) and where it is not
    out["abstain_unanswerable"] = None if question.answerable else float(not pred)
    out["abstain_answerable"] = float(not pred) if question.answerable else None
    if checker is not None:
        out.update(citation_metrics(answer, checker, abstained=not pred))
    return out


def _result(
    dataset: str, system: str, q: EvalQuestion, answer: Answer, doc_of: Mapping[str, str], settings: EvalSettings,
    judged: Mapping[str, float | None], checker: SupportChecker | None = None,
) -> QuestionResult:
    ranked = m.dedupe(doc_of.get(e.chunk.document, "") for e in answer.evidence if e.chunk is not None)
    usage = answer.usage
    return QuestionResult(
        dataset, system, q.id, q.question, q.kind, q.answerable, q.answers, q.gold_passage_ids,
        answer.text, answer.abstained, tuple(ranked), answer.trace.answers[0] if answer.trace.answers else None,
        {**score(q, answer, doc_of, settings, checker), **judged}, float(answer.timings_ms.get("total", 0.0)),
        usage.llm_calls, usage.prompt_tokens, usage.completion_tokens, usage.context_tokens,
    )


# --- running ------------------------------------------------------------------------------------------------
def run(
    dataset: EvalDataset,
    kb: KnowledgeBase,
    settings: EvalSettings,
    *,
    judge: Judge | None = None,
    progress: Progress | None = None,
) -> list[QuestionResult]:
    """Ask every question in every system; results in system order, then question order.
    Citations are checked as the generator checks them: ``SupportChecker(kb.embedder,
    [answer] min_support)``."""
    doc_of = document_ids(kb.store)
    checker = SupportChecker(kb.embedder, kb.config.answer.min_support)
    questions = resolve_contexts(kb.store, dataset.questions, doc_of)
    results: list[QuestionResult] = []
    for system in settings.systems:
        kb.retriever(system)  # an unknown mode fails here, before any question is asked
    if settings.warmup:
        for system in settings.systems:
            for q in questions:
                try:
                    _ask(kb, system, q, settings)
                except PolicyKBError:
                    pass  # recorded in the timed pass
    for system in settings.systems:
        for done, q in enumerate(questions, 1):
            try:
                answer = _ask(kb, system, q, settings)
            except PolicyKBError as exc:  # one failing question is a result, not the end of the run
                results.append(
                    QuestionResult(dataset.name, system, q.id, q.question, q.kind, q.answerable, q.answers, q.gold_passage_ids, "", False, (), None, error=str(exc))
                )
            else:
                judged = _judge(judge, q, answer) if judge is not None else {}
                results.append(_result(dataset.name, system, q, answer, doc_of, settings, judged, checker))
            if progress:
                progress(system, done, len(questions))
    return results


def _ask(kb: KnowledgeBase, system: str, q: EvalQuestion, settings: EvalSettings) -> Answer:
    return kb.ask(q.question, mode=system, answer=settings.answer, k=settings.k)


def _judge(judge: Judge, q: EvalQuestion, answer: Answer) -> dict[str, float | None]:
    context = "\n".join(e.text for e in answer.evidence)
    abstained = not m.prediction(plain_text(answer.text), answer.abstained)
    return {
        **judge.score(q.question, plain_text(answer.text), context, abstained),
        **judge.citations(answer.text, cited_evidence(answer), abstained),
    }
