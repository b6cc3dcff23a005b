# The two commands of the README, plus the checks CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: serve test lint check services clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.'
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@ $(RUN_STAMP)

serve: $(RUN_STAMP)  ## set up and run the MCP server (stdio) on the embedded default
	$(BIN)/biomcp serve

test: $(TEST_STAMP)  ## the whole test suite (service tests need scripts/services.sh start)
	$(BIN)/pytest

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
