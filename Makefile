# Docent: `make run` serves the site, `make test` runs the suite. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
# `make run WORKERS=N` (N >= 2): the local cluster (nginx, N daphne, a task worker, redis).
WORKERS ?= 1

.PHONY: run test test-fast browser-deps bench lint setup clean-data

setup: $(STAMP)

# Reinstall only when pyproject.toml changed; the stamp records the last install.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null || { \
	  echo "Docent needs Python 3.12 or newer; '$(PYTHON)' is $$($(PYTHON) --version 2>&1)."; \
	  echo "Install Python 3.12 (e.g. 'pyenv install 3.12' or your OS package) or run 'make PYTHON=python3.12 ...'."; \
	  exit 1; }
	@echo "Installing Docent's Python packages into $(VENV) (a first run takes a few minutes; pip is quiet meanwhile)"
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	@touch $(STAMP)

run: $(STAMP)
ifeq ($(filter-out 0 1,$(WORKERS)),)
	@HOST=$(HOST) PORT=$(PORT) $(PY) manage.py serve --host $(HOST) --port $(PORT)
else
	@HOST=$(HOST) PORT=$(PORT) $(PY) manage.py cluster --workers $(WORKERS) --host $(HOST) --port $(PORT)
endif

# Test processes: one per core, at most 4 (each has its own PostgreSQL and live servers). Many
# tests wait on a live server or a clock; on two cores two processes took it 29.6 -> 21.9 min.
# `loadscope` is ours (tests/conftest.py): a worker takes whole modules, and the browser tests as one.
# `make test TEST_PROCESSES=0` runs it in one process.
TEST_PROCESSES ?= auto --maxprocesses=4
PYTEST_PARALLEL = -n $(TEST_PROCESSES) --dist loadscope

test: $(STAMP) browser-deps
	$(PY) -m pytest $(PYTEST_PARALLEL)

# Chromium and CJK fonts for the browser tests: installed as root with apt, else one command to run.
browser-deps:
	@.ci/browser-deps

test-fast: $(STAMP)
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "not e2e"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

BENCH_STAMP := $(VENV)/.installed-bench

# The peers measured side by side (openai-agents, pydantic-ai) are bench-only dependencies.
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[dev,bench]"
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) bench/run_all.py

clean-data:
	rm -rf .data
