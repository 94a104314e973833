"""Modes community, entity, local and global (spr/retrieval/community.py, local_search.py, global_search.py): latency
and context tokens per question on a real KB with community reports.

    .venv/bin/python bench/bench_community_modes.py [--kb /tmp/work/kb-egd] [--work /tmp/work/kb-egd-modes]
        [--embed all-MiniLM-L6-v2] [--repeat 3] [--map-questions 1] [--map-batches 0] [--llm smollm2-135m-instruct]

The source KB is copied to ``--work`` once (never written); a copy without reports gets them from
the real stages (``kgpipeline.derived.communities`` then ``kgpipeline.derived.reports``,
``make_stage(config).run(store, kb_dir)``, extractive reports) — or, where those modules are
missing, from a stand-in here (one community per document, findings = first sentences of its
chunks). ``--rebuild`` copies and builds again.

Latency — targets p50 <= 50 ms for community and entity retrieval (no LLM): ``search`` of
``vector`` (k = 5), ``community`` (k = 5), ``entity`` (n = 10, k = 5) and ``local`` (no LLM in
retrieval), interleaved per question (a busy machine slows all alike), with the persistent
embedding cache off and the in-memory one cleared before each call, so every call embeds its
question; one warm-up pass (indexes, reports and the embedder load), then ``--repeat`` passes over
the 10 questions. p50/p95 ms.

Context tokens per question — target <= 4k for community at k = 5 (the published EGD GraphRAG
contrast: ~3.8k for community k = 5 vs ~270k for local/global). Estimated tokens
(:func:`spr.fuse.estimate_tokens`, 3.2 characters a token: conservative) of the context the mode
hands the answer step, as :func:`spr.fuse.fuse` counts it with no budget cut: community k = 5, 10
(the reports alone, and with their cited chunks), entity n = 10, 15 (k = 5), local (packed to
``[communities] local_tokens``), vector k = 5; global = the map phase's prompts (every report of
the level in ``global_batch_tokens`` batches, one call each), computed for every question without
running the model, plus the reduce context of the real run. With ``--map-questions N`` the map runs for
real with ``--llm`` on the first N questions (``--map-batches B``: only the first B batches,
0 = all) and reports its calls, invalid outputs, backend-counted tokens and seconds (``--map-only``:
that alone).

Prints markdown tables; JSON to ``bench/out/community_modes.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = [
    "Which funds support coal regions?",
    "What does the European Climate Law require to reach climate neutrality by 2050?",
    "How are greenhouse gas emission reductions shared among Member States up to 2030?",
    "What does the LIFE programme finance?",
    "Which technologies count as net-zero technologies and how does the EU support their manufacturing?",
    "What must operators do before placing commodities linked to deforestation on the Union market?",
    "What must aviation fuel suppliers do under ReFuelEU Aviation?",
    "How are emissions and removals from land use and forestry accounted for?",
    "Which bodies advise on or monitor progress towards the Union's climate targets?",
    "What flexibilities can Member States use to meet their annual emission limits?",
]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --- the KB -------------------------------------------------------------------------------------------
def prepare(source: Path, work: Path, embed: str, rebuild: bool) -> str:
    """Copy ``source`` to ``work`` (once) and give it communities and reports; returns how."""
    from store.communities import REPORTS_INDEX
    from store.layout import KBLayout

    if rebuild and work.exists():
        shutil.rmtree(work)
    if not work.exists():
        shutil.copytree(source, work)
    toml = work / "policykb.toml"
    if not toml.exists():
        toml.write_text(f'[embed]\nmodel = "{embed}"\n', encoding="utf-8")
    if (KBLayout(work).index(REPORTS_INDEX) / "ids.json").is_file():
        return "reports already there"
    from core.config import load_config
    from store.layout import KBLayout as Layout
    from store.open import open_store

    config = load_config(kb_dir=work)
    store = open_store(config.store, Layout(work), config.kb.base_iri)
    started = time.perf_counter()
    try:
        try:
            from kgpipeline.derived import communities, reports
        except ImportError:
            summary = standin_reports(store, work, config)
            how = "stand-in (one community per document)"
        else:
            summary = communities.make_stage(config).run(store, work) + " | " + reports.make_stage(config).run(store, work)
            how = "kgpipeline stages communities + reports"
    finally:
        store.close()
    return f"{how} in {time.perf_counter() - started:.1f} s: {summary}"


def standin_reports(store, kb_dir: Path, config) -> str:
    """Where the real stages are missing: one level-0 community per document (its entities), a
    report from the first sentences of its chunks, a description per entity, both indexes."""
    from core.embed import make_embedder
    from core.text import sentence_spans
    from store.communities import (
        DESCRIPTIONS_INDEX,
        REPORTS_INDEX,
        Community,
        Finding,
        Report,
        community_iri,
        members_hash,
        write_communities,
        write_descriptions,
        write_report,
    )
    from store.layout import KBLayout
    from store.vectors import VectorIndex
    from store.vocab import DCTERMS, PKB, SKOS

    base = config.kb.base_iri
    rows = store.select(
        f"SELECT ?e ?c ?d ?title ?text WHERE {{ ?e <{PKB}mentionedIn> ?c . ?c <{PKB}partOfDocument> ?d ; <{PKB}text> ?text . "
        f"?d <{DCTERMS}title> ?title }}"
    ).rows
    labels = {r["e"].value: r["l"].value for r in store.select(f"SELECT ?e ?l WHERE {{ ?e <{PKB}mentionedIn> ?c ; <{SKOS}prefLabel> ?l }}").rows}
    docs: dict[str, dict[str, int]] = {}
    chunks: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    mentions: dict[str, list[str]] = {}
    for r in rows:
        e, c, d = r["e"].value, r["c"].value, r["d"].value
        docs.setdefault(e, {}).setdefault(d, 0)
        docs[e][d] += 1
        chunks.setdefault(d, {})[c] = r["text"].value
        titles[d] = r["title"].value
        mentions.setdefault(e, []).append(c)

    def first(text: str) -> str:
        spans = [text[a:b] for a, b in sentence_spans(text)]
        return next((s for s in spans if len(s.split()) >= 6 and not s.startswith("#")), "")

    members: dict[str, list[str]] = {}
    for e, counts in docs.items():
        members.setdefault(max(sorted(counts), key=counts.get), []).append(e)
    communities, reports = [], []
    for d, ms in sorted(members.items()):
        iri = community_iri(base, 0, ms).value
        communities.append(Community(iri, 0, None, tuple(sorted(ms))))
        findings = [Finding(s, (), (c,)) for c in sorted(chunks[d])[: config.communities.findings] if (s := first(chunks[d][c]))]
        summary = "Entities: " + ", ".join(sorted(labels.get(e, "") for e in ms)[:8]) + "."
        reports.append(Report(iri, titles[d][:120], summary, tuple(findings), "stand-in", 0, 0, 0.0, members_hash(ms)))
    descriptions = {e: f"{label}: {first(_text(chunks, mentions[e][0]))}" for e, label in labels.items()}
    write_communities(store, communities, base)
    for r in reports:
        write_report(store, r, base)
    write_descriptions(store, descriptions, base)
    embedder = make_embedder(config.embed, KBLayout(kb_dir).embed_cache)
    for name, ids, texts in ((REPORTS_INDEX, [r.community for r in reports], [r.text for r in reports]),
                             (DESCRIPTIONS_INDEX, sorted(descriptions), [descriptions[e] for e in sorted(descriptions)])):
        index = VectorIndex(embedder.dimension)
        index.add(ids, embedder.embed_many(texts))
        index.save(KBLayout(kb_dir).index(name))
    return f"{len(communities)} communities, {len(reports)} reports, {len(descriptions)} descriptions"


def _text(chunks: dict[str, dict[str, str]], chunk: str) -> str:
    return next((texts[chunk] for texts in chunks.values() if chunk in texts), "")


# --- measurements ---------------------------------------------------------------------------------------
def latency(kb, retrievers: dict, repeat: int) -> dict[str, dict[str, float]]:
    """p50/p95 of ``search`` per mode, the question embedded in the call ("cold") and, in a
    second timing of the same call, already embedded ("warm": the mode's own work alone)."""
    embedder = kb.embedder
    embedder.cache = None  # every cold call embeds its question

    def timed(retriever, question: str, k: int, warm: bool) -> float:
        embedder._recent.clear()
        if warm:
            embedder.embed(question)
        started = time.perf_counter()
        retriever.search(question, k)
        return (time.perf_counter() - started) * 1000.0

    for retriever, k in retrievers.values():  # warm-up: indexes, reports, model
        for q in QUESTIONS:
            timed(retriever, q, k, False)
    samples: dict[str, list[float]] = {}
    for _ in range(repeat):
        for q in QUESTIONS:
            for name, (retriever, k) in retrievers.items():
                samples.setdefault(f"{name}", []).append(timed(retriever, q, k, False))
                samples.setdefault(f"{name}, question pre-embedded", []).append(timed(retriever, q, k, True))
            embedder._recent.clear()
            started = time.perf_counter()
            embedder.embed(q)
            samples.setdefault("embed question alone", []).append((time.perf_counter() - started) * 1000.0)
    return {name: {"p50_ms": pct(v, 0.5), "p95_ms": pct(v, 0.95), "n": len(v)} for name, v in samples.items()}


def context_tokens(kb, community, entity10, entity15, local, vector, global_) -> dict[str, list[int]]:
    from spr.fuse import fuse

    def tokens(evidence) -> int:
        return fuse(evidence, 10**9).tokens

    rows: dict[str, list[int]] = {}

    def add(name: str, value: int) -> None:
        rows.setdefault(name, []).append(value)

    for q in QUESTIONS:
        for k in (5, 10):
            found = community.retrieve(q, k)
            add(f"community k={k} (reports)", tokens([e for e in found if e.source.endswith(":report")]))
            add(f"community k={k} (reports + cited chunks)", tokens(found))
            add(f"community k={k}: cited chunks kept (count, not tokens)", sum(e.source.endswith(":chunk") for e in found))
        for n, retriever in ((10, entity10), (15, entity15)):
            found = retriever.retrieve(q, 5)
            add(f"entity n={n}, k=5", tokens(found))
            add(f"entity n={n}, k=5: reports kept (count, not tokens)", sum(e.source.endswith(":report") for e in found))
        add(f"local (budget {local.budget})", local.build(q).tokens)
        add("vector k=5", tokens(vector.retrieve(q, 5)))
        for level, retriever in global_.items():
            add(f"global level {level}: map prompts, all {len(retriever.batches())} batches (estimated)", retriever.map_prompt_tokens(q))
    return rows


def run_map(kb, global_, questions: int, max_batches: int) -> list[dict]:
    from spr.fuse import fuse

    if max_batches:
        batches = global_.batches()[:max_batches]
        global_._batches = batches
    out = []
    for q in QUESTIONS[:questions]:
        result = global_.run(q)
        s = result.stats
        out.append({
            "question": q, "batches": s.batches, "calls": s.calls, "invalid": s.invalid, "points": s.points,
            "prompt_tokens": s.prompt_tokens, "completion_tokens": s.completion_tokens,
            "estimated_prompt_tokens": s.estimated_prompt_tokens, "seconds": round(s.seconds, 1),
            "reduce_context_tokens": fuse(result.evidence, 10**9).tokens,
            "top_points": [(p.score, p.text[:160]) for p in result.points[:3]],
        })
        print(f"map: {out[-1]}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", type=Path, default=Path("/tmp/work/kb-egd"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/work/kb-egd-modes"))
    ap.add_argument("--embed", default="all-MiniLM-L6-v2", help="[embed] model written to the copy's policykb.toml when it has none")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--map-questions", type=int, default=1)
    ap.add_argument("--map-batches", type=int, default=0, help="run only the first B map batches for real (0 = all)")
    ap.add_argument("--llm", default="smollm2-135m-instruct", help="[llm] model_path for the real map run")
    ap.add_argument("--map-only", action="store_true", help="skip latency and context tokens: only the real map run")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "community_modes.json")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["POLICYKB_LLM__MODEL_PATH"] = args.llm

    how = prepare(args.kb, args.work, args.embed, args.rebuild)
    print(f"KB {args.work}: {how}", flush=True)

    from spr.qa import KnowledgeBase
    from spr.retrieval.community import CommunityData, CommunityRetriever, EntityRetriever, make_community
    from spr.retrieval.global_search import make_global
    from spr.retrieval.local_search import make_local

    with KnowledgeBase.open(args.work) as kb:
        c = kb.config.communities
        data = CommunityData(kb.store, kb.config.kb_dir, c.level)
        community = make_community(kb)
        assert isinstance(community, CommunityRetriever)
        entity10 = EntityRetriever(data, kb.embedder, top_entities=10)
        entity15 = EntityRetriever(data, kb.embedder, top_entities=15)
        local = make_local(kb)
        vector = kb.retriever("vector")
        global_ = make_global(kb)
        levels: dict[int, int] = {}
        from spr.retrieval.global_search import GlobalRetriever
        from store.communities import read_communities

        for com in read_communities(kb.store):
            levels[com.level] = levels.get(com.level, 0) + 1
        per_level = {
            level: GlobalRetriever(CommunityData(kb.store, kb.config.kb_dir, level), lambda: kb.llm, batch_tokens=c.global_batch_tokens)
            for level in sorted(levels)
        }
        shape = {
            "communities per level": levels, "reports at level": len(data.reports), "level": c.level,
            "map batches": len(global_.batches()), "global_batch_tokens": c.global_batch_tokens,
            "descriptions": len(data.descriptions_index), "load average": os.getloadavg(),
        }
        print(f"shape: {shape}", flush=True)

        lat: dict = {}
        tokens: dict = {}
        if not args.map_only:
            lat = latency(kb, {"vector k=5": (vector, 5), "community k=5": (community, 5), "entity n=10 k=5": (entity10, 5),
                               "local (no LLM)": (local, 5)}, args.repeat)
            print(f"\nload average after: {os.getloadavg()}")
            print("\n| mode | p50 ms | p95 ms | calls |\n|---|---:|---:|---:|")
            for name, v in lat.items():
                print(f"| {name} | {v['p50_ms']:.1f} | {v['p95_ms']:.1f} | {v['n']} |")

            tokens = context_tokens(kb, community, entity10, entity15, local, vector, per_level)
            print("\n| context | mean tokens / question | min | max |\n|---|---:|---:|---:|")
            for name, values in tokens.items():
                print(f"| {name} | {statistics.mean(values):,.1f} | {min(values):,} | {max(values):,} |")

        maps = run_map(kb, global_, args.map_questions, args.map_batches) if args.map_questions else []
        if maps:
            print("\n| question | batches | calls | invalid | points | prompt tok (backend) | est. | completion tok | s |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for m in maps:
                print(f"| {m['question']} | {m['batches']} | {m['calls']} | {m['invalid']} | {m['points']} | {m['prompt_tokens']:,} | "
                      f"{m['estimated_prompt_tokens']:,} | {m['completion_tokens']:,} | {m['seconds']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"kb": str(args.work), "built": how, "shape": shape, "latency": lat, "tokens": tokens,
                                    "map": maps, "llm": args.llm, "questions": QUESTIONS}, indent=2), encoding="utf-8")
    print(f"\nJSON: {args.out}")


if __name__ == "__main__":
    main()
