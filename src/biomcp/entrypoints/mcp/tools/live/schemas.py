"""The schemas of spec 04's live tools: its Zod shapes translated to JSON Schema 2020-12 (names,
types, defaults, bounds, patterns, enums; `additionalProperties: false`), with one addition:
`vancouver_string` among the citation styles, and bounds where spec 04 sets none (every string
a `maxLength`, every array a `maxItems`). Output schemas hold the spec's fields plus additive
ones (marked in their descriptions). Nullable values are `anyOf` branches, never type arrays."""

from __future__ import annotations

import copy
from typing import Any

from biomcp.entrypoints.mcp.contract import (
    NULLABLE_INT,
    NULLABLE_NUMBER,
    NULLABLE_STRING,
    PUBMED_TERM_MAX_CHARS,
)

__all__ = ["LIVE_INPUTS", "LIVE_OUTPUTS", "PORTABLE_NAMES"]

PORTABLE_NAMES = {
    "searchPubMedArticles": "pubmed_search_articles",
    "fetchArticleDetails": "pubmed_fetch_article_details",
    "getArticleRelationships": "pubmed_article_relationships",
}

_NCBI_DATE = {"type": "string", "pattern": r"^\d{4}(/\d{2}(/\d{2})?)?$", "maxLength": 10}
_PMID = {"type": "string", "pattern": r"^\d+$"}
#: A PMID argument: digits, at most 20 of them (PMIDs have 8 today).
_PMID_ARG = {**_PMID, "maxLength": 20}
_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_RETRACTED = {"type": "boolean", "description": "additive: retracted in PubMed"}

# --- inputs (spec 04 section 3, translated) ------------------------------------------------

LIVE_INPUTS: dict[str, dict[str, Any]] = {
    "searchPubMedArticles": {
        "type": "object",
        "required": ["queryTerm"],
        "properties": {
            "queryTerm": {
                "type": "string",
                "minLength": 3,
                "maxLength": PUBMED_TERM_MAX_CHARS,
                "description": "PubMed query (field tags, quotes, AND/OR/NOT, parentheses and "
                "wildcards are kept). Query term must be at least 3 characters.",
            },
            "maxResults": {
                "type": "integer",
                "exclusiveMinimum": 0,
                "maximum": 1000,
                "default": 20,
                "description": "Max results per query. ESearch's retmax is used.",
            },
            "sortBy": {
                "type": "string",
                "enum": ["relevance", "pub_date", "author", "journal_name"],
                "default": "relevance",
                "description": "Note: Other sorting (e.g., last_author, title) may require "
                "client-side implementation or be future server enhancements.",
            },
            "dateRange": {
                "type": "object",
                "properties": {
                    "minDate": {**_NCBI_DATE, "description": "YYYY, YYYY/MM, or YYYY/MM/DD"},
                    "maxDate": {**_NCBI_DATE, "description": "YYYY, YYYY/MM, or YYYY/MM/DD"},
                    "dateType": {
                        "type": "string",
                        "enum": ["pdat", "mdat", "edat"],
                        "default": "pdat",
                        "description": "pdat: Publication Date, mdat: Modification Date, "
                        "edat: Entrez Date",
                    },
                },
                "additionalProperties": False,
                "description": "Defines a date range for the search.",
            },
            "filterByPublicationTypes": {
                "type": "array",
                "items": {"type": "string", "maxLength": 100},
                "maxItems": 20,
                "description": "e.g., ['Review', 'Clinical Trial']. Server maps to Entrez query "
                'syntax (e.g., "Review"[Publication Type]).',
            },
            "fetchBriefSummaries": {
                "type": "integer",
                "minimum": 0,
                "maximum": 100,
                "default": 0,
                "description": "Number of top PMIDs for ESummary v2.0. 0 to disable. Max 100 "
                "for this tool.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "maximum": 9998,
                "description": "Results to skip (ESearch retstart).",
            },
            "cursor": {
                "type": "string",
                "minLength": 1,
                "maxLength": 512,
                "description": "A previous page's nextCursor.",
            },
        },
        "additionalProperties": False,
    },
    "fetchArticleDetails": {
        "type": "object",
        "required": ["pmids"],
        "properties": {
            "pmids": {
                "type": "array",
                "items": _PMID_ARG,
                "minItems": 1,
                "maxItems": 200,
                "description": "At least one PMID is required. Max 200 PMIDs per call.",
            },
            "detailLevel": {
                "type": "string",
                "enum": ["abstract_plus", "full_xml", "medline_text", "citation_data"],
                "default": "abstract_plus",
                "description": "abstract_plus: parsed title, abstract, authors, journal, "
                "publication date, keywords, DOI; full_xml: raw PubmedArticle XML; "
                "medline_text: MEDLINE format; citation_data: minimal parsed data for citing.",
            },
            "includeMeshTerms": {
                "type": "boolean",
                "default": True,
                "description": "Applies to 'abstract_plus' and 'citation_data' if parsed from XML.",
            },
            "includeGrantInfo": {
                "type": "boolean",
                "default": False,
                "description": "Applies to 'abstract_plus' if parsed from XML.",
            },
        },
        "additionalProperties": False,
    },
    "getArticleRelationships": {
        "type": "object",
        "required": ["sourcePmid"],
        "properties": {
            "sourcePmid": {**_PMID_ARG, "description": "Primary PMID for relationship lookup."},
            "relationshipType": {
                "type": "string",
                "enum": [
                    "pubmed_similar_articles",
                    "pubmed_citedin",
                    "pubmed_references",
                    "citation_formats",
                ],
                "default": "pubmed_similar_articles",
            },
            "maxRelatedResults": {
                "type": "integer",
                "exclusiveMinimum": 0,
                "maximum": 50,
                "default": 5,
                "description": "Applies to relationship types returning multiple PMIDs. "
                "Server truncates ELink results if necessary.",
            },
            "citationStyles": {
                "type": "array",
                "items": {
                    "type": "string",
                    "enum": ["ris", "bibtex", "apa_string", "mla_string", "vancouver_string"],
                },
                "maxItems": 5,
                "default": ["ris"],
                "description": "For 'citation_formats' type. Formatting is server-side. "
                "(vancouver_string is an addition to spec 04.)",
            },
        },
        "additionalProperties": False,
    },
}

# --- outputs -------------------------------------------------------------------------------


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "required": required if required is not None else list(properties),
        "properties": properties,
        "additionalProperties": False,
    }


def _undescribed(schema: Any) -> Any:
    """A copy of `schema` without its descriptions: an echoed input needs its shape only."""
    if isinstance(schema, dict):
        return {k: _undescribed(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_undescribed(v) for v in schema]
    return copy.deepcopy(schema)


def _optional(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null."""
    return {"anyOf": [schema, {"type": "null"}]}


_NOTICE = _optional(
    {
        **_object({"noticePmid": NULLABLE_STRING, "source": NULLABLE_STRING}),
        "description": "additive: its notice, if retracted",
    }
)
#: A summary's notice, declared loosely to keep the catalogue small (the article's is exact).
_BRIEF_NOTICE = {"type": "object", "description": "additive: {noticePmid, source}, if retracted"}


_PUBLICATION_DATE = _object(
    {
        "year": {"type": "integer"},
        "month": NULLABLE_STRING,
        "day": NULLABLE_INT,
        "medlineDate": NULLABLE_STRING,
        "isoDate": {"type": "string", "description": "additive: YYYY, YYYY-MM or YYYY-MM-DD"},
    }
)
_JOURNAL_INFO = _object(
    {
        "title": NULLABLE_STRING,
        "isoAbbreviation": NULLABLE_STRING,
        "volume": NULLABLE_STRING,
        "issue": NULLABLE_STRING,
        "pages": NULLABLE_STRING,
        "publicationDate": _optional(_PUBLICATION_DATE),
    }
)
_AUTHOR = _object(
    {
        "lastName": NULLABLE_STRING,
        "firstName": NULLABLE_STRING,
        "initials": NULLABLE_STRING,
        "affiliation": NULLABLE_STRING,
        "collectiveName": {"type": "string", "description": "additive: a group author"},
        "orcid": {"type": "string", "description": "additive"},
    },
    required=["lastName", "firstName", "initials"],
)
_MESH_TERM = _object(
    {
        "descriptorName": _STRING,
        "qualifierName": NULLABLE_STRING,
        "isMajorTopic": {"type": "boolean"},
        "ui": NULLABLE_STRING,
        "qualifiers": {
            "type": "array",
            "description": "additive: every qualifier with its own major-topic flag",
            "items": _object(
                {
                    "qualifierName": _STRING,
                    "ui": NULLABLE_STRING,
                    "isMajorTopic": {"type": "boolean"},
                }
            ),
        },
    },
    required=["descriptorName", "qualifierName", "isMajorTopic", "ui"],
)
_GRANT = _object(
    {
        "grantId": NULLABLE_STRING,
        "agency": NULLABLE_STRING,
        "country": NULLABLE_STRING,
        "acronym": NULLABLE_STRING,
    }
)
_ARTICLE = _object(
    {
        "pmid": _STRING,
        # abstract_plus and citation_data
        "title": NULLABLE_STRING,
        "abstractText": NULLABLE_STRING,
        "abstractSections": {
            "type": "array",
            "description": "additive: the labelled sections of a structured abstract",
            "items": _object(
                {"label": NULLABLE_STRING, "nlmCategory": NULLABLE_STRING, "text": _STRING}
            ),
        },
        "authors": {"type": "array", "items": _AUTHOR},
        "journalInfo": _JOURNAL_INFO,
        "publicationTypes": _STRINGS,
        "keywords": _STRINGS,
        "meshTerms": {"type": "array", "items": _MESH_TERM},
        "grantList": {"type": "array", "items": _GRANT},
        "doi": NULLABLE_STRING,
        "pmcid": NULLABLE_STRING,
        "pubmedUrl": _STRING,
        "retracted": _RETRACTED,
        "retractionNotice": _NOTICE,
        # full_xml and medline_text
        "fullXml": {"type": "string", "description": "the PubmedArticle element as NCBI sent it"},
        "medlineText": {"type": "string", "description": "the article's MEDLINE record"},
    },
    required=["pmid"],
)
_BRIEF_SUMMARY = _object(
    {
        "pmid": _STRING,
        "title": NULLABLE_STRING,
        "authors": NULLABLE_STRING,
        "source": NULLABLE_STRING,
        "pubDate": NULLABLE_STRING,
        "epubDate": NULLABLE_STRING,
        "retracted": _RETRACTED,
        "retractionNotice": _BRIEF_NOTICE,
    },
    required=["pmid", "title", "authors", "source", "pubDate", "epubDate"],
)
_RELATED = _object(
    {
        "pmid": _STRING,
        "title": NULLABLE_STRING,
        "authors": NULLABLE_STRING,
        "score": {**NULLABLE_NUMBER, "description": "0-1, relative to the most similar"},
        "rawScore": {**NULLABLE_INT, "description": "additive: NCBI's score"},
        "linkUrl": _STRING,
        "retracted": _RETRACTED,
        "retractionNotice": _BRIEF_NOTICE,
    },
    required=["pmid", "title", "authors", "score", "linkUrl"],
)

LIVE_OUTPUTS: dict[str, dict[str, Any]] = {
    "searchPubMedArticles": _object(
        {
            "searchParameters": {
                "type": "object",
                "required": ["queryTerm", "maxResults", "sortBy", "fetchBriefSummaries"],
                "properties": {  # the cursor is not echoed
                    k: _undescribed(v)
                    for k, v in LIVE_INPUTS["searchPubMedArticles"]["properties"].items()
                    if k != "cursor"
                },
                "additionalProperties": False,
            },
            "effectiveESearchTerm": _STRING,
            "totalFound": {"type": "integer", "minimum": 0},
            "retrievedPmidCount": {"type": "integer", "minimum": 0},
            "pmids": {"type": "array", "items": _PMID},
            "briefSummaries": {"type": "array", "items": _BRIEF_SUMMARY},
            "eSearchUrl": _STRING,
            "eSummaryUrl": NULLABLE_STRING,
            "queryTranslation": {**NULLABLE_STRING, "description": "additive: NCBI's reading"},
            "warnings": {**_STRINGS, "description": "additive: NCBI's ErrorList / WarningList"},
            "offset": {**NULLABLE_INT, "description": "additive: null past result 9,999"},
            "nextCursor": {**NULLABLE_STRING, "description": "additive"},
            "spelling": {
                **_object(
                    {
                        "original": _STRING,
                        "corrected": _STRING,
                        "searchedWith": {"type": "string", "enum": ["original", "corrected"]},
                    }
                ),
                "description": "additive: ESpell's suggestion",
            },
        },
        required=[
            "searchParameters",
            "effectiveESearchTerm",
            "totalFound",
            "retrievedPmidCount",
            "pmids",
            "briefSummaries",
            "eSearchUrl",
        ],
    ),
    "fetchArticleDetails": _object(
        {
            "requestedPmids": {"type": "array", "items": _PMID},
            "articles": {"type": "array", "items": _ARTICLE},
            "notFoundPmids": {"type": "array", "items": _PMID},
            "eFetchDetails": _object(
                {
                    "urls": _STRINGS,
                    "requestMethod": {"type": "string", "enum": ["GET", "POST"]},
                }
            ),
            "detailLevel": {
                "type": "string",
                "enum": ["abstract_plus", "full_xml", "medline_text", "citation_data"],
                "description": "additive",
            },
            "warnings": {**_STRINGS, "description": "additive: books, deleted records..."},
        },
        required=["requestedPmids", "articles", "notFoundPmids", "eFetchDetails"],
    ),
    "getArticleRelationships": _object(
        {
            "sourcePmid": _PMID,
            "relationshipType": copy.deepcopy(
                LIVE_INPUTS["getArticleRelationships"]["properties"]["relationshipType"]
            ),
            "relatedArticles": {"type": "array", "items": _RELATED},
            "citations": _object(
                dict.fromkeys(
                    ("ris", "bibtex", "apa_string", "mla_string", "vancouver_string"), _STRING
                ),
                required=[],
            ),
            "retrievedCount": {"type": "integer", "minimum": 0},
            "eLinkUrl": NULLABLE_STRING,
            "eSummaryUrl": {**_STRING, "description": "additive: the enrichment call"},
            "eFetchUrl": {**_STRING, "description": "additive: the citation_formats call"},
            "totalLinked": {
                "type": "integer",
                "minimum": 0,
                "description": "additive: links before truncation to maxRelatedResults",
            },
        },
        required=[
            "sourcePmid",
            "relationshipType",
            "relatedArticles",
            "citations",
            "retrievedCount",
            "eLinkUrl",
        ],
    ),
}
