"""The tools' JSON Schemas: spec 01's, verbatim, and the v1.1 output schemas that add fields.

Inputs are exactly the spec's. Outputs are the spec's plus additive fields (contract v1.1, as
the versioning policy of spec 01 allows): every v1.0 property keeps its type and every v1.0
required field stays required, so a v1.0 client reads a v1.1 answer unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "CONTRACT_VERSION",
    "ERROR_CODES",
    "ERROR_ENVELOPE",
    "NULLABLE_INT",
    "NULLABLE_NUMBER",
    "NULLABLE_STRING",
    "SPEC_INPUTS",
    "SPEC_OUTPUTS",
    "SYNC_STATUS_INPUT",
    "SYNC_STATUS_OUTPUT",
    "V11_OUTPUTS",
]

CONTRACT_VERSION = "1.1"

_NULLABLE_STRING = {"type": ["string", "null"]}

SPEC_INPUTS: dict[str, dict[str, Any]] = {
    "pubmed.sync_delta": {
        "type": "object",
        "required": ["query_key", "term"],
        "properties": {
            "query_key": {"type": "string", "minLength": 1},
            "term": {"type": "string", "minLength": 1},
            "overlap_days": {"type": "integer", "minimum": 0, "default": 5},
        },
        "additionalProperties": False,
    },
    "rag.search": {
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            "quality_bias": {"type": "boolean", "default": True},
        },
        "additionalProperties": False,
    },
    "rag.get": {
        "type": "object",
        "required": ["doc_id"],
        "properties": {"doc_id": {"type": "string", "pattern": "^pmid:[0-9]+$"}},
        "additionalProperties": False,
    },
    "corpus.checkpoint.get": {
        "type": "object",
        "required": ["query_key"],
        "properties": {"query_key": {"type": "string", "minLength": 1}},
        "additionalProperties": False,
    },
    "corpus.checkpoint.set": {
        "type": "object",
        "required": ["query_key", "last_edat"],
        "properties": {
            "query_key": {"type": "string"},
            "last_edat": {"type": "string", "description": "ISO8601 UTC"},
        },
        "additionalProperties": False,
    },
}

SPEC_OUTPUTS: dict[str, dict[str, Any]] = {
    "pubmed.sync_delta": {
        "type": "object",
        "required": ["job_id", "inserted", "updated", "skipped", "pmids_processed"],
        "properties": {
            "job_id": {"type": "string"},
            "inserted": {"type": "integer", "minimum": 0},
            "updated": {"type": "integer", "minimum": 0},
            "skipped": {"type": "integer", "minimum": 0},
            "pmids_processed": {"type": "integer", "minimum": 0},
            "max_edat_seen": {
                "type": ["string", "null"],
                "description": "ISO8601 UTC timestamp or null",
            },
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
    },
    "rag.search": {
        "type": "object",
        "required": ["results"],
        "properties": {
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["doc_id", "uuid", "score"],
                    "properties": {
                        "doc_id": {"type": "string", "pattern": "^pmid:[0-9]+$"},
                        "uuid": {"type": "string", "minLength": 10},
                        "sim": {"type": ["number", "null"]},
                        "bm25": {"type": ["number", "null"]},
                        "quality": {"type": ["number", "null"]},
                        "score": {"type": "number"},
                    },
                    "additionalProperties": False,
                },
            }
        },
        "additionalProperties": False,
    },
    "rag.get": {
        "type": "object",
        "required": ["doc_id", "title", "journal", "pub_types", "quality", "version"],
        "properties": {
            "doc_id": {"type": "string"},
            "title": {"type": ["string", "null"]},
            "abstract": {"type": ["string", "null"]},
            "journal": {"type": ["string", "null"]},
            "pub_types": {"type": "array", "items": {"type": "string"}},
            "pdat": {"type": ["string", "null"]},
            "edat": {"type": ["string", "null"]},
            "lr": {"type": ["string", "null"]},
            "pmcid": {"type": ["string", "null"]},
            "quality": {
                "type": "object",
                "required": ["total"],
                "properties": {
                    "design": {"type": ["integer", "null"]},
                    "recency": {"type": ["integer", "null"]},
                    "journal": {"type": ["integer", "null"]},
                    "human": {"type": ["integer", "null"]},
                    "total": {"type": "integer"},
                },
                "additionalProperties": False,
            },
            "version": {"type": "integer", "minimum": 1},
        },
        "additionalProperties": False,
    },
    "corpus.checkpoint.get": {
        "type": "object",
        "required": ["query_key"],
        "properties": {
            "query_key": {"type": "string"},
            "last_edat": {"type": ["string", "null"], "description": "ISO8601 UTC or null"},
        },
        "additionalProperties": False,
    },
    "corpus.checkpoint.set": {
        "type": "object",
        "required": ["ok"],
        "properties": {"ok": {"type": "boolean"}},
        "additionalProperties": False,
    },
}

ERROR_CODES = (
    "RATE_LIMIT",
    "UPSTREAM",
    "VALIDATION",
    "NOT_FOUND",
    "INVARIANT_FAILURE",
    "STORE",
    "EMBEDDINGS",
    "WEAVIATE",
    "ENTREZ",
    "UNKNOWN",
    # spec 02's codes, and TIMEOUT (DESIGN.md: the union of both specs' codes plus TIMEOUT)
    "TIMEOUT",
    "INVALID_PROJECT",
    "EMBEDDING_MISMATCH",
    "HYBRID_NOT_SUPPORTED",
    "INDEX_UNAVAILABLE",
)

ERROR_ENVELOPE: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "enum": list(ERROR_CODES)},
                "message": {"type": "string"},
                "details": {"type": ["object", "array", "string", "null"]},
            },
            "additionalProperties": False,
        }
    },
    "additionalProperties": False,
}


def _extended(name: str, additions: dict[str, Any], *, at: tuple[str, ...] = ()) -> dict[str, Any]:
    schema = copy.deepcopy(SPEC_OUTPUTS[name])
    node = schema
    for key in at:
        node = node[key]
    node["properties"].update(additions)
    return schema


_QUALITY_BREAKDOWN = {
    "type": "object",
    "required": ["total"],
    "properties": {
        "design": {"type": "integer"},
        "recency": {"type": "integer"},
        "journal": {"type": "integer"},
        "human": {"type": "integer"},
        "sample_size": {"type": "integer"},
        "sample_size_n": {"type": ["integer", "null"]},
        "total": {"type": "integer"},
    },
    "additionalProperties": False,
}

V11_OUTPUTS: dict[str, dict[str, Any]] = {
    "pubmed.sync_delta": copy.deepcopy(SPEC_OUTPUTS["pubmed.sync_delta"]),
    "rag.search": _extended(
        "rag.search",
        {
            "evidence_type": {
                "type": ["string", "null"],
                "enum": ["clinical", "preclinical", "basic", "other", None],
            },
            "section": _NULLABLE_STRING,
            "chunk_id": {"type": "string"},
            "text": _NULLABLE_STRING,
        },
        at=("properties", "results", "items"),
    ),
    "rag.get": _extended(
        "rag.get",
        {
            "evidence_type": {
                "type": "string",
                "enum": ["clinical", "preclinical", "basic", "other"],
            },
            "evidence_rule": {"type": "string"},
            "has_numbers": {"type": "boolean"},
            "has_biomarker": {"type": "boolean"},
            "quality_breakdown": _QUALITY_BREAKDOWN,
            "doi": _NULLABLE_STRING,
            "authors": {"type": "array", "items": {"type": "string"}},
            "mesh_terms": {"type": "array", "items": {"type": "string"}},
            "retracted": {"type": "boolean"},
            "url": {"type": "string"},
        },
    ),
    "corpus.checkpoint.get": copy.deepcopy(SPEC_OUTPUTS["corpus.checkpoint.get"]),
    "corpus.checkpoint.set": _extended(
        "corpus.checkpoint.set",
        {
            "query_key": {"type": "string"},
            "previous_edat": _NULLABLE_STRING,
            "last_edat": {"type": "string"},
        },
    ),
}

# --- portable nullable values, and corpus_sync_status (wave 2) ---------------------------------

# Nullable values as `anyOf` branches of one type each: the most portable spelling (clients
# mapping schemas onto single-`type` dialects reject `"type": [..., "null"]`).
NULLABLE_STRING: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
NULLABLE_INT: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
NULLABLE_NUMBER: dict[str, Any] = {"anyOf": [{"type": "number"}, {"type": "null"}]}

SYNC_STATUS_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "The job_id a pubmed_sync_delta answer carried.",
        }
    },
    "required": ["job_id"],
    "additionalProperties": False,
}

_SYNC_PROGRESS = {
    "type": "object",
    "properties": {
        "total": NULLABLE_INT,
        "processed": {"type": "integer"},
        "inserted": {"type": "integer"},
        "updated": {"type": "integer"},
        "skipped": {"type": "integer"},
        "chunks_embedded": {"type": "integer"},
        "elapsed_s": NULLABLE_NUMBER,
        "here": {"type": "boolean", "description": "The job runs in this server process."},
    },
    "required": ["processed"],
}

_SYNC_REPORT = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string"},
        "inserted": {"type": "integer", "minimum": 0},
        "updated": {"type": "integer", "minimum": 0},
        "skipped": {"type": "integer", "minimum": 0},
        "pmids_processed": {"type": "integer", "minimum": 0},
        "max_edat_seen": NULLABLE_STRING,
        "warnings": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["job_id", "inserted", "updated", "skipped", "pmids_processed"],
}

SYNC_STATUS_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string"},
        "query_key": {"type": "string"},
        "status": {"type": "string", "enum": ["running", "succeeded", "failed", "interrupted"]},
        "started_at": NULLABLE_STRING,
        "finished_at": NULLABLE_STRING,
        "progress": {"anyOf": [_SYNC_PROGRESS, {"type": "null"}]},
        "report": {
            "anyOf": [_SYNC_REPORT, {"type": "null"}],
            "description": "The final report (spec 01's sync answer) once the job succeeded.",
        },
        "error": NULLABLE_STRING,
    },
    "required": ["job_id", "query_key", "status", "progress", "report", "error"],
    "additionalProperties": False,
}
