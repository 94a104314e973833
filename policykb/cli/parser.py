"""CLI commands of the semantic parsing retriever: ``policykb parse`` and ``policykb train-parser``.

Thin: they build the retriever / trainer from the configuration and render the typed results.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click

from policykb.cli.app import AppContext, one_line_errors
from store.layout import KBLayout


def _retriever(app: AppContext, parser_kind: str | None):
    from core.embed import make_embedder
    from spr.retrieval.semantic_parsing import SemanticParsingRetriever

    config = app.config.spr
    if parser_kind:
        config = config.model_copy(update={"parser": parser_kind})
    embedder = make_embedder(app.config.embed, KBLayout(app.config.kb_dir).embed_cache)
    return SemanticParsingRetriever(app.store(read_only=True), embedder, app.config.kb_dir, config)


@click.command("parse")
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the whole result as JSON.")
@click.option("--explain", is_flag=True, help="Also list entity and relation candidates with their scores.")
@click.option("--parser", "parser_kind", type=click.Choice(["auto", "rules", "lora"]), help="Override [spr] parser.")
@click.pass_obj
@one_line_errors
def parse_command(app: AppContext, question: str, as_json: bool, explain: bool, parser_kind: str | None) -> None:
    """Parse QUESTION to an S-expression, ground it, run the SPARQL and show the triples."""
    result = _retriever(app, parser_kind).retrieve(question)
    if as_json:
        click.echo(json.dumps(asdict(result), indent=2, ensure_ascii=False, default=str))
        return
    click.echo(f"parser      {result.parser}" + ("" if result.parser == "lora" else " (no trained adapter or forced)"))
    click.echo(f"s-expr      {result.sexpr or '(none)'}")
    click.echo(f"grounded    {result.grounded or '(none)'}")
    if result.sparql:
        click.echo("sparql")
        click.echo("\n".join("    " + line for line in result.sparql.splitlines()))
    if result.count is not None:
        click.echo(f"count       {result.count}")
    for a in result.answers:
        click.echo(f"answer      {a.label}" + ("" if a.is_literal else f"  <{a.value}>"))
    for f in result.triples:
        click.echo(f"triple      {f.subject_label} | {f.predicate_label} | {f.object_label}")
        for g in f.graphs:
            click.echo(f"  from      <{g}>")
    if not result.found:
        click.echo(f"no answer   {result.note}")
    if explain:
        for e in result.entities:
            click.echo(
                f"entity      [{e.label}] → {e.name}  sim {e.similarity:.3f} × weight {e.weight:.3f} = {e.score:.3f}"
                f"  (surface {e.surface!r})"
            )
        for r in result.relations:
            flip = ", flipped" if r.flipped else ""
            click.echo(f"relation    [{r.label}] → {r.name}  sim {r.similarity:.3f} score {r.score:.3f}{flip}")
        click.echo(f"variants    {result.variants_tried} tried; weights {'on' if result.weights_used else 'absent'}")
    click.echo("timings     " + ", ".join(f"{k} {v:.0f} ms" for k, v in result.timings_ms.items()))


@click.command("train-parser")
@click.option("--steps", type=int, help="Optimizer steps (default: [spr] train_steps).")
@click.option("--per-form", type=int, default=2, show_default=True, help="Phrasings per fact and question form.")
@click.pass_obj
@one_line_errors
def train_parser_command(app: AppContext, steps: int | None, per_form: int) -> None:
    """Synthesize questions from the ontology and KB, train the LoRA parser, report dev exact match."""
    from spr.parsing.synth import read_dates, read_facts, split_dev, synthesize
    from spr.parsing.train import train_parser, training_device
    from store.vocabulary import read_terms

    store = app.store(read_only=True)
    config = app.config.spr
    examples = synthesize(
        read_facts(store), read_dates(store), read_terms(store, "property"), read_terms(store, "class"),
        seed=config.seed, per_form=per_form,
    )
    train, dev = split_dev(examples, seed=config.seed)
    click.echo(f"synthesized {len(examples)} questions: {len(train)} train, {len(dev)} dev (split by S-expression)")
    click.echo(f"training on {training_device()}")

    def progress(step: int, total: int, loss: float) -> None:
        if step == 1 or step % 10 == 0 or step == total:
            click.echo(f"step {step}/{total}  loss {loss:.4f}", err=True)
            sys.stderr.flush()

    report = train_parser(train, dev, KBLayout(app.config.kb_dir).parser, config, steps=steps, progress=progress)
    click.echo(
        f"trained {report.steps} steps in {report.train_seconds:.0f} s: loss {report.first_loss:.3f} → "
        f"{report.final_loss:.3f}; dev exact match {report.dev_exact_match:.1%} on {report.dev_examples}"
    )
    click.echo(f"adapter saved in {report.adapter_dir}")
