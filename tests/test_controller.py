"""The ingest controller: retry, skip, re-ingest, replace, delete — on real files and a real store.

The extractor here is a small scripted one (the controller's logic is under test, not extraction);
tests/test_ingest_e2e.py runs the real lexicon extractor end to end.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.config import IngestConfig
from core.errors import ModelUnavailableError
from core.resources import resource_dir
from kgpipeline.controller import IngestController
from kgpipeline.extract.base import ChunkExtraction, Mention
from kgpipeline.shacl import ShapeValidator
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"
BASE = "https://w3id.org/policykb/id/"


class ScriptedExtractor:
    """Finds the word 'Bureau' as an Agency; can be told to fail the first N calls."""

    name = "scripted"

    def __init__(self, failures: int = 0, error: Exception | None = None):
        self.failures = failures
        self.error = error or ModelUnavailableError("endpoint down")
        self.calls = 0

    def extract(self, chunk, document, category):
        self.calls += 1
        if self.failures > 0:
            self.failures -= 1
            raise self.error
        at = chunk.text.find("Bureau")
        if at < 0:
            return ChunkExtraction(chunk.chunk_id)
        mention = Mention("Bureau", PKB + "Agency", at, at + 6, "bureau")
        return ChunkExtraction(chunk.chunk_id, mentions=(mention,))


@pytest.fixture(scope="module")
def validator():
    return ShapeValidator(resource_dir(Path("shapes")), resource_dir(Path("ontologies")))


def make(tmp_path, extractor, validator, **config) -> tuple[IngestController, OxigraphStore, list[float]]:
    store = OxigraphStore()
    sleeps: list[float] = []
    controller = IngestController(
        store, tmp_path / "kb", extractor, validator, IngestConfig(**config), BASE, sleep=sleeps.append
    )
    return controller, store, sleeps


def test_corpus_ingests_and_reingest_is_a_noop(tmp_path, validator):
    controller, store, _ = make(tmp_path, ScriptedExtractor(), validator)
    first = controller.ingest([CORPUS])
    assert first.added == 13 and not first.skipped and first.conflicts == 0
    count = store.count()
    second = controller.ingest([CORPUS])
    assert second.unchanged == 13 and second.documents == 0
    assert store.count() == count


def test_changed_document_replaces_exactly_its_own_triples(tmp_path, validator):
    folder = tmp_path / "docs"
    shutil.copytree(CORPUS, folder)
    controller, store, _ = make(tmp_path, ScriptedExtractor(), validator)
    controller.ingest([folder])
    other_graphs = {g.value for g in store.named_graphs()}
    plan = folder / "national-solar-plan.md"
    plan.write_text(plan.read_text(encoding="utf-8").replace("Background", "Context"), encoding="utf-8")
    summary = controller.ingest([folder])
    assert summary.updated == 1 and summary.unchanged == 12
    texts = [r["t"].value for r in store.select(f"SELECT ?t WHERE {{ ?c <{PKB}text> ?t }}")]
    assert any("Context" in t for t in texts) and not any("1. Background" in t for t in texts)
    # the result equals a clean ingest of the edited folder: nothing stale, nothing lost
    fresh, fresh_store, _ = make(tmp_path / "fresh", ScriptedExtractor(), validator)
    fresh.ingest([folder])
    assert sorted(map(str, store.iter_quads())) == sorted(map(str, fresh_store.iter_quads()))
    assert {g.value for g in store.named_graphs()} - other_graphs  # the edited chunk got a new graph


def test_recoverable_errors_are_retried_with_backoff(tmp_path, validator):
    controller, store, sleeps = make(tmp_path, ScriptedExtractor(failures=2), validator, retries=3, backoff_s=0.5)
    summary = controller.ingest([CORPUS / "national-solar-plan.md"])
    assert summary.added == 1 and not summary.skipped
    assert sleeps == [0.5, 1.0]


def test_persistent_failure_skips_the_document_not_the_batch(tmp_path, validator):
    controller, store, sleeps = make(tmp_path, ScriptedExtractor(failures=10**6), validator, retries=2, backoff_s=0.1)
    summary = controller.ingest([CORPUS / "national-solar-plan.md"])
    assert summary.added == 0 and len(summary.skipped) == 1
    assert "gave up after 3 attempts: endpoint down" in summary.skipped[0][1]
    assert store.count() == 0
    assert controller.state.all()[0].status == "skipped"


def test_bad_files_are_skipped_with_reasons(tmp_path, validator):
    folder = tmp_path / "mixed"
    shutil.copytree(CORPUS, folder)
    (folder / "empty.txt").write_bytes(b"")
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.7\n\x00\x01garbage without objects")
    (folder / "blob.txt").write_bytes(bytes(range(256)) * 40)
    (folder / "slides.pptx").write_bytes(b"PK\x03\x04not really")
    (folder / "broken.jsonl").write_text('{"id": "ok-1", "title": "Fine", "text": "The Bureau shall act. It acts now."}\n{oops\n', encoding="utf-8")
    controller, store, _ = make(tmp_path, ScriptedExtractor(), validator)
    summary = controller.ingest([folder])
    skipped = dict(summary.skipped)
    assert summary.added == 14  # 13 sample documents + the good JSONL line
    for name in ("empty.txt", "corrupt.pdf", "blob.txt", "slides.pptx"):
        assert any(source.endswith(name) for source in skipped), (name, skipped)
    assert any(source.endswith("broken.jsonl:2") for source in skipped)
    assert all(reason for reason in skipped.values())


def test_delete_removes_the_document_and_everything_derived(tmp_path, validator):
    controller, store, _ = make(tmp_path, ScriptedExtractor(), validator)
    controller.ingest([CORPUS / "national-solar-plan.md"])
    assert store.count() > 0
    doc_id = controller.state.all()[0].doc_id
    controller.delete(str(CORPUS / "national-solar-plan.md"))
    assert store.count() == 0 and controller.state.get(doc_id) is None
