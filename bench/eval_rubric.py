"""The rubric table of EGD GraphRAG's evaluation on a persona test set: every retrieval mode answers
the same generated questions with the embedded LLM, and the same model judges each answer alone.

    .venv/bin/python bench/eval_rubric.py --limit 8 --systems vector,dual,community,entity,local \\
        --out bench/out/rubric

The set is ``bench/personas/personas-eu.jsonl`` (written by ``policykb eval generate`` over
``eu_regulations_pypi``; quotes verified) and its KB is the EU-regulations KB that
``bench/eval_answers.py --set dev-eu`` builds (MiniLM by default, the same cache, so it is reused).
Judge scope: the rubric table's metrics only (``RubricJudge(ragas=False)``: comprehensiveness,
diversity, directness, empowerment — 3 runs each answer — answer relevance, semantic similarity,
factual correctness); ``--ragas`` adds faithfulness, context relevance and the judged citations
(~12 model calls per answer instead of ~8). No warm-up pass (it would double every LLM answer);
the LLM response cache stays on so a run cut short resumes, and the answers' latency is then only
meaningful on the first run. ``global`` is left out by default: its map phase reads every report of
a level (~7k prompt tokens per question at level 0 on this KB, ~14 minutes with the 1.5B model on
two cores; ``bench/bench_community_modes.py`` measures its tokens).

Writes ``report.md`` (with the rubric table, tokens per question and significance marks against the
first system), ``results.jsonl``, ``summary.json`` and the plots into ``--out``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.check_devset import corpus_path  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from core.llm import make_llm  # noqa: E402
from core.usage import UsageTracker  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval.datasets import default_data_dir, load_jsonl, sample  # noqa: E402
from spr.eval.plots import write_plots  # noqa: E402
from spr.eval.records import EvalSettings  # noqa: E402
from spr.eval.report import write_report  # noqa: E402
from spr.eval.rubric import RubricJudge  # noqa: E402
from spr.eval.runner import prepare_kb, run  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from store.layout import KBLayout  # noqa: E402

PERSONAS = ROOT / "bench" / "personas" / "personas-eu.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", type=Path, default=PERSONAS, help="a persona set over eu_regulations_pypi")
    ap.add_argument("--systems", default="vector,dual,community,entity,local", help="the first is the baseline")
    ap.add_argument("--limit", type=int, default=None, help="a seeded sample of the questions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-k", type=int, default=5, help="chunks (community: reports) retrieved per question")
    ap.add_argument("--embed", default="all-MiniLM-L6-v2")
    ap.add_argument("--embed-dtype", default=Config().embed.dtype, choices=("float32", "bfloat16", "auto"),
                    help="[embed] dtype (float32 reuses the KBs built before bfloat16 was the default)")
    ap.add_argument("--neighbours", type=int, default=None, help="[answer] llm_neighbours (default: the config's)")
    ap.add_argument("--ragas", action="store_true", help="also faithfulness, context relevance, judged citations")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "rubric")
    args = ap.parse_args()

    data_dir = default_data_dir()
    full = load_jsonl(args.set, corpus_path("eu_regulations", data_dir))
    # the dev set's KB: same corpus, same name, so prepare_kb reuses it
    dataset = replace(sample(full, args.limit, args.seed, "full"), name="eu_regulations")
    config = Config()
    config = config.model_copy(update={"embed": config.embed.model_copy(update={"model": args.embed, "dtype": args.embed_dtype})})
    if args.neighbours is not None:
        config.answer.llm_neighbours = args.neighbours
    started = time.perf_counter()
    kb_config, note = prepare_kb(dataset, config, user_cache_dir() / f"retrieval-{Path(args.embed).name}", ingest_summary, reindex=reindex_summary)
    print(note, flush=True)
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    settings = EvalSettings(systems, "llm", args.k, (2, args.k), warmup=False)
    references = {q.question: q.answers for q in dataset.questions if q.answers}
    with KnowledgeBase.open(kb_config) as kb:
        # the judge's calls are counted apart from the systems' (its own tracker)
        llm = make_llm(kb_config.llm, KBLayout(kb_config.kb_dir).llm_cache, tracker=UsageTracker())
        judge = RubricJudge(llm, kb.embedder, references, ragas=args.ragas)
        kb.ask(dataset.questions[0].question)  # load the embedder and indexes before timing
        kb.llm.complete("Say OK.", max_tokens=1)  # and the model, once

        def progress(system: str, done: int, total: int) -> None:
            print(f"  {system}: {done}/{total} ({time.perf_counter() - started:.0f} s)", flush=True)

        results = run(dataset, kb, settings, judge=judge, progress=progress)
    model = kb_config.llm.model_path if kb_config.llm.provider == "embedded" else kb_config.llm.model
    meta = {
        "questions": f"{len(dataset.questions)} of {len(full.questions)} ({args.set.name}"
        + (f", seeded sample --limit {args.limit}, seed {args.seed})" if args.limit else ")"),
        "systems": ", ".join(systems),
        "answers": f"llm ({model}), k = {args.k}",
        "judge": f"{model}, " + ("rubric + RAGAS" if args.ragas else "rubric table metrics only"),
        "KB": note,
        "wall time": f"{time.perf_counter() - started:.0f} s",
    }
    files = write_report(args.out, f"Persona set over eu_regulations_pypi: {len(dataset.questions)} questions", meta, results, settings)
    write_plots(args.out, results, settings, args.seed)
    print(files["report"].read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
