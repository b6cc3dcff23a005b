"""Build bio-mcp's OCI image (deploy/image/build.sh), or take a built archive, and check that it
serves: what CI runs after the wheel smoke test. Needs root, buildah and debootstrap.

    python3 scripts/image_smoke.py [--archive PATH] [--keep DIR]

The archive is unpacked into a private buildah store (vfs) and run with chroot isolation on the
host's network, so the server listens on a free loopback port. Checks, each a failure when it
does not hold:
* the image's config: a non-root user, `tini -- biomcp serve-http`, `/data` as data folder and
  volume, the exposed port, the OCI labels;
* the default command, which binds every interface, refuses to start without auth;
* `biomcp serve-http` started with an HS256 key answers `/health` and `/readyz`, refuses a call
  without a token (401), and serves a real MCP client with one: it lists the tools, a
  `rag_search` on the empty corpus answers (NOT_FOUND) and `corpus_checkpoint_get` answers;
* the server process runs as the image's user, and what it writes in `/data` belongs to it;
* it stops on SIGTERM.

Prints one JSON object: the checks, the archive's size, and the wall time of each step.
Every wait is bounded; the store and the container are removed whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import httpx2
import jwt
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "deploy/image/build.sh"
BUILD_TIMEOUT_S = 1500
READY_TIMEOUT_S = 240
CALL_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30
LABELS = ("title", "version", "revision", "created", "licenses", "description")


class SmokeError(RuntimeError):
    """A step of the smoke test could not run at all."""


def _run(argv: list[str], timeout: float = 300) -> str:
    try:
        done = subprocess.run(  # noqa: S603 - buildah and the build script, fixed arguments
            argv, check=False, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        raise SmokeError(f"{argv[0]} {argv[1:3]} took more than {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise SmokeError(f"{' '.join(argv[:6])} failed: {done.stderr[-3000:]}")
    return done.stdout


class Buildah:
    """buildah on a private vfs store under `root`, every run in chroot isolation."""

    def __init__(self, root: Path) -> None:
        self.prefix = [
            "buildah",
            "--root",
            str(root / "storage"),
            "--runroot",
            str(root / "run"),
            "--storage-driver",
            "vfs",
        ]

    def __call__(self, *args: str, timeout: float = 300) -> str:
        return _run([*self.prefix, *args], timeout=timeout)

    def run_argv(self, container: str, command: list[str], env: dict[str, str]) -> list[str]:
        flags = [f"--env={k}={v}" for k, v in env.items()]
        return [
            *self.prefix,
            "run",
            "--isolation",
            "chroot",
            "--network",
            "host",
            *flags,
            container,
            "--",
            *command,
        ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config_checks(config: dict[str, Any], failures: list[str]) -> dict[str, Any]:
    env = dict(item.split("=", 1) for item in config.get("Env") or [])
    labels = config.get("Labels") or {}
    seen = {
        "user": config.get("User", ""),
        "entrypoint": config.get("Entrypoint"),
        "cmd": config.get("Cmd"),
        "data_dir": env.get("BIOMCP_DATA_DIR"),
        "volumes": sorted(config.get("Volumes") or {}),
        "ports": sorted(config.get("ExposedPorts") or {}),
        "version": labels.get("org.opencontainers.image.version"),
    }
    if seen["user"].split(":")[0] in ("", "0", "root"):
        failures.append(f"the image runs as root: User={seen['user']!r}")
    if seen["entrypoint"] != ["/usr/bin/tini", "--", "biomcp"] or seen["cmd"] != ["serve-http"]:
        failures.append(f"unexpected entrypoint/cmd: {seen['entrypoint']} {seen['cmd']}")
    if seen["data_dir"] != "/data" or seen["volumes"] != ["/data"]:
        failures.append(f"the data folder is not the /data volume: {seen}")
    if seen["ports"] != [f"{env.get('MCP_HTTP_PORT')}/tcp"]:
        failures.append(f"the exposed port is not MCP_HTTP_PORT: {seen['ports']}")
    missing = [n for n in LABELS if not labels.get(f"org.opencontainers.image.{n}")]
    if missing:
        failures.append(f"OCI labels missing: {missing}")
    return seen


def _pids_serving(port: int) -> list[int]:
    """Host PIDs of `biomcp serve-http` processes started on `port`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            python = Path(argv[0].decode(errors="replace")).name.startswith("python")
            if python and b"serve-http" in argv and str(port).encode() in argv:
                found.append(int(entry.name))
    return found


def _uid_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise SmokeError(f"no Uid line for process {pid}")


def _wait_ready(base: str, child: subprocess.Popen[str]) -> dict[str, Any]:
    """Poll /health then /readyz until 200, the child's exit or READY_TIMEOUT_S."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    last = "no answer"
    for path in ("/health", "/readyz"):
        while True:
            if child.poll() is not None:
                raise SmokeError(f"serve-http exited ({child.returncode}) before {path} was 200")
            if time.monotonic() > deadline:
                raise SmokeError(f"{path} not 200 within {READY_TIMEOUT_S} s: {last}")
            try:
                answer = httpx.get(base + path, timeout=5)
                last = f"{answer.status_code} {answer.text[:300]}"
                if answer.status_code == 200:
                    break
            except httpx.HTTPError as exc:
                last = repr(exc)
            time.sleep(0.5)
    return {"readyz": answer.json()}


async def _mcp_calls(url: str, token: str) -> dict[str, Any]:
    timeout = httpx2.Timeout(60.0, read=CALL_TIMEOUT_S)
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
    ):
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        search = await client.call_tool("rag_search", {"query": "aspirin", "top_k": 3})
        checkpoint = await client.call_tool("corpus_checkpoint_get", {"query_key": "smoke"})
    text = search.content[0].text if search.content else "{}"  # type: ignore[union-attr]
    return {
        "tools": len(tools),
        "has_rag_search": "rag_search" in tools,
        "first_search": json.loads(text).get("error", {}).get("code")
        if search.is_error
        else "results",
        "checkpoint_call_ok": not checkpoint.is_error,
    }


@contextmanager
def _served(buildah: Buildah, container: str, port: int, key: str) -> Iterator[Any]:
    """`biomcp serve-http` in the container on loopback `port`; SIGTERM on the way out."""
    # Tini is not PID 1 here (chroot isolation has no PID namespace): let it reap all the same.
    env = {
        "MCP_AUTH_SECRET_KEY": key,
        "NCBI_EUTILS_BASE_URL": "http://127.0.0.1:9/",
        "TINI_SUBREAPER": "1",
    }
    command = ["/usr/bin/tini", "--", "biomcp", "serve-http", "--host", "127.0.0.1"]
    argv = buildah.run_argv(container, [*command, "--port", str(port)], env)
    log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - read back after the child ends
    child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, text=True)  # noqa: S603
    state: dict[str, Any] = {"child": child, "stopped_cleanly": False}
    try:
        yield state
    finally:
        pids = _pids_serving(port)
        for pid in pids:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        try:
            child.wait(timeout=STOP_TIMEOUT_S)
            state["stopped_cleanly"] = bool(pids) and not _pids_serving(port)
        except subprocess.TimeoutExpired:
            for pid in _pids_serving(port):
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            child.kill()
            child.wait(timeout=STOP_TIMEOUT_S)
        log.seek(0)
        state["log_tail"] = log.read()[-2000:]
        log.close()


def _refuses_without_auth(buildah: Buildah, container: str, config: dict[str, Any]) -> str:
    """The default command (every interface, no auth) must exit non-zero and say why."""
    argv = buildah.run_argv(container, [*config["Entrypoint"], *config["Cmd"]], {})
    done = subprocess.run(  # noqa: S603 - buildah, fixed arguments
        argv, check=False, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0 and "refusing to serve" in done.stderr + done.stdout:
        return "refused"
    return f"exit {done.returncode}: {(done.stderr + done.stdout)[-500:]}"


def _serve_checks(buildah: Buildah, container: str, store: Path) -> dict[str, Any]:
    port, key = _free_port(), secrets.token_urlsafe(32)
    base = f"http://127.0.0.1:{port}"
    token = jwt.encode(
        {"sub": "image-smoke", "scope": "read", "exp": int(time.time()) + 900}, key, "HS256"
    )
    with _served(buildah, container, port, key) as state:
        ready = _wait_ready(base, state["child"])
        anonymous = httpx.post(f"{base}/mcp", json={}, timeout=30).status_code
        calls = asyncio.run(asyncio.wait_for(_mcp_calls(f"{base}/mcp", token), CALL_TIMEOUT_S))
        uids = sorted({_uid_of(pid) for pid in _pids_serving(port)})
    # buildah mounts its own folder on an image's volume (even over `-v`): read that one.
    volumes = store.glob("storage/vfs-containers/*/userdata/buildah-volumes/*")
    owners = sorted({p.stat().st_uid for v in volumes for p in v.rglob("*")})
    return {
        "readyz_status": ready["readyz"].get("status"),
        "anonymous_status": anonymous,
        **calls,
        "server_uids": uids,
        "data_owner_uids": owners,
        "stopped_cleanly": state["stopped_cleanly"],
        "log_tail": state["log_tail"],
    }


def _judge(serve: dict[str, Any], image_uid: int, failures: list[str]) -> None:
    if serve["anonymous_status"] != 401:
        failures.append(f"a call without a token answered {serve['anonymous_status']}, not 401")
    if not (serve["has_rag_search"] and serve["checkpoint_call_ok"]) or serve[
        "first_search"
    ] not in ("NOT_FOUND", "results"):
        failures.append(f"the MCP calls failed: {serve}")
    if serve["server_uids"] != [image_uid]:
        failures.append(f"serve-http ran as uid {serve['server_uids']}, not {image_uid}")
    if not serve["data_owner_uids"] or serve["data_owner_uids"] != [image_uid]:
        failures.append(f"/data holds files of uids {serve['data_owner_uids']}")
    if not serve["stopped_cleanly"]:
        failures.append("serve-http did not stop on SIGTERM")
    if failures:
        failures.append(f"server log: {serve['log_tail']}")


def _check_image(archive: Path, work: Path, times: dict[str, float]) -> dict[str, Any]:
    failures: list[str] = []
    buildah = Buildah(work)
    step = time.perf_counter()
    container = buildah("from", "--quiet", f"oci-archive:{archive}", timeout=600).strip()
    times["unpack_s"] = round(time.perf_counter() - step, 1)
    try:
        config = json.loads(buildah("inspect", container))["OCIv1"]["config"]
        seen = _config_checks(config, failures)
        image_uid = int(seen["user"].split(":")[0] or 0)
        step = time.perf_counter()
        default = _refuses_without_auth(buildah, container, config)
        if default != "refused":
            failures.append(f"the default command started without auth: {default}")
        serve = _serve_checks(buildah, container, work)
        times["serve_s"] = round(time.perf_counter() - step, 1)
        _judge(serve, image_uid, failures)
        serve.pop("log_tail")
    finally:
        with suppress(SmokeError):
            buildah("rm", container)
    return {"config": seen, "default_command": default, "serve": serve, "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, help="an existing bio-mcp.oci.tar (no build)")
    parser.add_argument("--keep", type=Path, help="build the archive here (kept afterwards)")
    args = parser.parse_args()
    if os.geteuid() != 0 or shutil.which("buildah") is None:
        print("image smoke test: needs root and buildah (apt-get install buildah debootstrap)")
        return 1
    work = Path(tempfile.mkdtemp(prefix="biomcp-image-smoke-"))
    times: dict[str, float] = {}
    try:
        archive = args.archive
        if archive is None:
            out = args.keep or work / "out"
            step = time.perf_counter()
            _run(["bash", str(BUILD), str(out)], timeout=BUILD_TIMEOUT_S)
            times["build_s"] = round(time.perf_counter() - step, 1)
            archive = out / "bio-mcp.oci.tar"
        size_mb = round(archive.stat().st_size / 1e6, 1)
        report = {"archive_mb": size_mb, **_check_image(archive.resolve(), work, times)}
    except (SmokeError, OSError, httpx.HTTPError, TimeoutError) as exc:
        print(json.dumps({"failures": [f"{type(exc).__name__}: {exc}"], "times": times}))
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report | {"times": times}, indent=2))
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
