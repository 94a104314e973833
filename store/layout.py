"""Every path inside a KB directory, in one place.

A KB directory is self-contained (copying it copies the KB)::

    <kb>/policykb.toml          the config the KB was built with
    <kb>/store/                 the embedded Oxigraph store
    <kb>/store.snapshots/       read-only checkpoints the server's query processes open (derived)
    <kb>/indexes/<name>/        derived indexes: chunks, entities, questions (FAISS + id maps)
    <kb>/indexes/STALE          a write bypassed them (policykb load, a SPARQL update): store.freshness
    <kb>/parser/                the semantic parser's LoRA adapter
    <kb>/state.sqlite           the ingest queue
    <kb>/conflicts/*.jsonl      triples the SHACL shapes rejected, per document
    <kb>/cache/llm.sqlite       LLM responses; <kb>/cache/embed.sqlite: embeddings

    >>> layout = KBLayout("kb")
    >>> layout.index("chunks").as_posix(), layout.parser.as_posix()
    ('kb/indexes/chunks', 'kb/parser')
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.config import CONFIG_FILENAME


@dataclass(frozen=True)
class KBLayout:
    """The paths of the KB rooted at ``root``; nothing is created or checked here."""

    root: Path

    def __init__(self, root: str | Path):
        object.__setattr__(self, "root", Path(root))

    @property
    def config_file(self) -> Path:
        return self.root / CONFIG_FILENAME

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def snapshots(self) -> Path:
        return self.root / "store.snapshots"

    @property
    def indexes(self) -> Path:
        return self.root / "indexes"

    def index(self, name: str) -> Path:
        """``<kb>/indexes/<name>``: one derived index (``chunks``, ``entities``, ``questions``)."""
        return self.indexes / name

    @property
    def parser(self) -> Path:
        return self.root / "parser"

    @property
    def state(self) -> Path:
        return self.root / "state.sqlite"

    @property
    def conflicts(self) -> Path:
        return self.root / "conflicts"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def llm_cache(self) -> Path:
        return self.cache / "llm.sqlite"

    @property
    def embed_cache(self) -> Path:
        return self.cache / "embed.sqlite"
