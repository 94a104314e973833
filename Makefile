# Two entry points for a fresh machine: `make demo` and `make test` (both set up first).
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test: setup
	$(PY) -m pytest

bench: setup
	$(PY) bench/bench_store.py

clean:
	rm -rf demo-kb kb bench/out .pytest_cache
