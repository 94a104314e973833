"""Retrieval quality and latency of every text signal, the fused stage and its ablations, in one run.

    .venv/bin/python bench/eval_retrieval.py --set hotpotqa --embed all-MiniLM-L6-v2
    .venv/bin/python bench/eval_retrieval.py --set dev-eu --embed all-mpnet-base-v2 --json bench/out/retrieval/dev-eu.json

Each question's signal rankings (BM25, dense, question bank, graph; depth 50) are computed once
and fused offline, so ``vector``/``bm25``/``questions``/``graph`` alone, ``hybrid`` (all signals,
the weights of ``[retrieval]``), and ``hybrid`` without each signal are scored on the same rankings.
``dual`` has ``hybrid``'s passages by construction; what it adds is facts, reported as how many
questions got confident facts and how many of those facts' source chunks hold gold evidence.

Metrics: sets with gold passages (HotpotQA, MuSiQue, rag-eurlex) → passage Recall@2/5/10 over
distinct documents; the hand-checked dev sets (``bench/devset/``) → gold-quote recall@k, the
share of gold quotes inside the top-k chunks. Latency: ``hybrid`` and ``vector`` searches with
the persistent embedding cache off, p50/p95 in the same run, after one warm-up question.
KBs are built once per set and embedder under the user cache (``--cache``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.check_devset import DEV_SETS, SHARED_KB, corpus_path, default_devset_dir  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.choices import choice  # noqa: E402
from spr.eval import metrics as m  # noqa: E402
from spr.eval.datasets import default_data_dir, load_dataset, load_jsonl, sample  # noqa: E402
from spr.eval.runner import document_ids, prepare_kb, resolve_contexts  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.retrieval.fusion import Ranked, is_second_stage, reciprocal_rank_fusion  # noqa: E402
from spr.retrieval.registry import hybrid as hybrid_mode  # noqa: E402
from spr.retrieval.registry import signals  # noqa: E402
from spr.retrieval.rescore import follow_references, long_unit_cosines, rescore, with_bonus  # noqa: E402
from spr.retrieval.sections import FAVOURED  # noqa: E402
from store.units import read_units  # noqa: E402
from store.vocab import PKB  # noqa: E402

KS = (2, 5, 10)
DEPTH = 50


def load_dev(name: str, data_dir: Path):
    """A hand-checked dev set (``dev-eu``, ``dev-necp``, ``dev-de``, ``dev-de-native``) over its corpus."""
    stem = DEV_SETS[name]
    dataset = load_jsonl(default_devset_dir() / f"{stem}.jsonl", corpus_path(stem, data_dir))
    return replace(dataset, name=SHARED_KB.get(stem, dataset.name))  # the KB folder is named after it


# The structured-QA sets (bench/structured/, written for the semantic parser: one verified quote of
# the source per question) read as retrieval sets over their dev set's corpus and KB.
STRUCTURED_SETS = {"structured-eu": "eu_regulations", "structured-necp": "necp"}


def load_structured(name: str, data_dir: Path):
    stem = STRUCTURED_SETS[name]
    rows = [json.loads(line) for line in (ROOT / "bench" / "structured" / f"{stem}.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{stem}.jsonl"
        path.write_text("".join(json.dumps({**r, "contexts": [r["quote"]]}) + "\n" for r in rows))
        dataset = load_jsonl(path, corpus_path(stem, data_dir))
    return replace(dataset, name=stem)  # the dev set's KB


def load(name: str, data_dir: Path, limit: int | None):
    if name in DEV_SETS:
        return load_dev(name, data_dir)
    if name in STRUCTURED_SETS:
        return load_structured(name, data_dir)
    return sample(load_dataset(name, data_dir), limit, 0, "full")


@dataclass(frozen=True)
class ChunkTexts:
    """What scoring a ranking needs from the KB: each chunk's document id and its texts."""

    doc_id: dict[str, str]  # chunk IRI -> its document's id
    document: dict[str, str]  # chunk IRI -> its document's IRI
    raw: dict[str, str]  # chunk IRI -> the stored text (where gold quotes are looked for)
    unit: dict[str, str]  # chunk IRI -> the retrieval unit's text (a fallback)
    heads: dict[str, str]  # chunk IRI -> its heading path, the document title first (what the rescoring reads above the text)

    @classmethod
    def read(cls, store, doc_of: dict[str, str]) -> ChunkTexts:
        units = {u.iri: u for u in read_units(store)}
        raw = {r["c"].value: r["t"].value for r in store.select(f"SELECT ?c ?t WHERE {{ ?c <{PKB}text> ?t }}").rows}
        return cls(
            {iri: doc_of.get(u.document, "") for iri, u in units.items()}, {iri: u.document for iri, u in units.items()}, raw,
            {iri: u.text for iri, u in units.items()}, {iri: " › ".join(u.path) for iri, u in units.items()},
        )


def gold_scores(set_name: str, q, ranked: list[str], texts: ChunkTexts, ks=KS) -> dict[str, float]:
    """QR@k (dev sets: gold quotes inside the top-k chunks) and R@k (gold passages, over distinct
    documents) of one answerable question's ranked chunk IRIs."""
    out: dict[str, float] = {}
    docs = m.dedupe(texts.doc_id.get(ch, "") for ch in ranked)
    for k in ks:
        if q.gold_contexts and (set_name in DEV_SETS or set_name in STRUCTURED_SETS):  # other sets' contexts are generated, not quotes
            v = m.quote_recall_at_k([texts.raw.get(ch, texts.unit.get(ch, "")) for ch in ranked], q.gold_contexts, k)
            out[f"QR@{k}"] = v if v is not None else 0.0
        if q.gold_passage_ids:
            out[f"R@{k}"] = m.recall_at_k(docs, q.gold_passage_ids, k) or 0.0
    return out


def score_llm_hops(kb, questions, most: int, scores_of) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """``hybrid`` as configured and the same with 1..``most`` LLM hops (:mod:`spr.retrieval.hop`),
    all run as the product runs them (top 10), scored on the answerable questions; and each hop
    count's cost (seconds of LLM calls per question, p50 / p95). With the KB's response cache,
    the n-hop run reuses the (n-1)-hop run's replies (a reply cached before this run costs ~0 s)."""
    from spr.retrieval.hop import LLMHopRetriever

    c = kb.config.retrieval
    inner = kb.retriever("hybrid")
    answerable = [q for q in questions if q.answerable]
    runs = {}
    cost, before = {}, [0.0] * len(answerable)
    for hops in range(1, most + 1):
        retriever = LLMHopRetriever(inner, lambda: kb.llm, hops=hops, passages=c.llm_hop_passages, keep=c.llm_hop_keep)
        pairs, seconds = [], []
        for i, q in enumerate(answerable, 1):
            got = retriever.search(q.question, 10)
            pairs.append((q, [e.chunk.iri for e in got.evidence if e.chunk]))
            # this run's calls; the earlier hops' replies come from the cache, so their time is the earlier run's
            seconds.append(before[i - 1] + got.trace.timings_ms.get("hop", 0.0) / 1000)
            print(f"  {hops} hop(s) {i}/{len(answerable)}: {seconds[-1]:.1f} s · {got.trace.note[-160:]}", flush=True)
        runs[f"hybrid + {hops} llm hop{'s' if hops > 1 else ''}"] = pairs
        before = seconds
        cost[str(hops)] = {"llm_s_p50": round(statistics.median(seconds), 2), "llm_s_p95": round(percentile(seconds, 95), 2)}
    systems = {}
    for label, pairs in runs.items():
        per_q = scores_of(pairs)
        systems[label] = {key: round(sum(d[key] for d in per_q) / len(per_q), 3) for key in per_q[0]} if per_q else {}
    return systems, cost


def score_retriever(kb, questions, scores_of, per_question: dict | None = None) -> dict[str, dict[str, float]]:
    """``hybrid`` as the product runs it (``kb.retriever``, top 10) — the rows above rebuild its
    steps from shared rankings, all but the pulling in of named documents and the per-option
    searches of a choice — and the same with each of those steps off (``[retrieval] rescore_pull
    = false``, ``rescore_pull_named = false``, ``choices = false``), with BM25 reading no abbreviations (``abbreviations = false``)
    and with bridges and the look-alike titles' bonus switched (``bridges``, ``rescore_named_alike``), scored on the
    answerable questions. ``per_question``, when given, receives each row's scores of every choice
    question (:func:`spr.choices.choice`) and bridge question (:func:`spr.bridges.bridge`)."""
    from spr.bridges import bridge

    def switched(field: str, value: bool = False):
        config = kb.config.model_copy(update={"retrieval": kb.config.retrieval.model_copy(update={field: value})})
        return KnowledgeBase(config, kb.store, embedder=kb.embedder).retriever("hybrid")

    answerable = [q for q in questions if q.answerable]
    systems = {}
    bridges = kb.config.retrieval.bridges
    alike = kb.config.retrieval.rescore_named_alike
    for label, retriever in (
        ("hybrid (retriever)", kb.retriever("hybrid")),
        ("hybrid (retriever), no pull", switched("rescore_pull")),
        ("hybrid (retriever), no named pull", switched("rescore_pull_named")),
        ("hybrid (retriever), no choices", switched("choices")),
        ("hybrid (retriever), no abbreviations", switched("abbreviations")),
        ("hybrid (retriever), " + ("no bridges" if bridges else "bridges"), switched("bridges", not bridges)),
        ("hybrid (retriever), " + ("no" if alike else "with") + " named alike", switched("rescore_named_alike", not alike)),
    ):
        per_q = scores_of([(q, [e.chunk.iri for e in retriever.search(q.question, 10).evidence if e.chunk]) for q in answerable])
        systems[label] = {key: round(sum(d[key] for d in per_q) / len(per_q), 3) for key in per_q[0]} if per_q else {}
        if per_question is not None:
            for q, scores in zip(answerable, per_q, strict=True):
                if choice(q.question) or bridge(q.question):
                    per_question.setdefault(q.question, {})[label] = scores
    return systems


def with_retrieval(config: Config, pairs: list[str]) -> Config:
    """``config`` with ``[retrieval]`` fields set from ``KEY=VALUE`` pairs (``--retrieval``), validated
    as the config file's would be: a benchmark compares settings without a policykb.toml."""
    if not pairs:
        return config
    updates = dict(pair.split("=", 1) for pair in pairs)
    retrieval = type(config.retrieval).model_validate({**config.retrieval.model_dump(), **updates})
    return config.model_copy(update={"retrieval": retrieval})


def percentile(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else (xs[0] if xs else 0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", required=True, help="hotpotqa, musique, rag-eurlex, dev-eu, dev-necp, dev-de, dev-de-native, structured-eu, structured-necp")
    ap.add_argument("--embed", default="all-MiniLM-L6-v2", help="embedder name or model folder")
    ap.add_argument("--embed-dtype", default=Config().embed.dtype, choices=("float32", "bfloat16", "auto"), help="[embed] dtype")
    ap.add_argument("--limit", type=int, default=None, help="seeded sample of the questions (public sets)")
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None, help="KB cache folder (default: the user cache)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here too")
    ap.add_argument("--latency", type=int, default=50, help="questions timed for latency (0 = skip)")
    ap.add_argument("--question-bank", action="store_true", help="build the question bank too (its signal is scored)")
    ap.add_argument("--variant", action="append", default=[], metavar="bm25=1,dense=1,graph=0.5",
                    help="an extra weighting to score (repeatable)")
    ap.add_argument("--retrieval", action="append", default=[], metavar="KEY=VALUE",
                    help="set a [retrieval] field for every row, e.g. rescore_pull_named=false (repeatable)")
    ap.add_argument("--long-unit-words", type=int, action="append", default=[],
                    help="also rescore by sentence cosine only in units of more than N words (repeatable)")
    ap.add_argument("--section-bonus", type=float, default=None, help="[retrieval] rescore_section_bonus (default: the config's)")
    ap.add_argument("--link-bonus", type=float, default=None, help="[retrieval] rescore_link_bonus (default: the config's)")
    ap.add_argument("--named-bonus", type=float, default=None, help="[retrieval] rescore_named_bonus (default: the config's)")
    ap.add_argument("--llm-hops", type=int, default=0, metavar="N",
                    help="score hybrid + 1..N LLM hops ([retrieval] llm_hops, the [llm] model; replies cached in the KB) against hybrid, same run")
    args = ap.parse_args()

    data_dir = args.data_dir or default_data_dir()
    dataset = load(args.set, data_dir, args.limit)
    config = Config()
    config = config.model_copy(update={
        "embed": config.embed.model_copy(update={"model": args.embed, "dtype": args.embed_dtype}),
        "questions": config.questions.model_copy(update={"build": args.question_bank}),
        "communities": config.communities.model_copy(update={"build": False}),  # no mode here reads them
    })
    config = with_retrieval(config, args.retrieval)
    cache = (args.cache or user_cache_dir()) / f"retrieval-{Path(args.embed).name}"  # bfloat16 KBs: <set>-bfloat16
    t0 = time.perf_counter()
    kb_config, note = prepare_kb(dataset, config, cache, ingest_summary, reindex=reindex_summary)
    build_s = time.perf_counter() - t0
    print(note, f"({build_s:.0f} s)", flush=True)

    with KnowledgeBase.open(kb_config) as kb:
        doc_of = document_ids(kb.store)
        texts = ChunkTexts.read(kb.store, doc_of)
        raw = texts.raw
        questions = resolve_contexts(kb.store, dataset.questions, doc_of)
        sigs = signals(kb)
        c = kb.config.retrieval
        weights = c.weights
        bonus = c.rescore_section_bonus if args.section_bonus is None else args.section_bonus
        link_bonus = c.rescore_link_bonus if args.link_bonus is None else args.link_bonus
        named_bonus = c.rescore_named_bonus if args.named_bonus is None else args.named_bonus
        rankings = []
        for q in questions:
            ranks = {s.name: s.rank(q.question, DEPTH) for s in sigs if not is_second_stage(s)}
            first = reciprocal_rank_fusion(ranks, weights, c.rrf_k)
            for s in sigs:
                if is_second_stage(s):
                    ranks[s.name] = s.rank(q.question, DEPTH, first)  # seeded by the first stage too
                    ranks[f"{s.name}-entities"] = s.rank(q.question, DEPTH)  # the question's entities only
            rankings.append(ranks)

        systems: dict[str, dict[str, float]] = {}
        variants = {name: {name: 1.0} for name in [*weights, "graph-entities"]}
        variants["hybrid"] = weights
        for name in weights:
            if weights[name] > 0:
                variants[f"hybrid - {name}"] = {**weights, name: 0.0}
        variants["bm25 + dense"] = {"bm25": 1.0, "dense": 1.0}
        variants["hybrid, graph from entities only"] = {**weights, "graph": 0.0, "graph-entities": weights["graph"]}
        for w in (0.5, 1.0):  # the sentence / feedback signal added to the default weighting (a no-op if already there)
            variants[f"hybrid + sentences {w:g}"] = {**weights, "sentences": w}
            variants[f"hybrid + prf {w:g}"] = {**weights, "prf": w}
            variants[f"hybrid + sentences {w:g} + prf {w:g}"] = {**weights, "sentences": w, "prf": w}
        variants["hybrid + sections 1"] = {**weights, "sections": 1.0}  # a no-op if already there
        for spec in args.variant:
            variants[spec] = {k: float(v) for k, v in (part.split("=") for part in spec.split(","))}
        def score(label: str, lists: list[list[str]]) -> None:
            scores: dict[str, list[float]] = {}
            for q, fused in zip(questions, lists, strict=True):
                if q.answerable:
                    for key, v in gold_scores(args.set, q, fused, texts).items():
                        scores.setdefault(key, []).append(v)
            systems[label] = {key: round(sum(v) / len(v), 3) for key, v in scores.items() if v}

        fused_lists = {
            label: [[f.chunk for f in reciprocal_rank_fusion(ranks, w, c.rrf_k)] for ranks in rankings]
            for label, w in variants.items()
        }
        for label, lists in fused_lists.items():
            score(label, lists)
        # The offline rescoring of [retrieval] rescore over the top rescore_top_n (spr.retrieval.rescore),
        # by the cosines the retriever uses, by the best window cosine alone, or by the best of window and
        # sentence cosines in every unit or in units over N words.
        dense = next(s for s in sigs if s.name == "dense")
        sent = next(s for s in sigs if s.name == "sentences")
        named_by = next(s for s in sigs if s.name == "graph").graph.documents_named  # type: ignore[attr-defined]

        def by_length(words: int):
            return long_unit_cosines(dense.similarities, sent.similarities, words, raw)

        # "" as the retriever scores (the best sentence cosine in units over rescore_sentence_words words)
        cosine_kinds = {"": by_length(c.rescore_sentence_words), " (window cos)": dense.similarities, " (sentence cos)": by_length(0)}
        for words in args.long_unit_words:
            cosine_kinds[f" (sentence cos over {words} words)"] = by_length(words)
        bases = ("hybrid", "dense", "sentences", "hybrid + sentences 0.5", "hybrid + sentences 1", "hybrid + prf 0.5",
                 "hybrid + prf 1", "hybrid + sentences 1 + prf 1", "hybrid - sentences", "hybrid + sections 1", "hybrid - sections")
        for base in (b for b in (*bases, *args.variant) if b in fused_lists):  # "hybrid - sentences" only while the signal is weighted
            for suffix, cosines in cosine_kinds.items():
                rescored, blended, unlinked, body, unnamed = [], [], [], [], []
                for q, fused, ranks in zip(questions, fused_lists[base], rankings, strict=True):
                    top = fused[: c.rescore_top_n]
                    top_texts = [raw.get(ch, "") for ch in top]
                    # as OfflineReranker does: the sections signal's first chunks gain the bonus when it is weighted
                    favoured = {r.chunk for r in ranks.get("sections", [])[:FAVOURED]} if variants[base].get("sections", 0) > 0 else set()
                    top_read = [f"{texts.heads.get(ch, '')}\n{raw.get(ch, '')}" for ch in top]  # as OfflineReranker reads them
                    scores_r, _ = rescore(q.question, top, top_read, cosines, c.rescore_dense_weight, favoured, bonus)
                    scores_b, _ = rescore(q.question, top, top_texts, cosines, c.rescore_dense_weight, favoured, bonus)
                    top_docs = [texts.document.get(ch, "") for ch in top]
                    _, plain, _ = follow_references(top_docs, top_texts, scores_r, named_by, link_bonus)
                    unnamed.append([top[i] for i in plain] + fused[c.rescore_top_n :])
                    # as OfflineReranker does: candidates of documents the question names gain the named bonus
                    in_question = set(named_by(q.question)) if named_bonus > 0 else set()
                    scores_r = with_bonus(scores_r, [d in in_question for d in top_docs], named_bonus)
                    scores_b = with_bonus(scores_b, [d in in_question for d in top_docs], named_bonus)
                    _, linked_b, _ = follow_references([texts.document.get(ch, "") for ch in top], top_texts, scores_b, named_by, link_bonus)
                    body.append([top[i] for i in linked_b] + fused[c.rescore_top_n :])
                    unlinked.append([top[i] for i in sorted(range(len(top)), key=lambda i: (-scores_r[i], i))] + fused[c.rescore_top_n :])
                    # ... and the next hops from the best candidate gain the link bonus
                    _, linked, _ = follow_references([texts.document.get(ch, "") for ch in top], top_texts, scores_r, named_by, link_bonus)
                    order = [top[i] for i in linked]
                    rescored.append(order + fused[c.rescore_top_n :])
                    # a variant: the rescored order fused with the first-stage order (RRF, equal weights)
                    both = {"first": [Ranked(ch, 0.0) for ch in top], "rescore": [Ranked(ch, 0.0) for ch in order]}
                    blended.append([f.chunk for f in reciprocal_rank_fusion(both, {"first": 1.0, "rescore": 1.0}, c.rrf_k)] + fused[c.rescore_top_n :])
                name = "vector" if base == "dense" else base
                score(f"{name} + rescore{suffix}", rescored)
                if not suffix and base == "hybrid":
                    score(f"{name} + rescore, no links", unlinked)
                    score(f"{name} + rescore, body words only", body)
                    score(f"{name} + rescore, no named bonus", unnamed)
                if not suffix and base in ("hybrid", "dense"):
                    score(f"{name} + rescore, RRF", blended)

        choice_scores: dict[str, dict] = {}
        systems.update(score_retriever(kb, questions, lambda qs: [gold_scores(args.set, q, r, texts) for q, r in qs], choice_scores))
        if args.llm_hops:
            hop_systems, hop_cost = score_llm_hops(kb, questions, args.llm_hops, lambda qs: [gold_scores(args.set, q, r, texts) for q, r in qs])
            systems.update(hop_systems)
        latency: dict[str, dict[str, float]] = {}
        if args.latency:
            timed = [q.question for q in questions[: args.latency]]
            fresh = kb_config.model_copy(update={"embed": kb_config.embed.model_copy(update={"cache": False})})
            with KnowledgeBase.open(fresh) as cold:
                timed_modes = {
                    "hybrid": cold.retriever("hybrid"),
                    "vector": cold.retriever("vector"),
                    "hybrid + sentences 1": hybrid_mode(cold, {**weights, "sentences": 1.0}),
                }
                for r in timed_modes.values():
                    r.search(timed[0] + " warm-up", 5)
                ms: dict[str, list[float]] = {name: [] for name in timed_modes}
                for i, text in enumerate(timed):
                    for name, r in timed_modes.items():
                        probe = f"{text} ({name} {i})"  # a text no cache has seen: the embedding is timed too
                        t = time.perf_counter()
                        r.search(probe, 5)
                        ms[name].append((time.perf_counter() - t) * 1000)
            for name, xs in ms.items():
                latency[name] = {"p50_ms": round(statistics.median(xs), 1), "p95_ms": round(percentile(xs, 95), 1)}
            latency["ratio_p50"] = {
                f"{name}/vector": round(latency[name]["p50_ms"] / latency["vector"]["p50_ms"], 2) for name in timed_modes if name != "vector"
            }

    out = {
        **({"llm_hop_cost": hop_cost} if args.llm_hops else {}),
        "set": args.set, "embed": args.embed, "questions": len(questions),
        "answerable": sum(q.answerable for q in questions), "chunks": len(texts.doc_id), "kb": note,
        "weights": weights, "rrf_k": c.rrf_k, "systems": systems, "latency": latency, "choice_questions": choice_scores,
    }
    keys = [f"R@{k}" for k in KS] + [f"QR@{k}" for k in KS]
    keys = [k for k in keys if any(k in s for s in systems.values())]
    print(f"{args.set} · {args.embed} · {out['answerable']} answerable of {len(questions)} · {len(texts.doc_id)} chunks")
    print(f"{'system':<44}" + "".join(f"{k:>8}" for k in keys))
    for label, s in systems.items():
        print(f"{label:<44}" + "".join(f"{s.get(k, float('nan')):>8.3f}" for k in keys))
    if latency:
        print("latency", json.dumps(latency))
    for question, rows in choice_scores.items():  # the questions the per-option or bridge searches change
        print("choice:" if choice(question) else "bridge:", question[:90], " ".join(f"{label.removeprefix('hybrid (retriever)') or 'default'}: {r.get('QR@5', r.get('R@5'))}" for label, r in rows.items()))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
