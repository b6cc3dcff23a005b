"""Weaviate as a cluster: the nodes to reach, how collections are replicated, and whether a
read can see every shard.

* `parse_nodes` reads one or several node addresses. Every node answers every query (Weaviate
  forwards to the shards' owners), so the store uses one node and fails over to the next.
* `ReplicationPolicy` is what `ensure_schema` gives a new collection: the replication factor,
  async replication (on whenever the factor is above 1, so a node that was down catches up with
  the writes it missed) and the consistency levels of reads and writes.
* `Completeness` refuses reads that would be silently partial. Weaviate answers a query from the
  shards it can reach: once a node is declared dead, a collection whose only copy of a shard
  lived there answers without it. The cluster's members come from Raft's configuration (dead
  nodes included) and the live ones from `/v1/nodes`; when at least `factor` members are gone,
  some shard may have no copy left and the read is refused, naming the missing nodes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from biomcp.ports.vectors import VectorStoreUnavailableError

__all__ = [
    "CONSISTENCY_LEVELS",
    "Completeness",
    "Consistency",
    "ReplicationPolicy",
    "WeaviateNode",
    "parse_nodes",
    "quiet_batch_errors",
]

Consistency = Literal["ONE", "QUORUM", "ALL"]
CONSISTENCY_LEVELS: tuple[Consistency, ...] = ("ONE", "QUORUM", "ALL")

#: How long the live nodes, then the cluster's members, are trusted once read.
LIVE_TTL_S = 1.0
MEMBERS_TTL_S = 60.0
#: A node seen down counts as down this long after it was last seen down: while Weaviate
#: declares a node dead, its node list can show it again for a moment.
DOWN_HOLD_S = 15.0


@dataclass(frozen=True)
class WeaviateNode:
    """One node's HTTP address and gRPC port."""

    host: str
    http_port: int
    grpc_port: int
    secure: bool = False

    @property
    def url(self) -> str:
        return f"{'https' if self.secure else 'http'}://{self.host}:{self.http_port}"


def parse_nodes(urls: str, grpc_port: int) -> tuple[WeaviateNode, ...]:
    """The nodes of `urls`: one or several comma-separated `http(s)://host:port` addresses.
    A URL may name its own gRPC port as `?grpc_port=N` (nodes on one host); else `grpc_port`.

    Raises:
        ValueError: an empty list, or an address that is not an http(s) URL with a host.
    """
    nodes: list[WeaviateNode] = []
    for raw in (part.strip() for part in urls.split(",")):
        if not raw:
            continue
        parts = urlsplit(raw)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL with a host: {parts.scheme}://{parts.hostname}")
        secure = parts.scheme == "https"
        own = parse_qs(parts.query).get("grpc_port", [])
        port = int(own[0]) if own and own[0].isdigit() else grpc_port
        if not 1 <= port <= 65535:
            raise ValueError(f"gRPC port out of range: {port}")
        http_port = parts.port or (443 if secure else 80)
        nodes.append(WeaviateNode(parts.hostname, http_port, port, secure))
    if not nodes:
        raise ValueError("no Weaviate node address")
    return tuple(nodes)


@dataclass(frozen=True)
class ReplicationPolicy:
    """How collections are replicated and read (the defaults suit one node)."""

    factor: int = 1
    async_replication: bool = True
    read_consistency: Consistency = "QUORUM"
    write_consistency: Consistency = "QUORUM"

    def __post_init__(self) -> None:
        if self.factor < 1:
            raise ValueError(f"replication factor must be at least 1, not {self.factor}")
        for level in (self.read_consistency, self.write_consistency):
            if level not in CONSISTENCY_LEVELS:
                raise ValueError(f"consistency level must be one of {CONSISTENCY_LEVELS}")

    @property
    def async_enabled(self) -> bool:
        """Async replication runs only where there are copies to repair."""
        return self.factor > 1 and self.async_replication


class Completeness:
    """Whether reads of a collection with `factor` copies of each shard can see every shard.

    `check` asks Weaviate at most once per `LIVE_TTL_S` which nodes live, and once per
    `MEMBERS_TTL_S` which nodes make up the cluster. A one-node cluster is never checked again.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._members: frozenset[str] = frozenset()
        self._members_at = float("-inf")
        self._live: frozenset[str] | None = None
        self._live_at = float("-inf")
        self._down_until: dict[str, float] = {}

    def forget(self) -> None:
        """Read both again on the next check (after a failover, say)."""
        self._members_at = self._live_at = float("-inf")

    async def check(self, client: Any, collection: str, factor: int) -> None:
        """Return when every shard of `collection` has a live copy, else raise.

        Raises:
            VectorStoreUnavailableError: `factor` or more members are not live, or (one copy
                per shard) the live nodes cannot be told.
        """
        members = await self._read_members(client)
        if len(members) <= 1:
            return
        live = await self._read_live(client)
        if live is None:
            if factor == 1:
                raise VectorStoreUnavailableError(
                    f"cannot tell which Weaviate nodes answer, and collection {collection!r} "
                    "keeps one copy of each shard: its results could be partial"
                )
            return  # each shard has copies: the read's consistency level guards it
        missing = sorted(self._held_down(members, live))
        if len(missing) >= factor:
            raise VectorStoreUnavailableError(
                f"Weaviate node(s) {', '.join(missing)} are unreachable and collection "
                f"{collection!r} keeps {factor} cop{'y' if factor == 1 else 'ies'} of each "
                "shard: its results would be partial"
            )

    def _held_down(self, members: frozenset[str], live: frozenset[str]) -> set[str]:
        """The members not live now, and those seen down within `DOWN_HOLD_S`."""
        now = self._clock()
        for name in members - live:
            self._down_until[name] = now + DOWN_HOLD_S
        held = {name for name, until in self._down_until.items() if until > now}
        return set(members - live) | (held & members)

    async def _read_members(self, client: Any) -> frozenset[str]:
        now = self._clock()
        if now - self._members_at < MEMBERS_TTL_S:
            return self._members
        try:
            stats = await client.cluster.statistics()
            members = {
                member.node_id
                for node in stats.statistics
                for member in node.raft.latest_configuration
            }
            members.update(node.name for node in stats.statistics)
        except Exception as exc:  # an older server, or one without Raft statistics
            logging.getLogger("biomcp.vectors").debug("no Raft statistics: %s", exc)
            members = set()
        if not members:  # keep the members known; else fall back on the nodes that answer
            members = set(self._members) or set(await self._read_live(client, fresh=True) or ())
        self._members, self._members_at = frozenset(members), now
        return self._members

    async def _read_live(self, client: Any, *, fresh: bool = False) -> frozenset[str] | None:
        now = self._clock()
        if not fresh and now - self._live_at < LIVE_TTL_S:
            return self._live
        try:
            nodes = await client.cluster.nodes()
            live: frozenset[str] | None = frozenset(
                node.name
                for node in nodes
                if str(getattr(node.status, "value", node.status)) == "HEALTHY"
            )
        except Exception as exc:  # a node is suspected and not yet declared dead
            logging.getLogger("biomcp.vectors").debug("no node status: %s", exc)
            live = None
        self._live, self._live_at = live, now
        return live


def _status(node: Any) -> str:
    return str(getattr(node.status, "value", node.status)).upper()


class _DropRefusedObjects(logging.Filter):
    """Drop the Weaviate client's batch-error records: they hold every refused object, vectors
    included. The store logs a summary of its own instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, dict) and "errors" in record.msg)


_FILTER = _DropRefusedObjects()


def quiet_batch_errors() -> None:
    """Install the filter on the client's logger (once)."""
    logger = logging.getLogger("weaviate-client")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
