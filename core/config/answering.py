"""Configuration of answering: the semantic parser, the fused retrieval, answers, the server and
evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from core.config.base import MAX_K, AnswerKind, Section


class SPRConfig(Section):
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

class RetrievalConfig(Section):
    """The fused text stage (modes ``hybrid`` and ``dual``): signals over the same chunks, fused by
    weighted reciprocal-rank fusion, score(c) = sum over signals of weight / (rrf_k + rank)."""

    # Defaults chosen by the mean R@5 / quote recall@5 over six visible sets (HotpotQA, MuSiQue,
    # rag-eurlex and the three dev sets; bench/eval_retrieval.py's grid, docs/retrieval.md "Retrieval").
    weight_bm25: float = Field(0.25, ge=0.0, description="RRF weight of BM25 over chunk texts (0 = off).")
    weight_dense: float = Field(1.0, ge=0.0, description="RRF weight of dense chunk vectors (0 = off).")
    weight_sentences: float = Field(
        1.0, ge=0.0,
        description="RRF weight of sentence vectors: a chunk ranked by its best-matching sentence (derived stage 'sentences'; 0 = off). "
        "On by measurement: R@5/QR@5 never lower on seven set x embedder runs, +0.9 point on average (docs/retrieval.md).",
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
    llm_hops: int = Field(
        0, ge=0, le=3,
        description="hybrid (and dual): LLM hops for multi-hop questions (0 = off): the [llm] model reads the current ranking's top "
        "llm_hop_passages and writes a sentence naming what the question describes; the next round searches with the question and "
        "the sentences (spr/retrieval/hop.py; one LLM call per hop and question, docs/retrieval.md).",
    )
    llm_hop_passages: int = Field(5, ge=1, le=20, description="llm_hops: passages of the current ranking the LLM reads per hop.")
    llm_hop_keep: int = Field(
        1, ge=0, le=20,
        description="llm_hops: first-round chunks kept ahead of the last round's (the first hop's passage, which the hop query ranks lower).",
    )
    choices: bool = Field(
        True,
        description="hybrid (and dual): a question choosing between options ('…, Germany or Greece?', 'between the AI Act and "
        "the GDPR') is also searched once per option, the rankings interleaved (spr/retrieval/choices.py, docs/retrieval.md).",
    )
    bridges: bool = Field(
        True,
        description="hybrid (and dual): a bridge question ('… in the city where the performers of Brother were formed?', 'The country "
        "that … — what … does it aim for?') is also searched for its description, then for the rest with the description's best "
        "sentence, the rankings interleaved (spr/retrieval/bridges.py, docs/retrieval.md).",
    )
    abbreviations: bool = Field(
        True,
        description="BM25 (alone and in the fused stage) and the answers' sentence scoring: a question that spells out an "
        "abbreviation the documents define also matches its short form ('sustainable aviation fuels' finds 'SAF'; "
        "core/abbreviations.py, docs/retrieval.md).",
    )
    rescore: bool = Field(
        True,
        description="hybrid (and dual): rescore the fused top rescore_top_n offline, by cosine + word overlap with the question "
        "(no model). On by measurement: mean R@5/QR@5 +2.1 points (mpnet, five sets), +1.9 (MiniLM, six).",
    )
    rescore_top_n: int = Field(20, ge=1, le=200, description="rescore: fused candidates rescored (at least k are).")
    rescore_sentence_words: int = Field(
        200, ge=0,
        description="rescore: a candidate of more than this many words is scored by the best of its window and sentence "
        "cosines (a law article holds many provisions; its window vector blurs the one asked about); shorter ones by the "
        "window alone. 0 = every candidate, a huge value = none (spr/retrieval/rescore.py, docs/retrieval.md).",
    )
    rescore_dense_weight: float = Field(
        0.7, ge=0.0, le=1.0, description="Offline rescoring (hybrid's rescore, docgraph's rerank): weight of the cosine; the rest is word overlap."
    )

    rescore_section_bonus: float = Field(
        0.2, ge=0.0, le=1.0,
        description="rescore: added to the score of a candidate among the sections signal's first three (a section of the kind "
        "the question asks for; spr/retrieval/rescore.py).",
    )
    rescore_link_bonus: float = Field(
        0.1, ge=0.0, le=1.0,
        description="rescore: added to the score of the best candidate of each document the best candidate names by its title "
        "(a cross-reference: the next hop of a multi-hop question; spr/retrieval/rescore.py). 0 = off.",
    )
    rescore_pull: bool = Field(
        True,
        description="rescore: a document the best candidate names by its title, none of whose chunks is a candidate, is pulled "
        "in (its chunk closest to the question, with the link bonus; spr/retrieval/rescore.py).",
    )
    rescore_pull_named: bool = Field(
        True,
        description="rescore: when the question names documents by the words that set their titles apart ('Spain's' names the "
        "plans titled 'Spain_National Objectives and Targets_…'), each one no candidate is from has its chunk closest to the "
        "question pulled in as a candidate (spr/retrieval/titles.py, docs/retrieval.md).",
    )
    rescore_named_alike: bool = Field(
        True,
        description="rescore: a candidate of a document the question names by its title's distinctive words gains the named "
        "bonus too, when its title follows a pattern >= 10% of the titles share (look-alike documents told apart by title: "
        "'Spain_National Objectives and Targets_…'). On by measurement: dev-necp extractive answers meet the abstention target "
        "with both embedders (spr/retrieval/titles.py, docs/retrieval.md).",
    )
    rescore_named_bonus: float = Field(
        0.2, ge=0.0, le=1.0,
        description="rescore: added to the score of a candidate whose document the question names by its title (what a "
        "multi-hop question's first hop is about; spr/retrieval/rescore.py). 0 = off.",
    )

    @property
    def weights(self) -> dict[str, float]:
        """Signal name → RRF weight, for every signal of the fused stage."""
        names = ("bm25", "dense", "sentences", "questions", "graph", "uks", "ics", "iks", "prf", "sections")
        return {name: getattr(self, f"weight_{name}") for name in names}

class AnswerConfig(Section):
    """Answering (`policykb ask`, `KnowledgeBase.ask`): retrieval mode, context packing, answer kind."""

    mode: str = Field(
        "dual", description="Default retrieval mode: 'dual', 'spr', 'questions' (question bank), 'vector' or 'naive-kg'."
    )
    answer: AnswerKind = Field(
        "extractive", description="'extractive' = facts and best sentences (the LLM only reads them: model_check); 'llm' = one [llm] reply."
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
        description="Extractive: least hybrid score for a sentence to count; below it for every sentence, the answer abstains (calibrated: docs/answers.md).",
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
            " states appears in no retrieved passage, it asks for a value (days, amount, share, year) no sentence states,"
            " or the sentences it nearly copies say its opposite."
        ),
    )
    model_check: Literal["off", "llm", "all"] = Field(
        "all",
        description=(
            "After the rule checks, the [llm] model reads what the extractive answer would quote and says whether it"
            " answers the question (spr/model_check.py); below model_check_threshold the answer abstains. 'all' = extractive"
            " and LLM answers (~2 s a question on two cores with the embedded model; yes/no questions are left to the"
            " rules), 'llm' = LLM answers only, 'off'."
        ),
    )
    model_check_threshold: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="Least P(yes) of the model check for an answer to stand (calibrated: docs/answers.md#the-models-check).",
    )
    deepen_k: int = Field(
        0,
        ge=0,
        le=MAX_K,
        description=(
            "When no sentence of the top k states the value a question asks for, look at the top deepen_k passages and add"
            " the ones with a relevant sentence that does (spr/deepen.py); 0 = never. Off by measurement: on the dev sets it"
            " answered about as many questions wrongly as rightly (docs/answers.md 'The answerability check, measured')."
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
            " than answers (docs/retrieval.md 'Neighbours for LLM answers')."
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
    llm_end_on_citation: bool = Field(
        True,
        description=(
            "LLM answers on the embedded model: it may end its reply only on a citation marker [n] (or the abstention"
            " sentence), so a reply cannot leave its evidence unnamed; endpoints ignore it."
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
    llm_fallback: Literal["extractive", "abstain"] = Field(
        "extractive",
        description=(
            "LLM answers: when the check withholds every sentence of the model's reply, 'extractive' quotes the"
            " evidence instead (the extractive answer over the same passages, its own checks included); 'abstain' says"
            " 'The documents do not say.'"
        ),
    )
    max_question_chars: int = Field(2000, ge=1, description="Longer questions are rejected with an input error.")

class ServerConfig(Section):
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
    warm_up: bool = Field(
        True,
        description="Load the answering API (embedder, the default mode's indexes, the LLM for LLM answers) in the "
        "background at start, so the first /ask does not wait for it; /health says qa: warming up, then ready.",
    )
    web_dir: Path = Field(Path("web"), description="The web page and its npm assets (relative: cwd, then the installed copy).")

class EvalConfig(Section):
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
