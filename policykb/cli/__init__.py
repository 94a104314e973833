"""The ``policykb`` command line: parses arguments, calls the Python API, renders output.

Every PolicyKBError becomes one line on stderr and the error's exit code; nothing here holds
logic that the Python API does not also offer. Each command family is one module; they are
registered here, explicitly, so importing a module has no side effects on the group.
"""

from __future__ import annotations

from policykb.cli import ask, eval, ingest, kb, parser, serve
from policykb.cli.app import AppContext, cli, one_line_errors

for _command in (
    kb.init,
    kb.shapes,
    kb.load,
    kb.export,
    kb.sparql,
    kb.stats,
    ingest.ingest,
    ingest.reindex,
    ingest.status,
    ingest.delete,
    ask.ask,
    parser.parse_command,
    parser.train_parser_command,
    serve.serve,
    eval.eval_command,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="policykb")


__all__ = ["AppContext", "cli", "main", "one_line_errors"]
