"""Weaviate as a cluster, without a server: node addresses, the replication policy, and the
rule that refuses reads which could be partial."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from biomcp.adapters.vectors.weaviate_cluster import (
    DOWN_HOLD_S,
    Completeness,
    ReplicationPolicy,
    WeaviateNode,
    parse_nodes,
    quiet_batch_errors,
)
from biomcp.ports.vectors import VectorStoreUnavailableError


def test_one_url_is_one_node_with_the_default_grpc_port() -> None:
    assert parse_nodes("http://10.0.0.5:8080", 50051) == (WeaviateNode("10.0.0.5", 8080, 50051),)


def test_several_urls_are_nodes_in_order_and_each_may_name_its_grpc_port() -> None:
    nodes = parse_nodes(
        "http://127.0.0.1:8081?grpc_port=50052, https://wv.example.org ,http://h:8083", 50051
    )
    assert nodes == (
        WeaviateNode("127.0.0.1", 8081, 50052),
        WeaviateNode("wv.example.org", 443, 50051, secure=True),
        WeaviateNode("h", 8083, 50051),
    )
    assert nodes[1].url == "https://wv.example.org:443"


@pytest.mark.parametrize("urls", ["", " , ", "ftp://h:1", "http://", "http://h:1?grpc_port=70000"])
def test_bad_node_lists_are_refused(urls: str) -> None:
    with pytest.raises(ValueError, match=r"URL|node|port"):
        parse_nodes(urls, 50051)


def test_async_replication_runs_only_above_one_copy() -> None:
    assert not ReplicationPolicy(factor=1).async_enabled
    assert ReplicationPolicy(factor=3).async_enabled
    assert not ReplicationPolicy(factor=3, async_replication=False).async_enabled


@pytest.mark.parametrize(
    "fields", [{"factor": 0}, {"read_consistency": "MOST"}, {"write_consistency": "one"}]
)
def test_a_bad_policy_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"factor|consistency"):
        ReplicationPolicy(**fields)


@dataclass
class FakeCluster:
    """The two answers `Completeness` reads: Raft's members and the live nodes."""

    members: list[str]
    live: list[str] | None
    calls: list[str] = field(default_factory=list)

    async def statistics(self) -> Any:
        self.calls.append("statistics")
        config = [SimpleNamespace(node_id=name) for name in self.members]
        return SimpleNamespace(
            statistics=[SimpleNamespace(name=self.members[0], raft=SimpleNamespace(
                latest_configuration=config))]
        )  # fmt: skip

    async def nodes(self) -> list[Any]:
        self.calls.append("nodes")
        if self.live is None:
            raise RuntimeError("Nodes status! Unexpected status code: 500")
        return [SimpleNamespace(name=name, status="HEALTHY") for name in self.live]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _check(cluster: FakeCluster, factor: int, completeness: Completeness | None = None) -> None:
    checker = completeness or Completeness()
    asyncio.run(checker.check(SimpleNamespace(cluster=cluster), "PubMedChunk", factor))


def test_a_lost_node_refuses_reads_of_a_collection_with_one_copy_and_names_it() -> None:
    cluster = FakeCluster(["node1", "node2", "node3"], ["node1", "node2"])
    with pytest.raises(VectorStoreUnavailableError, match=r"node3.*1 copy.*partial"):
        _check(cluster, factor=1)


def test_a_lost_node_leaves_reads_of_a_collection_with_copies_alone() -> None:
    _check(FakeCluster(["node1", "node2", "node3"], ["node1", "node2"]), factor=3)
    _check(FakeCluster(["node1", "node2", "node3"], ["node1", "node2"]), factor=2)


def test_as_many_lost_nodes_as_copies_refuse_reads() -> None:
    cluster = FakeCluster(["node1", "node2", "node3"], ["node1"])
    with pytest.raises(VectorStoreUnavailableError, match="node2, node3"):
        _check(cluster, factor=2)


def test_unknown_live_nodes_refuse_one_copy_and_trust_copies() -> None:
    cluster = FakeCluster(["node1", "node2", "node3"], None)
    with pytest.raises(VectorStoreUnavailableError, match="cannot tell"):
        _check(cluster, factor=1)
    _check(FakeCluster(["node1", "node2", "node3"], None), factor=3)


def test_a_one_node_cluster_is_asked_for_its_members_only() -> None:
    cluster = FakeCluster(["node1"], ["node1"])
    _check(cluster, factor=1)
    assert cluster.calls == ["statistics"]


def test_live_nodes_are_read_at_most_once_a_second_and_members_once_a_minute() -> None:
    clock = Clock()
    completeness = Completeness(clock=clock)
    cluster = FakeCluster(["node1", "node2", "node3"], ["node1", "node2", "node3"])
    for _ in range(5):
        _check(cluster, 1, completeness)
    assert cluster.calls == ["statistics", "nodes"]
    cluster.live = ["node1", "node2"]
    clock.now += 1.5  # the live nodes are read again, not the members
    with pytest.raises(VectorStoreUnavailableError):
        _check(cluster, 1, completeness)
    assert cluster.calls == ["statistics", "nodes", "nodes"]
    clock.now += 61
    cluster.members = ["node1", "node2"]  # node3 left the cluster for good
    _check(cluster, 1, completeness)
    assert cluster.calls.count("statistics") == 2


def test_members_stay_known_when_raft_statistics_fail_after_a_failover() -> None:
    clock = Clock()
    completeness = Completeness(clock=clock)
    cluster = FakeCluster(["node1", "node2", "node3"], ["node1", "node2", "node3"])
    _check(cluster, 1, completeness)

    async def no_statistics() -> Any:
        raise RuntimeError("the Raft leader is gone")

    cluster.statistics = no_statistics  # type: ignore[method-assign]
    cluster.live = ["node1", "node2"]
    completeness.forget()  # a failover forgets what was read
    with pytest.raises(VectorStoreUnavailableError, match="node3"):
        _check(cluster, 1, completeness)


def test_a_node_seen_down_stays_down_while_weaviate_declares_it_dead() -> None:
    clock = Clock()
    completeness = Completeness(clock=clock)
    cluster = FakeCluster(["node1", "node2", "node3"], ["node1", "node2"])
    with pytest.raises(VectorStoreUnavailableError, match="node3"):
        _check(cluster, 1, completeness)
    cluster.live = ["node1", "node2", "node3"]  # listed again for a moment
    clock.now += DOWN_HOLD_S - 1
    with pytest.raises(VectorStoreUnavailableError, match="node3"):
        _check(cluster, 1, completeness)
    clock.now += 2  # seen live past the hold: back
    _check(cluster, 1, completeness)


def test_the_clients_record_of_refused_objects_is_dropped_and_other_records_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    quiet_batch_errors()
    quiet_batch_errors()  # installed once
    logger = logging.getLogger("weaviate-client")
    assert len([f for f in logger.filters if type(f).__name__ == "_DropRefusedObjects"]) == 1
    with caplog.at_level(logging.INFO, logger="weaviate-client"):
        logger.error({"message": "Failed to send 1 objects", "errors": {0: [0.1] * 384}})
        logger.warning("a plain warning stays")
    assert [r.getMessage() for r in caplog.records] == ["a plain warning stays"]
