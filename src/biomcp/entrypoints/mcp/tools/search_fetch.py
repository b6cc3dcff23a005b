"""The `search` / `fetch` pair: the two tools ChatGPT's connectors and deep research look for.

* `search(query)` answers `{"results": [{"id", "title", "url"}], "source"}`: the corpus's best
  papers (hybrid search, quality-biased, one result per paper), or, when the corpus has nothing
  relevant (empty, no hit, or no hit passing the relevance floor), PubMed's own best matches
  (live ESearch + ESummary). Ids are
  `pmid:<digits>`, URLs `https://pubmed.ncbi.nlm.nih.gov/<pmid>/`. A live result PubMed marks
  retracted has `retracted: true` (the corpus leaves retracted records out).
* `fetch(id)` answers `{"id", "title", "text", "url", "metadata"}`: the title and abstract of
  the document, from the corpus when it holds it, else from PubMed (EFetch). It accepts
  `pmid:<digits>`, bare digits or a PubMed URL; an id PubMed does not know is NOT_FOUND. A
  retracted article says so in its text and in `metadata.retraction_notice`.

Both are read-only thin adapters over the corpus and live use cases. Their names are the
clients' convention, the same in both naming modes. They form the `chatgpt` toolset, off by
default: other clients would show them beside `rag_search` and the live tools as duplicates.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from mcp.server.mcpserver.context import Context

from biomcp.entrypoints.mcp.toolspec import READING_LIVE, ToolSpec
from biomcp.ports.entrez import EntrezApiKeyError, EntrezRequestError
from biomcp.usecases.errors import InvalidRequestError, NotFoundError

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["FETCH_INPUT", "FETCH_OUTPUT", "SEARCH_INPUT", "SEARCH_OUTPUT", "TOOLSET", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "chatgpt"

#: The most documents one `search` answers with.
MAX_RESULTS: Final = 10
_ID: Final = re.compile(
    r"\s*(?:pmid:\s*|(?:https?://)?pubmed\.ncbi\.nlm\.nih\.gov/)?([1-9][0-9]{0,11})/?\s*",
    re.IGNORECASE,
)

_NO_NOTICE: Final = "Retracted publication."
_STRING: Final = {"type": "string"}
_STRINGS: Final = {"type": "array", "items": {"type": "string"}}

SEARCH_INPUT: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "What to look for: a question, keywords or a PubMed query.",
        }
    },
    "required": ["query"],
    "additionalProperties": False,
}
SEARCH_OUTPUT: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {**_STRING, "description": "pmid:<digits>, for fetch"},
                    "title": _STRING,
                    "url": {**_STRING, "description": "The article's PubMed page"},
                    "retracted": {"type": "boolean"},
                },
                "required": ["id", "title", "url"],
                "additionalProperties": False,
            },
        },
        "source": {
            "type": "string",
            "enum": ["corpus", "pubmed"],
            "description": "corpus: the synced evidence corpus; pubmed: live PubMed search",
        },
    },
    "required": ["results", "source"],
    "additionalProperties": False,
}
FETCH_INPUT: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "An id from search: pmid:<digits> (bare digits or a PubMed URL too).",
        }
    },
    "required": ["id"],
    "additionalProperties": False,
}
FETCH_OUTPUT: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "title": _STRING,
        "text": {**_STRING, "description": "The title and the abstract"},
        "url": _STRING,
        "metadata": {
            "type": "object",
            "description": "What is known of the article; keys without a value are left out",
            "properties": {
                "source": {"type": "string", "enum": ["corpus", "pubmed"]},
                "pmid": _STRING,
                "journal": _STRING,
                "pub_date": _STRING,
                "pub_types": _STRINGS,
                "authors": _STRINGS,
                "mesh_terms": _STRINGS,
                "doi": _STRING,
                "pmcid": _STRING,
                "evidence_type": _STRING,
                "quality": {"type": "number", "description": "0-10 (corpus only)"},
                "retracted": {"type": "boolean"},
                "retraction_notice": _STRING,
            },
            "required": ["source", "pmid"],
            "additionalProperties": False,
        },
    },
    "required": ["id", "title", "text", "url", "metadata"],
    "additionalProperties": False,
}


def specs(services: Services) -> list[ToolSpec]:
    """`search` and `fetch`."""

    async def search(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        query = args["query"]
        found = await _corpus_search(services, query)
        if found:
            return {"results": found, "source": "corpus"}
        try:
            live = await _live_search(services, query)
        except EntrezApiKeyError:
            raise
        except EntrezRequestError:  # PubMed could use none of the words: it found nothing
            live = []
        return {"results": live, "source": "pubmed"}

    async def fetch(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        pmid = parse_id(args["id"])
        try:
            return _from_corpus(await services.documents.run(pmid))
        except NotFoundError:
            pass
        return await _live_fetch(services, pmid)

    return [
        ToolSpec(
            "search",
            "search",
            "Search PubMed evidence",
            "Find PubMed articles for a question or keywords: the synced evidence corpus "
            "(ranked by relevance and study quality), else PubMed live when it has nothing "
            "relevant. Returns up to "
            f"{MAX_RESULTS} articles (id for fetch, title, URL, retracted) and the source.",
            search,
            writes=False,
            annotations=READING_LIVE,
            input_schema=SEARCH_INPUT,
            output_schema=SEARCH_OUTPUT,
        ),
        ToolSpec(
            "fetch",
            "fetch",
            "Fetch a PubMed article",
            "Title and abstract of one article by id (pmid:<digits>, digits or PubMed URL), "
            "with metadata: journal, date, types, authors, MeSH, DOI, retraction notice and, "
            "from the corpus, evidence type and quality (0-10).",
            fetch,
            writes=False,
            annotations=READING_LIVE,
            input_schema=FETCH_INPUT,
            output_schema=FETCH_OUTPUT,
        ),
    ]


def parse_id(value: str) -> str:
    """The PMID of `pmid:<digits>`, bare digits or a PubMed article URL.

    Raises:
        InvalidRequestError: anything else.
    """
    match = _ID.fullmatch(value)
    if match is None:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise InvalidRequestError(
            f"id {shown!r} is not an article id: use the id search gave, pmid:<digits> "
            "(e.g. pmid:29768149)",
            details={"field": "id"},
        )
    return match.group(1)


def pubmed_url(pmid: str) -> str:
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


def _result(pmid: str, title: str | None, *, retracted: bool = False) -> dict[str, Any]:
    """One search result; `retracted` only on a retracted article."""
    result: dict[str, Any] = {
        "id": f"pmid:{pmid}",
        "title": _title(pmid, title),
        "url": pubmed_url(pmid),
    }
    if retracted:
        result["retracted"] = True
    return result


def _title(pmid: str, title: str | None) -> str:
    return (title or "").strip() or f"PubMed article {pmid}"


async def _corpus_search(services: Services, query: str) -> list[dict[str, Any]]:
    """The corpus's papers for `query`, best first (empty: an empty corpus, no hit, or no hit
    passing the relevance floor)."""
    try:
        outcome = await services.search.search(query, MAX_RESULTS, True, group_by="paper")
    except NotFoundError:  # nothing synced yet
        return []
    if outcome.nothing_relevant:
        return []
    results = []
    for paper in outcome.papers or ():
        pmid = paper.doc_id.removeprefix("pmid:")
        try:
            document = await services.documents.run(pmid)
        except NotFoundError:  # removed since it was indexed
            continue
        results.append(_result(pmid, document.get("title")))
    return results


async def _live_search(services: Services, query: str) -> list[dict[str, Any]]:
    answer = await services.live.search(query, max_results=MAX_RESULTS, brief_summaries=MAX_RESULTS)
    briefs = {brief["pmid"]: brief for brief in answer["briefSummaries"]}
    return [
        _result(
            pmid,
            briefs.get(pmid, {}).get("title"),
            retracted=bool(briefs.get(pmid, {}).get("retracted")),
        )
        for pmid in answer["pmids"]
    ]


def _from_corpus(document: dict[str, Any]) -> dict[str, Any]:
    pmid = document["doc_id"].removeprefix("pmid:")
    quality = document.get("quality") or {}
    metadata = {
        "source": "corpus",
        "pmid": pmid,
        "journal": document.get("journal"),
        "pub_date": document.get("pdat"),
        "pub_types": document.get("pub_types"),
        "authors": document.get("authors"),
        "mesh_terms": document.get("mesh_terms"),
        "doi": document.get("doi"),
        "pmcid": document.get("pmcid"),
        "evidence_type": document.get("evidence_type"),
        "quality": quality.get("total"),
        "retracted": document.get("retracted"),
        "retraction_notice": notice_text(document.get("retraction")),
    }
    return _document(pmid, document.get("title"), document.get("abstract"), metadata)


async def _live_fetch(services: Services, pmid: str) -> dict[str, Any]:
    answer = await services.live.fetch([pmid], detail_level="abstract_plus", include_mesh=True)
    if not answer["articles"]:
        raise NotFoundError(
            f"pmid:{pmid} is in neither the corpus nor PubMed: check the id (search gives ids)",
            details={"id": f"pmid:{pmid}"},
        )
    article = answer["articles"][0]
    journal = article.get("journalInfo") or {}
    published = journal.get("publicationDate") or {}
    metadata = {
        "source": "pubmed",
        "pmid": pmid,
        "journal": journal.get("title"),
        "pub_date": published.get("isoDate") or published.get("medlineDate"),
        "pub_types": article.get("publicationTypes"),
        "authors": [name for a in article.get("authors", ()) if (name := _author(a))],
        "mesh_terms": [t["descriptorName"] for t in article.get("meshTerms", ())],
        "doi": article.get("doi"),
        "pmcid": article.get("pmcid"),
        "retracted": article.get("retracted"),
        "retraction_notice": notice_text(_snake(article.get("retractionNotice"))),
    }
    return _document(pmid, article.get("title"), article.get("abstractText"), metadata)


def notice_text(notice: dict[str, Any] | None) -> str | None:
    """`Retraction in: <citation>. PMID: <n>.` of a retraction notice (`notice_pmid`,
    `source`); `Retracted publication.` for one without either; None without a notice."""
    if notice is None:
        return None
    source = (notice.get("source") or "").strip().rstrip(". ")
    pmid = notice.get("notice_pmid")
    parts = [f"{source}." if source else "", f"PMID: {pmid}." if pmid else ""]
    shown = " ".join(p for p in parts if p)
    return f"Retraction in: {shown}" if shown else _NO_NOTICE


def _snake(notice: dict[str, Any] | None) -> dict[str, Any] | None:
    """The live answer's `retractionNotice` spelled as the corpus's `retraction`."""
    if notice is None:
        return None
    return {"notice_pmid": notice.get("noticePmid"), "source": notice.get("source")}


def _author(author: dict[str, Any]) -> str | None:
    if author.get("collectiveName"):
        return str(author["collectiveName"])
    parts = [author.get("lastName"), author.get("initials")]
    return " ".join(p for p in parts if p) or None


def _document(
    pmid: str, title: str | None, abstract: str | None, metadata: dict[str, Any]
) -> dict[str, Any]:
    shown = _title(pmid, title)
    parts = [shown]
    if metadata.get("retracted"):  # said in the text too: a reader of the text sees it
        notice = metadata.get("retraction_notice")
        parts.append(f"RETRACTED. {notice}" if notice != _NO_NOTICE else "RETRACTED.")
    if abstract and abstract.strip():
        parts.append(abstract.strip())
    text = "\n\n".join(part.strip() for part in parts)
    return {
        "id": f"pmid:{pmid}",
        "title": shown,
        "text": text,
        "url": pubmed_url(pmid),
        "metadata": {k: v for k, v in metadata.items() if v is not None and v != []},
    }
