"""Configuration of the KB and of indexing: store, ingest, disambiguation weights, question bank,
document graph, communities."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from core.config.base import DEFAULT_BASE_IRI, Section


class KBConfig(Section):
    """Where the knowledge base lives and how its IRIs are minted."""

    dir: Path = Field(Path("kb"), description="KB directory (store, indexes, caches, state).")
    base_iri: str = Field(
        DEFAULT_BASE_IRI, description="Base for minted instance IRIs; ends with / or #."
    )

class OntologyConfig(Section):
    """Where the ontologies and SHACL shapes live (relative paths: cwd, then the installed copy; see core.resources)."""

    dir: Path = Field(Path("ontologies"), description="Folder of OWL ontologies (RDF/XML .owl).")
    shapes_dir: Path = Field(Path("shapes"), description="Folder of SHACL shapes (Turtle).")

class StoreConfig(Section):
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
        "sparql11", description="'virtuoso' = work around Virtuoso 7's protocol quirks (see docs/server.md 'Virtuoso')."
    )

class IngestConfig(Section):
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

class WeightsConfig(Section):
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

class QuestionsConfig(Section):
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

class DocGraphConfig(Section):
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

class CommunitiesConfig(Section):
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
    embed: Literal["first_use", "ingest"] = Field(
        "first_use",
        description="When the report and description vectors are embedded: 'first_use' = by the first community/entity/local "
        "question (the default answer path never reads them; on 2 AVX2 cores they took 1,533 s of a 3,976 s EU-law ingest); "
        "'ingest' = by the reports stage.",
    )
