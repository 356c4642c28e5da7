# whileai: two commands for a new user (README): `make demo` runs the offline loop, `make test`
# installs into .venv and runs the suite, lint and type check.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed

.PHONY: install demo test lint typecheck unit bench test-trl clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/wai quickstart

unit: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider whileai tests

lint: $(STAMP)
	$(VENV)/bin/ruff check whileai tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy whileai

test: unit lint typecheck

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
