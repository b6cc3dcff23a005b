"""A collection of any vector store as a portable file, and back.

The file is gzip-compressed JSON lines. The first line names the collection, its model and
its dimension; each further line is one chunk, whole, its vector as base64 float32 and its
sentence vectors (when it has any) as one base64 `sentence_blobs` blob. It lets a
backup carry the chunks that exist nowhere else (project collections on a Weaviate server),
through the `VectorStore` port alone. Weaviate's own backup module writes to each node's disk,
which a cluster spread over machines cannot gather into one folder.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from biomcp.adapters.vectors.sentence_blobs import decode, encode
from biomcp.ports.vectors import ChunkRecord, VectorStore

__all__ = ["ExportError", "export_collection", "import_collection"]

FORMAT = 1
PAGE = 500
#: The longest line a chunk may take in the file (its text, metadata and vector).
MAX_LINE_BYTES = 16 * 1024 * 1024


class ExportError(ValueError):
    """A collection file that cannot be read back (the message says what is wrong)."""


def _line(chunk: ChunkRecord) -> dict[str, Any]:
    vector = np.asarray(chunk.vector, dtype="<f4").tobytes()
    return {
        "uuid": chunk.uuid,
        "doc_id": chunk.doc_id,
        "chunk_id": chunk.chunk_id,
        "text": chunk.text,
        "vector": base64.b64encode(vector).decode("ascii"),
        "section": chunk.section,
        "year": chunk.year,
        "evidence_type": chunk.evidence_type,
        "quality_total": chunk.quality_total,
        "journal": chunk.journal,
        "pub_types": list(chunk.pub_types),
        "edat": chunk.edat,
        "lr": chunk.lr,
        "source_url": chunk.source_url,
        "has_numbers": chunk.has_numbers,
        "metadata": dict(chunk.metadata),
        "facets": {key: list(values) for key, values in chunk.facets.items()},
        "sentences": base64.b64encode(encode(chunk.sentence_vectors)).decode("ascii"),
    }


def _chunk(data: Mapping[str, Any], dim: int) -> ChunkRecord:
    vector = np.frombuffer(base64.b64decode(data["vector"]), dtype="<f4")
    if vector.shape != (dim,):
        raise ExportError(f"chunk {data.get('uuid')!r} has {vector.size} dimensions, not {dim}")
    try:
        sentences = decode(base64.b64decode(data.get("sentences") or ""), dim)
    except ValueError as exc:
        raise ExportError(
            f"chunk {data.get('uuid')!r}: sentence vectors unreadable ({exc})"
        ) from None
    skip = ("vector", "pub_types", "facets", "sentences")
    fields = {k: v for k, v in data.items() if k not in skip}
    return ChunkRecord(
        sentence_vectors=tuple(sentences.tolist()),
        **fields,
        vector=vector.tolist(),
        pub_types=tuple(data.get("pub_types") or ()),
        facets={key: tuple(values) for key, values in (data.get("facets") or {}).items()},
    )


async def export_collection(store: VectorStore, collection: str, path: Path) -> int:
    """Write every chunk of `collection` to the file `path`; the number written."""
    stats = await store.stats(collection)
    header = {
        "format": FORMAT,
        "collection": collection,
        "model_id": stats.model_id,
        "dim": stats.dim,
    }
    written = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
        out.write(json.dumps(header) + "\n")
        after: str | None = None
        while page := await store.page_chunks(collection, after=after, limit=PAGE):
            for chunk in page:
                out.write(json.dumps(_line(chunk), ensure_ascii=False) + "\n")
            written += len(page)
            after = page[-1].uuid
    return written


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as source:
        while line := source.readline(MAX_LINE_BYTES + 1):
            if len(line) > MAX_LINE_BYTES:
                raise ExportError(f"{path.name}: a line is longer than {MAX_LINE_BYTES} bytes")
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise ExportError(f"{path.name}: a line is not JSON ({exc})") from None
            if not isinstance(data, dict):
                raise ExportError(f"{path.name}: a line is not a JSON object")
            yield data


def read_header(path: Path) -> dict[str, Any]:
    """The header of the collection file `path`.

    Raises:
        ExportError: not a collection file of a format this bio-mcp reads.
    """
    try:
        header = next(_lines(path))
    except (StopIteration, OSError, EOFError) as exc:
        raise ExportError(f"{path.name} is not a collection file: {exc}") from None
    if header.get("format") != FORMAT or not isinstance(header.get("dim"), int):
        raise ExportError(f"{path.name} is not a collection file of format {FORMAT}")
    return header


async def import_collection(store: VectorStore, path: Path) -> tuple[str, int]:
    """Create the collection the file `path` holds (with its model and dimension) and write
    its chunks to it; the collection's name and the number of chunks written.

    Raises:
        ExportError: a damaged file, or chunks the store refused.
    """
    header = read_header(path)
    name, dim = str(header["collection"]), int(header["dim"])
    await store.ensure_schema(name, dim=dim, model_id=str(header["model_id"]))
    written, batch = 0, []
    lines = _lines(path)
    next(lines)  # the header
    for data in lines:
        try:
            batch.append(_chunk(data, dim))
        except (KeyError, TypeError, ValueError) as exc:
            raise ExportError(f"{path.name}: a chunk cannot be read ({exc})") from None
        if len(batch) == PAGE:
            written += await _write(store, name, batch)
            batch = []
    if batch:
        written += await _write(store, name, batch)
    return name, written


async def _write(store: VectorStore, collection: str, chunks: list[ChunkRecord]) -> int:
    report = await store.upsert_chunks(collection, chunks)
    if report.errors:
        raise ExportError(f"{len(report.errors)} chunks of {collection!r} were refused")
    return len(chunks)
