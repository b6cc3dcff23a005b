"""The Weaviate clients of a store: one node in use, the others to fail over to; and the
client's exceptions as the port's errors.

Every node of a cluster answers every query, so one client is enough while its node lives.
When a call finds its node gone, `fail_over` closes that client and moves to the next node;
`failing_over_port` then repeats the call there. A node that failed is tried again only after
the others. Every exception the client lets out of a port method becomes the port's error:
the client's own errors, and the transport failures of its HTTP and gRPC channels it does not
wrap (a server killed mid-call: `httpx.ReadError`, a gRPC `UNAVAILABLE`), which are
`VectorStoreUnavailableError`.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import grpc  # type: ignore[import-untyped]  # no stubs; installed with weaviate-client
import httpx
import weaviate
import weaviate.classes as wvc
from weaviate.config import AdditionalConfig, Timeout
from weaviate.exceptions import (
    WeaviateBaseError,
    WeaviateConnectionError,
    WeaviateTimeoutError,
)

from biomcp.adapters.vectors.weaviate_cluster import WeaviateNode
from biomcp.ports.vectors import VectorStoreError, VectorStoreUnavailableError

__all__ = ["CLIENT_ERRORS", "NodePool", "failing_over_port", "translate"]

_log = logging.getLogger("biomcp.vectors")

#: What the client raises: its own errors, and its channels' that it lets through unwrapped.
CLIENT_ERRORS = (WeaviateBaseError, httpx.HTTPError, grpc.RpcError, OSError)
#: Transport failures: the server is down, unreachable or went away mid-call.
_TRANSPORT_ERRORS = (
    WeaviateConnectionError,
    WeaviateTimeoutError,
    httpx.TransportError,
    OSError,
)
_RETRYABLE_GRPC = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
#: Words of a query error that mean a node, not the request, failed (a remote shard is down).
_NODE_FAILURES = ("connection refused", "context deadline exceeded", "no route to host")

#: Seconds to connect (the client's readiness check included).
CONNECT_TIMEOUT_S = 5.0
#: A batch write may take longer than a query, but never less.
MIN_INSERT_TIMEOUT_S = 60.0


class NodePool:
    """Clients of `nodes`, built on first use; `client()` is the one in use."""

    def __init__(
        self,
        nodes: tuple[WeaviateNode, ...],
        *,
        api_key: str | None = None,
        query_timeout_s: float = 10.0,
        connect_errors: tuple[type[BaseException], ...] = (),
    ) -> None:
        if not nodes:
            raise ValueError("no Weaviate node")
        self.nodes = nodes
        self._api_key = api_key
        self._timeout = Timeout(
            init=CONNECT_TIMEOUT_S,
            query=query_timeout_s,
            insert=max(MIN_INSERT_TIMEOUT_S, query_timeout_s),
        )
        #: The most one attempt of a read, then of a write, may take on one node (plus the
        #: connection's time when it connects first). The client retries a refused gRPC call
        #: for a minute on its own; past this bound the node counts as failed.
        self.read_bound_s = query_timeout_s
        self.write_bound_s = float(self._timeout.insert)
        self._connect_errors = connect_errors
        self._current = 0
        self._client: weaviate.WeaviateAsyncClient | None = None
        self._lock = asyncio.Lock()
        #: Counts failovers, for logs and tests.
        self.failovers = 0

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def current(self) -> Any:
        """The client in use, or None before the first connection."""
        return self._client

    @property
    def node(self) -> WeaviateNode:
        """The node in use (or to be tried first)."""
        return self.nodes[self._current]

    async def client(self) -> weaviate.WeaviateAsyncClient:
        """The client in use, connecting first: to the current node, else each next one.

        Raises:
            VectorStoreUnavailableError: no node accepts a connection.
        """
        async with self._lock:
            if self._client is not None:
                return self._client
            reasons: list[str] = []
            for _ in range(self.size):
                node = self.node
                try:
                    self._client = await self._connect(node)
                    return self._client
                except VectorStoreUnavailableError as exc:
                    reasons.append(str(exc))
                    self._current = (self._current + 1) % self.size
            raise VectorStoreUnavailableError("; ".join(reasons))

    async def fail_over(self, client: Any) -> bool:
        """After `client`'s node failed a call: close it and move to the next node. False when
        there is no other node. A client already replaced (by a concurrent call) is left."""
        if self.size == 1:
            await self._drop(client)
            return False
        async with self._lock:
            if self._client is client and client is not None:
                failed = self.node
                self._client = None
                self._current = (self._current + 1) % self.size
                self.failovers += 1
                _log.warning("Weaviate node %s failed; now using %s", failed.url, self.node.url)
                await _close(client)
        return True

    async def _drop(self, client: Any) -> None:
        """Forget `client` (one node: the next call connects again)."""
        async with self._lock:
            if self._client is client and client is not None:
                self._client = None
                await _close(client)

    async def aclose(self) -> None:
        async with self._lock:
            client, self._client = self._client, None
        if client is not None:
            await _close(client)

    async def _connect(self, node: WeaviateNode) -> weaviate.WeaviateAsyncClient:
        try:
            client = weaviate.use_async_with_custom(
                http_host=node.host,
                http_port=node.http_port,
                http_secure=node.secure,
                grpc_host=node.host,
                grpc_port=node.grpc_port,
                grpc_secure=node.secure,
                auth_credentials=wvc.init.Auth.api_key(self._api_key) if self._api_key else None,
                additional_config=AdditionalConfig(timeout=self._timeout),
            )
        except (ValueError, WeaviateBaseError) as exc:  # bad host / port combination
            raise VectorStoreUnavailableError(
                f"cannot use Weaviate at {node.url} (gRPC port {node.grpc_port}): {exc}"
            ) from exc
        try:
            await client.connect()
        except self._connect_errors as exc:
            await _close(client)
            raise VectorStoreUnavailableError(
                f"cannot reach Weaviate at {node.url}: {type(exc).__name__}"
            ) from exc
        return client


async def _close(client: Any) -> None:
    try:
        await client.close()
    except Exception as exc:  # closing a client whose node is gone may fail: it is dropped
        _log.debug("closing a Weaviate client failed: %s", exc)


class _PooledStore(Protocol):
    _pool: NodePool

    def _forget(self) -> bool: ...


#: Port methods that write (bounded as writes), and those whose cost can grow with the
#: collection (left to the client's own timeouts, per request). `ensure_schema` walks an older
#: collection once to derive its keyword terms.
WRITES = frozenset(
    {"ensure_schema", "upsert_chunks", "delete_chunks", "delete_documents", "drop_collection"}
)
UNBOUNDED = frozenset({"ensure_schema", "stats", "verify"})


S = TypeVar("S", bound=_PooledStore)
P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)


def _failing_over(
    method: Callable[Concatenate[S, P], Awaitable[R]],
) -> Callable[Concatenate[S, P], Awaitable[R]]:
    """`method` with every client exception raised as the port's error (`from` it), repeated
    on the next node when its node failed, and once more when the schema it knew went stale."""

    name = method.__name__

    @functools.wraps(method)
    async def call(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        tries, refreshed = 0, False
        pool = self._pool
        bound = pool.write_bound_s if name in WRITES else pool.read_bound_s
        while True:
            client = pool.current
            limit = (
                None if name in UNBOUNDED else bound + (CONNECT_TIMEOUT_S if client is None else 0)
            )
            try:
                async with asyncio.timeout(limit):
                    return await method(self, *args, **kwargs)
            except (*CLIENT_ERRORS, TimeoutError) as exc:
                error = translate(exc)
                tries += 1
                if isinstance(error, VectorStoreUnavailableError):
                    moved = await self._pool.fail_over(client)
                    if moved and tries < self._pool.size:
                        self._forget()
                        continue
                elif not refreshed and self._forget():
                    refreshed = True
                    continue
                raise error from exc

    return call


def failing_over_port(cls: C) -> C:
    """`cls` with `_failing_over` around each of its public coroutine methods (the port)."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, _failing_over(member))
    return cls


def translate(exc: BaseException) -> VectorStoreError:
    """The port's error for a client exception: a failed node is unavailability."""
    if isinstance(exc, TimeoutError):
        return VectorStoreUnavailableError("Weaviate did not answer in time")
    lost = isinstance(exc, _TRANSPORT_ERRORS) or (
        isinstance(exc, grpc.RpcError)
        and callable(code := getattr(exc, "code", None))
        and code() in _RETRYABLE_GRPC
    )
    text = str(exc).lower()
    if lost or any(words in text for words in _NODE_FAILURES):
        return VectorStoreUnavailableError(f"Weaviate unreachable: {type(exc).__name__}")
    message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return VectorStoreError(f"Weaviate error: {message}")
