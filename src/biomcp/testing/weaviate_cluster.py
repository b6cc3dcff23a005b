"""A Weaviate cluster of several real nodes on loopback, for tests and benchmarks.

Each node is a `weaviate-server` process (the binary `scripts/services.sh` builds) with its own
data folder and its own block of ports: HTTP, gRPC, gossip, data, Raft and Raft's internal RPC
(which Weaviate's local mode expects one above the Raft port). Nodes can be killed and started
again on the same ports and data, as a failed machine that comes back would.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "FLUSH_DIRTY_AFTER_S",
    "FLUSH_SETTING",
    "Node",
    "WeaviateCluster",
    "find_weaviate_binary",
]

#: Ports per node: HTTP, gRPC, gossip, data, Raft, Raft RPC, profiling.
_PORTS_PER_NODE = 7
_VERSION = os.environ.get("BIOMCP_WEAVIATE_VERSION", "v1.35.2")
#: Weaviate's setting for how soon unflushed writes reach a segment, where BM25 is fast, and
#: the seconds the compose file and `scripts/services.sh` give it (Weaviate's own is 60).
FLUSH_SETTING = "PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS"
FLUSH_DIRTY_AFTER_S = 10


def find_weaviate_binary() -> Path:
    """Where `scripts/services.sh` builds `weaviate-server` (it may not be there)."""
    folder = os.environ.get("BIOMCP_WEAVIATE_BIN_DIR") or str(
        Path.home() / ".cache" / "bio-mcp" / "weaviate" / _VERSION
    )
    return Path(folder) / "weaviate-server"


def _free_block(size: int, taken: list[int]) -> int:
    """The first port of `size` consecutive free loopback ports, clear of the blocks `taken`.

    Blocks lie below the kernel's ephemeral range. A killed node restarts on its own ports, and
    an outgoing connection could otherwise take one of them as its local port meanwhile.
    """
    ceiling = max(_ephemeral_start(), _LOWEST_PORT + 1_000) - size
    chooser = random.Random()  # noqa: S311 (a port to try, not a secret)
    for _ in range(500):
        base = chooser.randrange(_LOWEST_PORT, ceiling)
        if any(abs(base - other) < size for other in taken):
            continue
        if all(_free(base + offset) for offset in range(size)):
            return base
    raise RuntimeError("no block of free ports on loopback")


#: Below this are the well-known and commonly configured ports.
_LOWEST_PORT = 20_000


def _ephemeral_start() -> int:
    """The first port of the kernel's ephemeral range (Linux's default where it is not told)."""
    try:
        text = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text(encoding="ascii")
        return int(text.split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def _free(port: int) -> bool:
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_INET, kind) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


@dataclass
class Node:
    """One node: its name, first port and data folder; `process` while it runs."""

    name: str
    base: int
    folder: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def http_port(self) -> int:
        return self.base

    @property
    def grpc_port(self) -> int:
        return self.base + 1

    @property
    def gossip_port(self) -> int:
        return self.base + 2

    @property
    def raft_port(self) -> int:
        return self.base + 4

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class WeaviateCluster:
    """`size` nodes forming one cluster (every node a Raft voter). Use as a context manager:
    it starts every node and waits until each sees all of them, and stops them all on exit."""

    def __init__(
        self,
        root: Path,
        size: int = 3,
        *,
        binary: Path | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.binary = binary or find_weaviate_binary()
        self.root = root
        self.extra_env = dict(extra_env or {})
        self.nodes: list[Node] = []
        for index in range(size):
            base = _free_block(_PORTS_PER_NODE, [node.base for node in self.nodes])
            folder = root / f"node{index + 1}"
            folder.mkdir(parents=True, exist_ok=True)
            self.nodes.append(Node(f"node{index + 1}", base, folder))

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes]

    @property
    def grpc_ports(self) -> list[int]:
        return [node.grpc_port for node in self.nodes]

    def __enter__(self) -> WeaviateCluster:
        try:
            for node in self.nodes:
                self.start(node)
                _wait_listening(node.gossip_port, node)
            self.wait_formed()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _env(self, node: Node) -> dict[str, str]:
        join = ",".join(f"{n.name}:{n.raft_port}" for n in self.nodes)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PERSISTENCE_DATA_PATH": str(node.folder / "data"),
            "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "true",
            "DEFAULT_VECTORIZER_MODULE": "none",
            "API_BASED_MODULES_DISABLED": "true",
            "DISABLE_TELEMETRY": "true",
            FLUSH_SETTING: str(FLUSH_DIRTY_AFTER_S),
            "CLUSTER_HOSTNAME": node.name,
            "CLUSTER_IN_LOCALHOST": "true",
            "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
            "CLUSTER_BIND_ADDR": "127.0.0.1",
            "CLUSTER_GOSSIP_BIND_PORT": str(node.gossip_port),
            "CLUSTER_DATA_BIND_PORT": str(node.base + 3),
            "RAFT_PORT": str(node.raft_port),
            "RAFT_INTERNAL_RPC_PORT": str(node.raft_port + 1),
            "RAFT_JOIN": join,
            "RAFT_BOOTSTRAP_EXPECT": str(len(self.nodes)),
            "GRPC_PORT": str(node.grpc_port),
            "GO_PROFILING_PORT": str(node.base + 6),
            "LOG_LEVEL": os.environ.get("BIOMCP_WEAVIATE_LOG_LEVEL", "warning"),
        }
        peers = [f"127.0.0.1:{n.gossip_port}" for n in self.nodes if n is not node and n.running]
        if peers:  # the first node of a new cluster has none to join yet
            env["CLUSTER_JOIN"] = ",".join(peers)
        env.update(self.extra_env)
        return env

    def start(self, node: Node) -> None:
        """Start `node` (again) on its ports and data folder."""
        if node.running:
            return
        log = (node.folder / "server.log").open("ab")
        node.process = subprocess.Popen(  # noqa: S603 (the built server, fixed arguments)
            [str(self.binary), "--host", "127.0.0.1", "--port", str(node.http_port),
             "--scheme", "http"],
            cwd=node.folder, env=self._env(node), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()

    def kill(self, node: Node) -> None:
        """SIGKILL `node` and reap it: a machine that vanished."""
        if node.process is not None and node.process.poll() is None:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait(timeout=30)

    def close(self) -> None:
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    node.process.wait(timeout=10)

    def ready(self, node: Node) -> bool:
        return _get(f"{node.url}/v1/.well-known/ready") is not None

    def members(self, node: Node) -> dict[str, str]:
        """Each node's status as `node` sees it (HEALTHY, UNAVAILABLE, ...)."""
        body = _get(f"{node.url}/v1/nodes")
        if body is None:
            return {}
        return {n["name"]: n.get("status", "") for n in json.loads(body).get("nodes", [])}

    def wait_formed(self, timeout_s: float = 120.0) -> None:
        """Wait until every running node is ready and sees every running node healthy."""
        deadline = time.monotonic() + timeout_s
        running = [n for n in self.nodes if n.running]
        while time.monotonic() < deadline:
            dead = [n.name for n in self.nodes if n.process is not None and not n.running]
            if dead and any(n.name in dead for n in running):
                raise RuntimeError(f"Weaviate nodes exited: {dead}; see their server.log")
            if all(self.ready(n) for n in running) and all(
                sum(status == "HEALTHY" for status in self.members(n).values()) >= len(running)
                for n in running
            ):
                return
            time.sleep(0.5)
        logs = {n.name: _tail(n.folder / "server.log") for n in self.nodes}
        raise RuntimeError(f"the Weaviate cluster did not form in {timeout_s:g}s: {logs}")


def _wait_listening(port: int, node: Node, timeout_s: float = 60.0) -> None:
    """Wait until `node` accepts connections on `port` (its gossip port: others can join)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not node.running:
            raise RuntimeError(f"{node.name} exited: {_tail(node.folder / 'server.log')}")
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{node.name} does not listen on {port}")


def _get(url: str) -> bytes | None:
    with (
        contextlib.suppress(OSError, urllib.error.URLError),
        urllib.request.urlopen(url, timeout=5) as response,  # noqa: S310 (loopback)
    ):
        if response.status == 200:
            return bytes(response.read())
    return None


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
