"""The ingest controller: moves each document through the stages, with retry, skip and resume.

Stages per document: preprocess (per file) → classify → segment → extract → build graphs →
validate → write. One bad file or document never stops the batch: unusable input is skipped with
its reason (an unexpected error too: logged with its trace, the batch goes on), and so is a file
over its time budget ``[ingest] file_timeout_s`` (a cooperative deadline checked between stages
and chunks, not a signal); recoverable failures (a model or endpoint that is down) are retried with exponential
backoff, then skipped. The write is replace-by-graphs: drop every graph the document occupied,
insert the new quads in one transaction, then mark it done; a crash anywhere in between is healed
by the next run doing the same again (see ``kgpipeline.state``).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import NamedNode

from core.config import IngestConfig
from core.errors import InputError, ModelUnavailableError, PolicyKBError, StoreConnectionError
from kgpipeline.classify import classify
from kgpipeline.derived.base import DerivedStage
from kgpipeline.extract.base import ChunkExtraction, Extractor
from kgpipeline.preprocess import discover_files, load_documents
from kgpipeline.records import CHARS_PER_PAGE, SourceDocument
from kgpipeline.segment import segment
from kgpipeline.shacl import ShapeValidator
from kgpipeline.state import IngestState
from kgpipeline.validate import Conflict, validate_document
from kgpipeline.write import build_document_graphs, doc_iri
from store.base import RDFStore
from store.freshness import mark_fresh, stale_since
from store.layout import KBLayout
from store.ontologies import put_ontologies
from store.vocab import content_hash, slug

log = logging.getLogger("policykb.ingest")

RECOVERABLE = (ModelUnavailableError, StoreConnectionError)


@dataclass
class IngestSummary:
    """What one run did. ``skipped`` holds (source or doc id, reason)."""

    files: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks: int = 0
    entities: int = 0
    triples: int = 0
    conflicts: int = 0
    pages: float = 0.0
    seconds: float = 0.0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    deleted: int = 0
    stages: list[str] = field(default_factory=list)  # one summary line per derived stage run
    timings: dict[str, float] = field(default_factory=dict)  # seconds per pipeline stage

    def timed(self, stage: str, started: float) -> float:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + now - started
        return now

    @property
    def documents(self) -> int:
        return self.added + self.updated

    def lines(self) -> list[str]:
        rate = f", {self.pages / self.seconds:.1f} pages/s" if self.seconds > 0 and self.pages else ""
        out = [
            f"files {self.files}; documents: {self.added} added, {self.updated} updated, "
            f"{self.unchanged} unchanged, {len(self.skipped)} skipped",
            f"chunks {self.chunks}, entities {self.entities}, triples {self.triples}, conflicts {self.conflicts}",
            f"{self.pages:.1f} pages in {self.seconds:.1f} s{rate}",
        ]
        out += self.stages
        out += [f"skipped {source}: {reason}" for source, reason in self.skipped]
        return out


class _Deadline:
    """The per-file time budget: ``check`` raises InputError (a skip with its reason) once spent."""

    def __init__(self, path: Path, budget_s: float, clock: Callable[[], float]):
        self.path, self.budget, self.clock = path, budget_s, clock
        self.at = clock() + budget_s

    def check(self, stage: str) -> None:
        if self.clock() > self.at:
            raise InputError(
                f"{self.path}: over the per-file time budget of {self.budget:g} s ([ingest] file_timeout_s) after {stage}"
            )


def conflicts_path(kb_dir: Path, doc_id: str) -> Path:
    return KBLayout(kb_dir).conflicts / f"{slug(doc_id, 60)}-{content_hash(doc_id, length=8)}.jsonl"


def delete_document(store: RDFStore, kb_dir: Path, base_iri: str, key: str) -> str:
    """Drop a document's graphs, conflicts and state; returns its id. Idempotent after a crash."""
    state = IngestState(KBLayout(kb_dir).state)
    try:
        found = state.find(key)
        if found is None:
            raise InputError(f"no ingested document with id or source {key!r}")
        graphs = sorted(set(found.graphs) | {doc_iri(base_iri, found.doc_id).value})
        state.deleting(found.doc_id, graphs)  # a crash mid-delete is finished by the next ingest
        store.drop_graphs(NamedNode(g) for g in graphs)
        conflicts_path(kb_dir, found.doc_id).unlink(missing_ok=True)
        state.remove(found.doc_id)
        state.set_meta("stages_dirty", "1")
        return found.doc_id
    finally:
        state.close()


ProgressFn = Callable[[str, int, int], None]  # (source, files done, files total)
StageFn = Callable[[str, int, int], None]  # (stage name, stages started, stages total): a derived index begins


class IngestController:
    """Constructor-injected: the store, the extractor and the validator are built by the caller."""

    def __init__(
        self,
        store: RDFStore,
        kb_dir: Path,
        extractor: Extractor,
        validator: ShapeValidator | None,
        config: IngestConfig,
        base_iri: str,
        classifier_llm=None,
        sleep: Callable[[float], None] = time.sleep,
        stages: list[DerivedStage] | None = None,
        ontology_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.store = store
        self.kb_dir = Path(kb_dir)
        self.extractor = extractor
        self.validator = validator if config.validate_shapes else None
        self.config = config
        self.base = base_iri
        self.classifier_llm = classifier_llm
        self.state = IngestState(KBLayout(self.kb_dir).state)
        self._sleep = sleep
        self._clock = clock  # injectable, so the time budget is testable without real time
        self.stages = stages or []
        self.ontology_dir = ontology_dir
        self.last_stage_seconds: dict[str, float] = {}

    def close(self) -> None:
        self.state.close()

    # --- public ---------------------------------------------------------------------------------
    def ingest(self, paths: Iterable[Path], progress: ProgressFn | None = None, on_stage: StageFn | None = None) -> IngestSummary:
        """Ingest files and folders. With no paths, resume what an interrupted run left queued.
        ``progress`` hears of each file done, ``on_stage`` of each derived index as it begins."""
        started = time.perf_counter()
        if self.ontology_dir is not None:
            # The answering side reads labels and domains from the store: keep them current.
            put_ontologies(self.store, self.ontology_dir)
        pending = self.state.pending_deletes()
        for doc_id in pending:
            self.delete(doc_id)
        paths = list(paths) or [Path(s.split(":")[0]) for s in self.state.unfinished_sources()]
        files = self._expand(paths)
        summary = IngestSummary(files=len(files), deleted=len(pending))
        seen: dict[str, str] = {}
        for index, path in enumerate(files, 1):
            self._ingest_file(path, summary, seen)
            if progress:
                progress(str(path), index, len(files))
        summary.seconds = time.perf_counter() - started
        # The flag survives a crash, so indexes left stale by a killed run are rebuilt next time.
        if summary.documents or summary.deleted:
            self.state.set_meta("stages_dirty", "1")
        # ... and so are indexes a write outside ingest left behind (`policykb load`, a SPARQL update).
        if self.stages and (self.state.get_meta("stages_dirty") == "1" or stale_since(self.kb_dir)):
            summary.stages = self.run_stages(on_stage)
        return summary

    def run_stages(self, on_stage: StageFn | None = None) -> list[str]:
        """Rebuild the derived indexes (weights, question bank, ...) from the whole KB; ``on_stage``
        hears of each as it begins (embedding a large KB takes minutes)."""
        lines = []
        for number, stage in enumerate(self.stages, 1):
            if on_stage:
                on_stage(stage.name, number, len(self.stages))
            started = time.perf_counter()
            lines.append(f"{stage.name}: {stage.run(self.store, self.kb_dir)}")
            self.last_stage_seconds[stage.name] = time.perf_counter() - started
        self.state.set_meta("stages_dirty", "0")
        mark_fresh(self.kb_dir)  # what `policykb load` or a SPARQL update added is covered now
        return lines

    def delete(self, key: str) -> str:
        """Remove a document (by id or source path) and everything derived from it."""
        return delete_document(self.store, self.kb_dir, self.base, key)

    # --- files ----------------------------------------------------------------------------------
    def _expand(self, paths: list[Path]) -> list[Path]:
        files: list[Path] = []
        for path in paths:
            if path.is_dir():
                files.extend(discover_files(path))
            else:
                files.append(path)  # a missing file is reported as skipped, not raised
        return list(dict.fromkeys(files))

    def _ingest_file(self, path: Path, summary: IngestSummary, seen: dict[str, str]) -> None:
        started = time.perf_counter()
        budget = self.config.file_timeout_s
        deadline = _Deadline(path, budget, self._clock) if budget > 0 else None
        try:
            loaded = load_documents(path, max_bytes=int(self.config.max_file_mb * 1024 * 1024))
            summary.timed("preprocess", started)
            if deadline:
                deadline.check("preprocess")
        except InputError as exc:
            self._skip_source(path, str(exc), summary)
            return
        except Exception as exc:  # a loader bug must not stop the batch; logged with its trace
            log.debug("internal error reading %s", path, exc_info=True)
            self._skip_source(path, f"{path}: internal error: {type(exc).__name__}: {exc}", summary)
            return
        self.state.clear_source_skip(str(path))
        for record in loaded.skipped:
            summary.skipped.append((f"{record.source}:{record.line}", record.reason))
        for doc in loaded.documents:
            if doc.doc_id in seen and seen[doc.doc_id] != doc.source:
                reason = f"duplicate document id {doc.doc_id!r} (already read from {seen[doc.doc_id]})"
                summary.skipped.append((doc.source, reason))
                continue
            seen[doc.doc_id] = doc.source
            self._ingest_document(doc, summary, deadline)

    def _skip_source(self, path: Path, reason: str, summary: IngestSummary) -> None:
        reason = " ".join(reason.split())
        self.state.skip_source(str(path), reason)
        summary.skipped.append((str(path), reason))
        log.warning("skipped %s: %s", path, reason)

    # --- one document ---------------------------------------------------------------------------
    def _ingest_document(self, doc: SourceDocument, summary: IngestSummary, deadline: _Deadline | None = None) -> None:
        before = self.state.get(doc.doc_id)
        if before and before.status == "done" and before.content_hash == doc.content_hash:
            summary.unchanged += 1
            return
        self.state.queue(doc.doc_id, doc.source, doc.content_hash)
        for attempt in range(self.config.retries + 1):
            try:
                self._process(doc, summary, updated=before is not None and before.status == "done", deadline=deadline)
                return
            except RECOVERABLE as exc:
                if attempt == self.config.retries:
                    self._skip(doc, f"gave up after {attempt + 1} attempts: {exc}", summary)
                    return
                delay = self.config.backoff_s * (2**attempt)
                log.warning("%s: %s; retrying in %.1f s", doc.doc_id, exc, delay)
                self._sleep(delay)
            except PolicyKBError as exc:
                self._skip(doc, str(exc), summary)
                return
            except Exception as exc:  # a bug must not stop the batch; it is logged with its trace
                log.exception("internal error on %s", doc.doc_id)
                self._skip(doc, f"internal error: {type(exc).__name__}: {exc}", summary)
                return

    def _process(self, doc: SourceDocument, summary: IngestSummary, updated: bool, deadline: _Deadline | None = None) -> None:
        def check(stage: str) -> None:
            if deadline:
                deadline.check(stage)

        t = time.perf_counter()
        category = self._category(doc)
        t = summary.timed("classify", t)
        check("classify")
        seg = segment(
            doc,
            max_tokens=self.config.chunk_tokens,
            overlap=self.config.chunk_overlap,
            min_tokens=self.config.min_chunk_tokens,
            max_token_chars=self.config.max_token_chars,
        )
        t = summary.timed("segment", t)
        check("segment")
        extractions: list[ChunkExtraction] = []
        for n, chunk in enumerate(seg.chunks, 1):
            extractions.append(self.extractor.extract(chunk, doc, category))
            check(f"extract (chunk {n} of {len(seg.chunks)})")
        t = summary.timed("extract", t)
        graphs = build_document_graphs(doc, category, seg, extractions, self.base)
        t = summary.timed("build graphs", t)
        check("build graphs")
        conflicts: tuple[Conflict, ...] = ()
        if self.validator is not None:
            graphs, conflicts = validate_document(doc.doc_id, graphs, self.validator)
        t = summary.timed("validate", t)
        check("validate")  # the last check: nothing has been written yet
        new_graphs = [g.value for g in graphs.graphs]

        self.state.writing(doc.doc_id, new_graphs)
        old = self.state.get(doc.doc_id)
        self.store.drop_graphs(NamedNode(g) for g in (old.graphs if old else new_graphs))
        self.store.extend(graphs.quads)  # one transaction
        self._write_conflicts(doc.doc_id, conflicts)
        entities = {m for e in extractions for m in e.mentions}
        n_entities = len({(m.class_iri, m.canonical, m.scope) for m in entities})
        self.state.done(doc.doc_id, category, new_graphs, len(seg.chunks), n_entities, len(graphs.quads), len(conflicts))
        summary.timed("write", t)

        summary.updated += updated
        summary.added += not updated
        summary.chunks += len(seg.chunks)
        summary.entities += n_entities
        summary.triples += len(graphs.quads)
        summary.conflicts += len(conflicts)
        summary.pages += len(doc.text) / CHARS_PER_PAGE

    def _category(self, doc: SourceDocument) -> str:
        if self.config.category != "auto":
            return self.config.category
        return classify(doc, llm=self.classifier_llm).category  # metadata wins inside classify

    def _skip(self, doc: SourceDocument, reason: str, summary: IngestSummary) -> None:
        reason = " ".join(reason.split())
        self.state.skipped(doc.doc_id, reason)
        summary.skipped.append((doc.source, reason))
        log.warning("skipped %s: %s", doc.doc_id, reason)

    # --- conflicts ------------------------------------------------------------------------------
    def _conflicts_path(self, doc_id: str) -> Path:
        return conflicts_path(self.kb_dir, doc_id)

    def _write_conflicts(self, doc_id: str, conflicts: tuple[Conflict, ...]) -> None:
        path = self._conflicts_path(doc_id)
        if not conflicts:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(c.as_json(), ensure_ascii=False) + "\n" for c in conflicts), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a crash never leaves half a conflicts file
