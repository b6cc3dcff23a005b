"""Spec 02's items: the checks an item passes before anything is written, the facets and
citation fields read from its metadata, and the project errors and limits."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from biomcp.ports.projects import ProjectInfo
from biomcp.ports.vectors import ChunkRecord, InvalidVectorError, ObjectError, check_unit_vector
from biomcp.usecases.errors import InvalidRequestError, UseCaseError

__all__ = [
    "FACET_KEYS",
    "PROJECT_FACET",
    "ProjectError",
    "ProjectLimits",
    "checked_items",
    "citation",
    "item_uuid",
    "refused_chunks",
    "strings",
    "with_vector",
]

#: The namespace of project chunk uuids (`item_uuid`).
_NAMESPACE = uuid.UUID("3f1c2a9e-6d1b-5c4e-9a57-0b9c1d2e3f40")
#: Facets a `filters` object may name, and where each comes from in an item's metadata.
FACET_KEYS = ("tags", "citekey", "source", "section", "doc_id")
PROJECT_FACET = "project"


class ProjectError(UseCaseError):
    """A spec 02 error: `code` is INVALID_PROJECT, EMBEDDING_MISMATCH, HYBRID_NOT_SUPPORTED,
    INDEX_UNAVAILABLE or TIMEOUT."""

    def __init__(self, code: str, message: str, details: object = None) -> None:
        super().__init__(message, details)
        self.code = code


@dataclass(frozen=True, slots=True)
class ProjectLimits:
    """Spec 02's limits and timeouts (seconds); each is a setting."""

    max_items: int = 500
    max_text_chars: int = 100_000
    max_metadata_bytes: int = 64_000
    top_k_default: int = 6
    top_k_max: int = 6
    max_chars_per_chunk: int = 1_800
    alpha: float = 0.6  # BIOMCP_SEARCH_ALPHA's default, which the server passes
    store_timeout_s: float = 15.0
    find_timeout_s: float = 8.0
    hybrid_timeout_s: float = 15.0
    inspect_timeout_s: float = 5.0
    list_timeout_s: float = 2.0


def _get(payload: Mapping[str, Any], *path: str) -> Any:
    value: Any = payload
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def strings(value: Any) -> list[str]:
    """A string or a list of strings as a list (anything else: empty)."""
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def _first(payload: Mapping[str, Any], *paths: tuple[str, ...]) -> Any:
    for path in paths:
        value = _get(payload, *path)
        if value is not None:
            return value
    return None


def _facets(
    project_id: str, item_id: str, payload: Mapping[str, Any]
) -> dict[str, tuple[str, ...]]:
    """The keyword facets of an item: what `filters` match."""
    found = {
        "tags": strings(_get(payload, "zotero", "tags")) + strings(payload.get("tags")),
        "citekey": strings(_first(payload, ("zotero", "citekey"), ("citekey",))),
        "source": strings(_first(payload, ("source", "path"), ("source", "title")))
        + strings(payload.get("source")),
        "section": strings(_first(payload, ("doc", "section"), ("section",))),
        "doc_id": [item_id],
        PROJECT_FACET: [project_id],
    }
    return {key: tuple(dict.fromkeys(values)) for key, values in found.items() if values}


def item_uuid(project_id: str, item_id: str, part: int = 0) -> str:
    """The uuid of an item's chunk: uuid5 of the project and item ids joined by a NUL; a split
    item's parts after the first append a NUL and the part number."""
    name = f"{project_id}\0{item_id}" + (f"\0{part}" if part else "")
    return str(uuid.uuid5(_NAMESPACE, name))


def citation(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The citation fields of spec 02's answers (None where the payload has nothing)."""
    citekey = _first(payload, ("zotero", "citekey"), ("citekey",))
    section = _first(payload, ("doc", "section"), ("section",))
    page_span = _first(payload, ("doc", "page_span"), ("page_span",))
    section_path = _first(payload, ("doc", "section_path"), ("section_path",))
    doi = _first(payload, ("doi",), ("zotero", "doi"), ("source", "doi"))
    url = _first(payload, ("url",), ("source", "url"), ("zotero", "url"))
    return {
        "citekey": citekey if isinstance(citekey, str) else None,
        "section": section if isinstance(section, str) else None,
        "page_span": page_span
        if isinstance(page_span, list) and all(isinstance(p, int) for p in page_span)
        else None,
        "section_path": strings(section_path) or None,
        "doi": doi if isinstance(doi, str) else None,
        "url": url if isinstance(url, str) else None,
    }


def checked_items(
    project: ProjectInfo, items: Sequence[Mapping[str, Any]], limits: ProjectLimits
) -> list[tuple[ChunkRecord, list[float] | None]]:
    """Every item checked before anything is written (all or nothing)."""
    if not 1 <= len(items) <= limits.max_items:
        raise InvalidRequestError(
            f"items must hold 1 to {limits.max_items} chunks, got {len(items)}",
            {"items": len(items), "max": limits.max_items},
        )
    out: dict[str, tuple[ChunkRecord, list[float] | None]] = {}
    for position, item in enumerate(items):
        item_id, text = item.get("id"), item.get("text")
        payload = item.get("metadata") or {}
        where = f"items[{position}]"
        if not isinstance(item_id, str) or not item_id or len(item_id) > 256:
            raise InvalidRequestError(f"{where}.id must be a string of 1 to 256 characters")
        if not isinstance(text, str) or not text.strip():
            raise InvalidRequestError(f"{where}.text must be non-empty text")
        if len(text) > limits.max_text_chars:
            raise InvalidRequestError(
                f"{where}.text has {len(text)} characters, at most {limits.max_text_chars}"
            )
        if not isinstance(payload, Mapping):
            raise InvalidRequestError(f"{where}.metadata must be an object")
        size = len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        if size > limits.max_metadata_bytes:
            raise InvalidRequestError(
                f"{where}.metadata is {size} bytes of JSON, at most {limits.max_metadata_bytes}"
            )
        claimed = payload.get("project")
        if claimed is not None and claimed != project.project_id:
            raise InvalidRequestError(
                f"{where}.metadata.project is {claimed!r}, not {project.project_id!r}"
            )
        vector = _checked_embedding(project, item.get("embedding"), payload, where)
        stored = {**payload, "project": project.project_id, "embed_model": project.model_id}
        record = ChunkRecord(
            uuid=item_uuid(project.project_id, item_id),
            doc_id=item_id,
            chunk_id="0",
            text=text,
            vector=(),
            section=citation(payload)["section"],
            metadata=stored,
            facets=_facets(project.project_id, item_id, payload),
        )
        out.pop(item_id, None)  # a repeated id: the last one wins, as across calls
        out[item_id] = (record, vector)
    return list(out.values())


def _checked_embedding(
    project: ProjectInfo, embedding: Any, payload: Mapping[str, Any], where: str
) -> list[float] | None:
    if embedding is None:
        return None
    model = payload.get("embed_model")
    dim = len(embedding) if isinstance(embedding, list) else None
    if dim != project.dim or model != project.model_id:
        got = f"{model or 'an unnamed model'} ({dim if dim is not None else '?'}-d)"
        raise ProjectError(
            "EMBEDDING_MISMATCH",
            f"{where}.embedding is of {got}; project {project.project_id!r} holds "
            f"{project.model_id} ({project.dim}-d) vectors. Leave `embedding` out and "
            "the server embeds the text with the project's model.",
            {
                "project_id": project.project_id,
                "expected_model": project.model_id,
                "expected_dim": project.dim,
                "got_model": model,
            },
        )
    values = [float(v) for v in embedding]
    norm = math.sqrt(sum(v * v for v in values))
    if not math.isfinite(norm) or norm == 0.0:
        raise InvalidRequestError(f"{where}.embedding must be finite and non-zero")
    return [v / norm for v in values]


def with_vector(
    record: ChunkRecord,
    vector: Sequence[float],
    sentence_vectors: Sequence[Sequence[float]] = (),
) -> ChunkRecord:
    return replace(record, vector=list(vector), sentence_vectors=tuple(sentence_vectors))


def refused_chunks(chunks: Sequence[ChunkRecord], dim: int) -> list[ObjectError]:
    """The chunks any store would refuse for their vector, checked before anything is
    written (so that a store with atomic batches writes the whole batch or nothing)."""
    refused: list[ObjectError] = []
    for chunk in chunks:
        try:
            check_unit_vector(chunk.vector, dim)
        except InvalidVectorError as exc:
            refused.append(ObjectError(chunk.uuid, str(exc)))
    return refused
