"""KB commands: ``init``, ``shapes``, ``load``, ``export``, ``sparql``, ``stats``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from core.config import default_toml
from core.errors import InputError
from core.resources import resource_dir
from policykb.cli.app import AppContext, one_line_errors
from store.layout import KBLayout
from store.vocab import declare_prefixes


# --- init / shapes ---------------------------------------------------------------------------
@click.command()
@click.option("--no-ontologies", is_flag=True, help="Do not load the ontologies into the store.")
@click.option("--force", is_flag=True, help="Overwrite an existing config file.")
@click.pass_obj
@one_line_errors
def init(app: AppContext, no_ontologies: bool, force: bool) -> None:
    """Create the KB directory, write the default config and load the ontologies."""
    kb = app.config.kb_dir
    kb.mkdir(parents=True, exist_ok=True)
    config_file = KBLayout(kb).config_file
    if config_file.exists() and not force:
        click.echo(f"kept existing {config_file} (use --force to overwrite)")
    else:
        config_file.write_text(default_toml(app.config), encoding="utf-8")
        click.echo(f"wrote {config_file}")
    store = app.store()  # creates the embedded store on disk (a remote one exists on its server)
    if not no_ontologies:
        from store.ontologies import put_ontologies

        loaded = put_ontologies(store, resource_dir(app.config.ontology.dir))
        for name, count in loaded:
            click.echo(f"loaded ontology {name}: {count} triples")
    click.echo(f"KB ready at {kb}")


@click.command()
@click.pass_obj
@one_line_errors
def shapes(app: AppContext) -> None:
    """Regenerate shapes/generated/*.ttl from the ontologies."""
    from kgpipeline.shapes import write_shapes

    written = write_shapes(resource_dir(app.config.ontology.dir), resource_dir(app.config.ontology.shapes_dir))
    for path in written:
        click.echo(f"wrote {path}")


# --- load / export ---------------------------------------------------------------------------
@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", help="RDF syntax (ttl, nt, nq, trig, rdf, jsonld); default: by extension.")
@click.option("--graph", help="Named graph IRI for triples outside a graph (default: one graph per file).")
@click.option("--reindex", is_flag=True, help="Rebuild the derived indexes afterwards, so questions see what was loaded.")
@click.pass_obj
@one_line_errors
def load(app: AppContext, files: tuple[Path, ...], fmt: str | None, graph: str | None, reindex: bool) -> None:
    """Load RDF files into the KB (each file is checked completely before anything is written)."""
    from policykb.cli.ingest import run_derived_stages
    from store.freshness import mark_stale
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
    if total:
        # The derived indexes (entity labels, BM25, vectors, ...) know nothing of what was loaded.
        mark_stale(app.config.kb_dir, "policykb load " + " ".join(p.name for p in files))
        if reindex:
            run_derived_stages(app)
        else:
            click.echo("the derived indexes do not cover what was loaded: `policykb reindex` rebuilds them (or load with --reindex)")


@click.command()
@click.argument("output", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", help="ttl, nt, nq or trig; default: by extension.")
@click.pass_obj
@one_line_errors
def export(app: AppContext, output: Path, fmt: str | None) -> None:
    """Write the KB to a file (N-Quads/TriG keep graphs; Turtle/N-Triples give the union graph)."""
    count = app.store(read_only=True).dump(output, fmt)
    click.echo(f"wrote {count:,} quads to {output}")


# --- query / stats ---------------------------------------------------------------------------
@click.command()
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
    result = app.store(read_only=True).query(declare_prefixes(text))
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


@click.command()
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
