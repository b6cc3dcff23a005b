"""`biomcp search|get`: the corpus from the command line (`biomcp sync`: `sync`; `biomcp
checkpoint`: `checkpoints`; `biomcp export`: `export`).

Every command loads the settings (a bad variable exits 2 naming it), builds the
services, runs one use case on a fresh event loop and always closes the
services. A failure is one line on stderr, `error [CODE]: message`, with spec 01's codes (see
`errors.classify`), and exit status 2 for `VALIDATION`, 1 for everything else (130 when
interrupted). With `--json` the result, or the error envelope, is printed on stdout instead.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    DesignOption,
    EvidenceTypeOption,
    JournalOption,
    JsonOption,
    MinQualityOption,
    YearMaxOption,
    YearMinOption,
    cli_settings,
    emit_json,
    execute,
    search_filters,
    terminal_width,
    text_table,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.usecases.paper_results import SearchOutcome
    from biomcp.usecases.search import SearchHit

__all__ = ["get", "search"]


# --- formatting helpers -----------------------------------------------------------------------


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _quality(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _passage(text: str, section: str | None) -> str:
    """What a chunk says, for a table: without the title line every chunk starts with, and
    without the section label the `section` column already shows."""
    _title, newline, body = text.partition("\n")
    if not newline or not body.strip():
        return text
    if section and body.startswith(f"{section}: "):
        body = body[len(section) + 2 :]
    return body


def _searchtext_table(query: str, hits: list[SearchHit], quality_bias: bool) -> str:
    """The table of a search: one row per hit (a paper's best chunk, or a chunk)."""
    if not hits:
        return f"no results for {query!r} (try fewer filters or other words)"
    rows = [
        [
            str(rank),
            _number(hit.score),
            hit.doc_id,
            (hit.evidence_type or "-")
            + (f"/{hit.study_design}" if hit.study_design else "")
            + (" RETRACTED" if hit.retracted else ""),
            _quality(hit.quality),
            str(hit.year) if hit.year is not None else "-",
            hit.section or "-",
            _passage(hit.text or "", hit.section),  # wrapped by text_table, never cut
        ]
        for rank, hit in enumerate(hits, 1)
    ]
    headers = ["#", "score", "doc_id", "evidence", "quality", "year", "section", "text"]
    bias = "quality-biased" if quality_bias else "no quality bias"
    title = f"{len(hits)} result{'s' if len(hits) != 1 else ''} for {query!r} ({bias})"
    return title + "\n" + text_table(headers, rows, right=frozenset({0, 1, 4, 5}))


def _fulltext_line(state: dict[str, Any] | None) -> str | None:
    """A document's full-text state in words (None: never checked)."""
    if not state:
        return None
    status = str(state["status"]).replace("_", " ")
    chunks = f", {state['chunks']} chunks" if state.get("chunks") else ""
    reason = f": {state['reason']}" if state.get("reason") else ""
    return f"{status}{chunks}{reason} (checked {state.get('checked_at') or '-'})"


def _document_view(doc: dict[str, Any], queries: list[str]) -> str:
    """`biomcp get`'s page: `doc` (the rag_get payload) and the saved queries holding it."""
    width = min(terminal_width(), 100)
    breakdown = doc.get("quality_breakdown") or doc["quality"]
    parts = [
        f"{name.replace('_', ' ')} {breakdown[name]}"
        for name in ("design", "recency", "journal", "human", "sample_size")
        if breakdown.get(name) is not None
    ]
    if breakdown.get("sample_size_n"):
        parts.append(f"n={breakdown['sample_size_n']}")
    if breakdown.get("retracted"):
        parts.append("retracted: design, human and sample size count 0")
    evidence = doc.get("evidence_type") or "-"
    if doc.get("evidence_rule"):
        evidence += f" (rule {doc['evidence_rule']})"
    flags = [name for name in ("has_numbers", "has_biomarker") if doc.get(name)]
    if flags:
        evidence += "; " + ", ".join(flag.removeprefix("has_") for flag in flags)
    authors = doc.get("authors") or []
    shown_authors = ", ".join(authors[:6]) + (
        f", ... ({len(authors)} in all)" if len(authors) > 6 else ""
    )
    fields = [
        ("Journal", doc.get("journal")),
        ("Published", doc.get("pdat_text") or doc.get("pdat")),
        ("Entrez date", doc.get("edat")),
        ("Revised", doc.get("lr")),
        ("Authors", shown_authors or None),
        ("Pub types", ", ".join(doc.get("pub_types") or []) or None),
        ("Evidence", evidence),
        ("Quality", f"{doc['quality']['total']}/10  ({', '.join(parts)})"),
        ("MeSH", "; ".join(doc.get("mesh_terms") or []) or None),
        ("Trials", ", ".join(doc.get("trial_ids") or []) or None),
        ("PMCID", doc.get("pmcid")),
        ("Full text", _fulltext_line(doc.get("fulltext"))),
        ("DOI", doc.get("doi")),
        ("URL", doc.get("url")),
        (
            "Queries",
            ", ".join(queries)
            or "none recorded (a query forgotten without --records, or synced before bio-mcp "
            "recorded its records: see biomcp checkpoint list)",
        ),
    ]
    lines = [f"{doc['doc_id']}  (version {doc['version']})"]
    if doc.get("retracted"):
        notice = doc.get("retraction") or {}
        source, pmid = notice.get("source"), notice.get("notice_pmid")
        said = f"Retraction in: {source or 'a notice'}" if source or pmid else "no notice given"
        lines.append(f"*** RETRACTED *** {said}" + (f" (PMID {pmid})" if pmid else ""))
    lines += textwrap.wrap(doc.get("title") or "(no title)", width=width, subsequent_indent="  ")
    lines.append("")
    indent = " " * 13
    for name, value in fields:
        if value:
            lines += textwrap.wrap(
                str(value),
                width=width,
                initial_indent=f"{name + ':':<13}",
                subsequent_indent=indent,
            )
    lines += ["", "Abstract"]
    abstract = doc.get("abstract")
    if abstract:
        for paragraph in abstract.splitlines():
            lines += textwrap.wrap(
                paragraph, width=width, initial_indent="  ", subsequent_indent="  "
            )
    else:
        lines.append("  (no abstract)")
    return "\n".join(lines)


# --- the commands -----------------------------------------------------------------------------


def search(
    query: Annotated[str, typer.Argument(help="A question or keywords.")],
    top_k: Annotated[int, typer.Option("--top-k", "-n", help="Results to show (1-100).")] = 20,
    no_quality_bias: Annotated[
        bool,
        typer.Option("--no-quality-bias", help="Rank by relevance only, not quality."),
    ] = False,
    evidence_type: EvidenceTypeOption = None,
    year_min: YearMinOption = None,
    year_max: YearMaxOption = None,
    min_quality: MinQualityOption = None,
    journal: JournalOption = None,
    include_retracted: Annotated[
        bool,
        typer.Option(
            "--include-retracted",
            help="Show retracted papers too (flagged); left out by default.",
        ),
    ] = False,
    design: DesignOption = None,
    query_key: Annotated[
        str | None,
        typer.Option(
            "--query-key",
            "-k",
            help="Search only the records this saved query synced.",
        ),
    ] = None,
    trial_id: Annotated[
        str | None,
        typer.Option(
            "--trial-id",
            help="Only records naming this trial registry id (NCT01234567, ISRCTN..., "
            "EudraCT, ChiCTR...), or any id: 'any'.",
        ),
    ] = None,
    chunks: Annotated[
        bool,
        typer.Option("--chunks", help="One row per chunk, not per paper."),
    ] = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Only chunks of abstracts ('abstract') or of PMC full text ('fulltext').",
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Hybrid (BM25 + vector) search of the synced corpus, reranked by quality: one row per
    paper (its best chunk), or per chunk with --chunks. When no hit passes the relevance floor,
    a line says so above the closest hits (exit status 0)."""
    settings = cli_settings(json_output)
    filters = search_filters(evidence_type, year_min, year_max, min_quality, journal)
    quality_bias = not no_quality_bias

    async def work(services: Services) -> SearchOutcome:
        from biomcp.usecases.search_filters import with_source

        return await services.search.search(
            query,
            top_k,
            quality_bias,
            group_by="chunk" if chunks else "paper",
            filters=with_source(filters, source),
            include_retracted=include_retracted,
            study_designs=[d.strip().casefold() for d in design or [] if d.strip()],
            query_key=query_key,
            trial_id=trial_id,
        )

    outcome = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(outcome.as_payload())
        return
    shown = [p.best for p in outcome.papers] if outcome.papers is not None else outcome.hits
    for warning in outcome.warnings:
        typer.echo(warning)
    typer.echo(_searchtext_table(query, list(shown), quality_bias))


def get(
    doc_id: Annotated[
        str, typer.Argument(metavar="PMID_OR_DOC_ID", help="pmid:<digits> or the PMID.")
    ],
    json_output: JsonOption = False,
) -> None:
    """Show one stored document: metadata, evidence type, quality breakdown, abstract."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> tuple[dict[str, Any], list[str]]:
        doc = await services.documents.run(doc_id)
        pmid = doc["doc_id"].removeprefix("pmid:")
        return doc, (await services.saved_queries.holding([pmid])).get(pmid, [])

    doc, queries = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(doc)  # the rag_get payload, as the MCP tool answers
    else:
        typer.echo(_document_view(doc, queries))
