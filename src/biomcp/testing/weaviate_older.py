"""A Weaviate collection as an older bio-mcp made it: no keyword terms, no analyzer named.

Tests and benchmarks use it to check how today's store takes such a collection over.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import weaviate
import weaviate.classes as wvc

from biomcp.adapters.vectors.weaviate_objects import (
    TERMS,
    VECTOR,
    properties_of,
    schema_properties,
)
from biomcp.ports.vectors import ChunkRecord

__all__ = ["make_older_collection"]


def make_older_collection(
    host: str, http_port: int, grpc_port: int, name: str, dim: int, chunks: Sequence[ChunkRecord]
) -> None:
    """Create the class `name` without a `terms` property and fill it with `chunks`."""
    client = weaviate.connect_to_custom(
        http_host=host, http_port=http_port, http_secure=False,
        grpc_host=host, grpc_port=grpc_port, grpc_secure=False,
    )  # fmt: skip
    try:
        handle = client.collections.create(
            name,
            description=json.dumps({"model_id": "m", "dim": dim, "collection": name}),
            vector_config=wvc.config.Configure.Vectors.self_provided(name=VECTOR),
            properties=[p for p in schema_properties() if p.name != TERMS],
        )
        for first in range(0, len(chunks), 500):
            batch = chunks[first : first + 500]
            result = handle.data.insert_many(
                [
                    wvc.data.DataObject(
                        uuid=c.uuid,
                        properties={k: v for k, v in properties_of(c).items() if k != TERMS},
                        vector={VECTOR: c.vector},
                    )
                    for c in batch
                ]
            )
            if result.errors:
                raise RuntimeError(f"Weaviate refused older objects: {result.errors}")
    finally:
        client.close()
