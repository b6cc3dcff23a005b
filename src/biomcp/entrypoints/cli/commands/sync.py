"""`biomcp sync` (a saved PubMed query into the corpus, with live progress) and `biomcp sync
status [JOB_ID]` (sync jobs of every process). Failures follow `cli.common`."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    EXIT_FAILURE,
    EXIT_VALIDATION,
    CommandGroup,
    JsonOption,
    cli_settings,
    describe,
    emit_json,
    execute,
    iso,
    terminal_width,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.usecases.fulltext_sync import FullTextOutcome
    from biomcp.usecases.sync import SyncProgress, SyncReport

__all__ = ["app", "sync", "sync_status"]


# --- sync progress ----------------------------------------------------------------------------


class _SyncDisplay:
    """Live progress of a sync on stderr: a rich progress bar on a terminal, else a plain line
    at most every second (and at the end)."""

    def __init__(self, query_key: str, *, enabled: bool) -> None:
        self.query_key = query_key
        self.enabled = enabled
        self._rich: Any = None
        self._task: Any = None
        self._last_line = 0.0
        self._tty = sys.stderr.isatty()
        self._pending_newline = False

    def __enter__(self) -> _SyncDisplay:
        if not self.enabled or not self._tty:
            return self
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )
        except ImportError:  # typer without rich: plain updating lines
            return self
        self._rich = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TextColumn(
                "records • {task.fields[chunks]} chunks embedded • {task.fields[rate]:.0f}/s"
            ),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self._rich.start()
        self._task = self._rich.add_task(
            f"{self.query_key} (searching)", total=None, chunks=0, rate=0.0
        )
        return self

    def __call__(self, progress: SyncProgress) -> None:
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.update(
                self._task,
                description=self.query_key,
                total=progress.total,
                completed=progress.processed,
                chunks=progress.chunks_embedded,
                rate=progress.rate,
            )
            return
        now = time.monotonic()
        done = progress.processed >= progress.total
        if not done and now - self._last_line < 1.0:
            return
        self._last_line = now
        line = (
            f"sync {self.query_key}: {progress.processed}/{progress.total} records fetched, "
            f"{progress.chunks_embedded} chunks embedded, {progress.rate:.1f} records/s"
        )
        if self._tty:
            sys.stderr.write("\r" + line.ljust(terminal_width() - 1)[: terminal_width() - 1])
            self._pending_newline = True
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self._pending_newline:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _sync_summary(report: SyncReport, elapsed: float) -> str:
    why = {
        "checkpoint": "checkpoint minus overlap",
        "initial_days": "no checkpoint yet: BIOMCP_SYNC_INITIAL_DAYS back",
        "whole_history": "no checkpoint yet",
        "term_changed": "the term changed: the key's history again",
        "rescan": "a rescan: the key's history again",
    }.get(report.window_basis, report.window_basis)
    start = iso(report.window_start)
    window = f"from {start} ({why})" if start is not None else f"whole history ({why})"
    if report.checkpoint is None:
        checkpoint = "none (nothing stored yet)"
    else:
        state = "advanced" if report.checkpoint_advanced else "unchanged"
        checkpoint = f"{iso(report.checkpoint)} ({state})"
    timings = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in report.timings.items())
    rows = [
        ("job", report.job_id),
        ("term", report.term or "-"),
        ("window", window),
        (
            "found",
            f"{report.pmids_found} PMIDs"
            + (
                f", and {report.revisions_found} revised since the last sync"
                if report.revisions_found
                else ""
            ),
        ),
        ("inserted", str(report.inserted)),
        ("updated", str(report.updated)),
        ("skipped", str(report.skipped)),
        ("new here", f"{report.new_to_query} records this query did not hold before"),
        ("processed", str(report.pmids_processed)),
        (
            "chunks",
            f"{report.chunks_written} written, {report.chunks_deleted} deleted, "
            f"{report.texts_embedded} texts embedded",
        ),
        *(
            [("rescored", f"{report.rescored} stored scores (recency counted this year)")]
            if report.rescored
            else []
        ),
        ("max EDAT", iso(report.max_edat_seen) or "-"),
        ("checkpoint", checkpoint),
        *(
            [("pending", _pending_summary(report))]
            if report.pending or report.pending_arrived or report.pending_gone
            else []
        ),
        *([("full text", _fulltext_summary(report.fulltext))] if report.fulltext else []),
        ("timings", timings or "-"),
    ]
    lines = [f"sync {report.query_key}: done in {elapsed:.2f}s"]
    lines += [f"  {name:<11}{value}" for name, value in rows]
    if report.warnings:
        lines.append(f"warnings ({len(report.warnings)}):")
        lines += [f"  - {warning}" for warning in report.warnings]
    else:
        lines.append("warnings: none")
    return "\n".join(lines)


def _fulltext_summary(outcome: FullTextOutcome) -> str:
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(outcome.statuses.items()))
    left = f"; {outcome.remaining} wait for the next sync" if outcome.remaining else ""
    return (
        f"{outcome.checked} checked ({statuses or 'none due'}): {outcome.indexed} indexed, "
        f"{outcome.unchanged} unchanged, {outcome.removed} removed{left}"
    )


def _pending_summary(report: SyncReport) -> str:
    held = f"{len(report.pending)} PMIDs not returned by EFetch yet"
    shown = ", ".join(report.pending[:5]) + (", ..." if len(report.pending) > 5 else "")
    arrived = f"; {len(report.pending_arrived)} arrived" if report.pending_arrived else ""
    gone = f"; {len(report.pending_gone)} no longer in PubMed" if report.pending_gone else ""
    return f"{held}{f' ({shown})' if shown else ''}{arrived}{gone}"


def _sync_json(report: SyncReport) -> dict[str, Any]:
    """The spec's response, then additive fields for operators."""
    return {
        **report.as_payload(),
        "query_key": report.query_key,
        "term": report.term,
        "pmids_found": report.pmids_found,
        "revisions_found": report.revisions_found,
        "new_to_query": report.new_to_query,
        "chunks_written": report.chunks_written,
        "chunks_deleted": report.chunks_deleted,
        "texts_embedded": report.texts_embedded,
        "rescored": report.rescored,
        "window_start": iso(report.window_start),
        "window_basis": report.window_basis,
        "previous_term": report.previous_term,
        "checkpoint": iso(report.checkpoint),
        "checkpoint_advanced": report.checkpoint_advanced,
        "pending": list(report.pending),
        "pending_arrived": list(report.pending_arrived),
        "pending_gone": list(report.pending_gone),
        "fulltext": report.fulltext.as_payload() if report.fulltext else None,
        "timings": report.timings,
    }


def _sync_all(overlap_days: int, *, json_output: bool, quiet: bool, rescan: bool) -> None:
    """`biomcp sync --all`: every saved query (a key with a checkpoint or a recent sync), with
    the term it was last synced with, one after another; a key that fails does not stop the
    others (exit status 1 then)."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> list[tuple[str, SyncReport | Exception, float]]:
        keys = [q.query_key for q in await services.saved_queries.every()]
        outcomes: list[tuple[str, SyncReport | Exception, float]] = []
        for key in keys:
            began = time.perf_counter()
            with _SyncDisplay(key, enabled=not quiet) as display:
                try:
                    report: SyncReport | Exception = await services.sync.run(
                        key, None, overlap_days, progress=display, rescan=rescan
                    )
                except Exception as exc:  # reported below; the next key still syncs
                    report = exc
            outcomes.append((key, report, time.perf_counter() - began))
        return outcomes

    outcomes = execute(settings, work, json_output=json_output)
    shown: list[dict[str, Any]] = []
    failed = 0
    for key, outcome, elapsed in outcomes:
        if isinstance(outcome, Exception):
            failed += 1
            code, message, details = describe(outcome, settings)
            shown.append(
                {
                    "query_key": key,
                    "error": {"code": code, "message": message, "details": details},
                }
            )
            typer.echo(f"sync {key}: error [{code}]: {message}", err=True)
        elif json_output:
            shown.append(_sync_json(outcome))
        else:
            typer.echo(_sync_summary(outcome, elapsed))
    if json_output:
        emit_json({"syncs": shown})
    elif not outcomes:
        typer.echo("no saved queries yet: sync one with --query-key and --term")
    if failed:
        raise typer.Exit(code=EXIT_FAILURE)


# --- commands ------------------------------------------------------------------------------


app = typer.Typer(
    cls=CommandGroup, name="sync", help="Sync a saved PubMed query; follow sync jobs."
)

RescanOption = Annotated[
    bool,
    typer.Option(
        "--rescan",
        help="Read the query's whole history again instead of continuing from its "
        "checkpoint (records missed since come back).",
    ),
]
FullTextOption = Annotated[
    bool | None,
    typer.Option(
        "--fulltext/--no-fulltext",
        help="Keep (or stop keeping) the PMC open-access full text of the query's records; "
        "the key remembers the choice.",
    ),
]


@app.callback(invoke_without_command=True)
def sync(
    ctx: typer.Context,
    query_key: Annotated[
        str | None,
        typer.Option("--query-key", "-k", help="Name of the saved query, e.g. glp1_v1."),
    ] = None,
    term: Annotated[
        str | None,
        typer.Option(
            "--term",
            "-t",
            help="The PubMed query to sync (default: the one the key was last synced with).",
        ),
    ] = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Sync every saved query (each key with a checkpoint or a sync), one by one.",
        ),
    ] = False,
    overlap_days: Annotated[
        int,
        typer.Option(
            "--overlap-days", min=0, help="Days re-read before the checkpoint (late records)."
        ),
    ] = 5,
    rescan: RescanOption = False,
    fulltext: FullTextOption = None,
    json_output: JsonOption = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress display on stderr.")
    ] = False,
) -> None:
    """Sync a saved PubMed query into the corpus, incrementally (`biomcp sync status
    [JOB_ID]`: the state of sync jobs, from any process).

    Only the Entrez-date window since the query key's checkpoint (minus the overlap) is
    fetched, and only new or changed records are embedded. A key's first sync needs its
    --term; later ones reuse it, and --all syncs every saved query with its own (for a
    daily cron job). Progress goes to stderr."""
    if ctx.invoked_subcommand is not None:
        return
    if every:
        if query_key or term:
            typer.echo(
                "sync: --all syncs every saved query: give no --query-key or --term", err=True
            )
            raise typer.Exit(code=EXIT_VALIDATION)
        if fulltext is not None:
            typer.echo("sync: --fulltext is set per key: give it with --query-key", err=True)
            raise typer.Exit(code=EXIT_VALIDATION)
        _sync_all(overlap_days, json_output=json_output, quiet=quiet, rescan=rescan)
        return
    if not query_key:
        typer.echo(
            "sync: give --query-key (and --term the first time), or --all "
            "(or `biomcp sync status [JOB_ID]`)",
            err=True,
        )
        raise typer.Exit(code=EXIT_VALIDATION)
    settings = cli_settings(json_output)
    started = time.perf_counter()
    with _SyncDisplay(query_key, enabled=not quiet) as display:

        async def work(services: Services) -> SyncReport:
            return await services.sync.run(
                query_key, term, overlap_days, progress=display, rescan=rescan, fulltext=fulltext
            )

        report = execute(settings, work, json_output=json_output)
    elapsed = time.perf_counter() - started
    if json_output:
        emit_json(_sync_json(report))
    else:
        typer.echo(_sync_summary(report, elapsed))


@app.command("status")
def sync_status(
    job_id: Annotated[
        str | None, typer.Argument(help="A job id (default: the latest jobs).")
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """The state of a sync job (queued, running, succeeded, failed, interrupted), or of the
    latest ones: jobs are recorded in the database, so any process's syncs are listed."""
    settings = cli_settings(json_output)

    async def work(services: Services) -> Any:
        if job_id is not None:
            return await services.jobs.status(job_id)
        return await services.jobs.recent(limit=20)

    found = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(found)
        return
    for job in [found] if isinstance(found, dict) else found:
        report = job["report"] or {}
        counts = (
            f"+{report['inserted']} ~{report['updated']} ={report['skipped']}" if report else ""
        )
        typer.echo(
            f"{job['job_id']}  {job['query_key']}  {job['status']}  "
            f"{job['started_at'] or '-'} -> {job['finished_at'] or '-'}  {counts}".rstrip()
        )
        if job["error"]:
            typer.echo(f"  error: {job['error']}")
