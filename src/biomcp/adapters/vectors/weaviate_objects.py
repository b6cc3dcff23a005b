"""Weaviate objects as the port's values: the class schema, a chunk's properties, a stored
object as a hit or a record, `SearchFilters` as a Weaviate filter, and a keyword query.

BM25 searches `terms`, a chunk's text as `lexical_analysis.py` turns it into terms (stemmed,
spellings folded), split on whitespace: Weaviate has no stemmer of its own. So both stores
match the same words. A collection made before `terms` (its manifest names no analyzer, or
another one) is searched on `text`, split into lower-cased words, until it is rebuilt."""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from typing import Any

import weaviate.classes as wvc
from weaviate.classes.query import Filter

from biomcp.adapters.vectors.lexical_analysis import ANALYZER, index_terms, query_terms
from biomcp.adapters.vectors.sentence_blobs import decode
from biomcp.ports.vectors import ChunkRecord, SearchFilters, VectorHit

__all__ = [
    "FACETS",
    "PROPERTIES",
    "SENTENCES",
    "TERMS",
    "VECTOR",
    "class_name",
    "cosine",
    "hit_of",
    "is_uuid",
    "keyword_query",
    "matches_nothing",
    "properties_of",
    "record_of",
    "schema_properties",
    "sentence_blob",
    "where_filter",
]

VECTOR = "default"
#: The BM25 property: the analyzed terms of `text` (see the module docstring).
TERMS = "terms"
PROPERTIES = (
    "doc_id", "chunk_id", "text", "section", "year", "evidence_type", "quality_total",
    "journal", "pub_types", "edat", "lr", "source_url", "has_numbers", "metadata_json",
)  # fmt: skip
# Facets are one TEXT_ARRAY property of exact "key=value" strings (keys never hold "=").
FACETS = "facets"
# A chunk's sentence vectors: one BLOB property (`sentence_blobs`), returned only when asked.
SENTENCES = "sentence_vectors"


def class_name(collection: str) -> str:
    """A valid Weaviate class name for a port collection name."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", collection.strip()) or "Collection"
    if not cleaned[0].isalpha():
        cleaned = "C" + cleaned
    return cleaned[0].upper() + cleaned[1:]


def matches_nothing(filters: SearchFilters | None) -> bool:
    """An empty allowed set (no evidence type, no journal, no doc id) admits no chunk."""
    if filters is None:
        return False
    sets = (filters.evidence_types, filters.journals, filters.doc_ids)
    facets_empty = any(not values for _, values in filters.facets or ())
    return facets_empty or any(s is not None and not s for s in sets)


def facet(key: str, value: str) -> str:
    return f"{key}={value}"


def where_filter(filters: SearchFilters | None) -> Any:
    if filters is None:
        return None
    parts: list[Any] = []
    if filters.evidence_types is not None:
        parts.append(
            Filter.by_property("evidence_type").contains_any(sorted(filters.evidence_types))
        )
    if filters.year_min is not None:
        parts.append(Filter.by_property("year").greater_or_equal(filters.year_min))
    if filters.year_max is not None:
        parts.append(Filter.by_property("year").less_or_equal(filters.year_max))
    if filters.min_quality is not None:
        parts.append(Filter.by_property("quality_total").greater_or_equal(filters.min_quality))
    if filters.journals is not None:
        journals = sorted(j.casefold() for j in filters.journals)
        parts.append(Filter.by_property("journal_key").contains_any(journals))
    if filters.doc_ids is not None:
        parts.append(Filter.by_property("doc_id").contains_any(sorted(filters.doc_ids)))
    for key, values in filters.facets or ():
        wanted = sorted(facet(key, value) for value in values)
        parts.append(Filter.by_property(FACETS).contains_any(wanted))
    for key, values in filters.exclude_facets or ():
        if values:  # an empty set excludes nothing
            unwanted = sorted(facet(key, value) for value in values)
            parts.append(Filter.by_property(FACETS).contains_none(unwanted))
    if not parts:
        return None
    return Filter.all_of(parts) if len(parts) > 1 else parts[0]


def schema_properties() -> list[Any]:
    prop, dt, tok = wvc.config.Property, wvc.config.DataType, wvc.config.Tokenization

    def field(name: str, data_type: Any = dt.TEXT) -> Any:
        # Exact-match properties: filterable, never part of the BM25 text.
        return prop(name=name, data_type=data_type, tokenization=tok.FIELD, index_searchable=False)

    return [
        field("doc_id"),
        field("chunk_id"),
        prop(name="text", data_type=dt.TEXT, tokenization=tok.WORD, index_searchable=True),
        prop(
            name=TERMS,
            data_type=dt.TEXT,
            tokenization=tok.WHITESPACE,
            index_searchable=True,
            index_filterable=False,
        ),
        field("section"),
        prop(name="year", data_type=dt.INT),
        field("evidence_type"),
        prop(name="quality_total", data_type=dt.NUMBER),
        field("journal"),
        field("journal_key"),
        field("pub_types", dt.TEXT_ARRAY),
        field("edat"),
        field("lr"),
        field("source_url"),
        prop(name="has_numbers", data_type=dt.BOOL),
        prop(
            name="metadata_json",
            data_type=dt.TEXT,
            index_searchable=False,
            index_filterable=False,
        ),
        field(FACETS, dt.TEXT_ARRAY),
        prop(name=SENTENCES, data_type=dt.BLOB),
    ]


def properties_of(chunk: ChunkRecord, sentences: bytes = b"") -> dict[str, Any]:
    """The object's properties; `sentences` is the chunk's sentence blob (empty: none)."""
    values: dict[str, Any] = {
        "doc_id": chunk.doc_id,
        "chunk_id": chunk.chunk_id,
        "text": chunk.text,
        TERMS: " ".join(index_terms(chunk.text)),
        "section": chunk.section,
        "year": chunk.year,
        "evidence_type": chunk.evidence_type,
        "quality_total": chunk.quality_total,
        "journal": chunk.journal,
        "journal_key": chunk.journal.casefold() if chunk.journal else None,
        "pub_types": list(chunk.pub_types),
        "edat": chunk.edat,
        "lr": chunk.lr,
        "source_url": chunk.source_url,
        "has_numbers": chunk.has_numbers,
        "metadata_json": json.dumps(dict(chunk.metadata), sort_keys=True),
        FACETS: sorted(facet(k, v) for k, values in chunk.facets.items() for v in values),
        SENTENCES: base64.b64encode(sentences).decode("ascii") if sentences else None,
    }
    return {k: v for k, v in values.items() if v is not None}


def keyword_query(text: str, analyzer: str | None) -> tuple[str, str]:
    """The BM25 query for `text` and the property it searches, in a collection whose manifest
    names `analyzer`: today's analyzer searches `terms` with the query's terms (empty when
    none), any other searches `text` with the query as written."""
    if analyzer != ANALYZER:
        return text, "text"
    terms = query_terms(text)
    return " ".join(term for term, count in terms.items() for _ in range(count)), TERMS


def cosine(query: list[float] | None, stored: Any) -> float | None:
    if query is None or stored is None:
        return None
    vector = stored.get(VECTOR) if isinstance(stored, dict) else stored
    if not vector:
        return None
    return float(sum(a * b for a, b in zip(query, vector, strict=False)))


def sentence_blob(props: Any) -> bytes:
    """The sentence blob of an object's properties (empty when it has none or it is
    unreadable)."""
    value = props.get(SENTENCES) if props else None
    if not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        return b""


def hit_of(obj: Any, score: float, bm25: float | None, sim: float | None) -> VectorHit:
    props = obj.properties
    try:
        extra = json.loads(props.get("metadata_json") or "{}")
    except json.JSONDecodeError:
        extra = {}
    return VectorHit(
        uuid=str(obj.uuid),
        doc_id=str(props.get("doc_id", "")),
        chunk_id=str(props.get("chunk_id", "")),
        score=score,
        bm25=bm25,
        sim=sim,
        text=props.get("text"),
        section=props.get("section"),
        evidence_type=props.get("evidence_type"),
        quality_total=props.get("quality_total"),
        year=props.get("year"),
        journal=props.get("journal"),
        has_numbers=props.get("has_numbers"),
        metadata=extra if isinstance(extra, dict) else {},
    )


def record_of(obj: Any) -> ChunkRecord:
    """A stored object as the record it was written from."""
    props = obj.properties
    vector = obj.vector.get(VECTOR) if isinstance(obj.vector, dict) else obj.vector
    facets: dict[str, list[str]] = {}
    for entry in props.get(FACETS) or ():
        key, _, value = str(entry).partition("=")
        facets.setdefault(key, []).append(value)
    hit = hit_of(obj, 0.0, None, None)
    return ChunkRecord(
        uuid=hit.uuid,
        doc_id=hit.doc_id,
        chunk_id=hit.chunk_id,
        text=hit.text or "",
        vector=list(vector or ()),
        section=hit.section,
        year=hit.year,
        evidence_type=hit.evidence_type,
        quality_total=hit.quality_total,
        journal=hit.journal,
        pub_types=tuple(props.get("pub_types") or ()),
        edat=props.get("edat"),
        lr=props.get("lr"),
        source_url=props.get("source_url"),
        has_numbers=hit.has_numbers,
        metadata=hit.metadata,
        facets={k: tuple(v) for k, v in facets.items()},
        sentence_vectors=tuple(_sentences(props, len(vector or ()))),
    )


def _sentences(props: Any, dim: int) -> list[list[float]]:
    try:
        rows: list[list[float]] = decode(sentence_blob(props), dim).tolist() if dim else []
    except ValueError:
        return []
    return rows


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True
