"""The chunks the embedded store's crash test writes: an old and a new version of each.

A chunk's text and vector both carry its version, so a reopened store shows whether any chunk
mixes the two. The child process that is killed mid-write imports them from here too.
"""

from __future__ import annotations

import uuid

import numpy as np

from biomcp.ports.vectors import ChunkRecord

__all__ = ["BATCH", "DELETED_DOCS", "DIM", "NEW", "OLD", "chunks", "doc_of"]

DIM = 64
OLD = 3000  # chunks before the crash
NEW = 4000  # chunks the child writes: OLD replaced + 1000 fresh
BATCH = 1000
DELETED_DOCS = 50
NAMESPACE = uuid.UUID("0b8c1f7e-8f5e-4a39-a7c8-3f5f2f3b9a10")


def doc_of(i: int) -> str:
    return f"pmid:{i // 2}"


def _vector(i: int, version: str) -> list[float]:
    rng = np.random.default_rng([i, 0 if version == "old" else 1])
    v = rng.standard_normal(DIM)
    unit: list[float] = (v / np.linalg.norm(v)).tolist()
    return unit


def chunks(version: str, n: int) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            uuid=str(uuid.uuid5(NAMESPACE, str(i))),
            doc_id=doc_of(i),
            chunk_id=str(i % 2),
            text=f"marker{i} {version}word shared clinical text about trial {i % 97}",
            vector=_vector(i, version),
            year=2000 + i % 25,
        )
        for i in range(n)
    ]
