"""`biomcp pubmed fulltext|ids|mesh|match`: PMC full text, identifier conversion, MeSH and
reference matching from the command line, over the same use cases as the MCP tools (the
`--json` output is the tool's answer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    JsonOption,
    cli_settings,
    clip,
    execute_and_show,
    terminal_width,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["fulltext", "ids", "match", "mesh"]

_REFERENCE_FIELDS = ("journal", "year", "volume", "firstPage", "firstAuthor", "title")


def _fulltext_view(answer: dict[str, Any]) -> str:
    width = min(terminal_width(), 100)
    blocks: list[str] = []
    for article in answer["articles"]:
        head = f"{article['id']}: {article['status']}"
        if article.get("pmcid"):
            head += f" ({article['pmcid']}"
            head += f", {article['access']})" if article.get("access") else ")"
        lines = [head]
        for key in ("title", "message", "url"):
            if article.get(key):
                lines.append(f"  {clip(str(article[key]), width - 2)}")
        if article.get("abstract"):
            lines.append(f"  Abstract: {clip(article['abstract'], width - 12)}")
        outline = article.get("mode") == "outline"
        if outline:
            lines.append(f"  outline ({article.get('outlineReason')}): ask for sections by title")
        for section in article.get("sections", []):
            title = section.get("title") or "(untitled)"
            label = f"  {section['path']} {title} [{section['chars']} chars]"
            lines.append(
                label if outline else f"{label}\n    {clip(section.get('text', ''), width)}"
            )
        lines.extend(_captions_lines(article.get("captions", []), width))
        lines.extend(_references_lines(article, width))
        blocks.append("\n".join(lines))
    used = f"{answer.get('usedChars', 0)} of {answer.get('maxChars')} characters"
    return "\n\n".join(blocks) + f"\n\n{used}"


def _captions_lines(captions: list[dict[str, Any]], width: int) -> list[str]:
    """Figures, tables (with their footnotes) and supplementary files, one line each."""
    lines: list[str] = []
    for caption in captions:
        head = caption.get("label") or caption["kind"]
        files = f" [{', '.join(caption['files'])}]" if caption.get("files") else ""
        text = f"{head}: {caption['caption']}{files}"
        lines.append(f"  {clip(text, width - 2)}")
        lines.extend(f"    {clip(note, width - 4)}" for note in caption.get("footnotes", []))
    return lines


def _references_lines(article: dict[str, Any], width: int) -> list[str]:
    """The shown references as citations, with their PMID and DOI; then what was left out."""
    lines: list[str] = []
    for number, reference in enumerate(article.get("references", []), start=1):
        lines.append(f"  [{reference.get('label') or number}] {clip(reference['text'], width - 8)}")
        ids = "; ".join(f"{k.upper()} {reference[k]}" for k in ("pmid", "doi") if reference.get(k))
        if ids:
            lines.append(f"      {clip(ids, width - 6)}")
    if article.get("referencesOmitted"):
        lines.append(f"  ... {article['referencesOmitted']} more references (over the budget)")
    return lines


def _ids_view(answer: dict[str, Any]) -> str:
    lines = []
    for record in answer["records"]:
        found = ", ".join(
            f"{key} {record[key]}" for key in ("pmid", "pmcid", "doi") if record.get(key)
        )
        detail = found if record["status"] == "found" else record.get("reason") or "no match"
        lines.append(f"{record['requestedId']}: {record['status']}: {detail}")
    return "\n".join(lines)


def _mesh_view(answer: dict[str, Any]) -> str:
    width = min(terminal_width(), 100)
    blocks = []
    for descriptor in answer["descriptors"]:
        lines = [f"{descriptor['name']} ({descriptor['ui']}, {descriptor['recordType']})"]
        if descriptor.get("treeNumbers"):
            lines.append(f"  tree numbers: {', '.join(descriptor['treeNumbers'])}")
        if descriptor.get("entryTerms"):
            lines.append(f"  entry terms: {clip('; '.join(descriptor['entryTerms']), width - 15)}")
        if descriptor.get("scopeNote"):
            lines.append(f"  scope: {clip(descriptor['scopeNote'], width - 9)}")
        lines.append(f"  query: {descriptor['suggestedQuery']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _match_view(answer: dict[str, Any]) -> str:
    lines = []
    for result in answer["results"]:
        head = f"{result['status']}" + (f": PMID {result['pmid']}" if result.get("pmid") else "")
        lines.append(head)
        for candidate in result.get("candidates", []):
            matched = ", ".join(candidate["matchedFields"]) or "-"
            differs = ", ".join(candidate["unmatchedFields"])
            extra = f"; differs: {differs}" if differs else ""
            flag = " RETRACTED" if candidate.get("retracted") else ""
            lines.append(f"  {candidate['pmid']}{flag} (matched: {matched}{extra})")
    return "\n".join(lines)


def fulltext(
    ids: Annotated[list[str], typer.Argument(help="PMIDs and/or PMCIDs (at most 10).")],
    section: Annotated[
        list[str] | None,
        typer.Option("--section", help="Only sections with this title word or type."),
    ] = None,
    max_chars: Annotated[
        int, typer.Option("--max-chars", help="Text budget of the answer (1,000-100,000).")
    ] = 20_000,
    outline: Annotated[
        bool, typer.Option("--outline", help="Only the outline: sections and sizes.")
    ] = False,
    references: Annotated[
        bool, typer.Option("--references", help="Include the reference list.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Open-access full text from PMC, with a status for every id."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.fetch_fulltext(
            ids,
            sections=section or (),
            max_chars=max_chars,
            outline=outline,
            include_references=references,
        )

    execute_and_show(settings, work, _fulltext_view, json_output=json_output)


def ids(
    given: Annotated[list[str], typer.Argument(help="PMIDs, PMCIDs and DOIs (up to 200).")],
    json_output: JsonOption = False,
) -> None:
    """Convert between PMID, PMCID and DOI (NCBI's ID Converter: articles in PMC)."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.convert_ids(given)

    execute_and_show(settings, work, _ids_view, json_output=json_output)


def mesh(
    term: Annotated[str, typer.Argument(help="A term (heart attack) or a MeSH id (D009203).")],
    max_results: Annotated[
        int, typer.Option("--max-results", "-n", help="Descriptors to show (1-20).")
    ] = 5,
    json_output: JsonOption = False,
) -> None:
    """MeSH descriptors for a term: tree numbers, entry terms, scope and a fielded query."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.lookup_mesh(term, max_results=max_results)

    execute_and_show(settings, work, _mesh_view, json_output=json_output)


def match(
    journal: Annotated[str | None, typer.Option("--journal", help="Journal name.")] = None,
    year: Annotated[str | None, typer.Option("--year", help="Publication year.")] = None,
    volume: Annotated[str | None, typer.Option("--volume", help="Volume.")] = None,
    page: Annotated[str | None, typer.Option("--page", help="First page.")] = None,
    author: Annotated[str | None, typer.Option("--author", help="First author (Doe J).")] = None,
    title: Annotated[str | None, typer.Option("--title", help="Title words.")] = None,
    json_output: JsonOption = False,
) -> None:
    """Find the PMID of a reference given in pieces (at least two): matched, ambiguous or
    not found, with the candidates and the fields that matched."""
    settings = cli_settings(json_output)
    values: Sequence[str | None] = (journal, year, volume, page, author, title)
    reference = {k: v for k, v in zip(_REFERENCE_FIELDS, values, strict=True) if v}

    async def work(services: Services) -> dict[str, Any]:
        return await services.live.lookup_citations([reference])

    execute_and_show(settings, work, _match_view, json_output=json_output)
