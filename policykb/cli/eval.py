"""``policykb eval``: parse options, call :func:`spr.eval.harness.evaluate`, print where the report is.

The shell hands the harness :func:`kgpipeline.pipeline.ingest_summary` as its ``ingest`` callable
(``spr`` does not import ``kgpipeline``; the shell wires them together).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from core.config import MAX_K
from policykb.cli.app import AppContext, one_line_errors


@click.command("eval")
@click.option("--dataset", required=True, help="hotpotqa, musique, squad2, policyqa, rag-eurlex, pathquestion (= pq-2h), pq-3h, pql-2h, pql-3h, or a .jsonl file of your own.")
@click.option("--corpus", type=click.Path(exists=True, path_type=Path), help="For a .jsonl set: documents (file or folder) to ingest; default: the set's 'contexts'.")
@click.option("--systems", help="Retrieval modes, comma-separated; the first is the baseline of the significance marks (default: [eval] systems = vector,naive-kg,spr,questions,dual).")
@click.option("--limit", type=click.IntRange(1), help="Evaluate a seeded random sample of N questions (the corpus stays whole).")
@click.option("--corpus-scope", type=click.Choice(["full", "pool"]), default="full", show_default=True,
              help="pool: ingest only the sampled questions' own passages (HotpotQA/MuSiQue gold + distractors): smaller and easier than the full corpus.")
@click.option("--seed", type=int, help="Sampling and bootstrap seed (default: [eval] seed).")
@click.option("--answer", type=click.Choice(["extractive", "llm"]), help="Generator for every system (default: [answer] answer).")
@click.option("-k", "k", type=click.IntRange(1, MAX_K), help="Chunks retrieved per question, the same for every system (default: [eval] k = 10).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: eval-out/<dataset>).")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), help="Public data folder (default: [eval] data_dir, else ../shared/data).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Where dataset KBs are cached (default: [eval] cache_dir, else ~/.cache/policykb).")
@click.option("--judge/--no-judge", default=None,
              help="Also score with the [llm] model as judge: faithfulness, answer relevance, context relevance, and citation recall/precision "
                   "with the model deciding support (default: [eval] judge).")
@click.option("--rebuild", is_flag=True, help="Rebuild the dataset's KB even when the cached one is current.")
@click.option("--no-plots", is_flag=True, help="Skip the PNG figures.")
@click.pass_obj
@one_line_errors
def eval_command(
    app: AppContext, dataset: str, corpus: Path | None, systems: str | None, limit: int | None, corpus_scope: str, seed: int | None,
    answer: str | None, k: int | None, out_dir: Path | None, data_dir: Path | None, cache_dir: Path | None,
    judge: bool | None, rebuild: bool, no_plots: bool,
) -> None:
    """Compare retrieval systems on a QA dataset with gold answers and passages.

    Each dataset's corpus is ingested once into its own KB (<cache>/eval/<dataset>/kb, reused while
    the corpus and the build settings are unchanged). Every system answers every question with the
    same generator and budgets. Writes report.md (tables per metric group, significance marks),
    results.jsonl (one line per system and question), summary.json, metrics.png and cost_quality.png.

    Metrics: Recall@k and MRR@k against gold passages, context precision/recall, SQuAD EM/F1,
    accuracy (answer contains a gold answer), token recall, ROUGE-1/2/L, K-Precision, Hits@1
    (structured answers); ALCE citation recall and precision (is each sentence supported by what it
    cites, is each citation needed; checked by word coverage, cosine and numbers at [answer]
    min_support); abstention as a classification (Abst-P: abstentions that were on unanswerable
    questions, Abst-R: unanswerable questions abstained on, FalseAbst: answerable questions
    abstained on); LLM calls, tokens, latency p50/p95. With --judge also RAGAS-style faithfulness
    (claims of the answer without its citation markers), answer relevance, context relevance, and
    citation recall/precision with the judge model deciding support.
    """
    from spr.eval.harness import evaluate, settings_from, summary_lines
    from spr.eval.records import EvalRequest

    cfg = app.config.eval
    name = Path(dataset).stem if dataset.endswith((".jsonl", ".ndjson")) else dataset
    request = EvalRequest(
        dataset=dataset,
        out_dir=out_dir or Path("eval-out") / name,
        settings=settings_from(app.config, systems, answer, k),
        corpus=corpus,
        limit=limit,
        corpus_scope=corpus_scope,
        seed=cfg.seed if seed is None else seed,
        data_dir=data_dir or (Path(cfg.data_dir) if cfg.data_dir else None),
        cache_dir=cache_dir or (Path(cfg.cache_dir) if cfg.cache_dir else None),
        judge=cfg.judge if judge is None else judge,
        rebuild=rebuild,
        plots=not no_plots,
    )

    def progress(system: str, done: int, total: int) -> None:
        if done == total or done % 10 == 0:
            click.echo(f"  {system}: {done}/{total}", err=True)

    from kgpipeline.pipeline import ingest_summary, reindex_summary

    outcome = evaluate(
        app.config, request, ingest_summary, progress, log=lambda line: click.echo(line, err=True), reindex=reindex_summary
    )
    for line in summary_lines(outcome):
        click.echo(line)
    sys.stdout.flush()
