"""`biomcp checkpoint`: the saved queries' Entrez-date watermarks (where the next sync of each
starts), what each holds and what is pending for it, manual moves (audited) and their history,
forgetting a saved query and pruning the records no saved query holds."""

from __future__ import annotations

import getpass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    JsonOption,
    cli_settings,
    emit_json,
    execute,
    fail,
    group_app,
    iso,
    text_table,
)

if TYPE_CHECKING:
    from datetime import datetime

    from biomcp.entrypoints.services import Services

__all__ = ["app"]


app = group_app(
    "checkpoint", "The Entrez-date watermarks of saved queries (where the next sync starts)."
)


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # no user name (some containers)
        return "cli"


@app.command("get")
def checkpoint_get(
    query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
    json_output: JsonOption = False,
) -> None:
    """Print the checkpoint of QUERY_KEY and the PMIDs pending for it (found by a sync's
    ESearch, not returned by its EFetch yet: every sync of the key asks for them again)."""
    from biomcp.ports.saved_queries import Checkpoint, PendingPmid

    settings = cli_settings(json_output)

    async def work(
        services: Services,
    ) -> tuple[Checkpoint, list[PendingPmid], int, datetime | None]:
        checkpoint = await services.saved_queries.get(query_key)
        counts = await services.saved_queries.record_counts()
        pending = await services.saved_queries.pending(query_key)
        mark = await services.export.mark_of(checkpoint.query_key)
        return checkpoint, pending, counts.get(checkpoint.query_key, 0), mark

    checkpoint, pending, records, mark = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(
            {
                "query_key": checkpoint.query_key,
                "last_edat": iso(checkpoint.last_edat),
                "last_scan_at": iso(checkpoint.last_scan_at),
                "covers_from": iso(checkpoint.covers_from),
                "records": records,
                "records_tracked": checkpoint.records_tracked,
                "export_mark": iso(mark),
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
    if mark is not None:
        typer.echo(f"the next `biomcp export --new` of it starts at {iso(mark)}")
    if pending:
        typer.echo(
            f"{len(pending)} PMIDs pending (found by ESearch, not returned by EFetch yet; "
            "every sync of this key asks for them again):"
        )
        for p in pending:
            typer.echo(f"  {p.pmid}  since {iso(p.first_missed_at)}, missed by {p.misses} syncs")


@app.command("set")
def checkpoint_set(
    query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
    timestamp: Annotated[
        str,
        typer.Argument(help="The new watermark, ISO 8601 UTC (2025-08-17T15:59:02Z or a date)."),
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
        saved = services.saved_queries
        return await saved.set(query_key, timestamp, actor=actor, reason=reason)

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


@app.command("list")
def checkpoint_list(json_output: JsonOption = False) -> None:
    """List every saved query (a key with a checkpoint or a sync): its checkpoint, how its
    latest sync ended and the term it was last synced with (what `biomcp sync --all`
    syncs)."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> tuple[list[dict[str, Any]], int]:
        """Every saved query, and how many stored records no saved query holds."""
        counts = await services.saved_queries.record_counts()
        unheld = await services.saved_queries.unheld_count()
        entries = []
        for saved in await services.saved_queries.every():
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
        typer.echo(text_table(headers, rows, right=frozenset({4})))
        if not all(e["records_tracked"] for e in entries):
            typer.echo(
                "+ synced before bio-mcp recorded which query brought each record: at "
                "least this many (biomcp sync -k KEY --rescan records them all)"
            )
        elif unheld:
            typer.echo(prune_hint)


@app.command("delete")
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
    """Forget the saved query QUERY_KEY: its checkpoint, pending PMIDs, sync jobs and
    export mark.

    `biomcp sync --all` and the overview no longer list it. The records it brought stay in
    the corpus (every saved query shares it) unless `--records` deletes those no other
    saved query holds, from the search index and SQL. Its audit trail stays. Refused while
    a sync of the key is running."""
    from dataclasses import asdict

    from biomcp.ports.saved_queries import ForgottenQuery
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
        return await services.saved_queries.forget(query_key, records=records)

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


@app.command("prune")
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

    from biomcp.usecases.saved_queries import PrunedRecords

    settings = cli_settings(json_output)

    async def work(services: Services) -> PrunedRecords:
        return await services.saved_queries.prune(dry_run=not yes)

    pruned = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json({"ok": True, "dry_run": not yes, **asdict(pruned)})
    elif not pruned.records:
        typer.echo("every stored record is held by a saved query: nothing to prune")
    elif not yes:
        typer.echo(
            f"{pruned.records} stored records are held by no saved query: pass --yes to delete them"
        )
    else:
        kept = pruned.records - pruned.deleted
        tail = f"; {kept} kept: a sync took them meanwhile" if kept else ""
        typer.echo(
            f"{pruned.deleted} records no saved query held deleted "
            f"({pruned.chunks_deleted} chunks){tail}"
        )


@app.command("history")
def checkpoint_history(
    query_key: Annotated[str, typer.Argument(help="The saved query's key.")],
    json_output: JsonOption = False,
) -> None:
    """Show the audit trail of manual moves of QUERY_KEY's checkpoint, newest first."""
    from biomcp.domain.watermarks import WatermarkAudit

    settings = cli_settings(json_output)

    async def work(services: Services) -> list[WatermarkAudit]:
        return await services.saved_queries.audit(query_key)

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
        typer.echo(text_table(["at", "move", "actor", "reason"], rows, right=frozenset()))
