"""The corpus tools' input and output schemas (the answers of spec 01's five are in
`contract`, by contract version).

- `TOOL_INPUTS`: spec 01's inputs with bounds added (every string a `maxLength`, every integer
  a `maximum`): tighter, never looser, so a request valid here is valid under spec 01.
- `corpus_sync_status` and `corpus_overview`, outside spec 01: their own schemas.
"""

from __future__ import annotations

from typing import Any

from biomcp.domain.design import STUDY_DESIGN_VALUES
from biomcp.domain.records import EvidenceType
from biomcp.entrypoints.mcp.contract import (
    NULLABLE_INT,
    NULLABLE_NUMBER,
    NULLABLE_STRING,
    PUBMED_TERM_MAX_CHARS,
)
from biomcp.usecases.documents import MAX_SECTION_WORD_CHARS, MAX_SECTION_WORDS
from biomcp.usecases.paper_results import GROUPINGS
from biomcp.usecases.search_filters import SOURCES

__all__ = [
    "CORPUS_OVERVIEW_INPUT",
    "CORPUS_OVERVIEW_OUTPUT",
    "QUERY_KEY_MAX_CHARS",
    "SEARCH_QUERY_MAX_CHARS",
    "SYNC_STATUS_INPUT",
    "SYNC_STATUS_OUTPUT",
    "TOOL_INPUTS",
]

#: Bounds of the corpus tools' arguments (spec 01 sets none of these; `rag.search`'s `top_k`
#: keeps the spec's 1-100). A saved-query name, a search question, a doc_id.
QUERY_KEY_MAX_CHARS = 200
SEARCH_QUERY_MAX_CHARS = 4000
_STUDY_DESIGN_VALUES = list(STUDY_DESIGN_VALUES)
DOC_ID_MAX_CHARS = 32
TRIAL_ID_MAX_CHARS = 40
TIMESTAMP_MAX_CHARS = 64
#: Ten years of overlap: more is a backfill, which moving the checkpoint does better.
OVERLAP_DAYS_MAX = 3650

_QUERY_KEY = {"type": "string", "minLength": 1, "maxLength": QUERY_KEY_MAX_CHARS}
_EVIDENCE_TYPES = [t.value for t in EvidenceType]
#: Publication years a search filter accepts (PubMed's records start in the 1780s).
YEAR_MIN, YEAR_MAX = 1700, 2200
_YEAR = {"type": "integer", "minimum": YEAR_MIN, "maximum": YEAR_MAX}

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
            "fulltext": {
                "type": "boolean",
                "description": "Also index PMC full text (remembered for the key).",
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
                "description": "Also retracted papers (flagged).",
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
            "trial_id": {
                "type": "string",
                "maxLength": TRIAL_ID_MAX_CHARS,
                "description": "Only papers naming this trial id (NCT, ISRCTN, EudraCT, "
                "ChiCTR) or 'any'.",
            },
            "group_by": {
                "type": "string",
                "enum": list(GROUPINGS),
                "default": "chunk",
            },
            "source": {"type": "string", "enum": list(SOURCES)},
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
            },
            "fulltext": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_SECTION_WORD_CHARS},
                "maxItems": MAX_SECTION_WORDS,
                "description": "Stored full text: [] outline, or section title words.",
            },
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
        "fulltext": {"type": "object", "description": "Records by full-text status."},
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
                    "fulltext": {"type": "boolean"},
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
