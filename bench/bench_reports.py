"""Benchmark: community reports for the eight-regulation EGD corpus (target: extractive reports
in <= 60 s), and the LLM writer on a few communities.

Works on a copy of an ingested KB (default ``/tmp/work/kb-egd``, embedded with MiniLM; the copy
goes to ``<source>-reports`` and the source is never written). Steps:

1. communities: the "communities" stage (hierarchical Leiden) when ``kgpipeline.derived.communities``
   is importable, else one community per Louvain community of the weights graph (said so);
2. the embedding model is loaded on its own (its load time is reported apart);
3. the "reports" stage, extractive: report count and the time split (read, reports, descriptions,
   embed), then a rerun of the unchanged KB (everything reused);
4. the LLM writer (:func:`kgpipeline.derived.reports.llm_report`, response cache off) on
   ``--llm-communities`` communities with the embedded model; tokens are printed with the seconds,
   since CPU contention with other jobs slows llama.cpp 5-30x;
5. one extractive and one LLM report verbatim (the same community).

    .venv/bin/python bench/bench_reports.py [--kb /tmp/work/kb-egd] [--llm-communities 3]
        [--model qwen2.5-coder-1.5b-instruct] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import load_config  # noqa: E402
from store.communities import Community, community_iri, read_communities, read_reports, write_communities  # noqa: E402
from store.layout import KBLayout  # noqa: E402
from store.oxigraph_store import OxigraphStore  # noqa: E402


def louvain_communities(store, base_iri: str) -> list[Community]:
    from kgpipeline.derived.surface_counts import read_corpus, read_labels, read_relation_pairs
    from kgpipeline.derived.weights import build_entity_graph, detect_communities

    nodes = sorted(read_labels(store))
    corpus = read_corpus(store)
    graph = build_entity_graph(nodes, read_relation_pairs(store), (c.mentioned for c in corpus))
    groups: dict[int, list[str]] = {}
    for node, c in zip(nodes, detect_communities(graph).membership.tolist()):
        groups.setdefault(c, []).append(node)
    return [Community(community_iri(base_iri, 0, m).value, 0, None, tuple(sorted(m))) for m in groups.values()]


def write_the_communities(store, config, kb: Path) -> str:
    try:
        from kgpipeline.derived import communities
    except ImportError:
        found = louvain_communities(store, config.kb.base_iri)
        write_communities(store, found, config.kb.base_iri)
        return f"FALLBACK (no kgpipeline.derived.communities): {len(found)} Louvain communities, one level"
    return "communities stage: " + communities.make_stage(config).run(store, kb)


def show(report) -> str:
    return report.text + f"\n\n(generated_by {report.generated_by}, {report.prompt_tokens} prompt + " \
        f"{report.completion_tokens} completion tokens, {report.seconds:.1f} s)"  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, default=Path("/tmp/work/kb-egd"))
    ap.add_argument("--embed-model", default="all-MiniLM-L6-v2", help="the embedder the KB was ingested with")
    ap.add_argument("--llm-communities", type=int, default=3)
    ap.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, help="also write the measurements here")
    args = ap.parse_args()

    kb = args.kb.with_name(args.kb.name + "-reports")
    shutil.rmtree(kb, ignore_errors=True)
    shutil.copytree(args.kb, kb)
    environ = {**os.environ, "POLICYKB_EMBED__MODEL": args.embed_model, "POLICYKB_LLM__MODEL_PATH": args.model,
               "POLICYKB_LLM__THREADS": str(args.threads)}  # fmt: skip
    config = load_config(kb_dir=kb, environ=environ)
    store = OxigraphStore(kb / "store")
    out: dict = {"kb": str(args.kb), "cpus": os.cpu_count(), "load_avg": os.getloadavg()[0]}
    try:
        t = time.perf_counter()
        out["communities"] = write_the_communities(store, config, kb)
        out["communities_s"] = time.perf_counter() - t
        print(out["communities"])

        from core.embed import make_embedder
        from kgpipeline.derived.reports import make_stage

        t = time.perf_counter()
        make_embedder(config.embed, None).embed("warm up")  # the model loads once per process
        out["embed_model_load_s"] = time.perf_counter() - t
        stage = make_stage(config)
        t = time.perf_counter()
        out["extractive_summary"] = stage.run(store, kb)
        out["extractive_s"] = time.perf_counter() - t
        out["extractive_timings"], out["extractive_counts"] = stage.timings, stage.counts
        print(f"embedding model load {out['embed_model_load_s']:.1f} s (not in the stage times)")
        print(f"extractive: {out['extractive_summary']}\n  total {out['extractive_s']:.1f} s")
        t = time.perf_counter()
        out["rerun_summary"] = stage.run(store, kb)
        out["rerun_s"] = time.perf_counter() - t
        print(f"rerun unchanged: {out['rerun_summary']}\n  total {out['rerun_s']:.1f} s")

        reports = {r.community: r for r in read_reports(store)}
        communities = [c for c in read_communities(store) if c.iri in reports]
        # A mid-sized community of the finest level with a relation-rich report shows both writers best.
        level = max(c.level for c in communities)
        pool = sorted((c for c in communities if c.level == level),
                      key=lambda c: (-sum(len(f.entities) >= 2 for f in reports[c.iri].findings), abs(len(c.members) - 8), c.iri))  # fmt: skip
        chosen = pool[: args.llm_communities]
        if chosen:
            print("\n--- extractive report, verbatim ---\n" + show(reports[chosen[0].iri]))
        if args.llm_communities:
            from core.llm import make_llm
            from kgpipeline.derived.report_writers import gather, read_view
            from kgpipeline.derived.reports import llm_report

            llm = make_llm(config.llm, None, cache=False)  # measured, not served from a cache
            t = time.perf_counter()
            llm.llama  # noqa: B018 - load the weights before timing the reports
            out["llm_load_s"] = time.perf_counter() - t
            view = read_view(store)
            out["llm"] = []
            for i, c in enumerate(chosen):
                try:
                    report = llm_report(view, gather(view, c), llm, config.communities.findings)
                except Exception as exc:  # noqa: BLE001 - reported, the stage would fall back
                    out["llm"].append({"community": c.iri, "members": len(c.members), "error": str(exc)})
                    print(f"LLM {i + 1}: {len(c.members)} members: FAILED ({exc}); the stage falls back to extractive")
                    continue
                row = {"community": c.iri, "members": len(c.members), "seconds": report.seconds,
                       "prompt_tokens": report.prompt_tokens, "completion_tokens": report.completion_tokens,
                       "findings": len(report.findings)}  # fmt: skip
                out["llm"].append(row)
                print(f"LLM {i + 1}: {len(c.members)} members, {report.prompt_tokens} prompt + "
                      f"{report.completion_tokens} completion tokens, {report.seconds:.1f} s, "
                      f"{len(report.findings)} findings")  # fmt: skip
                if i == 0:
                    out["llm_report"] = show(report)
            print(f"LLM model {llm.model_id}, load {out['llm_load_s']:.1f} s, threads {args.threads}")
            if "llm_report" in out:
                print("\n--- LLM report (same community), verbatim ---\n" + out["llm_report"])
    finally:
        store.close()
    out["indexes"] = sorted(p.name for p in KBLayout(kb).indexes.iterdir())
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
