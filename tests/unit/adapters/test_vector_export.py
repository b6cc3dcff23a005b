"""A collection exported to a file comes back whole in another store; a damaged file is
refused with a message, and nothing half-read is written."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import pytest

from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.adapters.vectors.export import ExportError, export_collection, import_collection
from biomcp.ports.vectors import ChunkRecord
from tests.contract.vector_contract import unit_vector

DIM = 8


def _chunks(n: int) -> list[ChunkRecord]:
    return [
        ChunkRecord(
            uuid=f"00000000-0000-4000-8000-{i:012d}",
            doc_id=f"item-{i % 3}",
            chunk_id=f"c{i}",
            text=f"chunk {i} é ✓",
            vector=unit_vector(DIM, seed=i),
            section="Results" if i % 2 else None,
            year=2000 + i,
            pub_types=("Journal Article",),
            metadata={"nested": {"n": i}, "tags": ["x"]},
            facets={"tags": ("x", f"t{i}")},
            sentence_vectors=tuple(unit_vector(DIM, seed=1000 + i + s) for s in range(i % 3)),
        )
        for i in range(n)
    ]


def test_an_exported_collection_is_read_back_whole_into_another_store(tmp_path: Path) -> None:
    chunks = _chunks(1203)  # more than two pages

    async def scenario() -> tuple[str, int, list[ChunkRecord]]:
        source = EmbeddedVectorStore(tmp_path / "a")
        target = EmbeddedVectorStore(tmp_path / "b")
        try:
            await source.ensure_schema("Proj_x", dim=DIM, model_id="model-1")
            await source.upsert_chunks("Proj_x", chunks)
            assert await export_collection(source, "Proj_x", tmp_path / "x.jsonl.gz") == 1203
            name, written = await import_collection(target, tmp_path / "x.jsonl.gz")
            stats = await target.stats(name)
            assert (stats.dim, stats.model_id) == (DIM, "model-1")
            back = await target.fetch_chunks(name, [c.uuid for c in chunks])
            return name, written, back
        finally:
            await source.aclose()
            await target.aclose()

    name, written, back = asyncio.run(scenario())
    assert (name, written) == ("Proj_x", 1203)
    by_uuid = {c.uuid: c for c in back}
    for original in chunks:
        got = by_uuid[original.uuid]
        assert list(got.vector) == pytest.approx(list(original.vector), abs=1e-6)
        assert {k: sorted(v) for k, v in got.facets.items()} == {
            k: sorted(v) for k, v in original.facets.items()
        }
        assert got.text == original.text
        assert len(got.sentence_vectors) == len(original.sentence_vectors)
        for mine, sent in zip(got.sentence_vectors, original.sentence_vectors, strict=True):
            assert list(mine) == pytest.approx(list(sent), abs=2e-3)
        assert dict(got.metadata) == dict(original.metadata)
        assert (got.doc_id, got.section, got.year, got.pub_types) == (
            original.doc_id, original.section, original.year, original.pub_types
        )  # fmt: skip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not gzip at all", "not a collection file"),
        (gzip.compress(b'{"format": 9, "dim": 8}\n', mtime=0), "format 1"),
        (gzip.compress(b'{"format": 1, "collection": "P", "model_id": "m", "dim": 8}\n{"uuid"',
                       mtime=0), "not JSON"),
        (gzip.compress(
            b'{"format": 1, "collection": "P", "model_id": "m", "dim": 8}\n'
            b'{"uuid": "u", "doc_id": "d", "chunk_id": "c", "text": "t", "vector": "AAAAAA=="}\n',
            mtime=0,
        ), "dimensions"),
        (gzip.compress(
            b'{"format": 1, "collection": "P", "model_id": "m", "dim": 1}\n'
            b'{"uuid": "u", "doc_id": "d", "chunk_id": "c", "text": "t", "vector": "AACAPw==",'
            b' "sentences": "AAAA"}\n',
            mtime=0,
        ), "sentence vectors unreadable"),
    ],
)  # fmt: skip
def test_a_damaged_collection_file_is_refused_with_its_reason(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(content)

    async def scenario() -> int:
        store = EmbeddedVectorStore(tmp_path / "v")
        try:
            with pytest.raises(ExportError, match=message):
                await import_collection(store, path)
            return await store.count("P") if "P" in await store.collections() else 0
        finally:
            await store.aclose()

    assert asyncio.run(scenario()) == 0
