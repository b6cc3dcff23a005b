#!/usr/bin/env bash
# Helm v3 for checking deploy/helm/ (lint, template): built once with `go install` into a cache
# folder beside Weaviate's (~/.cache/bio-mcp/helm/<version>), then reused.
#
#   scripts/helm.sh --path      print the helm binary's path (building it first if needed)
#   scripts/helm.sh ARGS...     run that helm with ARGS (e.g. `scripts/helm.sh lint deploy/helm/bio-mcp`)
#
# Nothing but the path (or helm's own output) goes to stdout; the build logs to stderr.
set -euo pipefail

HELM_VERSION=v3.21.4
BIN_DIR="$HOME/.cache/bio-mcp/helm/$HELM_VERSION"
HELM="$BIN_DIR/helm"

log() { echo "helm.sh: $*" >&2; }

find_go() {
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  if [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go; return; fi
  return 1
}

build() {
  local go
  go=$(find_go) || { log "go is needed to build helm (https://go.dev/dl/)"; exit 1; }
  mkdir -p "$BIN_DIR"
  # One build at a time: a second caller waits, then finds the binary.
  exec 9>"$BIN_DIR/.lock"
  flock 9
  if [ -x "$HELM" ]; then return; fi
  log "building helm $HELM_VERSION with go install (first time only)"
  local staging
  staging=$(mktemp -d "$BIN_DIR/.build.XXXXXX")
  if ! CGO_ENABLED=0 GOBIN="$staging" GOFLAGS=-buildvcs=false \
      "$go" install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2; then
    rm -rf "$staging"
    log "go install of helm $HELM_VERSION failed"
    exit 1
  fi
  mv "$staging/helm" "$HELM"  # atomic: nobody sees a half-written binary
  rm -rf "$staging"
}

[ -x "$HELM" ] || build
if [ "${1:-}" = "--path" ]; then
  echo "$HELM"
else
  exec "$HELM" "$@"
fi
