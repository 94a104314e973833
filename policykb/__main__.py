"""``python -m policykb`` runs the CLI (the same as the ``policykb`` console script)."""

from policykb.cli import main

main()
