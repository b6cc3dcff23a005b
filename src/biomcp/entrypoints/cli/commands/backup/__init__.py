"""`biomcp backup DEST` and `biomcp restore SRC`: a consistent copy of the stores, and back.

`backup` runs while servers and syncs run: the metadata database is copied in one snapshot
(SQLite's online backup, or `pg_dump`) while every embedded collection's writer turn is held,
so the copy is one point in time. `restore` wants the servers stopped; it refuses a target
that holds data (unless `--force`), a backup from a newer schema and a damaged one, then
rebuilds what is derived and checks the counts against the manifest (exit 1 when they differ).
A refusal exits 2, with `error [VALIDATION]: ...` on stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    EXIT_FAILURE,
    EXIT_VALIDATION,
    JsonOption,
    cli_settings,
    emit_json,
    execute,
    fail,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services
    from biomcp.entrypoints.settings import Settings

__all__ = ["backup", "restore"]

_WEAVIATE_NOTE = (
    "vectors: not copied (Weaviate); a restore rebuilds the corpus collection from SQL. "
    "Project collections in Weaviate are not in this backup: use Weaviate's backup module"
)


def _refused(exc: Exception, json_output: bool) -> typer.Exit:
    if json_output:
        emit_json({"error": {"code": "VALIDATION", "message": str(exc), "details": None}})
    typer.echo(f"error [VALIDATION]: {exc}", err=True)
    return typer.Exit(code=EXIT_VALIDATION)


def _run(settings: Settings, json_output: bool, action: str, folder: Path, **options: Any) -> Any:
    """The store copier's `action` on `folder`; a refusal or failure exits."""
    from biomcp.entrypoints.backends import build_backup

    try:
        return getattr(build_backup(settings), action)(folder, **options)
    except ValueError as exc:  # BackupError: the message says what to do
        raise _refused(exc, json_output) from None
    except Exception as exc:
        raise fail(exc, settings, json_output) from None


def _counts_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in counts.items())


def backup(
    dest: Annotated[Path, typer.Argument(help="A new (or empty) folder to write the backup to.")],
    json_output: JsonOption = False,
) -> None:
    """Back up the metadata database and the embedded vector collections to a folder,
    consistently, while servers and syncs may be running. Caches are not copied."""
    settings = cli_settings(json_output)
    manifest = _run(settings, json_output, "backup", dest)
    if json_output:
        emit_json(manifest.as_dict())
        return
    typer.echo(
        f"backup written: {_counts_line(manifest.counts)} "
        f"(schema revision {manifest.schema_revision}, {manifest.metadata_backend})"
    )
    for name, chunks in manifest.collections.items():
        typer.echo(f"collection {name}: {chunks} chunks")
    if manifest.vectors == "rebuild":
        typer.echo(_WEAVIATE_NOTE)
    for skipped in manifest.skipped:
        typer.echo(f"skipped: {skipped}")


def restore(
    src: Annotated[Path, typer.Argument(help="A folder written by `biomcp backup`.")],
    force: Annotated[
        bool, typer.Option("--force", help="Replace whatever the configured stores hold.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Restore a backup into the configured stores (stop the servers first), rebuild the
    indexes and check the counts against the backup's manifest (exit status 1 when they
    differ). Refuses a target that holds data unless --force."""
    settings = cli_settings(json_output)
    manifest = _run(settings, json_output, "restore", src, force=force)

    async def work(services: Services) -> tuple[dict[str, Any] | None, dict[str, int]]:
        rebuilt = None
        if manifest.vectors == "rebuild":
            rebuilt = (await services.maintenance.rebuild(reset=True)).as_dict()
        chunks = {name: await services.vectors.count(name) for name in manifest.collections}
        return rebuilt, chunks

    rebuilt, chunks = execute(settings, work, json_output=json_output)
    problems = _run(settings, json_output, "mismatches", manifest, chunks=chunks)
    if rebuilt is not None and (
        rebuilt["documents"] != manifest.counts.get("documents") or rebuilt["refused"]
    ):
        problems.append(
            f"the rebuild indexed {rebuilt['documents']} documents "
            f"({rebuilt['refused']} refused chunks)"
        )
    report = {
        "ok": not problems,
        "counts": manifest.counts,
        "collections": chunks,
        "vectors": "rebuilt from SQL" if rebuilt is not None else "copied",
        "rebuild": rebuilt,
        "mismatches": problems,
    }
    if json_output:
        emit_json(report)
    else:
        typer.echo(f"restored: {_counts_line(manifest.counts)}; vectors {report['vectors']}")
        for name, n in chunks.items():
            typer.echo(f"collection {name}: {n} chunks")
        for problem in problems:
            typer.echo(f"mismatch: {problem}", err=True)
    if problems:
        raise typer.Exit(code=EXIT_FAILURE)
