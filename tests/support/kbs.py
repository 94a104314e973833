"""KB directories that several test modules build: the sample store, the ingested example corpus."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "examples" / "corpus"
# A question that the example corpus answers with citations (the QA API and the web page ask it).
QUESTION = "Who supports rooftop photovoltaic projects?"
# Test KBs build every derived index, the on-request question bank included.
FULL_INDEXES = "[questions]\nbuild = true\n"


def build_sample_kb(kb: Path, server_toml: str = "") -> Path:
    """A KB directory holding examples/sample-kb.trig and a [server] section. Its servers answer
    SPARQL only: no warm-up of the answering models (the sample store has no chunks to ask)."""
    from store.oxigraph_store import OxigraphStore

    kb.mkdir(parents=True, exist_ok=True)
    (kb / "policykb.toml").write_text(f"[server]\nwarm_up = false\n{server_toml}\n", encoding="utf-8")
    store = OxigraphStore(kb / "store")
    store.load(ROOT / "examples" / "sample-kb.trig")
    store.close()
    return kb


def build_ingested_kb(kb: Path) -> Path:
    """Ontologies + the example corpus through the real ingest pipeline (extraction, indexes)."""
    from core.config import load_config
    from kgpipeline.pipeline import ingest_paths

    kb.mkdir(parents=True, exist_ok=True)
    (kb / "policykb.toml").write_text(FULL_INDEXES, encoding="utf-8")
    config = load_config(kb_dir=kb)
    ingest_paths(config, [CORPUS])
    return kb


def corpus_kb(tmp_path_factory) -> Path:
    """``<session tmp>/qa/kb``: ontologies + examples/corpus ingested, every derived index built.

    Built on the first call of a session and reused by later ones (tests/test_qa.py and
    tests/test_readme_example.py share it).
    """
    kb = tmp_path_factory.getbasetemp() / "qa" / "kb"
    if (kb / "store").is_dir():
        return kb
    from core.config import load_config
    from core.resources import resource_dir
    from kgpipeline.pipeline import build_controller
    from store.layout import KBLayout
    from store.ontologies import put_ontologies
    from store.open import open_store

    kb.mkdir(parents=True)
    (kb / "policykb.toml").write_text(FULL_INDEXES, encoding="utf-8")
    config = load_config(kb_dir=kb)
    store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri)
    try:
        put_ontologies(store, resource_dir(config.ontology.dir))
        controller = build_controller(config, store)
        try:
            summary = controller.ingest([CORPUS])
        finally:
            controller.close()
        assert not summary.skipped, summary.skipped
    finally:
        store.close()
    return kb
