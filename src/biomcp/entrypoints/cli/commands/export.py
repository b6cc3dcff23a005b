"""`biomcp export`: the stored records of the corpus, or of one saved query, for a reference
manager (RIS, BibTeX), a screening tool (RIS), a spreadsheet (CSV) or a script (JSON Lines,
PMIDs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    DesignOption,
    EvidenceTypeOption,
    JournalOption,
    MinQualityOption,
    YearMaxOption,
    YearMinOption,
    cli_settings,
    emit_json,
    execute,
    search_filters,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.usecases.export import ExportSummary

__all__ = ["export"]

_FORMATS = "ris, bibtex, csv, jsonl, pmids"

OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to this file (complete, or not at all), or into a device, pipe or "
        "/dev/fd/N as a stream; default: standard output.",
    ),
]


def _summary_line(summary: ExportSummary, output: Path | None) -> str:
    from biomcp.usecases.payloads import iso_utc

    scope = f"saved query {summary.query_key}" if summary.query_key else "the corpus"
    if summary.new:
        scope += (
            f" new since its last --new export ({iso_utc(summary.added_since)})"
            if summary.added_since is not None
            else " (its first --new export: every record)"
        )
    elif summary.added_since is not None:
        scope = f"{scope} added since {iso_utc(summary.added_since)}"
    where = f" to {output}" if output is not None else ""
    line = (
        f"exported {summary.exported} of the {summary.considered} records of {scope} "
        f"({summary.format}){where}"
    )
    left = []
    if summary.filtered_out:
        left.append(f"{summary.filtered_out} left out by the filters")
    if summary.retracted_left_out:
        left.append(
            f"{summary.retracted_left_out} retracted left out "
            "(--include-retracted adds them, flagged)"
        )
    if summary.retracted_carried:
        left.append(
            f"{summary.retracted_carried} exported before and retracted since, carried flagged"
        )
    if left:
        line += "; " + "; ".join(left)
    if summary.next_added_since is not None:  # iso_utc rounds down: a repeat, never a loss
        since = iso_utc(summary.next_added_since)
        line += (
            f"\nmarked: the next --new export starts at {since}"
            if summary.new
            else f"\nnext export of what is new: --added-since {since}"
        )
        if summary.sync_running:
            line += f" (a sync of {summary.query_key} is running: what it brings comes then)"
    return line


def export(
    query_key: Annotated[
        str | None,
        typer.Option("--query-key", "-k", help="Only the records this saved query synced."),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help=f"One of {_FORMATS}.")] = "ris",
    output: OutputOption = None,
    evidence_type: EvidenceTypeOption = None,
    design: DesignOption = None,
    year_min: YearMinOption = None,
    year_max: YearMaxOption = None,
    min_quality: MinQualityOption = None,
    journal: JournalOption = None,
    added_since: Annotated[
        str | None,
        typer.Option(
            "--added-since",
            help="With -k: only the records the query brought at or after this date "
            "(ISO 8601, UTC): those a living review has not screened yet.",
        ),
    ] = None,
    new: Annotated[
        bool,
        typer.Option(
            "--new",
            help="With -k: only what the query brought since its last --new export (all "
            "of its records the first time), for a living review's next screening, plus "
            "its earlier records retracted since, flagged; the export, once complete, marks "
            "where the next one starts.",
        ),
    ] = False,
    include_retracted: Annotated[
        bool,
        typer.Option(
            "--include-retracted",
            help="Export retracted records too (flagged); left out by default.",
        ),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json",
            help="With -o: print the summary as JSON on stdout (the error envelope on "
            "failure), for a script.",
        ),
    ] = False,
) -> None:
    """Write the stored records of the corpus, or of one saved query (-k), for a reference
    manager or screening tool: RIS (Zotero, EndNote, Covidence, Rayyan), BibTeX, CSV (a
    spreadsheet: evidence tier, study design, quality score per record), JSON Lines (`get
    --json` per record) or PMIDs. Reads the local corpus only (no NCBI), in PMID order;
    RIS and BibTeX carry the MeSH terms and a note with the evidence tier, design and
    quality score. A summary goes to stderr."""
    settings = cli_settings(json_output)
    if output is not None and str(output) == "-":
        output = None  # the usual name of standard output
    filters = search_filters(evidence_type, year_min, year_max, min_quality, journal)

    async def work(services: Services) -> ExportSummary | None:
        return await _export(
            services,
            output,
            json_output=json_output,
            added_since=added_since,
            format=format,
            query_key=query_key,
            filters=filters,
            study_designs=design or (),
            include_retracted=include_retracted,
            new=new,
        )

    _show(execute(settings, work, json_output=json_output), output, json_output=json_output)


def _show(summary: ExportSummary | None, output: Path | None, *, json_output: bool) -> None:
    """The summary: on stderr, or as JSON on stdout; none when the reader closed the pipe."""
    if summary is None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error as Python exits
        raise typer.Exit(code=0)
    if json_output:
        emit_json(summary.as_payload())
    else:
        typer.echo(_summary_line(summary, output), err=True)


async def _export(
    services: Services,
    output: Path | None,
    *,
    json_output: bool,
    added_since: str | None,
    **request: Any,
) -> ExportSummary | None:
    """`export_to` as the command runs it: `--json` needs `-o`, a reader that closed the pipe
    ends it quietly (None), a file it cannot write is a VALIDATION error."""
    from biomcp.entrypoints.exporting import export_to
    from biomcp.usecases.errors import InvalidRequestError
    from biomcp.usecases.payloads import parse_iso_utc

    if json_output and output is None:
        raise InvalidRequestError(
            "--json needs -o FILE: without it the export itself goes to standard output",
            details={"field": "json"},
        )
    since = None if added_since is None else parse_iso_utc(added_since, field="added_since")
    try:
        return await export_to(services, output, added_since=since, **request)
    except BrokenPipeError:  # `biomcp export | head`: the reader has what it wanted
        return None
    except OSError as exc:  # a folder that does not exist, no permission, disk full
        where = output if output is not None else "standard output"
        raise InvalidRequestError(
            f"cannot write {where}: {exc.strerror or exc}", details={"field": "output"}
        ) from None
