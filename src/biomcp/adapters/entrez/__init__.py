"""NCBI Entrez E-utilities adapters: safe parsers for E-utilities XML responses."""

from biomcp.adapters.entrez.eutils_xml import (
    parse_einfo,
    parse_elink,
    parse_esearch,
    parse_esummary,
)
from biomcp.adapters.entrez.pubmed_xml import ParsedArticleSet, parse_pubmed_articles
from biomcp.adapters.entrez.xmlsafe import classify_ncbi_error, parse_document

__all__ = [
    "ParsedArticleSet",
    "classify_ncbi_error",
    "parse_document",
    "parse_einfo",
    "parse_elink",
    "parse_esearch",
    "parse_esummary",
    "parse_pubmed_articles",
]
