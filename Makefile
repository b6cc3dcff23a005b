# The two commands of the README, plus the checks CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test lint check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

serve: $(STAMP)  ## set up and run the MCP server (stdio) on the embedded default
	$(BIN)/biomcp serve

test: $(STAMP)  ## the whole test suite
	$(BIN)/pytest

lint: $(STAMP)  ## ruff, mypy (strict on domain and ports), import-linter
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

check: lint test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
