"""Language models: one interface, an embedded default (llama.cpp) and any OpenAI-compatible API.

Import-light: llama_cpp and openai load only when a model is first used.

    >>> from core.config import LLMConfig
    >>> llm = make_llm(LLMConfig(), cache_path=None)  # Qwen2.5-Coder-1.5B in-process  # doctest: +SKIP
    >>> llm.complete_json("Name a colour.", {"type": "object", "properties": {"colour": {"type": "string"}},
    ...                                        "required": ["colour"]})  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

from core.cache import ResponseCache
from core.config import LLMConfig
from core.llm.base import LLM, Completion, Message, Request, check_shape, parse_json
from core.llm.llamacpp import GGUF_MODELS, QWEN_CODER_1_5B, SMOLLM2, LlamaCppLLM, default_gguf_path, resolve_gguf
from core.llm.openai_compat import OpenAICompatLLM
from core.llm.schema import bound_schema
from core.usage import Usage, UsageTracker

__all__ = [
    "GGUF_MODELS",
    "LLM",
    "Completion",
    "LlamaCppLLM",
    "Message",
    "OpenAICompatLLM",
    "QWEN_CODER_1_5B",
    "Request",
    "SMOLLM2",
    "Usage",
    "UsageTracker",
    "bound_schema",
    "check_shape",
    "default_gguf_path",
    "make_llm",
    "parse_json",
    "resolve_gguf",
]


def make_llm(
    config: LLMConfig,
    cache_path: Path | None,
    tracker: UsageTracker | None = None,
    cache: bool | None = None,
) -> LLM:
    """The model ``config`` describes. ``cache`` overrides ``config.cache`` (the CLI's
    ``--no-cache``); the response cache is the SQLite file ``cache_path`` (a KB's is
    ``store.layout.KBLayout.llm_cache``) and is off without one. An embedded ``model_path`` is a
    name (:data:`GGUF_MODELS`) or a GGUF path, see :func:`resolve_gguf`."""
    use_cache = config.cache if cache is None else cache
    common = dict(
        max_tokens=config.max_tokens,
        temperature=config.temperature,
        schema_max_items=config.schema_max_items,
        schema_max_length=config.schema_max_length,
        cache=ResponseCache(Path(cache_path)) if use_cache and cache_path is not None else None,
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
        config.model_path,
        context_size=config.context_size,
        threads=config.threads,
        batch_threads=config.batch_threads,
        prompt_cache_mb=config.prompt_cache_mb,
        **common,
    )
