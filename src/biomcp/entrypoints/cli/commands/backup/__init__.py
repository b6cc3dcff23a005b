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
    "vectors: the corpus collection is not copied (Weaviate); a restore rebuilds it from SQL. "
    "Project collections are exported whole, with their vectors"
)


def _refused(exc: Exception, json_output: bool) -> typer.Exit:
    if json_output:
        emit_json({"error": {"code": "VALIDATION", "message": str(exc), "details": None}})
    typer.echo(f"error [VALIDATION]: {exc}", err=True)
    return typer.Exit(code=EXIT_VALIDATION)


async def _export_projects(services: Services, folder: Path) -> dict[str, tuple[str, int]]:
    """Write each registered project's collection to `folder`; name -> (file, chunks)."""
    from biomcp.entrypoints.backends import export_collection

    stored = set(await services.vectors.collections())
    names = sorted({p.collection for p in await services.metadata.list_projects()} & stored)
    written: dict[str, tuple[str, int]] = {}
    for index, name in enumerate(names):
        file = f"project-{index}.jsonl.gz"  # collection names need not be file names
        written[name] = (file, await export_collection(services.vectors, name, folder / file))
    return written


async def _import_exports(services: Services, src: Path, exported: dict[str, str]) -> None:
    """Replace each exported collection in the vector store by its file in `src`."""
    from biomcp.entrypoints.backends import import_collection

    for name, file in sorted(exported.items()):
        await services.vectors.drop_collection(name)
        await import_collection(services.vectors, src / file)


def _run(settings: Settings, json_output: bool, action: str, folder: Path, **options: Any) -> Any:
    """The store copier's `action` on `folder`; a refusal or failure exits."""
    from biomcp.entrypoints.backends import build_backup

    try:
        return getattr(build_backup(settings), action)(folder, **options)
    except typer.Exit:
        raise
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
    """Back up the metadata database and the vector collections that SQL cannot rebuild to
    a folder, while servers and syncs may be running. Caches are not copied."""
    settings = cli_settings(json_output)

    def export(folder: Path) -> dict[str, tuple[str, int]]:
        return execute(
            settings, lambda services: _export_projects(services, folder), json_output=json_output
        )

    manifest = _run(settings, json_output, "backup", dest, export=export)
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
        await _import_exports(services, src, manifest.exported)
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
