"""``policykb serve``: the HTTP server (SPARQL endpoint, QA API, web page) on one port."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import click

from core.config import load_config
from policykb.cli.app import AppContext, one_line_errors


@click.command()
@click.option("--host", help="Interface to bind (default: [server] host, 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), help="TCP port (default: [server] port, 8000).")
@click.option("--access-log", is_flag=True, help="Log every request (off by default: it costs time per query).")
@click.option(
    "--warm-up/--no-warm-up",
    default=None,
    help="Load the answering models at start, in the background (default: [server] warm_up, on).",
)
@click.option(
    "--kb", "kb_dir", type=click.Path(file_okay=False, path_type=Path), help="KB directory (same as the global --kb)."
)
@click.pass_obj
@one_line_errors
def serve(
    app: AppContext, host: str | None, port: int | None, access_log: bool, warm_up: bool | None, kb_dir: Path | None
) -> None:
    """Serve the SPARQL 1.1 endpoint (/sparql), the QA API (/ask) and the web page (/).

    The server holds the embedded store open: while it runs, write through SPARQL Update or the
    Graph Store Protocol (needs [server] update_token_env), or stop it before `policykb load`.
    """
    import uvicorn

    from policykb.server.app import create_app

    if kb_dir is not None:
        app.close()
        app = AppContext(load_config(None, kb_dir))
    config = app.config
    if host:
        config.server.host = host
    if port is not None:
        config.server.port = port
    if warm_up is not None:
        config.server.warm_up = warm_up
    _log_to_stderr()
    application = create_app(config, app.store())
    where = f"http://{config.server.host}:{config.server.port}"
    click.echo(f"serving {config.kb_dir} at {where}/ (SPARQL {where}/sparql, API docs {where}/docs)")
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal: SIGINT becomes
    # KeyboardInterrupt, and this handler turns SIGTERM into SystemExit, so that the store is closed
    # below instead of the process being killed.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    code = 0
    try:
        uvicorn.run(
            application,
            host=config.server.host,
            port=config.server.port,
            log_level="info",
            access_log=access_log,
            timeout_graceful_shutdown=5,
        )
    except KeyboardInterrupt:
        code = 130
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    finally:
        app.close()  # writes have committed (the writer pool was drained); the store is flushed
    abandoned = application.state.policykb.reads.running
    if abandoned:
        # A timed-out query cannot be interrupted, and the interpreter would wait for its thread
        # at exit; it only reads, so leaving now loses nothing.
        click.echo(f"leaving {abandoned} abandoned quer{'y' if abandoned == 1 else 'ies'} behind", err=True)
        sys.stderr.flush()
        os._exit(code)
    if code:
        sys.exit(code)


def _log_to_stderr() -> None:
    """The server's own lines (e.g. "answering API ready in 9.8 s") beside uvicorn's, in its style."""
    logger = logging.getLogger("policykb")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(0)
