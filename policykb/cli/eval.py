"""``policykb eval``: parse options, call :func:`spr.eval.harness.evaluate`, print where the report is.
``policykb eval generate``: a persona test set from a KB's chunks (:func:`spr.eval.personas.generate_file`).

``eval`` is a group that runs itself when no subcommand follows (``policykb eval --dataset ...``
as before). The shell hands the harness :func:`kgpipeline.pipeline.ingest_summary` as its ``ingest`` callable
(``spr`` does not import ``kgpipeline``; the shell wires them together).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from core.config import MAX_K
from policykb.cli.app import AppContext, one_line_errors


@click.group("eval", invoke_without_command=True)
@click.option("--dataset", help="hotpotqa, musique, squad2, policyqa, rag-eurlex, pathquestion (= pq-2h), pq-3h, pql-2h, pql-3h, or a .jsonl file of your own.")
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
              help="Also score with the [llm] model as judge: faithfulness, answer relevance, context relevance, citation recall/precision "
                   "with the model deciding support, the 1-4 rubric (comprehensiveness, diversity, directness, empowerment; 3 runs), "
                   "semantic similarity and factual correctness against the reference (default: [eval] judge).")
@click.option("--rebuild", is_flag=True, help="Rebuild the dataset's KB even when the cached one is current.")
@click.option("--no-plots", is_flag=True, help="Skip the PNG figures.")
@click.pass_context
@one_line_errors
def eval_command(
    ctx: click.Context, dataset: str | None, corpus: Path | None, systems: str | None, limit: int | None, corpus_scope: str, seed: int | None,
    answer: str | None, k: int | None, out_dir: Path | None, data_dir: Path | None, cache_dir: Path | None,
    judge: bool | None, rebuild: bool, no_plots: bool,
) -> None:
    """Compare retrieval systems on a QA dataset with gold answers and passages.

    Each dataset's corpus is ingested once into its own KB (<cache>/eval/<dataset>/kb, reused while
    the corpus and the build settings are unchanged). Every system answers every question with the
    same generator and budgets. Writes report.md (tables per metric group, significance marks),
    results.jsonl (one line per system and question), summary.json, metrics.png, cost_quality.png and
    correlogram.png.

    Metrics: Recall@k and MRR@k against gold passages, context precision/recall, SQuAD EM/F1,
    accuracy (answer contains a gold answer), token recall, ROUGE-1/2/L, K-Precision, Hits@1
    (structured answers); ALCE citation recall and precision (is each sentence supported by what it
    cites, is each citation needed; checked by word coverage, cosine and numbers at [answer]
    min_support); abstention as a classification (Abst-P: abstentions that were on unanswerable
    questions, Abst-R: unanswerable questions abstained on, FalseAbst: answerable questions
    abstained on); LLM calls, tokens, latency p50/p95. With --judge also RAGAS-style faithfulness
    (claims of the answer without its citation markers), answer relevance, context relevance, and
    citation recall/precision with the judge model deciding support, and the rubric table
    (comprehensiveness, diversity, directness, empowerment rated 1-4 per answer alone, normalized,
    3 runs; semantic similarity and factual correctness against the reference; tokens per question;
    Shapiro-Wilk, then paired t-test or Wilcoxon vs the baseline, Benjamini-Hochberg).

    `policykb eval generate` writes a persona test set from a KB (see its --help).
    """
    if ctx.invoked_subcommand is not None:
        if dataset is not None:
            raise click.UsageError(f"the options of `eval` do not apply to `eval {ctx.invoked_subcommand}`")
        return
    if dataset is None:
        raise click.UsageError("Missing option '--dataset'.")
    app: AppContext = ctx.obj
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


@eval_command.command("generate")
@click.option("--kb", "kb_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="KB to generate from, opened read-only (default: the global --kb).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The test set to write (JSONL).")
@click.option("--per-persona", type=click.IntRange(1), default=2, show_default=True, help="Questions per persona and hop type.")
@click.option("--seed", type=int, help="Chunk sampling seed (default: [eval] seed).")
@click.option("--hops", default="single,multi", show_default=True, help="Hop types, comma-separated: single, multi.")
@click.option("--personas", help="Personas, comma-separated (default: all seven).")
@click.option("--cosine", type=click.FloatRange(0, 1), help="Also drop questions this close (embedding cosine) to a kept one.")
@click.option("--stats", "stats_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the statistics as JSON.")
@click.pass_obj
@one_line_errors
def generate_command(
    app: AppContext, kb_dir: Path | None, out: Path, per_persona: int, seed: int | None, hops: str, personas: str | None,
    cosine: float | None, stats_path: Path | None,
) -> None:
    """Generate a persona test set from a KB's chunks with the [llm] model.

    Seven personas (policymaker, academic researcher, climate advocacy worker, general citizen,
    industry representative, journalist, local government official) each get PER_PERSONA
    single-hop questions (one chunk) and multi-hop ones (two chunks sharing an entity or keyword,
    else of one document), with a reference answer and the quotes it rests on. Every quote is
    verified to be a verbatim substring of its chunk; items without one are dropped, and so are
    duplicate questions. The JSONL runs with `policykb eval --dataset FILE --corpus <the KB's corpus>`.
    Prints the statistics per persona and hop type.
    """
    import json

    from core.config import load_config
    from spr.eval.harness import parse_list
    from spr.eval.personas import generate_file, stats_markdown

    config = load_config(kb_dir=kb_dir) if kb_dir is not None else app.config

    def progress(done: int, total: int) -> None:
        click.echo(f"  {done}/{total}", err=True)

    stats = generate_file(
        config, out, per_persona=per_persona, seed=app.config.eval.seed if seed is None else seed, hops=parse_list(hops),
        personas=parse_list(personas) if personas else None, cosine=cosine, progress=progress,
    )
    if stats_path is not None:
        stats_path.write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    click.echo(stats_markdown(stats))
    click.echo(f"wrote {stats['total']} questions to {out}")
