"""The ``policykb`` command line: parses arguments, calls the Python API, renders output.

Every PolicyKBError becomes one line on stderr and the error's exit code; nothing here holds
logic that the Python API does not also offer.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from pathlib import Path

import click

from policykb.config import CONFIG_FILENAME, Config, default_toml, load_config, resource_dir
from policykb.errors import InputError, PolicyKBError


class AppContext:
    """Per-invocation state: the config, and the store opened lazily (some commands need none)."""

    def __init__(self, config: Config):
        self.config = config
        self._store = None

    def store(self, read_only: bool = False):
        from store.open import open_store

        if self._store is None:
            self._store = open_store(self.config, read_only=read_only)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def one_line_errors(func):
    """Map PolicyKBError (and Ctrl-C) to a one-line message and a non-zero exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except PolicyKBError as exc:
            click.echo(f"error: {' '.join(str(exc).split())}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kb", "kb_dir", type=click.Path(file_okay=False, path_type=Path), help="KB directory (default: ./kb).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="TOML config file.")
@click.version_option(package_name="policykb")
@click.pass_context
@one_line_errors
def cli(ctx: click.Context, kb_dir: Path | None, config_path: Path | None) -> None:
    """policykb: policy documents → an RDF knowledge base → answers with evidence."""
    config = load_config(config_path, kb_dir if kb_dir is not None else _default_kb())
    app = AppContext(config)
    ctx.obj = app
    ctx.call_on_close(app.close)


def _default_kb() -> Path:
    return Path("kb")


def main() -> None:
    cli(prog_name="policykb")


# --- init / shapes ---------------------------------------------------------------------------
@cli.command()
@click.option("--no-ontologies", is_flag=True, help="Do not load the ontologies into the store.")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
@click.pass_obj
@one_line_errors
def init(app: AppContext, no_ontologies: bool, force: bool) -> None:
    """Create the KB directory, write the default config and load the ontologies."""
    kb = app.config.kb_dir
    kb.mkdir(parents=True, exist_ok=True)
    config_file = kb / CONFIG_FILENAME
    if config_file.exists() and not force:
        click.echo(f"kept existing {config_file} (use --force to overwrite)")
    else:
        config_file.write_text(default_toml(app.config), encoding="utf-8")
        click.echo(f"wrote {config_file}")
    store = app.store()  # creates the embedded store on disk (a remote one exists on its server)
    if not no_ontologies:
        from store.ontologies import load_ontologies

        loaded = load_ontologies(store, resource_dir(app.config.ontology.dir))
        for name, count in loaded:
            click.echo(f"loaded ontology {name}: {count} triples")
    click.echo(f"KB ready at {kb}")


@cli.command()
@click.pass_obj
@one_line_errors
def shapes(app: AppContext) -> None:
    """Regenerate shapes/generated/*.ttl from the ontologies."""
    from kgpipeline.shapes import write_shapes

    written = write_shapes(resource_dir(app.config.ontology.dir), resource_dir(app.config.ontology.shapes_dir))
    for path in written:
        click.echo(f"wrote {path}")


# --- load / export ---------------------------------------------------------------------------
@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", help="RDF syntax (ttl, nt, nq, trig, rdf, jsonld); default: by extension.")
@click.option("--graph", help="Named graph IRI for triples outside a graph (default: one graph per file).")
@click.pass_obj
@one_line_errors
def load(app: AppContext, files: tuple[Path, ...], fmt: str | None, graph: str | None) -> None:
    """Load RDF files into the KB (each file is checked completely before anything is written)."""
    from store.terms import named_node

    target = named_node(graph) if graph else None
    store = app.store()
    total = 0
    for index, path in enumerate(files, 1):
        started = time.perf_counter()
        count = store.load(path, fmt, target)
        elapsed = time.perf_counter() - started
        total += count
        rate = f", {count / elapsed:,.0f} quads/s" if elapsed > 0 else ""
        click.echo(f"[{index}/{len(files)}] {path}: {count:,} quads in {elapsed:.2f} s{rate}")
    click.echo(f"loaded {total:,} quads; the store now holds {store.count():,}")


@cli.command()
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", help="ttl, nt, nq or trig; default: by extension.")
@click.pass_obj
@one_line_errors
def export(app: AppContext, output: Path, fmt: str | None) -> None:
    """Write the KB to a file (N-Quads/TriG keep graphs; Turtle/N-Triples give the union graph)."""
    count = app.store(read_only=True).dump(output, fmt)
    click.echo(f"wrote {count:,} quads to {output}")


# --- ingest / status / delete ---------------------------------------------------------------
@cli.command()
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
    from kgpipeline.pipeline import build_controller
    from policykb.usage import UsageTracker

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

            summary = controller.ingest(list(paths), progress)
    finally:
        controller.close()
    for line in summary.lines():
        click.echo(line)
    if tracker.totals.requests:
        click.echo(tracker.summary())


@cli.command()
@click.argument("index", required=False)
@click.option("--no-cache", is_flag=True, help="Bypass the LLM response cache.")
@click.pass_obj
@one_line_errors
def reindex(app: AppContext, index: str | None, no_cache: bool) -> None:
    """Rebuild one derived index (e.g. weights, questions) or, without INDEX, all of them."""
    from kgpipeline.pipeline import derived_stages
    from policykb.usage import UsageTracker

    tracker = UsageTracker()
    for stage in derived_stages(app.config, tracker, False if no_cache else None, only=index):
        click.echo(f"{stage.name}: {stage.run(app.store(), app.config.kb_dir)}")
    if tracker.totals.requests:
        click.echo(tracker.summary())


@cli.command()
@click.pass_obj
@one_line_errors
def status(app: AppContext) -> None:
    """The ingest queue: every document with its state, counts and any skip reason."""
    from kgpipeline.controller import STATE_FILE
    from kgpipeline.state import IngestState

    state = IngestState(app.config.kb_dir / STATE_FILE)
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


@cli.command()
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


# --- query / stats ---------------------------------------------------------------------------
@cli.command()
@click.argument("query")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv", "tsv"]), default="table", show_default=True
)
@click.pass_obj
@one_line_errors
def sparql(app: AppContext, query: str, fmt: str) -> None:
    """Run a SPARQL query. QUERY is the text, @FILE, or - for stdin.

    Standard prefixes (pkb, rdf, rdfs, owl, xsd, skos, dcterms, prov, eli) need no declaration.
    """
    from store import results

    text = _read_query(query)
    result = app.store(read_only=True).query(with_prefixes(text))
    render = {
        "table": results.to_table,
        "json": results.to_json,
        "csv": results.to_delimited,
        "tsv": lambda r: results.to_delimited(r, "\t"),
    }[fmt]
    click.echo(render(result), nl=fmt in ("table", "json"))


def _read_query(query: str) -> str:
    if query == "-":
        return sys.stdin.read()
    if query.startswith("@"):
        path = Path(query[1:])
        if not path.is_file():
            raise InputError(f"no such query file: {path}")
        return path.read_text(encoding="utf-8")
    if not query.strip():
        raise InputError("empty query")
    return query


def with_prefixes(query: str) -> str:
    """Declare the well-known prefixes the query uses but does not declare.

    They go on the query's first line so that error positions keep their line numbers.
    """
    from store.vocab import PREFIXES

    declared = {m.lower() for m in re.findall(r"PREFIX\s+([\w-]*)\s*:", query, flags=re.IGNORECASE)}
    # Look for prefixed names outside IRIs and string literals only.
    code = re.sub(r"<[^<>\s]*>|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'", " ", query)
    missing = [
        f"PREFIX {p}: <{iri}>"
        for p, iri in PREFIXES.items()
        if p not in declared and re.search(rf"(?<![\w.:-]){p}:", code)
    ]
    return (" ".join(missing) + " " + query) if missing else query


@cli.command()
@click.pass_obj
@one_line_errors
def stats(app: AppContext) -> None:
    """Counts: quads, named graphs, and instances per class."""
    from store.stats import kb_stats

    info = kb_stats(app.store(read_only=True))
    click.echo(f"quads         {info.quads:,}")
    click.echo(f"named graphs  {info.named_graphs:,}")
    for name, count in info.instances_by_type:
        click.echo(f"  {name:<40} {count:,}")


# --- commands of other capabilities register here (one line each) ---------------------------
import policykb.commands_serve  # noqa: E402,F401 - `policykb serve`
import policykb.commands_spr  # noqa: E402,F401 - `policykb parse`, `policykb train-parser`
import policykb.commands_ask  # noqa: E402,F401 - `policykb ask`
import policykb.commands_eval  # noqa: E402,F401 - `policykb eval`
