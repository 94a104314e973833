"""Bounded work and the batch contract: nothing stops an ingest, nothing good is lost.

A bad file is a logged skip with its reason, the rest of the folder is ingested and the derived
stages run; pathological files (one unbroken token, a huge line) are ingested in bounded chunks;
a file over its time budget is skipped. Assertions are about outcomes, never about time: the
time budget is driven by an injected clock.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.config import IngestConfig
from kgpipeline.controller import IngestController
from kgpipeline.records import SourceDocument
from kgpipeline.segment import segment
from store.oxigraph_store import OxigraphStore

CORPUS = Path(__file__).resolve().parents[1] / "examples" / "corpus"
BASE = "https://w3id.org/policykb/id/"
GOOD = ["renewable-energy-act-2024.md", "hydrogen-strategy.txt", "westmark-wind-guidelines.html"]
# Derived stages that need no model beyond the test embedder stay on; the slow optional ones are off.
LIGHT = "[answer]\nprecompute_sentences = false\n[retrieval]\nweight_sentences = 0\n[docgraph]\nkeywords = false\n[communities]\nbuild = false\n"


class NoExtractor:
    name = "none"

    def extract(self, chunk, document, category):
        from kgpipeline.extract.base import ChunkExtraction

        return ChunkExtraction(chunk.chunk_id)


def _doc(text: str) -> SourceDocument:
    return SourceDocument("d", "d.txt", "text", "T", text, {}, None, "h")


def _controller(tmp_path, clock=None, **config) -> IngestController:
    kwargs = {"clock": clock} if clock else {}
    return IngestController(OxigraphStore(), tmp_path / "kb", NoExtractor(), None, IngestConfig(**config), BASE, **kwargs)


def test_regression_single_token_file_is_cut_into_bounded_chunks():
    seg = segment(_doc("a" * 200_000), max_tokens=512, overlap=50, max_token_chars=100)
    assert len(seg.chunks) > 1
    assert all(len(c.text) <= 512 * 100 for c in seg.chunks)
    assert seg.chunks[0].start == 0 and seg.chunks[-1].end == 200_000  # nothing lost
    assert all(_doc("a" * 200_000).text[c.start : c.end] == c.text for c in seg.chunks)


@pytest.mark.parametrize("body", ["a" * 200_000, ("word " * 40_000).strip(), "x." * 100_000, "é" * 200_000])
def test_pathological_200kb_file_is_ingested(tmp_path, body):
    path = tmp_path / "big.txt"
    path.write_text(body, encoding="utf-8")
    controller = _controller(tmp_path)
    try:
        summary = controller.ingest([path])
    finally:
        controller.close()
    assert summary.added == 1 and not summary.skipped, summary.skipped
    assert summary.chunks > 1


def test_file_over_its_time_budget_is_skipped_and_the_batch_continues(tmp_path):
    slow, fast = tmp_path / "a-slow.txt", tmp_path / "b-fast.txt"
    slow.write_text("Article 1\n\n" + "The Bureau shall act. " * 3000, encoding="utf-8")
    fast.write_text("The Bureau shall publish the plan.", encoding="utf-8")
    ticks = itertools.count()  # every clock reading is one "second" later

    def clock() -> float:
        return 0.0 if ticks_frozen else float(next(ticks))

    ticks_frozen = False
    controller = _controller(tmp_path, clock=clock, file_timeout_s=5)
    try:
        summary = controller.ingest([slow])
        ticks_frozen = True  # the second file costs no "time"
        summary2 = controller.ingest([fast])
    finally:
        controller.close()
    assert summary.added == 0
    (source, reason), = summary.skipped
    assert source == str(slow) and "per-file time budget of 5 s" in reason and "file_timeout_s" in reason
    assert summary2.added == 1 and not summary2.skipped


def test_time_budget_zero_means_none(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("The Bureau shall publish the plan.", encoding="utf-8")
    controller = _controller(tmp_path, clock=itertools.count(0, 1_000_000).__next__, file_timeout_s=0)
    try:
        assert controller.ingest([path]).added == 1
    finally:
        controller.close()


def test_regression_loader_bug_is_a_skip_not_a_crash(tmp_path, monkeypatch):
    import kgpipeline.controller as controller_module

    def broken(path, max_bytes):
        raise RuntimeError("boom")

    monkeypatch.setattr(controller_module, "load_documents", broken)
    path = tmp_path / "a.txt"
    path.write_text("text", encoding="utf-8")
    controller = _controller(tmp_path)
    try:
        summary = controller.ingest([path])
    finally:
        controller.close()
    assert summary.skipped == [(str(path), f"{path}: internal error: RuntimeError: boom")]


def _broken_files(folder: Path) -> dict[str, str]:
    """Bad files and a word of the reason each one's skip line must give."""
    files = {
        "weird.html": (b"\xff\xfe\x00\x00bad", "UTF-32LE"),
        "broken.pdf": (b"%PDF-1.4\n1 0 obj <<>> endobj\n", "corrupt PDF"),
        "fake.docx": (b"PK\x03\x04garbage", "zip"),
        "alias.md": (b"---\na: &a [*a]\n---\nbody\n", "aliases"),
        "latin1.txt": ("caf\xe9".encode("latin-1"), "UTF-8"),
        "picture.png": (b"\x89PNG\r\n\x1a\nxxxx", "PNG"),
        "empty.txt": (b"", "empty"),
        "nothing.jsonl": (b'{"title": "no text"}\nnot json\n', "JSONL"),
    }
    for name, (data, _) in files.items():
        (folder / name).write_bytes(data)
    return {name: word for name, (_, word) in files.items()}


def test_folder_with_bad_files_ingests_the_rest_and_runs_derived_stages(tmp_path):
    from policykb.cli import cli

    folder = tmp_path / "in"
    folder.mkdir()
    for name in GOOD:
        shutil.copy(CORPUS / name, folder / name)
    (folder / "one-token.txt").write_text("z" * 200_000, encoding="utf-8")
    bad = _broken_files(folder)
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "policykb.toml").write_text(LIGHT, encoding="utf-8")

    result = CliRunner().invoke(cli, ["--kb", str(kb), "ingest", str(folder)], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    lines = result.output.splitlines()
    assert f"files {len(GOOD) + 1 + len(bad)};" in result.output
    assert f"{len(GOOD) + 1} added" in result.output
    for name, word in bad.items():
        skip = [ln for ln in lines if ln.startswith(f"skipped {folder / name}")]
        assert len(skip) == 1 and word in skip[0], (name, lines)
    assert any(ln.startswith("bm25:") for ln in lines), lines  # the derived stages ran
    status = CliRunner().invoke(cli, ["--kb", str(kb), "status"], catch_exceptions=False)
    assert status.output.startswith(f"{len(GOOD) + 1} done"), status.output  # the good documents are in the KB
    assert "one-token" in status.output
