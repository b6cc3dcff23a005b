#!/usr/bin/env bash
# Start, stop and inspect the real services the tests (and a local scale-out setup) use:
# PostgreSQL (Debian's packages) and Weaviate (built from source with `go install`), both on
# loopback only, with their data under .services/ in the project.
#
#   scripts/services.sh start [postgres|weaviate|all]   start (installing/building if needed)
#   scripts/services.sh stop  [postgres|weaviate|all]
#   scripts/services.sh status
#   scripts/services.sh env                             print the export lines for the tests
#
# `start` prints nothing on stdout but the export lines, so `eval "$(scripts/services.sh start)"`
# sets BIOMCP_TEST_POSTGRES_URL and BIOMCP_TEST_WEAVIATE_URL.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="${BIOMCP_SERVICES_DIR:-$ROOT/.services}"
PG_PORT="${BIOMCP_PG_PORT:-55432}"
PG_DATA="$STATE/postgres"
PG_DB=biomcp_test
WEAVIATE_VERSION="${BIOMCP_WEAVIATE_VERSION:-v1.35.2}"
WEAVIATE_BIN_DIR="${BIOMCP_WEAVIATE_BIN_DIR:-$HOME/.cache/bio-mcp/weaviate/$WEAVIATE_VERSION}"
WEAVIATE_PORT="${BIOMCP_WEAVIATE_PORT:-58080}"
WEAVIATE_GRPC_PORT="${BIOMCP_WEAVIATE_GRPC_PORT:-50051}"
WEAVIATE_DATA="$STATE/weaviate"

log() { echo "services: $*" >&2; }

# --- PostgreSQL ----------------------------------------------------------------------------

pg_bin() {
  local name=$1
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -n "$found" ] && [ -x "$found/$name" ]; then echo "$found/$name"; return; fi
  return 1
}

pg_install() {
  if pg_bin initdb >/dev/null && pg_bin pg_ctl >/dev/null; then return; fi
  log "installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
}

pg_run() {
  # PostgreSQL refuses to run as root: run its tools as the postgres user when we are root.
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_start() {
  pg_install
  local initdb pg_ctl
  initdb=$(pg_bin initdb); pg_ctl=$(pg_bin pg_ctl)
  mkdir -p "$STATE"
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home "$PG_DATA" postgres
    mkdir -p "$PG_DATA"; chown -R postgres "$PG_DATA"
  fi
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    log "initialising a PostgreSQL cluster in $PG_DATA"
    pg_run "$initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if pg_run "$pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    log "PostgreSQL already running on 127.0.0.1:$PG_PORT"
  else
    pg_run "$pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $PG_PORT -k $PG_DATA -c fsync=off -c synchronous_commit=off" start >&2
  fi
  local psql
  psql=$(pg_bin psql)
  if ! pg_run "$psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname='$PG_DB'" | grep -q 1; then
    pg_run "$psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE DATABASE $PG_DB" >/dev/null
  fi
  echo "export BIOMCP_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/$PG_DB"
}

pg_stop() {
  local pg_ctl
  pg_ctl=$(pg_bin pg_ctl) || return 0
  if [ -f "$PG_DATA/PG_VERSION" ] && pg_run "$pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    pg_run "$pg_ctl" -D "$PG_DATA" -m fast -w stop >&2
  fi
}

pg_status() {
  local pg_ctl
  if pg_ctl=$(pg_bin pg_ctl) && [ -f "$PG_DATA/PG_VERSION" ] \
      && pg_run "$pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    echo "postgres: running on 127.0.0.1:$PG_PORT"
  else
    echo "postgres: stopped"
  fi
}

# --- Weaviate ------------------------------------------------------------------------------

wv_install() {
  if [ -x "$WEAVIATE_BIN_DIR/weaviate-server" ]; then return; fi
  command -v go >/dev/null || { log "go is needed to build Weaviate"; exit 1; }
  log "building weaviate-server $WEAVIATE_VERSION with go install (first time only: minutes)"
  mkdir -p "$WEAVIATE_BIN_DIR"
  GOBIN="$WEAVIATE_BIN_DIR" go install \
    "github.com/weaviate/weaviate/cmd/weaviate-server@$WEAVIATE_VERSION" >&2
}

wv_ready() {
  curl -fsS -o /dev/null "http://127.0.0.1:$WEAVIATE_PORT/v1/.well-known/ready" 2>/dev/null
}

wv_start() {
  wv_install
  mkdir -p "$WEAVIATE_DATA"
  if wv_ready; then
    log "Weaviate already running on 127.0.0.1:$WEAVIATE_PORT"
  else
    (
      cd "$WEAVIATE_DATA"
      PERSISTENCE_DATA_PATH="$WEAVIATE_DATA/data" \
      AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true \
      DEFAULT_VECTORIZER_MODULE=none \
      API_BASED_MODULES_DISABLED=true \
      DISABLE_TELEMETRY=true \
      PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS=10 \
      CLUSTER_HOSTNAME=node1 \
      CLUSTER_IN_LOCALHOST=true \
      CLUSTER_ADVERTISE_ADDR=127.0.0.1 \
      CLUSTER_BIND_ADDR=127.0.0.1 \
      RAFT_BOOTSTRAP_EXPECT=1 \
      GRPC_PORT="$WEAVIATE_GRPC_PORT" \
      CLUSTER_GOSSIP_BIND_PORT=$((WEAVIATE_PORT + 1)) \
      CLUSTER_DATA_BIND_PORT=$((WEAVIATE_PORT + 2)) \
      RAFT_PORT=$((WEAVIATE_PORT + 3)) \
      RAFT_INTERNAL_RPC_PORT=$((WEAVIATE_PORT + 4)) \
      GO_PROFILING_PORT=$((WEAVIATE_PORT + 5)) \
      LOG_LEVEL=warning \
      nohup "$WEAVIATE_BIN_DIR/weaviate-server" --host 127.0.0.1 --port "$WEAVIATE_PORT" \
        --scheme http > "$WEAVIATE_DATA/server.log" 2>&1 &
      echo $! > "$WEAVIATE_DATA/pid"
    )
    local pid
    pid=$(cat "$WEAVIATE_DATA/pid")
    for _ in $(seq 1 120); do
      wv_ready && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    wv_ready || { log "Weaviate did not become ready; see $WEAVIATE_DATA/server.log"; exit 1; }
  fi
  echo "export BIOMCP_TEST_WEAVIATE_URL=http://127.0.0.1:$WEAVIATE_PORT"
  echo "export BIOMCP_TEST_WEAVIATE_GRPC_PORT=$WEAVIATE_GRPC_PORT"
}

wv_stop() {
  if [ -f "$WEAVIATE_DATA/pid" ]; then
    local pid
    pid=$(cat "$WEAVIATE_DATA/pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    rm -f "$WEAVIATE_DATA/pid"
  fi
}

wv_status() {
  if wv_ready; then echo "weaviate: running on 127.0.0.1:$WEAVIATE_PORT"; else echo "weaviate: stopped"; fi
}

# --- main ----------------------------------------------------------------------------------

action=${1:-status}
which=${2:-all}
case "$action" in
  start)
    case "$which" in
      postgres) pg_start ;;
      weaviate) wv_start ;;
      all) pg_start; wv_start ;;
      *) log "unknown service $which"; exit 2 ;;
    esac ;;
  stop)
    case "$which" in
      postgres) pg_stop ;;
      weaviate) wv_stop ;;
      all) wv_stop; pg_stop ;;
      *) log "unknown service $which"; exit 2 ;;
    esac ;;
  status) pg_status; wv_status ;;
  env)
    echo "export BIOMCP_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/$PG_DB"
    echo "export BIOMCP_TEST_WEAVIATE_URL=http://127.0.0.1:$WEAVIATE_PORT"
    echo "export BIOMCP_TEST_WEAVIATE_GRPC_PORT=$WEAVIATE_GRPC_PORT" ;;
  *) log "usage: $0 start|stop|status|env [postgres|weaviate|all]"; exit 2 ;;
esac
