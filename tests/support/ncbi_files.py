"""Records of the real NCBI bulk files in ../shared/data/ncbi_files, read by PMID (the tests
skip when the folder is absent). Only the wanted articles are parsed, so a test stays quick."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from functools import cache

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.records import PubMedRecord
from tests.conftest import shared_data_path

__all__ = ["BASELINE_1979", "UPDATE_2021", "ncbi_records"]

BASELINE_1979 = "pubmed20n0014.xml.gz"
UPDATE_2021 = "pubmed21n1298.xml.gz"
_PMID = re.compile(rb"<PMID[^>]*>(\d+)</PMID>")


@cache
def _articles(name: str) -> tuple[bytes, ...]:
    data = gzip.decompress(shared_data_path("ncbi_files", name).read_bytes())
    return tuple(chunk for chunk in data.split(b"</PubmedArticle>") if b"<PubmedArticle>" in chunk)


def ncbi_records(name: str, pmids: Iterable[str]) -> dict[str, PubMedRecord]:
    """The records of file `name` whose PMID is in `pmids`, by PMID."""
    wanted = set(pmids)
    kept = []
    for chunk in _articles(name):
        start = chunk.find(b"<PubmedArticle>")
        found = _PMID.search(chunk, start)
        if found and found.group(1).decode() in wanted:
            kept.append(chunk[start:] + b"</PubmedArticle>")
    body = b"<PubmedArticleSet>" + b"".join(kept) + b"</PubmedArticleSet>"
    return {r.pmid: r for r in parse_pubmed_articles(body).records}
