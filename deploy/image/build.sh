#!/usr/bin/env bash
# Build bio-mcp's OCI image without a registry or a container daemon: a minimal Debian root
# from debootstrap, the project's wheel installed into a virtual environment inside it, committed
# by buildah (vfs storage, chroot isolation) into an OCI archive.
#
#   deploy/image/build.sh [OUT_DIR]        (default OUT_DIR: dist/image; run as root)
#
# Settings (environment):
#   BIOMCP_IMAGE_RELEASE  Debian release of the base (default: bookworm)
#   BIOMCP_IMAGE_MIRROR   Debian mirror for debootstrap (default: http://deb.debian.org/debian)
#   BIOMCP_IMAGE_EXTRAS   bio-mcp extras to install (default: postgres,weaviate; "" for none)
#   BIOMCP_IMAGE_CACHE    kept between builds: the base root and the wheels
#                         (default: ~/.cache/bio-mcp/image)
#   PYTHON                builds the wheel and downloads the dependencies (default: .venv's)
#
# Needs debootstrap and buildah (Debian: apt-get install debootstrap buildah).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-$ROOT/dist/image}"
RELEASE="${BIOMCP_IMAGE_RELEASE:-bookworm}"
MIRROR="${BIOMCP_IMAGE_MIRROR:-http://deb.debian.org/debian}"
EXTRAS="${BIOMCP_IMAGE_EXTRAS-postgres,weaviate}"
CACHE="${BIOMCP_IMAGE_CACHE:-$HOME/.cache/bio-mcp/image}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
PACKAGES="python3,python3-venv,ca-certificates,tini"
APP_UID=10001
PORT=8000

say() { printf '== image: %s\n' "$*" >&2; }
die() { printf 'image build failed: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root (debootstrap and buildah's chroot isolation need it)"
for tool in debootstrap buildah; do
  command -v "$tool" >/dev/null || die "$tool is missing: apt-get install -y debootstrap buildah"
done
[[ -x "$PYTHON" ]] || PYTHON="$(command -v python3)"

VERSION="$("$PYTHON" -c "import re,sys; print(re.search(r'__version__ = \"([^\"]+)\"', \
open(sys.argv[1]).read()).group(1))" "$ROOT/src/biomcp/__init__.py")"
REVISION="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
mkdir -p "$CACHE" "$OUT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/biomcp-image.XXXXXX")"
STORE=(--root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs)
CONTAINER=""

cleanup() {
  if [[ -n "$CONTAINER" ]]; then buildah "${STORE[@]}" rm "$CONTAINER" >/dev/null 2>&1 || true; fi
  # vfs storage is plain folders; nothing stays mounted once the container is removed.
  rm -rf "$WORK"
}
trap cleanup EXIT

# 1. The base root: debootstrap once, then reuse the tarball (keyed on release and packages).
KEY="$(printf '%s %s %s' "$RELEASE" "$MIRROR" "$PACKAGES" | sha256sum | cut -c1-12)"
BASE="$CACHE/rootfs-$RELEASE-$KEY.tar"
if [[ -f "$BASE" ]]; then
  say "base root: cached $(basename "$BASE")"
else
  say "base root: debootstrap --variant=minbase $RELEASE with $PACKAGES (a few minutes)"
  debootstrap --variant=minbase --include="$PACKAGES" "$RELEASE" "$WORK/rootfs" "$MIRROR" \
    >"$WORK/debootstrap.log" 2>&1 || { tail -n 30 "$WORK/debootstrap.log" >&2; die "debootstrap"; }
  # What a server never reads: package caches, manuals, translations (licences stay).
  rm -rf "$WORK/rootfs"/var/cache/apt/* "$WORK/rootfs"/var/lib/apt/lists/* \
    "$WORK/rootfs"/usr/share/man "$WORK/rootfs"/usr/share/info "$WORK/rootfs"/usr/share/locale \
    "$WORK/rootfs"/var/log/*.log "$WORK/rootfs"/var/cache/debconf/*-old
  find "$WORK/rootfs/usr/share/doc" -type f ! -name copyright -delete
  tar --numeric-owner -C "$WORK/rootfs" -cf "$BASE.part" .
  mv "$BASE.part" "$BASE"
  rm -rf "$WORK/rootfs"
  say "base root: cached as $(basename "$BASE") ($(du -m "$BASE" | cut -f1) MB)"
fi

# 2. The container: the base root, then the Python it holds decides which wheels fit.
CONTAINER="$(buildah "${STORE[@]}" from --quiet scratch)"
buildah "${STORE[@]}" add --quiet "$CONTAINER" "$BASE" /
run() { buildah "${STORE[@]}" run --isolation chroot "$@"; }
read -r PYTAG GLIBC < <(run "$CONTAINER" -- python3 -c \
  'import platform, sys; print(f"{sys.version_info[0]}{sys.version_info[1]}",
  platform.libc_ver()[1].replace(".", "_"))')
say "base python: cp$PYTAG, glibc $GLIBC"

# 3. The wheels, fetched on this side (its certificates and index), installed offline inside.
say "wheel: building bio-mcp $VERSION from the source tree"
if "$PYTHON" -c "import build" 2>/dev/null; then
  "$PYTHON" -m build --wheel --outdir "$WORK/dist" "$ROOT" >"$WORK/wheel.log" 2>&1 \
    || { tail -n 30 "$WORK/wheel.log" >&2; die "building the wheel"; }
else
  "$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$WORK/dist" "$ROOT" \
    || die "building the wheel"
fi
WHEEL="$(ls "$WORK"/dist/bio_mcp-*.whl)"
WHEELS="$CACHE/wheels-cp$PYTAG-$GLIBC"
mkdir -p "$WHEELS"
REQ="$(basename "$WHEEL")${EXTRAS:+[$EXTRAS]}"
say "wheels: dependencies of $REQ for cp$PYTAG manylinux_$GLIBC (cached in $(basename "$WHEELS"))"
# Every manylinux level the base's glibc runs (pip does not widen an explicit --platform).
PLATFORMS=()
for minor in $(seq "${GLIBC#2_}" -1 17); do PLATFORMS+=(--platform "manylinux_2_${minor}_x86_64"); done
"$PYTHON" -m pip download --quiet --dest "$WHEELS" --only-binary=:all: \
  --python-version "$PYTAG" --implementation cp --abi "cp$PYTAG" --abi abi3 --abi none \
  "${PLATFORMS[@]}" --platform manylinux2014_x86_64 \
  --find-links "$WORK/dist" "$WHEEL${EXTRAS:+[$EXTRAS]}" || die "downloading the dependencies"
rm -f "$WHEELS"/bio_mcp-*.whl

say "install: /opt/biomcp (a venv), user biomcp ($APP_UID), data folder /data"
run -v "$WHEELS:/wheels:ro" -v "$WORK/dist:/app:ro" "$CONTAINER" -- sh -euc "
  python3 -m venv /opt/biomcp
  /opt/biomcp/bin/pip install --quiet --no-cache-dir --no-index --find-links /wheels \
    '/app/$(basename "$WHEEL")${EXTRAS:+[$EXTRAS]}'
  /opt/biomcp/bin/pip uninstall --quiet --yes pip setuptools >/dev/null 2>&1 || true
  grep -q '^biomcp:' /etc/passwd || {
    echo 'biomcp:x:$APP_UID:$APP_UID:bio-mcp:/data:/usr/sbin/nologin' >>/etc/passwd
    echo 'biomcp:x:$APP_UID:' >>/etc/group
  }
  mkdir -p /data && chown $APP_UID:$APP_UID /data && chmod 0750 /data
  /opt/biomcp/bin/biomcp --help >/dev/null
"

# 4. How it runs: non-root, serve-http on all interfaces (auth must be configured to start).
CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
buildah "${STORE[@]}" config \
  --user "$APP_UID:$APP_UID" --workingdir /data \
  --env PATH=/opt/biomcp/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env BIOMCP_DATA_DIR=/data --env HOME=/data --env PYTHONUNBUFFERED=1 \
  --env MCP_HTTP_HOST=0.0.0.0 --env MCP_HTTP_PORT="$PORT" \
  --port "$PORT/tcp" --volume /data --stop-signal SIGTERM \
  --entrypoint '["/usr/bin/tini", "--", "biomcp"]' --cmd '["serve-http"]' \
  --label org.opencontainers.image.title=bio-mcp \
  --label "org.opencontainers.image.description=Trustworthy PubMed evidence for LLM agents (MCP)" \
  --label "org.opencontainers.image.version=$VERSION" \
  --label "org.opencontainers.image.revision=$REVISION" \
  --label "org.opencontainers.image.created=$CREATED" \
  --label org.opencontainers.image.licenses=MIT \
  --label "org.opencontainers.image.base.name=debian:$RELEASE" \
  "$CONTAINER"

# 5. Commit straight into an OCI archive: no registry, no daemon.
ARCHIVE="$OUT/bio-mcp.oci.tar"
rm -f "$ARCHIVE"
say "commit: $ARCHIVE (bio-mcp:$VERSION, gzip layers)"
buildah "${STORE[@]}" commit --quiet --format oci --disable-compression=false --rm \
  "$CONTAINER" "oci-archive:$ARCHIVE:bio-mcp:$VERSION" >/dev/null
CONTAINER=""
say "done: $ARCHIVE ($(du -m "$ARCHIVE" | cut -f1) MB)"
