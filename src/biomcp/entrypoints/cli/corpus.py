"""`biomcp search|get|checkpoint`: the corpus from the command line (`biomcp sync`: `sync`).

Every command loads the settings (a bad variable exits 2 naming it), builds the services of
`container.build_services`, runs one use case on a fresh event loop and always closes the
services. A failure is one line on stderr, `error [CODE]: message`, with spec 01's codes (see
`errors.classify`), and exit status 2 for `VALIDATION`, 1 for everything else (130 when
interrupted). With `--json` the result, or the error envelope, is printed on stdout instead.
"""

from __future__ import annotations

import getpass
import textwrap
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    CommandGroup,
    JsonOption,
    cli_settings,
    clip,
    emit_json,
    execute,
    fail,
    iso,
    terminal_width,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.ports.vectors import SearchFilters
    from biomcp.usecases.search import SearchHit

__all__ = [
    "DesignOption",
    "EvidenceTypeOption",
    "JournalOption",
    "MinQualityOption",
    "YearMaxOption",
    "YearMinOption",
    "register",
    "search_filters",
]


# --- search's filters, shared by the commands that take them ------------------------------------

EvidenceTypeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--evidence-type",
        "-e",
        help="Keep only this evidence type (repeatable): clinical, preclinical, basic, other.",
    ),
]
YearMinOption = Annotated[int | None, typer.Option("--year-min", help="Earliest publication year.")]
YearMaxOption = Annotated[int | None, typer.Option("--year-max", help="Latest publication year.")]
MinQualityOption = Annotated[
    float | None, typer.Option("--min-quality", help="Lowest quality total (0-10).")
]
JournalOption = Annotated[
    list[str] | None,
    typer.Option("--journal", help="Keep only this journal title (repeatable)."),
]
#: The values of `StudyDesign`, written out so the command line starts without the domain.
DesignOption = Annotated[
    list[str] | None,
    typer.Option(
        "--design",
        "-d",
        help="Keep only this study design (repeatable): rct, nonrandomized_trial, "
        "observational, case_report, systematic_review, narrative_review, guideline, animal, "
        "in_vitro, computational, other.",
    ),
]


def search_filters(
    evidence_type: list[str] | None,
    year_min: int | None,
    year_max: int | None,
    min_quality: float | None,
    journal: list[str] | None,
) -> SearchFilters:
    """The options above as the vector store's filters (evidence types lower-cased)."""
    from biomcp.ports.vectors import SearchFilters

    types = [t.strip().casefold() for t in evidence_type or [] if t.strip()]
    return SearchFilters(
        evidence_types=frozenset(types) or None,
        year_min=year_min,
        year_max=year_max,
        min_quality=min_quality,
        journals=frozenset(journal) if journal else None,
    )


# --- formatting helpers -----------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]], *, right: frozenset[int]) -> str:
    """Columns aligned on the widest cell; the last column is not padded."""
    widths = [max(len(headers[i]), *(len(row[i]) for row in rows)) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            if i == len(cells) - 1:
                out.append(cell)
            elif i in right:
                out.append(cell.rjust(widths[i]))
            else:
                out.append(cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), *(line(row) for row in rows)])


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


def _search_table(query: str, hits: list[SearchHit], quality_bias: bool) -> str:
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
            "",
        ]
        for rank, hit in enumerate(hits, 1)
    ]
    headers = ["#", "score", "doc_id", "evidence", "quality", "year", "section", "text"]
    text = len(headers) - 1
    fixed = sum(max(len(headers[i]), *(len(r[i]) for r in rows)) + 2 for i in range(text))
    room = max(30, terminal_width() - fixed)
    for row, hit in zip(rows, hits, strict=True):
        row[text] = clip(_passage(hit.text or "", hit.section), room)
    bias = "quality-biased" if quality_bias else "no quality bias"
    title = f"{len(hits)} result{'s' if len(hits) != 1 else ''} for {query!r} ({bias})"
    return title + "\n" + _table(headers, rows, right=frozenset({0, 1, 4, 5}))


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
        ("Published", doc.get("pdat")),
        ("Entrez date", doc.get("edat")),
        ("Revised", doc.get("lr")),
        ("Authors", shown_authors or None),
        ("Pub types", ", ".join(doc.get("pub_types") or []) or None),
        ("Evidence", evidence),
        ("Quality", f"{doc['quality']['total']}/10  ({', '.join(parts)})"),
        ("MeSH", "; ".join(doc.get("mesh_terms") or []) or None),
        ("PMCID", doc.get("pmcid")),
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
        lines.append("*** RETRACTED ***")
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


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # no user name (some containers)
        return "cli"


# --- the commands -----------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    """Add the corpus commands to `app`."""

    @app.command()
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
        json_output: JsonOption = False,
    ) -> None:
        """Hybrid (BM25 + vector) search of the synced corpus, reranked by quality."""
        settings = cli_settings(json_output)
        filters = search_filters(evidence_type, year_min, year_max, min_quality, journal)
        quality_bias = not no_quality_bias

        async def work(services: Services) -> list[SearchHit]:
            return await services.search.run(
                query,
                top_k,
                quality_bias,
                filters=filters,
                include_retracted=include_retracted,
                study_designs=[d.strip().casefold() for d in design or [] if d.strip()],
                query_key=query_key,
            )

        hits = execute(settings, work, json_output=json_output)
        if json_output:
            emit_json({"results": [hit.as_payload() for hit in hits]})
        else:
            typer.echo(_search_table(query, hits, quality_bias))

    @app.command()
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
            return doc, (await services.metadata.queries_holding([pmid])).get(pmid, [])

        doc, queries = execute(settings, work, json_output=json_output)
        if json_output:
            emit_json(doc)  # the rag_get payload, as the MCP tool answers
        else:
            typer.echo(_document_view(doc, queries))

    checkpoint_app = typer.Typer(
        cls=CommandGroup,
        name="checkpoint",
        help="The Entrez-date watermarks of saved queries (where the next sync starts).",
        no_args_is_help=True,
    )
    app.add_typer(checkpoint_app)

    @checkpoint_app.command("get")
    def checkpoint_get(
        query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
        json_output: JsonOption = False,
    ) -> None:
        """Print the checkpoint of QUERY_KEY and the PMIDs pending for it (found by a sync's
        ESearch, not returned by its EFetch yet: every sync of the key asks for them again)."""
        from biomcp.ports.metadata import Checkpoint, PendingPmid

        settings = cli_settings(json_output)

        async def work(services: Services) -> tuple[Checkpoint, list[PendingPmid], int]:
            checkpoint = await services.checkpoints.get(query_key)
            counts = await services.checkpoints.record_counts()
            pending = await services.checkpoints.pending(query_key)
            return checkpoint, pending, counts.get(checkpoint.query_key, 0)

        checkpoint, pending, records = execute(settings, work, json_output=json_output)
        if json_output:
            emit_json(
                {
                    "query_key": checkpoint.query_key,
                    "last_edat": iso(checkpoint.last_edat),
                    "last_scan_at": iso(checkpoint.last_scan_at),
                    "covers_from": iso(checkpoint.covers_from),
                    "records": records,
                    "records_tracked": checkpoint.records_tracked,
                    "pending": [
                        {
                            "pmid": p.pmid,
                            "first_missed_at": iso(p.first_missed_at),
                            "last_missed_at": iso(p.last_missed_at),
                            "misses": p.misses,
                        }
                        for p in pending
                    ],
                }
            )
            return
        if checkpoint.last_edat is None:
            typer.echo(
                f"{checkpoint.query_key}: no checkpoint yet (the first sync reads the "
                "whole history, or BIOMCP_SYNC_INITIAL_DAYS back)"
            )
        else:
            scanned = iso(checkpoint.last_scan_at)
            suffix = f" (last scan {scanned})" if scanned else ""
            typer.echo(f"{checkpoint.query_key}: {iso(checkpoint.last_edat)}{suffix}")
        if checkpoint.records_tracked:
            typer.echo(f"holds {records} records (stored or confirmed by its syncs)")
        else:
            typer.echo(
                f"holds at least {records} records: it was synced before bio-mcp recorded "
                f"which query brought each record (biomcp sync -k {checkpoint.query_key} "
                "--rescan records them all)"
            )
        if checkpoint.last_scan_at is not None and checkpoint.covers_from is None:
            typer.echo("covers the whole history")
        elif checkpoint.last_scan_at is not None:
            typer.echo(
                f"covers Entrez dates from {iso(checkpoint.covers_from)} (older records of "
                "the term are not synced, even when PubMed revises them; a checkpoint set "
                "further back widens this)"
            )
        if pending:
            typer.echo(
                f"{len(pending)} PMIDs pending (found by ESearch, not returned by EFetch yet; "
                "every sync of this key asks for them again):"
            )
            for p in pending:
                typer.echo(
                    f"  {p.pmid}  since {iso(p.first_missed_at)}, missed by {p.misses} syncs"
                )

    @checkpoint_app.command("set")
    def checkpoint_set(
        query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
        timestamp: Annotated[
            str,
            typer.Argument(
                help="The new watermark, ISO 8601 UTC (2025-08-17T15:59:02Z or a date)."
            ),
        ],
        reason: Annotated[
            str, typer.Option("--reason", "-r", help="Why (kept in the audit trail).")
        ] = "manual set (cli)",
        json_output: JsonOption = False,
    ) -> None:
        """Move the checkpoint of QUERY_KEY (audited); backward re-syncs a period.

        Every manual move is kept in the audit trail (who, why, when, from, to): see
        `biomcp checkpoint history`."""
        from biomcp.domain.watermarks import WatermarkAudit

        settings = cli_settings(json_output)
        actor = _actor()

        async def work(services: Services) -> WatermarkAudit:
            return await services.checkpoints.set(query_key, timestamp, actor=actor, reason=reason)

        audit = execute(settings, work, json_output=json_output)
        backward = audit.moved_backward
        if json_output:
            emit_json(
                {
                    "ok": True,
                    "query_key": audit.query_key,
                    "previous_edat": iso(audit.previous),
                    "last_edat": iso(audit.new),
                    "moved_backward": backward,
                }
            )
        else:
            previous = iso(audit.previous) or "none"
            typer.echo(f"{audit.query_key}: {previous} -> {iso(audit.new)} (audited, by {actor})")
        if backward and audit.previous is not None:
            days = (audit.previous - audit.new).total_seconds() / 86400
            typer.echo(
                f"warning: the checkpoint of {audit.query_key} moved backward by {days:.1f} "
                "days: the next sync re-reads that period (a backfill)",
                err=True,
            )

    @checkpoint_app.command("list")
    def checkpoint_list(json_output: JsonOption = False) -> None:
        """List every saved query (a key with a checkpoint or a sync): its checkpoint, how its
        latest sync ended and the term it was last synced with (what `biomcp sync --all`
        syncs)."""
        settings = cli_settings(json_output)

        async def work(services: Services) -> tuple[list[dict[str, Any]], int]:
            """Every saved query, and how many stored records no saved query holds."""
            from biomcp.usecases.saved_queries import saved_queries

            counts = await services.checkpoints.record_counts()
            unheld = len(await services.metadata.records_held_by_none())
            entries = []
            for saved in await saved_queries(services.metadata):
                job, mark = saved.last_job, saved.checkpoint
                entries.append(
                    {
                        "query_key": saved.query_key,
                        "last_edat": iso(mark.last_edat) if mark else None,
                        "last_scan_at": iso(mark.last_scan_at) if mark else None,
                        "covers_from": iso(mark.covers_from) if mark else None,
                        "last_sync": job.status if job else None,
                        "term": job.term if job else None,
                        "records": counts.get(saved.query_key, 0),
                        "records_tracked": mark.records_tracked if mark else True,
                    }
                )
            return entries, unheld

        entries, unheld = execute(settings, work, json_output=json_output)
        prune_hint = (
            f"{unheld} stored records are held by no saved query (their queries were "
            "forgotten): biomcp checkpoint prune --yes deletes them"
        )
        if json_output:
            emit_json({"checkpoints": entries, "records_held_by_none": unheld})
        elif not entries:
            typer.echo("no checkpoints yet: run `biomcp sync` first")
            if unheld:
                typer.echo(prune_hint)
        else:
            rows = [
                [
                    str(e["query_key"]),
                    e["last_edat"] or "-",
                    e["last_scan_at"] or "-",
                    e["last_sync"] or "-",
                    f"{e['records']}{'' if e['records_tracked'] else '+'}",
                    e["term"] or "- (never synced)",
                ]
                for e in entries
            ]
            headers = ["query_key", "last_edat", "last_scan_at", "last_sync", "records", "term"]
            typer.echo(_table(headers, rows, right=frozenset({4})))
            if not all(e["records_tracked"] for e in entries):
                typer.echo(
                    "+ synced before bio-mcp recorded which query brought each record: at "
                    "least this many (biomcp sync -k KEY --rescan records them all)"
                )
            elif unheld:
                typer.echo(prune_hint)

    @checkpoint_app.command("delete")
    def checkpoint_delete(
        query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Forget it (required: this cannot be undone).")
        ] = False,
        records: Annotated[
            bool,
            typer.Option(
                "--records",
                help="Also delete the records it brought that no other saved query holds.",
            ),
        ] = False,
        json_output: JsonOption = False,
    ) -> None:
        """Forget the saved query QUERY_KEY: its checkpoint, pending PMIDs and sync jobs.

        `biomcp sync --all` and the overview no longer list it. The records it brought stay in
        the corpus (every saved query shares it) unless `--records` deletes those no other
        saved query holds, from the search index and SQL. Its audit trail stays. Refused while
        a sync of the key is running."""
        from dataclasses import asdict

        from biomcp.ports.metadata import ForgottenQuery
        from biomcp.usecases.errors import InvalidRequestError

        settings = cli_settings(json_output)
        if not yes:
            what = (
                "and the records no other saved query holds"
                if records
                else "(its records stay in the corpus)"
            )
            raise fail(
                InvalidRequestError(
                    f"forgetting {query_key!r} removes its checkpoint, pending PMIDs and sync "
                    f"jobs {what}: pass --yes to confirm"
                ),
                settings,
                json_output,
            )

        async def work(services: Services) -> ForgottenQuery:
            return await services.checkpoints.forget(query_key, records=records)

        gone = execute(settings, work, json_output=json_output)
        if json_output:
            emit_json({"ok": True, **asdict(gone)})
            return
        if not (gone.checkpoint or gone.pending or gone.jobs or gone.records):
            typer.echo(f"{gone.query_key}: not a saved query (nothing to forget)")
            return
        checkpoint = "its checkpoint" if gone.checkpoint else "no checkpoint"
        if records:
            kept = gone.records - gone.records_deleted
            fate = (
                f"{gone.records_deleted} of its {gone.records} records deleted "
                f"({gone.chunks_deleted} chunks), {kept} kept: other saved queries hold them"
            )
        else:
            fate = (
                f"its {gone.records} records stay in the corpus (--records deletes those no "
                "other saved query holds)"
            )
        typer.echo(
            f"{gone.query_key}: forgotten ({checkpoint}, {gone.pending} pending PMIDs, "
            f"{gone.jobs} sync jobs); {fate}"
        )
        if not gone.records_tracked:
            typer.echo(
                f"note: {gone.query_key} was synced before bio-mcp recorded which query "
                "brought each record: those it brought before then were not counted (and stay)",
                err=True,
            )

    @checkpoint_app.command("prune")
    def checkpoint_prune(
        yes: Annotated[
            bool,
            typer.Option("--yes", "-y", help="Delete them (without it: only count them)."),
        ] = False,
        json_output: JsonOption = False,
    ) -> None:
        """Delete the stored records no saved query holds: those of queries forgotten without
        `--records`. Without --yes, only counts them. Refused while a saved query was synced
        before bio-mcp recorded which query brought each record (rescan it first)."""
        from dataclasses import asdict

        from biomcp.usecases.documents import PrunedRecords

        settings = cli_settings(json_output)

        async def work(services: Services) -> PrunedRecords:
            return await services.checkpoints.prune(dry_run=not yes)

        pruned = execute(settings, work, json_output=json_output)
        if json_output:
            emit_json({"ok": True, "dry_run": not yes, **asdict(pruned)})
        elif not pruned.records:
            typer.echo("every stored record is held by a saved query: nothing to prune")
        elif not yes:
            typer.echo(
                f"{pruned.records} stored records are held by no saved query: "
                "pass --yes to delete them"
            )
        else:
            kept = pruned.records - pruned.deleted
            tail = f"; {kept} kept: a sync took them meanwhile" if kept else ""
            typer.echo(
                f"{pruned.deleted} records no saved query held deleted "
                f"({pruned.chunks_deleted} chunks){tail}"
            )

    @checkpoint_app.command("history")
    def checkpoint_history(
        query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
        json_output: JsonOption = False,
    ) -> None:
        """Show the audit trail of manual moves of QUERY_KEY's checkpoint, newest first."""
        from biomcp.domain.watermarks import WatermarkAudit

        settings = cli_settings(json_output)

        async def work(services: Services) -> list[WatermarkAudit]:
            return await services.checkpoints.audit(query_key)

        trail = execute(settings, work, json_output=json_output)
        entries = [
            {
                "at": iso(a.at),
                "previous_edat": iso(a.previous),
                "last_edat": iso(a.new),
                "actor": a.actor,
                "reason": a.reason,
            }
            for a in trail
        ]
        if json_output:
            emit_json({"query_key": query_key, "audit": entries})
        elif not entries:
            typer.echo(f"{query_key}: no manual moves")
        else:
            rows = [
                [
                    e["at"] or "-",
                    f"{e['previous_edat'] or 'none'} -> {e['last_edat']}",
                    str(e["actor"]),
                    str(e["reason"]),
                ]
                for e in entries
            ]
            typer.echo(_table(["at", "move", "actor", "reason"], rows, right=frozenset()))
