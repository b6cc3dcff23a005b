"""Spec 01's contract: its text, the portable spellings the server lists, and the contract
versions (v1.1 by default, spec 01's v1.0 exactly on request).

- `SPEC_INPUTS` / `SPEC_OUTPUTS` / `ERROR_ENVELOPE`: spec 01's schemas verbatim (a test holds
  them equal to the spec's text). They are the contract, not what `tools/list` shows.
- `V10_OUTPUTS`: spec 01's outputs in the portable spelling: a nullable value is an `anyOf`
  of one-type branches instead of a `type` array (the same set of values, but clients that map
  tool schemas onto single-`type` dialects reject type arrays).
- `V11_OUTPUTS`: v1.0 plus additive fields (contract v1.1, as spec 01's versioning policy
  allows): every v1.0 property keeps its type and every v1.0 required field stays required.
- `in_contract`: a handler whose answers and error codes are those of the configured contract;
  `contract_payload` and `contract_error_code` are the one place a v1.1 answer is cut down to
  spec 01's fields and codes.
- The building blocks every family shares: `NULLABLE_*` and `PUBMED_TERM_MAX_CHARS`.

Listed schemas are portable: no type arrays, no `$defs` / `$ref`, no `$schema`, no top-level
`anyOf` / `oneOf` / `allOf` (`tests/integration/test_tool_catalogue.py` lints them).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from mcp.server.mcpserver.context import Context

from biomcp.domain.design import STUDY_DESIGN_VALUES
from biomcp.domain.records import EvidenceType
from biomcp.entrypoints.errors import ToolCallError, classify
from biomcp.entrypoints.mcp.toolspec import Handler

__all__ = [
    "CONTRACT_VERSION",
    "CONTRACT_VERSIONS",
    "ERROR_CODES",
    "ERROR_ENVELOPE",
    "NULLABLE_INT",
    "NULLABLE_NUMBER",
    "NULLABLE_STRING",
    "PUBMED_TERM_MAX_CHARS",
    "SPEC_ERROR_CODES",
    "SPEC_INPUTS",
    "SPEC_OUTPUTS",
    "V10_OUTPUTS",
    "V11_OUTPUTS",
    "Contract",
    "contract_error_code",
    "contract_outputs",
    "contract_payload",
    "in_contract",
    "portable",
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


# --- shared by the tool families ---------------------------------------------------------------

# Nullable values as `anyOf` branches of one type each: the most portable spelling (clients
# mapping schemas onto single-`type` dialects reject `"type": [..., "null"]`).
NULLABLE_STRING: dict[str, Any] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
NULLABLE_INT: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
NULLABLE_NUMBER: dict[str, Any] = {"anyOf": [{"type": "number"}, {"type": "null"}]}

#: The longest PubMed query a tool accepts (a saved query's term, a live search).
PUBMED_TERM_MAX_CHARS = 8000

_STUDY_DESIGN_VALUES = list(STUDY_DESIGN_VALUES)
_EVIDENCE_TYPES = [t.value for t in EvidenceType]

# --- v1.0 and v1.1: what tools/list declares ----------------------------------------------------


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


def _with_verdict(schema: dict[str, Any]) -> dict[str, Any]:
    """`rag.search`'s answer with the relevance verdict beside the results."""
    schema["properties"]["nothing_relevant"] = {"type": "boolean"}
    schema["properties"]["warnings"] = {"type": "array", "items": {"type": "string"}}
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
        "retracted": {"type": "boolean"},
        "total": {"type": "integer"},
    },
    "additionalProperties": False,
}

V11_OUTPUTS: dict[str, dict[str, Any]] = {
    "pubmed.sync_delta": copy.deepcopy(V10_OUTPUTS["pubmed.sync_delta"]),
    "rag.search": _with_verdict(
        _extended(
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
                "source": {"type": "string", "enum": ["abstract", "fulltext"]},
                "anchor": NULLABLE_STRING,
                "other_chunks": {"type": "array", "items": {"type": "object"}},
            },
            at=("properties", "results", "items"),
        )
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
            "pdat_text": NULLABLE_STRING,
            "authors": {"type": "array", "items": {"type": "string"}},
            "mesh_terms": {"type": "array", "items": {"type": "string"}},
            "trial_ids": {"type": "array", "items": {"type": "string"}},
            "fulltext": {"anyOf": [{"type": "object"}, {"type": "null"}]},
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

# --- answers in the configured contract ----------------------------------------------------


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


def in_contract(name: str, handler: Handler, contract: Contract, backend: str) -> Handler:
    """`handler` of spec 01's tool `name`, its answers and error codes in `contract` (the one
    place v1.1 fields and codes are turned into v1.0's)."""
    if contract == "1.1":
        return handler

    async def answer(args: dict[str, Any], context: Context[Any, Any] | None) -> dict[str, Any]:
        try:
            payload = await handler(args, context)
        except Exception as exc:
            code, message, details = classify(exc, vector_backend=backend)
            raise ToolCallError(contract_error_code(code, contract), message, details) from exc
        return contract_payload(name, payload, contract)

    return answer
