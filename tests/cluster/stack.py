"""The whole stack of a scaled-out bio-mcp on loopback, started once for the cluster suite.

A database of its own on the test PostgreSQL, a new three-node Weaviate cluster, the fake
E-utilities, two `biomcp serve-http` replicas (separate data folders, as on two machines:
replication factor 3, stateless Streamable HTTP, NCBI's budget in PostgreSQL) and the tests'
round-robin balancer in front, run in a thread of its own. Every piece is a real process or
server; `running_stack` stops them all, whatever the tests did.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import httpx
from sqlalchemy import create_engine, make_url

from biomcp.adapters.sql import upgrade
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.balancer import Balancer, round_robin
from tests.support.servers import HttpServer, serve_http, server_env
from tests.support.weaviate_cluster import Node, WeaviateCluster, cluster_of

__all__ = ["Corpus", "Stack", "fresh_database", "running_stack"]


@dataclass(frozen=True)
class Corpus:
    """The fake's records: disjoint PMID ranges, one per scenario, each a PubMed term."""

    first: int
    count: int
    start: date
    end: date

    @property
    def term(self) -> str:
        return f"{self.first}:{self.first + self.count - 1}[uid]"

    @property
    def pmids(self) -> list[str]:
        return [str(self.first + i) for i in range(self.count)]

    def xml(self, seed: int) -> bytes:
        return generate_articles(
            self.count, start=self.start, end=self.end, seed=seed, pmid_start=self.first
        )


#: The corpus synced when the stack starts (what the searches read), across four years.
#: The `nice -n` of the stack's replicas and CLI syncs. The fake E-utilities runs in the test's
#: process and timestamps each arrival; at a lower priority, the processes under test cannot
#: keep it from reading an arrival when it comes (bunched arrivals on a loaded machine).
CHILD_NICENESS = 5

BASE = Corpus(31_000_000, 40, date(2018, 1, 1), date(2021, 12, 31))
#: Synced while a Weaviate node is down.
OUTAGE = Corpus(32_000_000, 60, date(2023, 1, 1), date(2023, 12, 31))
#: Synced by a replica that is killed, then by the other.
KILLED = Corpus(34_000_000, 40, date(2024, 1, 1), date(2024, 6, 30))
#: One range per sync of the shared-budget scenario (three CLI processes, two replicas).
BUDGET = tuple(
    Corpus(33_000_000 + 1000 * i, 30, date(2022, 1, 1), date(2022, 12, 31)) for i in range(5)
)


@dataclass
class Stack:
    """The running stack: what a test reaches and what it may kill."""

    root: Path
    database: str
    fake: FakeEutilsServer
    weaviate: WeaviateCluster
    replicas: list[HttpServer]
    balancer: Balancer
    env: dict[str, str]

    @property
    def url(self) -> str:
        """The balancer's MCP endpoint."""
        return f"{self.balancer.base_url}/mcp"

    @property
    def weaviate_urls(self) -> str:
        return ",".join(node_url(node) for node in self.weaviate.nodes)

    def cli_env(self, name: str) -> dict[str, str]:
        """The environment of a `biomcp` process on another machine (its own data folder)."""
        return {**self.env, "BIOMCP_DATA_DIR": str(self.root / name)}

    def slow_efetch(self, count: int, delay_s: float) -> None:
        """The next `count` EFetch requests answer `delay_s` late (a sync that lasts)."""
        self.fake.faults.sequence([{"kind": "slow", "delay": delay_s}] * count, endpoint="efetch")


def node_url(node: Node) -> str:
    """A node as `WEAVIATE_URL` names it (with its own gRPC port)."""
    return f"{node.url}?grpc_port={node.grpc_port}"


@contextmanager
def fresh_database(url: str) -> Iterator[str]:
    """A new, empty database on the server of `url`, dropped after (connections and all)."""
    name = f"biomcp_cluster_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def _fake() -> FakeEutilsServer:
    corpora = [BASE, OUTAGE, KILLED, *BUDGET]
    xml = [corpus.xml(seed) for seed, corpus in enumerate(corpora, start=40)]
    return FakeEutilsServer(FakeCorpus.from_xml_bytes(*xml), warm=True)


def _env(
    root: Path, fake: FakeEutilsServer, database: str, weaviate: WeaviateCluster
) -> dict[str, str]:
    return server_env(
        root / "data",
        fake.base_url,
        BIOMCP_DATABASE_URL=database,
        BIOMCP_VECTOR_BACKEND="weaviate",
        WEAVIATE_URL=",".join(node_url(node) for node in weaviate.nodes),
        WEAVIATE_REPLICATION_FACTOR="3",
        WEAVIATE_ASYNC_REPLICATION="true",
        MCP_HTTP_STATELESS="true",
        BIOMCP_NCBI_SHARED_BUDGET="true",
        BIOMCP_SYNC_BATCH_SIZE="5",
        BIOMCP_SYNC_WAIT_S="0",
        MCP_LOG_LEVEL="warning",
    )


def start_replica(stack_env: dict[str, str], root: Path, name: str, exits: ExitStack) -> HttpServer:
    """A `biomcp serve-http` replica with a data folder of its own (not yet waited for)."""
    env = {**stack_env, "BIOMCP_DATA_DIR": str(root / name)}
    return exits.enter_context(
        serve_http(["--port", "0"], env=env, cwd=root, wait=False, niceness=CHILD_NICENESS)
    )


def wait_ready(replica: HttpServer) -> None:
    replica.wait_started()
    response = httpx.get(f"{replica.base_url}/health", timeout=30)
    assert response.status_code == 200, response.text


@contextmanager
def _balancer_thread(
    upstreams: list[tuple[str, int]],
) -> Iterator[Balancer]:
    """The round-robin balancer served from an event loop in a daemon thread."""
    loop = asyncio.new_event_loop()
    started: Future[Balancer] = Future()
    stop = asyncio.Event()

    async def serve() -> None:
        try:
            async with round_robin(upstreams) as balancer:
                started.set_result(balancer)
                await stop.wait()
        except BaseException as exc:  # a balancer that could not start fails the fixture
            if not started.done():
                started.set_exception(exc)
            raise

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    try:
        yield started.result(timeout=30)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=30)
        loop.close()


@contextmanager
def running_stack(root: Path, postgres: str) -> Iterator[Stack]:
    """The whole stack, up and ready (each wait bounded), stopped on exit."""
    with ExitStack() as exits:
        database = exits.enter_context(fresh_database(postgres))
        upgrade(database)  # replicas on PostgreSQL never migrate it themselves
        weaviate = exits.enter_context(cluster_of(root / "weaviate", 3))
        fake = exits.enter_context(_fake())
        env = _env(root, fake, database, weaviate)
        replicas = [start_replica(env, root, name, exits) for name in ("replica-a", "replica-b")]
        for replica in replicas:
            wait_ready(replica)
        upstreams = [("127.0.0.1", replica.port) for replica in replicas]
        balancer = exits.enter_context(_balancer_thread(upstreams))
        yield Stack(root, database, fake, weaviate, replicas, balancer, env)
