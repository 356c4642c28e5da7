# whileai: two commands for a new user (README): `make demo` runs the offline loop, `make test`
# installs into .venv and runs the suite, lint and type check.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed

.PHONY: install demo test lint typecheck unit bench test-trl test-train torch-cpu test-store-compat test-notebook test-ray test-floor clean \
	bench-wai131 install-sandbox test-browser docs-screenshots docs docs-test test-client131

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	@echo "installing whileai and its dependencies into $(VENV) (a few minutes the first time; pip lists each package)"
	$(PIP) install --progress-bar on -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The unit suite runs on every core, at most four workers (pytest-xdist; each worker holds its own
# imports and session fixtures, about 300 MB). `make test TEST_WORKERS=` runs it in one process.
TEST_WORKERS ?= -n auto --maxprocesses 4

demo: $(STAMP)
	$(VENV)/bin/wai quickstart

# bubblewrap for CodeExec's sandbox (docs/security.md): installed with apt-get when missing and
# we are root; skipped with a note otherwise (the namespaces launcher needs nothing installed).
install-sandbox:
	@if command -v bwrap >/dev/null 2>&1; then echo "install-sandbox: bwrap is installed"; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "install-sandbox: bwrap is missing and apt-get (as root) is not available; the bwrap escape tests will skip"; \
	else (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) || \
		echo "install-sandbox: apt-get could not install bubblewrap; the bwrap escape tests will skip"; fi

unit: $(STAMP) install-sandbox
	$(PY) -m pytest -p no:cacheprovider $(TEST_WORKERS) --ignore=tests/exporters/test_trl.py --ignore=tests/train --ignore=tests/browser --ignore=tests/engines --ignore=tests/docs/test_docs_run.py --ignore=tests/docs/test_recipe_programs.py --ignore=tests/platform/test_client131.py whileai tests

lint: $(STAMP)
	$(VENV)/bin/ruff check whileai tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy whileai

test: unit lint typecheck

# The proof against the real consumer: our TRL rows through TRL's own data utilities and trainer.
# torch's CPU wheel first (a plain `pip install trl` would pull a CUDA build of several GB). If the
# extra cannot be installed (no registry), the tests skip and say so rather than fail the build.
torch-cpu: $(STAMP)
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install -q torch==2.13.0 || $(PIP) install -q torch --index-url https://download.pytorch.org/whl/cpu || echo "torch could not be installed; the TRL and train tests will skip"

test-trl: torch-cpu
	$(PIP) install -q -e '.[dev,trl]' || echo "test-trl: the trl extra could not be installed; the TRL proof will skip"
	$(PY) -m pytest -p no:cacheprovider -rs tests/exporters/test_trl.py

# The store file must open in the DuckDB releases users have (1.1 onward): a throwaway venv with
# duckdb<2 reads a store this whileai creates (docs/reliability.md, "Store"). If duckdb<2 cannot be
# installed (no registry), the test skips and says so.
DUCKDB1_VENV := .venv-duckdb1
test-store-compat: $(STAMP)
	test -x $(DUCKDB1_VENV)/bin/python || $(PYTHON) -m venv $(DUCKDB1_VENV)
	$(DUCKDB1_VENV)/bin/python -m pip install -q 'duckdb<2' || echo "test-store-compat: duckdb<2 could not be installed; the test builds its own or skips"
	WAI_DUCKDB1_PYTHON=$$( $(DUCKDB1_VENV)/bin/python -c 'import duckdb' 2>/dev/null && echo $(CURDIR)/$(DUCKDB1_VENV)/bin/python ) \
		$(PY) -m pytest -p no:cacheprovider -rs tests/reliability/test_store_duckdb1.py
# The lowest releases pyproject.toml admits for the numeric stack (FLOOR_PINS, which
# tests/test_packaging.py keeps equal to its floors), in a venv of their own, under the data steps'
# tests: a floor that no test runs is a guess. Without a registry the venv cannot install and the
# target says so.
FLOOR_VENV := .venv-floor
FLOOR_PINS := polars==2.1.0 pyarrow==19.0.0 numpy==2.0.2 scipy==1.13.1
test-floor:
	test -x $(FLOOR_VENV)/bin/python || $(PYTHON) -m venv $(FLOOR_VENV)
	if $(FLOOR_VENV)/bin/python -m pip install -q -e '.[dev]' $(FLOOR_PINS); then \
		$(FLOOR_VENV)/bin/python -m pytest -p no:cacheprovider $(TEST_WORKERS) tests/table tests/measure tests/selection \
			tests/exporters tests/guard tests/stats --ignore=tests/exporters/test_trl.py; \
	else echo "test-floor: $(FLOOR_PINS) could not be installed; the floor is not checked"; fi

# Displays and figures in a real Jupyter kernel: the notebook extra (nbclient, ipykernel, plotly,
# ipywidgets), then a notebook executed headless (tests/notebook) and every figure through plotly's
# own validator (tests/charts). Without a registry the extra cannot install and the tests skip.
test-notebook: $(STAMP)
	$(PIP) install -q -e '.[dev,notebook]' || echo "test-notebook: the notebook extra could not be installed; the notebook test will skip"
	$(PY) -m pytest -p no:cacheprovider -rs tests/notebook tests/charts
# Every recipes/04-train --tiny run end to end on a tiny local model (CPU, no download), plus the
# masks, losses, judge calls and monitor alarms; skips with the reason where the extra is missing.
test-train: torch-cpu
	$(PIP) install -q -e '.[dev,train]' || echo "test-train: the train extra could not be installed; the train tests will skip"
	$(PY) -m pytest -p no:cacheprovider -rs tests/train

# The Ray engine against the local path on one generated Parquet folder (docs/scale.md): a local
# Ray with 2 CPUs started inside the tests, no other address. The ray wheels are large: installed
# once into .venv; without a registry the extra cannot install and the tests skip with the reason.
test-ray: $(STAMP)
	$(PY) -c "import ray.data" 2>/dev/null || $(PIP) install -q -e '.[dev,ray]' || echo "test-ray: the ray extra could not be installed; the Ray tests will skip"
	$(PY) -m pytest -p no:cacheprovider -p no:logging -rs tests/engines

# The proof that an exported environment loads and evaluates in real verifiers releases: 0.4.0
# (verifiers.v1 Taskset loader) and 0.3.1 (vf.load_environment), each in its own venv from PyPI
# (with uv, which 0.4's chat harness runs its program with). A release that cannot be installed
# is skipped and said so; the tests run the exported README's vf-eval commands against a loopback
# fake OpenAI server, and read 0.4's traces.jsonl back with wai pass-at (the round trip).
VF_VENVS := .venv-verifiers=0.4.0 .venv-verifiers-0.3=0.3.1
test-verifiers: $(STAMP)
	@for pair in $(VF_VENVS); do dir=$${pair%%=*}; ver=$${pair##*=}; \
		{ test -x $$dir/bin/python || $(PYTHON) -m venv $$dir; } && \
		$$dir/bin/python -m pip install -q "verifiers==$$ver" uv || \
		echo "test-verifiers: verifiers $$ver could not be installed into $$dir; its proof will skip"; done
	WAI_VERIFIERS_VENVS="$(foreach p,$(VF_VENVS),$(word 2,$(subst =, ,$(p)))=$(CURDIR)/$(word 1,$(subst =, ,$(p))))" \
		$(PY) -m pytest -p no:cacheprovider -rs tests/exporters/test_verifiers.py

# The Runs pages in a real browser (docs/pages.md): Debian's chromium with apt-get when missing
# (skipped with a note where apt-get as root is not available), playwright from PyPI, the system
# Chromium launched through executable_path (no browser download). Without either, the tests skip.
test-browser: $(STAMP)
	@if [ -x /usr/bin/chromium ]; then echo "test-browser: chromium is installed"; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
		echo "test-browser: chromium is missing and apt-get (as root) is not available; the browser tests will skip"; \
	else (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
		echo "test-browser: apt-get could not install chromium; the browser tests will skip"; fi
	$(PY) -c "import playwright" 2>/dev/null || $(PIP) install -q -e '.[dev,browser]' || echo "test-browser: playwright could not be installed; the browser tests will skip"
	$(PY) -m pytest -p no:cacheprovider -rs tests/browser

# The screenshots docs/pages.md shows, taken by the browser test.
docs-screenshots: test-browser
	WAI_SCREENSHOT_DIR=docs/img $(PY) -m pytest -p no:cacheprovider -q tests/browser

# The documentation site (mkdocs.yml): the docs extra (mkdocs-material, mkdocstrings-python,
# markdown-exec), then an offline --strict build into site/ (a broken link or reference fails it;
# the API pages are generated from the package by docs/_gen/reference.py).
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(PIP) install -q -e '.[dev,docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir site

# Every Python and terminal block of README.md and docs/ run as a reader pastes it, one fresh temp
# folder per page (tests/docs), and every lesson and offline recipe program; prints how many blocks
# ran and which were skipped, and why.
docs-test: $(DOCS_STAMP)
	$(PY) -m pytest -p no:cacheprovider -rs tests/docs

# whileai 0.131 in its own venv for the reference column (benchmarks/_harness.py finds it there;
# without a registry the table says it is missing rather than leaving the column empty).
WAI131_VENV := .venv-wai131
bench-wai131:
	test -x $(WAI131_VENV)/bin/python || $(PYTHON) -m venv $(WAI131_VENV)
	$(WAI131_VENV)/bin/python -c "import importlib.metadata as m; m.version('whileai')" 2>/dev/null || $(WAI131_VENV)/bin/python -m pip install -q whileai==0.131 || \
		echo "bench: whileai 0.131 could not be installed; its column will say it is missing"

# whileai 0.131's own client against wai server on 127.0.0.1 (docs/platform.md, "0.131's client"):
# the same venv as the reference column; without a registry the test skips and says so. make unit
# leaves it out (a second Python and a server); the fast route-mapping test runs there.
test-client131: $(STAMP)
	test -x $(WAI131_VENV)/bin/python || $(PYTHON) -m venv $(WAI131_VENV)
	$(WAI131_VENV)/bin/python -I -c "import whileai; assert whileai.__version__ == '0.131'" 2>/dev/null || \
		$(WAI131_VENV)/bin/python -m pip install -q whileai==0.131 || \
		echo "test-client131: whileai 0.131 could not be installed into $(WAI131_VENV); the test will skip"
	WAI_CLIENT131_PYTHON=$(CURDIR)/$(WAI131_VENV)/bin/python $(PY) -m pytest -p no:cacheprovider -rs \
		tests/platform/test_client131.py

# The headline table (docs/performance.md): every step from the rows users have against the DuckDB
# floor and 0.131; `make bench BENCH_ARGS="--data DIR --generator PATH"`. The per-step tables on
# whileai.testing rows: `make bench-steps`.
bench: $(STAMP) bench-wai131
	$(PY) benchmarks/bench_real.py $(BENCH_ARGS)

.PHONY: bench-steps
bench-steps: $(STAMP) bench-wai131
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(DUCKDB1_VENV) $(WAI131_VENV) $(FLOOR_VENV) .pytest_cache .mypy_cache .ruff_cache
