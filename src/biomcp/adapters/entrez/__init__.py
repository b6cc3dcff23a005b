"""NCBI Entrez E-utilities adapters: safe parsers for E-utilities XML responses."""

from biomcp.adapters.entrez.pubmed_xml import (
    ParsedArticleSet,
    PubMedXmlError,
    parse_pubmed_articles,
)

__all__ = ["ParsedArticleSet", "PubMedXmlError", "parse_pubmed_articles"]
