"""A Weaviate that dies mid-call: the adapter raises the port's error, never the client's.

The "server" is real sockets on loopback: an HTTP/1.1 listener that answers the client's
start-up calls (`/v1/meta`), a gRPC server that answers its health check, and then, on the
first schema call a port method makes, cuts the connection: halfway through the response, or
with a reset (what a killed process leaves).
"""

from __future__ import annotations

import asyncio
import json
import socket
import socketserver
import struct
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc  # type: ignore[import-untyped]  # no stubs; installed with weaviate-client
import pytest

from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.ports.vectors import ChunkRecord, VectorStoreUnavailableError
from biomcp.usecases.ranking import hybrid_search

pytestmark = pytest.mark.integration

_META = json.dumps({"version": "1.30.0", "hostname": "http://[::]:8080", "modules": {}})


class _DyingWeaviate(socketserver.ThreadingTCPServer):
    """Answers the start-up calls (`/v1/meta`, `/v1/.well-known/*`: no authentication); any
    other request dies as `death` says."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, death: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.death = death
        self.cut: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(socketserver.StreamRequestHandler):
    server: _DyingWeaviate

    def handle(self) -> None:
        line = self.rfile.readline().decode("latin-1")
        if not line:
            return
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # headers; the requests that matter here have no body
        path = line.split()[1]
        if path == "/v1/.well-known/openid-configuration":  # no authentication configured
            self.wfile.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            return
        if path == "/v1/meta" or path.startswith("/v1/.well-known/"):
            body = _META.encode()
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            return
        self.server.cut.append(path)
        if self.server.death == "reset":  # SO_LINGER 0: close sends RST, as a killed process
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        self.wfile.write(  # half a response, then the connection closes
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b'Content-Length: 4096\r\n\r\n{"class": "PubMedChunk", "descr'
        )


def _serving(request: bytes, context: Any) -> bytes:
    return b"\x08\x01"  # grpc.health.v1.HealthCheckResponse(status=SERVING)


@pytest.fixture
def grpc_port() -> Iterator[int]:
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    health = grpc.method_handlers_generic_handler(
        "grpc.health.v1.Health", {"Check": grpc.unary_unary_rpc_method_handler(_serving)}
    )
    server.add_generic_rpc_handlers((health,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield port
    finally:
        server.stop(grace=None)


@pytest.fixture(params=["half a response", "reset"])
def weaviate(request: pytest.FixtureRequest) -> Iterator[_DyingWeaviate]:
    server = _DyingWeaviate(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _chunk() -> ChunkRecord:
    return ChunkRecord(
        uuid="00000000-0000-0000-0000-000000000001",
        doc_id="pmid:1",
        chunk_id="abstract:0",
        text="aspirin",
        vector=[1.0, 0.0, 0.0, 0.0],
    )


def test_a_weaviate_lost_mid_call_fails_a_search_and_a_write_as_unavailable(
    weaviate: _DyingWeaviate, grpc_port: int
) -> None:
    async def scenario() -> list[BaseException]:
        store = WeaviateVectorStore(weaviate.url, grpc_port=grpc_port)
        raised: list[BaseException] = []
        try:
            for call in (
                hybrid_search(store, "PubMedChunk", "aspirin", [1.0, 0.0, 0.0, 0.0]),
                store.upsert_chunks("PubMedChunk", [_chunk()]),
                store.delete_chunks("PubMedChunk", "pmid:1"),
            ):
                with pytest.raises(VectorStoreUnavailableError) as caught:
                    await call
                raised.append(caught.value)
        finally:
            await store.aclose()
        return raised

    raised = asyncio.run(scenario())
    assert [str(exc) for exc in raised] == [
        f"Weaviate unreachable: {type(exc.__cause__).__name__}" for exc in raised
    ]
    assert all(exc.__cause__ is not None for exc in raised)
    assert weaviate.cut == ["/v1/schema/PubMedChunk"] * 3  # each call died in flight
