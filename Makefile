# Two entry points for a fresh machine: `make demo` and `make test` (both set up first).
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test: setup lint
	$(PY) -m pytest

# Lint and layer contracts: ruff's small rule set, then import-linter ([tool.importlinter]).
lint: setup
	$(VENV)/bin/ruff check --no-cache .
	$(VENV)/bin/lint-imports --no-cache

bench: setup
	$(PY) bench/bench_store.py

clean:
	rm -rf demo-kb kb bench/out .pytest_cache
