"""Language models: one interface, an embedded default (llama.cpp) and any OpenAI-compatible API.

Import-light: llama_cpp and openai load only when a model is first used.

    >>> from policykb.config import LLMConfig
    >>> llm = make_llm(LLMConfig(), kb_dir=None)          # SmolLM2-135M in-process  # doctest: +SKIP
    >>> llm.complete_json("Name a colour.", {"type": "object", "properties": {"colour": {"type": "string"}},
    ...                                        "required": ["colour"]})  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from policykb.cache import ResponseCache
from policykb.config import LLMConfig
from policykb.llm.base import LLM, Completion, Message, Request, check_shape, parse_json
from policykb.llm.llamacpp import LlamaCppLLM, default_gguf_path
from policykb.llm.openai_compat import OpenAICompatLLM
from policykb.llm.schema import bound_schema
from policykb.usage import Usage, UsageTracker

LLM_CACHE_FILE = Path("cache") / "llm.sqlite"

__all__ = [
    "LLM",
    "Completion",
    "LlamaCppLLM",
    "Message",
    "OpenAICompatLLM",
    "Request",
    "Usage",
    "UsageTracker",
    "bound_schema",
    "check_shape",
    "default_gguf_path",
    "make_llm",
    "parse_json",
]


def make_llm(
    config: LLMConfig,
    kb_dir: Path | None,
    tracker: UsageTracker | None = None,
    cache: bool | None = None,
) -> LLM:
    """The model ``config`` describes. ``cache`` overrides ``config.cache`` (the CLI's
    ``--no-cache``); the response cache lives in ``<kb_dir>/cache/llm.sqlite`` and is off
    without a KB directory."""
    use_cache = config.cache if cache is None else cache
    common = dict(
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        schema_max_items=config.schema_max_items,
        schema_max_length=config.schema_max_length,
        cache=ResponseCache(Path(kb_dir) / LLM_CACHE_FILE) if use_cache and kb_dir is not None else None,
        tracker=tracker,
    )
    if config.provider == "openai":
        return OpenAICompatLLM(
            config.base_url,
            config.model,
            api_key_env=config.api_key_env,
            schema_mode=config.schema_mode,
            timeout_s=config.timeout_s,
            retries=config.retries,
            **common,
        )
    return LlamaCppLLM(
        config.model_path or None,
        context_size=config.context_size,
        threads=config.threads,
        **common,
    )
