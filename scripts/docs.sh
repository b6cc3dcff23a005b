#!/usr/bin/env bash
# Build the documentation site into site/ with `mkdocs build --strict`: a broken link, a missing
# page or a reference page that fails to generate fails the build. Then check the prose.
# Needs the docs extra: .venv/bin/pip install -e '.[docs]'
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
export NO_MKDOCS_2_WARNING=1   # Material's notice about its successor, not about this site
"$BIN/python" scripts/benchmark_table.py --check
"$BIN/mkdocs" build --strict --site-dir site "$@"
"$BIN/python" scripts/prose_check.py
