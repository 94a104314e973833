"""Indexing commands: ``ingest``, ``reindex``, ``status``, ``delete``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from policykb.cli.app import AppContext, one_line_errors
from store.layout import KBLayout


# --- ingest / status / delete ---------------------------------------------------------------
@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--category", type=click.Choice(["general-policy", "legal-regulation", "standard"]), help="Force a category.")
@click.option("--extractor", type=click.Choice(["lexicon", "llm"]), help="Override [ingest] extractor.")
@click.option("--no-cache", is_flag=True, help="Bypass the LLM response cache.")
@click.pass_obj
@one_line_errors
def ingest(app: AppContext, paths: tuple[Path, ...], category: str | None, extractor: str | None, no_cache: bool) -> None:
    """Ingest documents (files or folders: PDF, HTML, DOCX, Markdown, text, JSONL).

    Unchanged documents are skipped, changed ones replaced; with no PATHS, resume an interrupted run.
    """
    from core.usage import UsageTracker
    from kgpipeline.pipeline import build_controller

    if category:
        app.config.ingest.category = category
    if extractor:
        app.config.ingest.extractor = extractor
    app.config.kb_dir.mkdir(parents=True, exist_ok=True)
    tracker = UsageTracker()
    controller = build_controller(app.config, app.store(), tracker, llm_cache=False if no_cache else None)
    try:
        with click.progressbar(length=1, label="ingesting", file=sys.stderr, show_pos=True) as bar:

            def progress(source: str, done: int, total: int) -> None:
                bar.length = total
                bar.update(done - bar.pos)

            def on_stage(name: str, number: int, total: int) -> None:
                # Embedding a large KB takes minutes: say which derived index is being built.
                if number == 1:
                    bar.render_finish()  # end the bar's line on a terminal
                click.echo(f"building derived index {number}/{total}: {name} ...", err=True)

            summary = controller.ingest(list(paths), progress, on_stage)
    finally:
        controller.close()
    for line in summary.lines():
        click.echo(line)
    if tracker.totals.requests:
        click.echo(tracker.summary())
    if app.config.spr.train_on_ingest and (summary.added or summary.updated):
        click.echo(f"parser: {_refresh_parser(app)}")


def _refresh_parser(app: AppContext) -> str:
    from spr.parsing.refresh import refresh_parser

    return refresh_parser(app.store(), app.config.kb_dir, app.config.spr, app.config.spr.train_budget_s).line()


@click.command()
@click.argument("index", required=False)
@click.option("--no-cache", is_flag=True, help="Bypass the LLM response cache.")
@click.pass_obj
@one_line_errors
def reindex(app: AppContext, index: str | None, no_cache: bool) -> None:
    """Rebuild one derived index (e.g. weights, questions) or, without INDEX, all of them.

    ``parser`` brings the LoRA parser up to date with the KB instead (within [spr] train_budget_s;
    an unfinished run resumes next time)."""
    if index == "parser":
        click.echo(f"parser: {_refresh_parser(app)}")
        return
    run_derived_stages(app, index, no_cache)


def run_derived_stages(app: AppContext, index: str | None = None, no_cache: bool = False) -> None:
    """Rebuild one derived index, or all of them (which makes them cover the store again)."""
    from core.usage import UsageTracker
    from kgpipeline.pipeline import derived_stages
    from store.freshness import mark_fresh

    tracker = UsageTracker()
    for stage in derived_stages(app.config, tracker, False if no_cache else None, only=index):
        click.echo(f"{stage.name}: {stage.run(app.store(), app.config.kb_dir)}")
    if index is None:
        mark_fresh(app.config.kb_dir)
    if tracker.totals.requests:
        click.echo(tracker.summary())


@click.command()
@click.pass_obj
@one_line_errors
def status(app: AppContext) -> None:
    """The ingest queue: every document with its state, counts and any skip reason."""
    from kgpipeline.state import IngestState

    state = IngestState(KBLayout(app.config.kb_dir).state)
    try:
        docs = state.all()
        by_status: dict[str, int] = {}
        for d in docs:
            by_status[d.status] = by_status.get(d.status, 0) + 1
        click.echo(", ".join(f"{n} {s}" for s, n in sorted(by_status.items())) or "no documents")
        for d in docs:
            extra = f"  ({d.error})" if d.error else ""
            click.echo(
                f"{d.status:<8} {d.doc_id:<40} {d.category:<17} chunks {d.chunks:>4}  triples {d.triples:>6}  "
                f"conflicts {d.conflicts:>3}{extra}"
            )
        for source, reason in state.skipped_sources():
            click.echo(f"skipped  {source}  ({reason})")
    finally:
        state.close()


@click.command()
@click.argument("document")
@click.pass_obj
@one_line_errors
def delete(app: AppContext, document: str) -> None:
    """Remove a document (by id or source path) and everything derived from it."""
    from kgpipeline.pipeline import build_controller

    controller = build_controller(app.config, app.store())
    try:
        doc_id = controller.delete(document)
        click.echo(f"deleted {doc_id}")
        for line in controller.run_stages():  # the derived indexes must forget it too
            click.echo(line)
    finally:
        controller.close()
