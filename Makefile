# The two commands of the README, plus the checks CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
# The torch extra gets a virtual environment of its own, so `.venv` stays what users install.
TORCH_VENV := $(VENV)/torch
TORCH_STAMP := $(TORCH_VENV)/.installed-torch

.PHONY: serve test test-torch venv-torch lint check services clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.'
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(RUN_STAMP)

$(TORCH_VENV)/bin/python:
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install --quiet --upgrade pip

$(TORCH_STAMP): pyproject.toml | $(TORCH_VENV)/bin/python
	$(TORCH_VENV)/bin/pip install --quiet -e '.[test,torch]'
	touch $@

serve: $(RUN_STAMP)  ## set up and run the MCP server (stdio) on the embedded default
	$(BIN)/biomcp serve

# Two pytest-xdist workers: much of the suite waits on subprocesses and services, not the CPU.
# loadfile keeps each test file on one worker (tests/conftest.py adds groups of files).
test: $(TEST_STAMP)  ## the test suite without PyTorch (service tests need scripts/services.sh start)
	$(BIN)/pytest -m 'not torch' -n 2 --dist loadfile

test-torch: $(TORCH_STAMP)  ## the PyTorch embedder's tests, in .venv/torch (the torch extra: GBs)
	$(TORCH_VENV)/bin/pytest -m torch

venv-torch: $(TORCH_STAMP)  ## only install .venv/torch (CI does it while `make test` runs)

lint: $(TEST_STAMP)  ## ruff, mypy (src, tests, benchmarks; strict on domain and ports), import-linter
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

check: lint test

services:  ## start PostgreSQL and Weaviate on loopback; prints the variables to export
	scripts/services.sh start all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
