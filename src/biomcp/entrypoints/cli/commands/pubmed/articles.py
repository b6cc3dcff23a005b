"""`biomcp pubmed search|fetch|related|cite`: PubMed searched and read now, as the MCP tools
`pubmed_search_articles`, `pubmed_fetch_article_details` and `pubmed_article_relationships` do,
on the same use case (`LivePubMed`)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    EXIT_FAILURE,
    JsonOption,
    cli_settings,
    emit_json,
    execute,
    execute_and_show,
    terminal_width,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["cite", "fetch", "related", "search"]

_RELATIONS = {
    "similar": "pubmed_similar_articles",
    "citedin": "pubmed_citedin",
    "cited-in": "pubmed_citedin",
    "references": "pubmed_references",
    "refs": "pubmed_references",
}
_STYLES = {
    "ris": "ris",
    "bibtex": "bibtex",
    "apa": "apa_string",
    "mla": "mla_string",
    "vancouver": "vancouver_string",
}
_STYLE_TITLES = {
    "ris": "RIS",
    "bibtex": "BibTeX",
    "apa_string": "APA 7",
    "mla_string": "MLA 9",
    "vancouver_string": "Vancouver",
}


def _wrap(text: str, *, indent: str = "  ") -> list[str]:
    width = min(terminal_width(), 100)
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent)


def _field(name: str, value: Any) -> list[str]:
    if value in (None, "", []):
        return []
    width = min(terminal_width(), 100)
    label = f"{name + ':':<12}"
    return textwrap.wrap(
        str(value), width=width, initial_indent=label, subsequent_indent=" " * len(label)
    )


# --- views -----------------------------------------------------------------------------------


def _search_view(answer: dict[str, Any]) -> str:
    shown, total = answer["retrievedPmidCount"], answer["totalFound"]
    lines = [f"{shown} of {total} PubMed records for: {answer['effectiveESearchTerm']}"]
    lines += [f"warning: {w}" for w in answer.get("warnings", [])]
    summaries = {s["pmid"]: s for s in answer["briefSummaries"]}
    for rank, pmid in enumerate(answer["pmids"], 1):
        summary = summaries.get(pmid)
        if summary is None:
            lines.append(f"{rank:>3}. {pmid}")
            continue
        flag = "  RETRACTED" if summary.get("retracted") else ""
        lines.append(f"{rank:>3}. {pmid}  {summary.get('pubDate') or ''}".rstrip() + flag)
        lines += _wrap(summary.get("title") or "(no title)", indent="     ")
        byline = "; ".join(p for p in (summary.get("authors"), summary.get("source")) if p)
        if byline:
            lines += _wrap(byline, indent="     ")
    if not answer["pmids"]:
        lines.append("no records: try other words or fewer filters")
    return "\n".join(lines)


def _authors_text(authors: list[dict[str, Any]]) -> str:
    names = []
    for author in authors:
        if author.get("collectiveName"):
            names.append(author["collectiveName"])
        else:
            names.append(" ".join(p for p in (author.get("lastName"), author.get("initials")) if p))
    shown = ", ".join(names[:8])
    return shown + (f", ... ({len(names)} in all)" if len(names) > 8 else "")


def _journal_text(info: dict[str, Any]) -> str:
    date = info.get("publicationDate") or {}
    parts = [info.get("isoAbbreviation") or info.get("title") or ""]
    if date.get("medlineDate"):
        parts.append(date["medlineDate"])
    locator = info.get("volume") or ""
    if info.get("issue"):
        locator += f"({info['issue']})"
    if info.get("pages"):
        locator += f":{info['pages']}"
    if locator:
        parts.append(locator)
    return ". ".join(p for p in parts if p)


def _article_view(article: dict[str, Any]) -> str:
    lines = [f"PMID {article['pmid']}"]
    lines += _wrap(article.get("title") or "(no title)", indent="")
    lines.append("")
    if article.get("retracted"):
        lines += _field("RETRACTED", _notice_text(article.get("retractionNotice")))
    mesh = [
        ("*" if m["isMajorTopic"] else "")
        + m["descriptorName"]
        + (f"/{m['qualifierName']}" if m.get("qualifierName") else "")
        for m in article.get("meshTerms", [])
    ]
    grants = [
        " ".join(p for p in (g.get("grantId"), g.get("agency")) if p)
        for g in article.get("grantList", [])
    ]
    lines += _field("Authors", _authors_text(article.get("authors", [])))
    lines += _field("Journal", _journal_text(article["journalInfo"]))
    lines += _field("Types", ", ".join(article.get("publicationTypes", [])))
    lines += _field("Keywords", "; ".join(article.get("keywords", [])))
    lines += _field("MeSH", "; ".join(mesh))
    lines += _field("Grants", "; ".join(grants))
    lines += _field("DOI", article.get("doi"))
    lines += _field("PMCID", article.get("pmcid"))
    lines += _field("URL", article.get("pubmedUrl"))
    if "abstractText" in article:
        lines += ["", "Abstract"]
        abstract = article.get("abstractText")
        if abstract:
            for paragraph in abstract.splitlines():
                lines += _wrap(paragraph)
        else:
            lines.append("  (no abstract)")
    return "\n".join(lines)


def _notice_text(notice: dict[str, Any] | None) -> str:
    """The retraction notice as `Retraction in: <citation> (PMID <n>)`."""
    notice = notice or {}
    source, pmid = notice.get("source"), notice.get("noticePmid")
    if not source and not pmid:
        return "PubMed marks it retracted (no notice given)"
    where = f" (PMID {pmid})" if pmid else ""
    return f"Retraction in: {source or 'notice'}{where}"


def _fetch_view(answer: dict[str, Any]) -> str:
    level = answer.get("detailLevel", "abstract_plus")
    blocks = []
    for article in answer["articles"]:
        if level == "full_xml":
            blocks.append(article["fullXml"])
        elif level == "medline_text":
            blocks.append(article["medlineText"])
        else:
            blocks.append(_article_view(article))
    separator = "\n\n" if level in ("full_xml", "medline_text") else "\n\n" + "-" * 40 + "\n\n"
    return separator.join(blocks)


def _related_view(answer: dict[str, Any]) -> str:
    kind = answer["relationshipType"].removeprefix("pubmed_").replace("_", " ")
    related = answer["relatedArticles"]
    if not related:
        return f"PMID {answer['sourcePmid']}: no {kind} in PubMed"
    total = answer.get("totalLinked", len(related))
    lines = [f"PMID {answer['sourcePmid']}: {len(related)} of {total} ({kind})"]
    for rank, article in enumerate(related, 1):
        score = f"  score {article['score']}" if article.get("score") is not None else ""
        flag = "  RETRACTED" if article.get("retracted") else ""
        lines.append(f"{rank:>3}. {article['pmid']}{score}{flag}")
        lines += _wrap(article.get("title") or "(no summary in PubMed)", indent="     ")
        if article.get("authors"):
            lines += _wrap(article["authors"], indent="     ")
    return "\n".join(lines)


# --- the commands ----------------------------------------------------------------------------


def search(
    query: Annotated[str, typer.Argument(help="A PubMed query (field tags, AND/OR/NOT...).")],
    max_results: Annotated[
        int, typer.Option("--max-results", "-n", help="PMIDs to return (1-1000).")
    ] = 20,
    sort: Annotated[
        str, typer.Option("--sort", help="relevance, pub_date, author or journal_name.")
    ] = "relevance",
    min_date: Annotated[
        str | None, typer.Option("--min-date", help="YYYY, YYYY/MM or YYYY/MM/DD.")
    ] = None,
    max_date: Annotated[
        str | None, typer.Option("--max-date", help="YYYY, YYYY/MM or YYYY/MM/DD.")
    ] = None,
    date_type: Annotated[
        str, typer.Option("--date-type", help="pdat (publication), mdat or edat (Entrez).")
    ] = "pdat",
    publication_type: Annotated[
        list[str] | None,
        typer.Option("--type", "-t", help="Keep this publication type (repeatable)."),
    ] = None,
    summaries: Annotated[
        int,
        typer.Option("--summaries", "-s", help="Brief summaries of the top PMIDs (0-100)."),
    ] = 10,
    json_output: JsonOption = False,
) -> None:
    """Search PubMed now and list the PMIDs found, the top ones with title and authors."""
    settings = cli_settings(json_output)
    window = None
    if min_date or max_date:
        window = {"minDate": min_date, "maxDate": max_date, "dateType": date_type}
        window = {k: v for k, v in window.items() if v is not None}

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.search(
            query,
            max_results=max_results,
            sort_by=sort,
            date_range=window,
            publication_types=publication_type,
            brief_summaries=min(summaries, max_results) if summaries > 0 else summaries,
        )

    execute_and_show(settings, work, _search_view, json_output=json_output)


def fetch(
    pmids: Annotated[list[str], typer.Argument(help="PMIDs (at most 200).")],
    detail: Annotated[
        str,
        typer.Option(
            "--detail",
            "-d",
            help="abstract_plus, full_xml, medline_text or citation_data.",
        ),
    ] = "abstract_plus",
    no_mesh: Annotated[bool, typer.Option("--no-mesh", help="Leave MeSH terms out.")] = False,
    grants: Annotated[bool, typer.Option("--grants", help="Include the grant list.")] = False,
    json_output: JsonOption = False,
) -> None:
    """Fetch articles by PMID: parsed details, the PubMed XML or MEDLINE text."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.fetch(
            pmids, detail_level=detail, include_mesh=not no_mesh, include_grants=grants
        )

    answer = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(answer)
    elif answer["articles"]:
        typer.echo(_fetch_view(answer))
    missing = answer["notFoundPmids"]
    if missing and not json_output:
        typer.echo(f"not in PubMed: {', '.join(missing)}", err=True)
    if not answer["articles"]:
        if not json_output:
            typer.echo("error [NOT_FOUND]: none of the PMIDs is in PubMed", err=True)
        raise typer.Exit(code=EXIT_FAILURE)


def related(
    pmid: Annotated[str, typer.Argument(help="The source PMID.")],
    kind: Annotated[
        str,
        typer.Option("--type", "-t", help="similar, citedin (articles citing it) or references."),
    ] = "similar",
    max_results: Annotated[
        int, typer.Option("--max-results", "-n", help="Related articles to show (1-50).")
    ] = 5,
    json_output: JsonOption = False,
) -> None:
    """Articles related to a PMID: similar ones, those citing it, or those it cites."""
    settings = cli_settings(json_output)
    relationship = _RELATIONS.get(kind.strip().lower(), kind)

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.relationships(
            pmid, relationship_type=relationship, max_results=max_results
        )

    execute_and_show(settings, work, _related_view, json_output=json_output)


def cite(
    pmid: Annotated[str, typer.Argument(help="The PMID to cite.")],
    style: Annotated[
        list[str] | None,
        typer.Option(
            "--style",
            "-s",
            help="ris, bibtex, apa, mla or vancouver (repeatable; default: all). With one "
            "style the citation alone is printed, ready to redirect into a file.",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """The citation of a PMID in RIS, BibTeX, APA 7, MLA 9 and Vancouver."""
    settings = cli_settings(json_output)
    wanted = [_STYLES.get(s.strip().lower(), s) for s in style or []] or list(_STYLE_TITLES)

    async def work(services: Services) -> dict[str, str]:
        return await services.live.cite(pmid, wanted)

    citations = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json({"sourcePmid": pmid.strip(), "citations": citations})
    elif len(citations) == 1:
        typer.echo(next(iter(citations.values())))
    else:
        blocks = [f"{_STYLE_TITLES[name]}\n{text}" for name, text in citations.items()]
        typer.echo("\n\n".join(blocks))
