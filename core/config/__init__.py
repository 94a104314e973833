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

from pydantic import ValidationError as PydanticValidationError

from core.config.answering import AnswerConfig, EvalConfig, RetrievalConfig, ServerConfig, SPRConfig
from core.config.base import ANSWER_KINDS, DEFAULT_BASE_IRI, MAX_K, AnswerKind, Section
from core.config.indexing import (
    CommunitiesConfig,
    DocGraphConfig,
    IngestConfig,
    KBConfig,
    OntologyConfig,
    QuestionsConfig,
    StoreConfig,
    WeightsConfig,
)
from core.config.models import DEFAULT_LLM_MODEL, EmbedConfig, LLMConfig
from core.errors import ConfigError

__all__ = [
    "ANSWER_KINDS", "CONFIG_FILENAME", "DEFAULT_BASE_IRI", "DEFAULT_LLM_MODEL", "ENV_PREFIX", "MAX_K", "AnswerConfig",
    "AnswerKind", "CommunitiesConfig", "Config", "DocGraphConfig", "EmbedConfig", "EvalConfig", "IngestConfig", "KBConfig",
    "LLMConfig", "OntologyConfig", "QuestionsConfig", "RetrievalConfig", "SPRConfig", "Section", "ServerConfig",
    "StoreConfig", "WeightsConfig", "default_toml", "load_config",
]

CONFIG_FILENAME = "policykb.toml"
ENV_PREFIX = "POLICYKB_"


class Config(Section):
    """The whole configuration; each stage reads only its own section."""

    kb: KBConfig = KBConfig()
    ontology: OntologyConfig = OntologyConfig()
    store: StoreConfig = StoreConfig()
    ingest: IngestConfig = IngestConfig()
    llm: LLMConfig = LLMConfig()
    embed: EmbedConfig = EmbedConfig()
    weights: WeightsConfig = WeightsConfig()
    questions: QuestionsConfig = QuestionsConfig()
    server: ServerConfig = ServerConfig()
    spr: SPRConfig = SPRConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    answer: AnswerConfig = AnswerConfig()
    docgraph: DocGraphConfig = DocGraphConfig()
    communities: CommunitiesConfig = CommunitiesConfig()
    eval: EvalConfig = EvalConfig()

    @property
    def kb_dir(self) -> Path:
        return Path(self.kb.dir)

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
