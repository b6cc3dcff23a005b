"""The corpus tools' JSON Schemas: spec 01's text, the portable spellings the server lists, and
the contract versions (v1.1 by default, spec 01's v1.0 exactly on request).

- `SPEC_INPUTS` / `SPEC_OUTPUTS`: spec 01's schemas verbatim (a test holds them equal to the
  spec's text). They are the contract, not what `tools/list` shows.
- `TOOL_INPUTS`: spec 01's inputs with bounds added (every string a `maxLength`, every integer
  a `maximum`): tighter, never looser, so a request valid here is valid under spec 01.
- `V10_OUTPUTS`: spec 01's outputs in the portable spelling: a nullable value is an `anyOf`
  of one-type branches instead of a `type` array (the same set of values, but clients that map
  tool schemas onto single-`type` dialects reject type arrays).
- `V11_OUTPUTS`: v1.0 plus additive fields (contract v1.1, as spec 01's versioning policy
  allows): every v1.0 property keeps its type and every v1.0 required field stays required.

Listed schemas are portable: no type arrays, no `$defs` / `$ref`, no `$schema`, no top-level
`anyOf` / `oneOf` / `allOf` (`tests/integration/test_tool_catalogue.py` lints them).
`contract_payload` is the one place a v1.1 answer is cut down to spec 01's fields.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from biomcp.domain.design import STUDY_DESIGN_VALUES
from biomcp.domain.records import EvidenceType

__all__ = [
    "CONTRACT_VERSION",
    "CONTRACT_VERSIONS",
    "CORPUS_OVERVIEW_INPUT",
    "CORPUS_OVERVIEW_OUTPUT",
    "ERROR_CODES",
    "ERROR_ENVELOPE",
    "NULLABLE_INT",
    "NULLABLE_NUMBER",
    "NULLABLE_STRING",
    "PUBMED_TERM_MAX_CHARS",
    "QUERY_KEY_MAX_CHARS",
    "SEARCH_QUERY_MAX_CHARS",
    "SPEC_ERROR_CODES",
    "SPEC_INPUTS",
    "SPEC_OUTPUTS",
    "SYNC_STATUS_INPUT",
    "SYNC_STATUS_OUTPUT",
    "TOOL_INPUTS",
    "V10_OUTPUTS",
    "V11_OUTPUTS",
    "Contract",
    "contract_error_code",
    "contract_outputs",
    "contract_payload",
]

#: The default contract: spec 01 (v1.0) plus additive fields.
CONTRACT_VERSION = "1.1"
Contract = Literal["1.1", "1.0"]
CONTRACT_VERSIONS: tuple[Contract, ...] = ("1.1", "1.0")

# --- spec 01, verbatim -------------------------------------------------------------------------

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

#: Spec 01's own codes (its error envelope's enum).
SPEC_ERROR_CODES = ERROR_CODES[:10]

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


# --- portable building blocks ------------------------------------------------------------------

# Nullable values as `anyOf` branches of one type each: the most portable spelling (clients
# mapping schemas onto single-`type` dialects reject `"type": [..., "null"]`).
NULLABLE_STRING: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
NULLABLE_INT: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
NULLABLE_NUMBER: dict[str, Any] = {"anyOf": [{"type": "number"}, {"type": "null"}]}

#: Bounds of the corpus tools' arguments (spec 01 sets none of these; `rag.search`'s `top_k`
#: keeps the spec's 1-100). A saved-query name, a PubMed query, a search question, a doc_id.
QUERY_KEY_MAX_CHARS = 200
PUBMED_TERM_MAX_CHARS = 8000
SEARCH_QUERY_MAX_CHARS = 4000
_STUDY_DESIGN_VALUES = list(STUDY_DESIGN_VALUES)
DOC_ID_MAX_CHARS = 32
TIMESTAMP_MAX_CHARS = 64
#: Ten years of overlap: more is a backfill, which moving the checkpoint does better.
OVERLAP_DAYS_MAX = 3650

_QUERY_KEY = {"type": "string", "minLength": 1, "maxLength": QUERY_KEY_MAX_CHARS}
_EVIDENCE_TYPES = [t.value for t in EvidenceType]
#: Publication years a search filter accepts (PubMed's records start in the 1780s).
YEAR_MIN, YEAR_MAX = 1700, 2200
_YEAR = {"type": "integer", "minimum": YEAR_MIN, "maximum": YEAR_MAX}

# --- what tools/list shows -----------------------------------------------------------------

TOOL_INPUTS: dict[str, dict[str, Any]] = {
    "pubmed.sync_delta": {
        "type": "object",
        "required": ["query_key", "term"],
        "properties": {
            "query_key": _QUERY_KEY,
            "term": {"type": "string", "minLength": 1, "maxLength": PUBMED_TERM_MAX_CHARS},
            "overlap_days": {
                "type": "integer",
                "minimum": 0,
                "maximum": OVERLAP_DAYS_MAX,
                "default": 5,
            },
        },
        "additionalProperties": False,
    },
    "rag.search": {
        "type": "object",
        "required": ["query"],
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": SEARCH_QUERY_MAX_CHARS},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            "quality_bias": {"type": "boolean", "default": True},
            "include_retracted": {
                "type": "boolean",
                "default": False,
                "description": "Also return chunks of retracted papers (flagged retracted).",
            },
            "study_design": {
                "type": "array",
                "items": {"type": "string", "enum": _STUDY_DESIGN_VALUES},
                "maxItems": len(_STUDY_DESIGN_VALUES),
                "description": "Only these study designs.",
            },
            "evidence_type": {
                "type": "array",
                "items": {"type": "string", "enum": _EVIDENCE_TYPES},
                "maxItems": len(_EVIDENCE_TYPES),
                "description": "Only these evidence tiers.",
            },
            "year_min": {**_YEAR, "description": "Earliest publication year."},
            "year_max": {**_YEAR, "description": "Latest publication year."},
            "min_quality": {
                "type": "number",
                "minimum": 0,
                "maximum": 10,
                "description": "Lowest quality score (0-10).",
            },
            "query_key": {
                "type": "string",
                "maxLength": QUERY_KEY_MAX_CHARS,
                "description": "Only papers this saved query synced.",
            },
        },
        "additionalProperties": False,
    },
    "rag.get": {
        "type": "object",
        "required": ["doc_id"],
        "properties": {
            "doc_id": {
                "type": "string",
                "pattern": "^pmid:[0-9]+$",
                "maxLength": DOC_ID_MAX_CHARS,
            }
        },
        "additionalProperties": False,
    },
    "corpus.checkpoint.get": {
        "type": "object",
        "required": ["query_key"],
        "properties": {"query_key": _QUERY_KEY},
        "additionalProperties": False,
    },
    "corpus.checkpoint.set": {
        "type": "object",
        "required": ["query_key", "last_edat"],
        "properties": {
            "query_key": {"type": "string", "maxLength": QUERY_KEY_MAX_CHARS},
            "last_edat": {
                "type": "string",
                "maxLength": TIMESTAMP_MAX_CHARS,
                "description": "ISO8601 UTC",
            },
        },
        "additionalProperties": False,
    },
}


def portable(schema: Any) -> Any:
    """`schema` with every `type` array (`["string", "null"]`) written as `anyOf` branches of
    one type each, the spelling every client accepts; nothing else changes."""
    if isinstance(schema, list):
        return [portable(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    node = {key: portable(value) for key, value in schema.items()}
    kinds = node.get("type")
    if isinstance(kinds, list):
        del node["type"]
        node = {"anyOf": [{"type": kind} for kind in kinds], **node}
    return node


#: Spec 01's answers, spelled portably: what tools/list declares under `BIOMCP_CONTRACT=1.0`.
V10_OUTPUTS: dict[str, dict[str, Any]] = {
    name: portable(schema) for name, schema in SPEC_OUTPUTS.items()
}


def _extended(name: str, additions: dict[str, Any], *, at: tuple[str, ...] = ()) -> dict[str, Any]:
    schema = copy.deepcopy(V10_OUTPUTS[name])
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
        "sample_size_n": NULLABLE_INT,
        "study_design": {"type": "string", "enum": _STUDY_DESIGN_VALUES},
        "sample_size_text": NULLABLE_STRING,
        "sample_size_refused": {"type": "array", "items": {"type": "string"}},
        "total": {"type": "integer"},
    },
    "additionalProperties": False,
}

V11_OUTPUTS: dict[str, dict[str, Any]] = {
    "pubmed.sync_delta": copy.deepcopy(V10_OUTPUTS["pubmed.sync_delta"]),
    "rag.search": _extended(
        "rag.search",
        {
            "evidence_type": {
                "anyOf": [{"type": "string", "enum": _EVIDENCE_TYPES}, {"type": "null"}]
            },
            "section": NULLABLE_STRING,
            "chunk_id": {"type": "string"},
            "text": NULLABLE_STRING,
            "retracted": {"type": "boolean"},
            "study_design": {
                "anyOf": [{"type": "string", "enum": _STUDY_DESIGN_VALUES}, {"type": "null"}]
            },
            "year": NULLABLE_INT,
            "journal": NULLABLE_STRING,
        },
        at=("properties", "results", "items"),
    ),
    "rag.get": _extended(
        "rag.get",
        {
            "evidence_type": {"type": "string", "enum": _EVIDENCE_TYPES},
            "evidence_rule": {"type": "string"},
            "study_design": {"type": "string", "enum": _STUDY_DESIGN_VALUES},
            "design_rule": {"type": "string"},
            "has_numbers": {"type": "boolean"},
            "has_biomarker": {"type": "boolean"},
            "quality_breakdown": _QUALITY_BREAKDOWN,
            "doi": NULLABLE_STRING,
            "authors": {"type": "array", "items": {"type": "string"}},
            "mesh_terms": {"type": "array", "items": {"type": "string"}},
            "retracted": {"type": "boolean"},
            "retraction": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"notice_pmid": NULLABLE_STRING, "source": NULLABLE_STRING},
                        "required": ["notice_pmid", "source"],
                        "additionalProperties": False,
                    },
                    {"type": "null"},
                ]
            },
            "url": {"type": "string"},
        },
    ),
    "corpus.checkpoint.get": copy.deepcopy(V10_OUTPUTS["corpus.checkpoint.get"]),
    "corpus.checkpoint.set": _extended(
        "corpus.checkpoint.set",
        {
            "query_key": {"type": "string"},
            "previous_edat": NULLABLE_STRING,
            "last_edat": {"type": "string"},
        },
    ),
}

# --- the contract versions -----------------------------------------------------------------


def contract_outputs(contract: Contract) -> dict[str, dict[str, Any]]:
    """The output schemas of spec 01's tools under `contract`."""
    return V10_OUTPUTS if contract == "1.0" else V11_OUTPUTS


def contract_payload(name: str, payload: dict[str, Any], contract: Contract) -> dict[str, Any]:
    """`payload` (an answer of spec 01's tool `name`) as `contract` has it: unchanged under
    v1.1; under v1.0 cut down to spec 01's fields, at every level its schema closes
    (`additionalProperties: false`)."""
    if contract != "1.0":
        return payload
    projected: dict[str, Any] = _project(payload, V10_OUTPUTS[name])
    return projected


#: The codes added after spec 01, as a v1.0 client must read them: the nearest of spec 01's.
_V10_CODES = {
    "TIMEOUT": "UPSTREAM",
    "INVALID_PROJECT": "VALIDATION",
    "EMBEDDING_MISMATCH": "EMBEDDINGS",
    "HYBRID_NOT_SUPPORTED": "VALIDATION",
    "INDEX_UNAVAILABLE": "STORE",
}


def contract_error_code(code: str, contract: Contract) -> str:
    """The error `code` of a spec 01 tool as `contract` has it (v1.0: within spec 01's enum)."""
    if contract != "1.0" or code in SPEC_ERROR_CODES:
        return code
    return _V10_CODES.get(code, "UNKNOWN")


def _project(value: Any, schema: dict[str, Any]) -> Any:
    if value is None:
        return None
    branches = [b for b in schema.get("anyOf", ()) if b.get("type") != "null"]
    if branches:
        return _project(value, branches[0])
    if isinstance(value, dict) and "properties" in schema:
        known: dict[str, Any] = schema["properties"]
        closed = schema.get("additionalProperties") is False
        return {
            key: _project(item, known[key]) if key in known else item
            for key, item in value.items()
            if key in known or not closed
        }
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_project(item, schema["items"]) for item in value]
    return value


# --- corpus_sync_status (wave 2) -------------------------------------------------------------

SYNC_STATUS_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": (
                "The job_id of a sync job<!-- if pubmed_sync_delta --> (a pubmed_sync_delta "
                "answer carries it)<!-- end -->."
            ),
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
        "status": {
            "type": "string",
            "enum": ["queued", "running", "succeeded", "failed", "interrupted"],
        },
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


# --- corpus_overview (wave 2) ----------------------------------------------------------------

CORPUS_OVERVIEW_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}

CORPUS_OVERVIEW_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "records": NULLABLE_INT,
        "chunks": NULLABLE_INT,
        "queries_total": {"type": "integer"},
        "queries": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "query_key": {"type": "string"},
                    "term": NULLABLE_STRING,
                    "last_edat": NULLABLE_STRING,
                    "last_sync": NULLABLE_STRING,
                    "records": {"type": "integer"},
                    "pending_pmids": {"type": "integer"},
                },
                "required": [
                    "query_key",
                    "term",
                    "last_edat",
                    "last_sync",
                    "records",
                    "pending_pmids",
                ],
                "additionalProperties": False,
            },
        },
    },
    "required": ["records", "chunks", "queries_total", "queries"],
    "additionalProperties": False,
}
