"""Document GraphRAG parameter study (Knollmeyer et al., 2025): chunk size, keywords per chunk and
top-k, naive RAG vs the fused stage vs ``docgraph``, in one command.

    .venv/bin/python bench/study_docgraph.py
    .venv/bin/python bench/study_docgraph.py --sets hotpotqa,dev-eu --limit 20 --json /tmp/dg.json

Grid (the paper's): ``[ingest] chunk_tokens`` 700 / 1000 / 1300, ``[docgraph] keywords_per_chunk``
3 / 5 / 8, top-k 5 / 10 / 20. Not the full cross product: one parameter is varied at a time around
the default point — chunk 1000 (the project default, 512, is not a grid value), 5 keywords, k 10:

- chunk 700 / 1300 with 5 keywords, and keywords 3 / 8 at chunk 1000;
- top-k 5 / 10 / 20 on every configuration: each system is searched once at k = 20 and the first
  k chunks are scored (every system's top k is a prefix of its top 20: ``hybrid`` fuses to a depth
  of 50 whatever k, ``docgraph`` reranks a candidate set that does not depend on k);
- vector and hybrid do not read the keyword layer (``[retrieval] weight_uks/ics/iks`` = 0), so the
  keyword configurations run the docgraph systems only;
- a set whose every passage is at most 700 pkb tokens (HotpotQA, SQuAD) is chunked the same at
  every grid size: its 700 / 1300 KBs would equal the 1000 one, so they are not built, and the
  report says so.

Systems: ``vector`` (naive RAG), ``hybrid`` (the fused first stage), ``docgraph/vector`` (the
paper's setting: dense initial chunks), ``docgraph/hybrid`` (the project default, ``[docgraph]
base = "hybrid"``); at the default point also each expansion off (``-uks``, ``-ics``, ``-iks``)
and all three off (``rerank only``: the ``initial_k`` base chunks, reranked), for both bases.

Sets: ``hotpotqa`` (HippoRAG's 100 questions, full 994-passage corpus), ``squad2`` (the SQuAD 2.0
subset, answerable questions only, seeded sample), ``dev-eu`` (the hand-checked EU dev set,
answerable questions, gold quotes). Metrics per (set, configuration, system, k), over the top k
chunks: Recall@k and MRR@k over distinct gold passages (dev-eu: quote recall@k, a chunk relevant
when it contains a gold quote, matched as lower-case words like ``quote_recall_at_k``), context
precision (RAGAS, average precision over the relevant ranks), context recall (share of the gold in
the context — the context is exactly the top k, so it equals Recall@k here) and K-Precision (share
of the gold answer's tokens in the context, best gold answer). Per-question wall time of each
system (one k = 20 search) is reported as p50 / p95 ms, with the question's embedding computed
beforehand for every system alike (its own p50 is reported per KB); the machine may be shared, so
read the times as ratios between systems. ``OMP_NUM_THREADS`` defaults to 1 here (see below). Paired
Wilcoxon tests (Benjamini-Hochberg within a set) compare docgraph with vector and hybrid at the
default point.

KBs are built once per set and chunk size under ``--cache`` (default
``~/.cache/policykb/study-<embed>/chunk-<N>/``); changing the keyword count only re-runs the
``keywords`` stage on the cached KB. Output: ``bench/out/docgraph/study.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

# One OpenMP thread unless told otherwise, set before igraph and torch load: on a small shared machine
# igraph's OpenMP PageRank (the hybrid's graph signal) swings between 2 and 400 ms for the same call
# with the default thread count, and the study's times would measure that contention.
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.check_devset import DEV_SETS, corpus_path, default_devset_dir  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from kgpipeline.segment import count_tokens  # noqa: E402
from spr.eval import metrics as m  # noqa: E402
from spr.eval.datasets import default_data_dir, load_dataset, load_jsonl, sample  # noqa: E402
from spr.eval.records import EvalDataset, EvalQuestion  # noqa: E402
from spr.eval.runner import document_ids, prepare_kb  # noqa: E402
from spr.eval.significance import benjamini_hochberg, paired, wilcoxon_p  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.records import Retrieval  # noqa: E402
from spr.retrieval.base import Retriever  # noqa: E402
from spr.retrieval.docgraph import DocGraphRetriever, DocumentGraph  # noqa: E402
from spr.retrieval.vector import DenseSignal, load_chunk_index  # noqa: E402
from store.keywords import chunk_count, has_keywords  # noqa: E402

SETS = ("hotpotqa", "squad2", "dev-eu")
CHUNKS = (700, 1000, 1300)
KEYWORDS = (3, 5, 8)
KS = (5, 10, 20)
DEFAULT_CHUNK, DEFAULT_KEYWORDS, DEFAULT_K = 1000, 5, 10
DEFAULT_LIMITS: dict[str, int | None] = {"hotpotqa": 100, "squad2": 100, "dev-eu": None}
METRICS = ("R", "MRR", "CP", "CR", "KP")
BASES = ("vector", "hybrid")
ABLATIONS = {"-uks": {"uks": False}, "-ics": {"ics": False}, "-iks": {"iks": False},
             "rerank only": {"uks": False, "ics": False, "iks": False}}


@dataclass(frozen=True)
class Setting:
    """One point of the study: a chunk size and a keyword count."""

    chunk: int
    keywords: int

    @property
    def label(self) -> str:
        return f"chunk {self.chunk} · kw {self.keywords}"

    @property
    def is_default(self) -> bool:
        return (self.chunk, self.keywords) == (DEFAULT_CHUNK, DEFAULT_KEYWORDS)


DEFAULT = Setting(DEFAULT_CHUNK, DEFAULT_KEYWORDS)
# run order: the keyword variants first and the default last on the chunk-1000 KB, so the cached KB
# ends with the default keyword layer; then the other chunk sizes
RUN_ORDER = [Setting(DEFAULT_CHUNK, kw) for kw in KEYWORDS if kw != DEFAULT_KEYWORDS] + [DEFAULT] + [
    Setting(c, DEFAULT_KEYWORDS) for c in CHUNKS if c != DEFAULT_CHUNK
]
REPORT_ORDER = [DEFAULT] + [s for s in RUN_ORDER if not s.is_default and s.keywords == DEFAULT_KEYWORDS] + [
    s for s in RUN_ORDER if s.keywords != DEFAULT_KEYWORDS
]


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


# --- data -----------------------------------------------------------------------------------------------
def load_set(name: str, data_dir: Path, limit: int | None, seed: int) -> EvalDataset:
    """The set's answerable questions (a seeded sample of ``limit``) over its full corpus."""
    if name in DEV_SETS:
        stem = DEV_SETS[name]
        ds = load_jsonl(default_devset_dir() / f"{stem}.jsonl", corpus_path(stem, data_dir))
    else:
        ds = load_dataset(name, data_dir)
    ds = replace(ds, questions=tuple(q for q in ds.questions if q.answerable))
    return sample(ds, limit, seed, "full")


def longest_passage(ds: EvalDataset) -> int | None:
    """The longest passage in pkb tokens (title counted too, as the ingest may prefix it); None for a
    set ingested from files (its chunking is not known without building)."""
    if not ds.passages:
        return None
    return max(count_tokens(f"{p.title}\n\n{p.text}") for p in ds.passages)


def base_config(embed: str, setting: Setting) -> Config:
    c = Config()
    return c.model_copy(update={
        "embed": c.embed.model_copy(update={"model": embed}),
        "questions": c.questions.model_copy(update={"build": False}),
        "ingest": c.ingest.model_copy(update={"chunk_tokens": setting.chunk}),
        "docgraph": c.docgraph.model_copy(update={"keywords_per_chunk": setting.keywords}),
    })


# --- scoring ----------------------------------------------------------------------------------------------
def score(q: EvalQuestion, chunks: Sequence[tuple[str, str]], k: int, quotes: bool) -> dict[str, float | None]:
    """The metrics of the first ``k`` of ``chunks`` ((document id, text) pairs, best first)."""
    top = list(chunks[:k])
    if quotes:  # dev sets: a chunk is relevant when it holds a gold quote
        wanted = [m.word_key(x) for x in q.gold_contexts if x.strip()]
        keys = [m.word_key(t) for _, t in top]
        ids = [f"c{i}" for i in range(len(top))]
        rel = {ids[i] for i, t in enumerate(keys) if any(w in t for w in wanted)}
        recall = m.quote_recall_at_k([t for _, t in top], q.gold_contexts, k)
        out = {"R": recall, "CR": recall,
               "MRR": m.mrr_at_k(ids, rel, k) if rel else 0.0, "CP": m.context_precision(ids, rel) if rel else 0.0}
    else:
        docs = m.dedupe(d for d, _ in top)
        gold = q.gold_passage_ids
        out = {"R": m.recall_at_k(docs, gold, k), "MRR": m.mrr_at_k(docs, gold, k),
               "CP": m.context_precision(docs, gold), "CR": m.context_recall(docs, gold)}
    context = "\n".join(t for _, t in top)
    kps = [v for v in (m.k_precision(a, context) for a in q.answers) if v is not None]
    out["KP"] = max(kps) if kps else None
    return out


def percentile(xs: Sequence[float], q: int) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else (xs[0] if xs else 0.0)


@dataclass
class SystemRun:
    """One system on one configuration: per-question metrics per k, wall times, chunks returned."""

    scores: dict[int, dict[str, dict[str, float | None]]]  # k -> metric -> question id -> value
    ms: list[float]
    returned: list[int]

    def summary(self) -> dict:
        out: dict = {}
        for k, by_metric in self.scores.items():
            out[f"k{k}"] = {name: _mean(v.values()) for name, v in by_metric.items()}
        out["p50_ms"] = round(statistics.median(self.ms), 1) if self.ms else None
        out["p95_ms"] = round(percentile(self.ms, 95), 1) if self.ms else None
        out["mean_chunks_returned"] = round(sum(self.returned) / len(self.returned), 2) if self.returned else None
        return out


def _mean(values) -> float | None:
    v = m.mean(values)
    return round(v, 4) if v is not None else None


def run_systems(retrievers: dict[str, Retriever], questions: Sequence[EvalQuestion], doc_of: dict[str, str],
                quotes: bool) -> dict[str, SystemRun]:
    """Every question through every system, the systems interleaved per question, so a load on the
    (shared) machine falls on all systems alike; one warm-up search each first (indexes load)."""
    kmax = max(KS)
    for r in retrievers.values():
        r.search(questions[0].question + " (warm-up)", kmax)
    runs = {name: SystemRun({k: {x: {} for x in METRICS} for k in KS}, [], []) for name in retrievers}
    for q in questions:
        for name, r in retrievers.items():
            t = time.perf_counter()
            result: Retrieval = r.search(q.question, kmax)
            run = runs[name]
            run.ms.append((time.perf_counter() - t) * 1000)
            chunks = [(doc_of.get(e.chunk.document, ""), e.chunk.text) for e in result.evidence if e.kind == "chunk" and e.chunk]
            run.returned.append(len(chunks))
            for k in KS:
                for metric, v in score(q, chunks, k, quotes).items():
                    run.scores[k][metric][q.id] = v
    return runs


# --- systems ----------------------------------------------------------------------------------------------
def docgraph(kb: KnowledgeBase, dense: DenseSignal, base: str, **changes: bool) -> DocGraphRetriever:
    """Mode ``docgraph`` wired as :func:`spr.retrieval.registry._docgraph` does (offline rerank),
    with ``[docgraph]`` changed by ``changes`` and the base mode ``base``."""
    c = kb.config.docgraph.model_copy(update={"base": base, **changes})
    return DocGraphRetriever(kb.store, kb.retriever(base), DocumentGraph(kb.store, c), dense.similarities)


def systems_for(kb: KnowledgeBase, setting: Setting) -> dict[str, Callable[[], Retriever]]:
    dense = DenseSignal(kb.embedder, lambda: load_chunk_index(kb.config.kb_dir))
    out: dict[str, Callable[[], Retriever]] = {}
    if setting.keywords == DEFAULT_KEYWORDS:  # vector and hybrid do not read the keyword layer
        out["vector"] = lambda: kb.retriever("vector")
        out["hybrid"] = lambda: kb.retriever("hybrid")
    for base in BASES:
        out[f"docgraph/{base}"] = lambda base=base: docgraph(kb, dense, base)
    if setting.is_default:
        for base in BASES:
            for label, changes in ABLATIONS.items():
                out[f"docgraph/{base} {label}"] = lambda base=base, changes=changes: docgraph(kb, dense, base, **changes)
    return out


def embed_questions(kb: KnowledgeBase, questions: Sequence[EvalQuestion]) -> float:
    """Embed every question once, before any system is timed: the embedder keeps recent vectors in
    memory, so otherwise the first system would pay for the embedding and the others not. Returns
    the p50 ms of embedding one question alone (timed on up to 20), the part every system shares."""
    texts = [q.question for q in questions]
    kb.embedder.embed_batch(texts[:1])  # the model loads here
    ms = []
    for text in texts[:20]:
        t = time.perf_counter()
        kb.embedder.embed_batch([text])
        ms.append((time.perf_counter() - t) * 1000)
    kb.embedder.embed_many(texts)
    return round(statistics.median(ms), 1)


def registry_check(kb: KnowledgeBase, questions: Sequence[EvalQuestion]) -> bool:
    """The study's own wiring of docgraph/hybrid returns what ``kb.retriever("docgraph")`` does."""
    dense = DenseSignal(kb.embedder, lambda: load_chunk_index(kb.config.kb_dir))
    ours, registry = docgraph(kb, dense, "hybrid"), kb.retriever("docgraph")
    for q in questions[:3]:
        a = [e.chunk.iri for e in ours.search(q.question, max(KS)).evidence if e.chunk]
        b = [e.chunk.iri for e in registry.search(q.question, max(KS)).evidence if e.chunk]
        if a != b:
            return False
    return True


# --- significance -------------------------------------------------------------------------------------------
PAIRS = (("docgraph/vector", "vector"), ("docgraph/hybrid", "hybrid"), ("docgraph/hybrid", "vector"), ("hybrid", "vector"))
TESTED = (("R", 5), ("R", 10), ("R", 20), ("MRR", 10), ("CP", 10), ("KP", 10))


def significance(runs: dict[str, SystemRun]) -> list[dict]:
    raw = []
    for a, b in PAIRS:
        if a not in runs or b not in runs:
            continue
        for metric, k in TESTED:
            x, y = paired(runs[a].scores[k][metric], runs[b].scores[k][metric])
            if len(x) < 2:
                continue
            raw.append({"a": a, "b": b, "metric": f"{metric}@{k}", "n": len(x),
                        "delta": round(sum(x) / len(x) - sum(y) / len(y), 4), "p": wilcoxon_p(x, y)})
    for row, q in zip(raw, benjamini_hochberg([r["p"] for r in raw]), strict=True):
        row["p"], row["q"] = round(row["p"], 4), round(q, 4)
    return raw


# --- the study ------------------------------------------------------------------------------------------------
def study_set(name: str, ds: EvalDataset, args: argparse.Namespace) -> dict:
    quotes = name in DEV_SETS
    longest = longest_passage(ds)
    same_chunks = longest is not None and longest <= min(CHUNKS)
    out: dict = {"questions": len(ds.questions), "corpus_passages": len(ds.passages) or None,
                 "longest_passage_tokens": longest, "kb": {}, "results": {}, "significance": []}
    for setting in RUN_ORDER:
        if same_chunks and setting.chunk != DEFAULT_CHUNK:
            note = (f"not built: every passage is at most {longest} pkb tokens (<= {min(CHUNKS)}), so chunking at "
                    f"{setting.chunk} equals chunking at {DEFAULT_CHUNK}; the rows are those of {DEFAULT.label}")
            out["kb"][setting.label] = {"identical_to": DEFAULT.label, "note": note}
            log(f"[{name}] {setting.label}: {note}")
            continue
        cache = args.cache / f"chunk-{setting.chunk}"
        t0 = time.perf_counter()
        kb_config, note = prepare_kb(ds, base_config(args.embed, setting), cache, ingest_summary, reindex=reindex_summary)
        build_s = time.perf_counter() - t0
        log(f"[{name}] {setting.label}: {note} ({build_s:.0f} s)")
        with KnowledgeBase.open(kb_config) as kb:
            doc_of = document_ids(kb.store)
            info = {"note": note, "build_s": round(build_s, 1), "documents": len(doc_of), "chunks": chunk_count(kb.store),
                    "keyword_layer": has_keywords(kb.store)}
            info["question_embed_ms_p50"] = embed_questions(kb, ds.questions)
            if setting.is_default:
                info["registry_check"] = registry_check(kb, ds.questions)
            out["kb"][setting.label] = info
            t = time.perf_counter()
            runs = run_systems({label: make() for label, make in systems_for(kb, setting).items()}, ds.questions, doc_of, quotes)
            log(f"[{name}] {setting.label}: {len(runs)} systems in {time.perf_counter() - t:.0f} s")
            for label, r in runs.items():
                s = r.summary()
                log(f"    {label}: R@10 {s['k10']['R']} MRR@10 {s['k10']['MRR']} p50 {s['p50_ms']} ms")
            out["results"][setting.label] = {label: r.summary() for label, r in runs.items()}
            if setting.is_default:
                out["significance"] = significance(runs)
    return out


def _cell(values: Sequence[float | None]) -> str:
    return " / ".join("–" if v is None else f"{v:.3f}" for v in values)


def markdown(name: str, res: dict, embed: str) -> str:
    unit = "gold-quote recall" if name in DEV_SETS else "distinct gold passages"
    lines = [f"### {name} · {res['questions']} answerable questions · {embed}", "",
             f"Recall and MRR over {unit}; each cell is k = {' / '.join(map(str, KS))}. CR = R@k here (the context is the top k). "
             f"p50 / p95 ms: one k = {max(KS)} search per question, question embedding precomputed. n@{max(KS)}: chunks returned at k = {max(KS)}.", ""]
    for label, info in res["kb"].items():
        if "identical_to" in info:
            lines.append(f"- {label}: {info['note']}.")
        else:
            lines.append(f"- {label}: {info.get('chunks')} chunks over {info.get('documents')} documents; "
                         f"embedding one question: {info.get('question_embed_ms_p50')} ms p50 (not in the system times).")
    lines.append("")
    head = ["configuration", "system", *(f"{x}@k" if x in ("R", "MRR") else x for x in ("R", "MRR", "CP", "CR", "K-P")),
            "p50 / p95 ms", f"n@{max(KS)}"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = ("R", "MRR", "CP", "CR", "KP")
    for setting in REPORT_ORDER:
        systems = res["results"].get(setting.label)
        if systems is None:
            continue
        for label, s in systems.items():
            cells = [_cell([s[f"k{k}"][key] for k in KS]) for key in keys]
            lines.append(f"| {setting.label} | {label} | " + " | ".join(cells) + f" | {s['p50_ms']} / {s['p95_ms']} | {s['mean_chunks_returned']} |")
    if res["significance"]:
        lines += ["", f"Paired Wilcoxon at {DEFAULT.label} (BH q within the set; Δ = a − b):", "",
                  "| a | b | metric | Δ | p | q |", "|---|---|---|---|---|---|"]
        for r in res["significance"]:
            flag = " *" if r["q"] < 0.05 else ""
            lines.append(f"| {r['a']} | {r['b']} | {r['metric']} | {r['delta']:+.3f}{flag} | {r['p']:.3g} | {r['q']:.3g} |")
    return "\n".join(lines) + "\n"


def parse_limits(specs: Sequence[str]) -> dict[str, int | None]:
    limits = dict(DEFAULT_LIMITS)
    for spec in specs:
        if "=" in spec:
            name, _, n = spec.partition("=")
            limits[name.strip()] = None if n.strip() in ("", "all", "0") else int(n)
        else:
            limits = dict.fromkeys(limits, None if spec in ("all", "0") else int(spec))
    return limits


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--limit", action="append", default=[], metavar="N | SET=N",
                    help="seeded question sample: N for every set, or SET=N (repeatable; 'all' = no limit); "
                    "default hotpotqa=100, squad2=100, dev-eu=all")
    ap.add_argument("--seed", type=int, default=0, help="seed of the question samples")
    ap.add_argument("--embed", default="all-MiniLM-L6-v2", help="embedder name or model folder")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None, help="KB cache folder (default ~/.cache/policykb/study-<embed>)")
    ap.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "docgraph" / "study.json")
    args = ap.parse_args()
    args.cache = args.cache or user_cache_dir() / f"study-{Path(args.embed).name}"
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; known: {', '.join(SETS)}")
    limits = parse_limits(args.limit)
    data_dir = args.data_dir or default_data_dir()

    started = time.perf_counter()
    out: dict = {
        "command": "bench/study_docgraph.py " + " ".join(sys.argv[1:]), "embed": args.embed, "seed": args.seed,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "grid": {"chunk_tokens": CHUNKS, "keywords_per_chunk": KEYWORDS, "k": KS},
        "default_point": {"chunk_tokens": DEFAULT_CHUNK, "keywords_per_chunk": DEFAULT_KEYWORDS, "k": DEFAULT_K},
        "design": "one parameter varied at a time around the default point; top-k on every configuration",
        "docgraph": Config().docgraph.model_dump(mode="json"), "limits": {n: limits.get(n) for n in names}, "sets": {},
    }
    report = []
    for name in names:
        ds = load_set(name, data_dir, limits.get(name), args.seed)
        log(f"[{name}] {len(ds.questions)} answerable questions")
        out["sets"][name] = study_set(name, ds, args)
        report.append(markdown(name, out["sets"][name], args.embed))
        print(report[-1], flush=True)
    out["wall_s"] = round(time.perf_counter() - started, 1)
    print(f"wall time {out['wall_s']:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False))
    args.json.with_suffix(".md").write_text("\n".join(report) + f"\nwall time {out['wall_s']:.0f} s\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
