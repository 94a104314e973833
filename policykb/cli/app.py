"""The ``policykb`` command group, its per-invocation context and the one error mapping.

Every PolicyKBError becomes one line on stderr and the error's exit code; nothing here holds
logic that the Python API does not also offer.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from core.config import Config, load_config
from core.errors import PolicyKBError


class AppContext:
    """Per-invocation state: the config, and the store opened lazily (some commands need none)."""

    def __init__(self, config: Config):
        self.config = config
        self._store = None

    def store(self, read_only: bool = False):
        from store.layout import KBLayout
        from store.open import open_store

        if self._store is None:
            self._store = open_store(self.config.store, KBLayout(self.config.kb_dir), self.config.kb.base_iri, read_only=read_only)
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
