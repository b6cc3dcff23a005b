"""`biomcp index verify|rebuild`: check the vector store against SQL, and rebuild it from SQL.

`verify` exits 0 when every stored document's chunks are in the vector store, the store's
files are sound and the metadata database passes its integrity check; 1 otherwise, damage it
repaired on the way included (`repaired` names each repair), so a cron job hears of it.
Chunks stored without their sentence vectors (`chunks_without_sentences`) get a hint, not
exit status 1: search still finds them. `rebuild` re-chunks and re-indexes every document;
with the embedding cache on (the default) an unchanged corpus is rebuilt without embedding
anything. Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from biomcp.entrypoints.cli.common import (
    EXIT_FAILURE,
    JsonOption,
    cli_settings,
    emit_json,
    execute,
    group_app,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["app"]

app = group_app(
    "index", "The vector index of the corpus: verify it against SQL, rebuild it from SQL."
)

QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")]


class _Progress:
    """`done/total documents` on stderr, at most once a second and at the end."""

    def __init__(self, verb: str, *, enabled: bool) -> None:
        self.verb = verb
        self.enabled = enabled
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < 1.0 and done < total):
            return
        self._last = now
        print(f"{self.verb}: {done}/{total} documents", file=sys.stderr, flush=True)


def _lines(report: dict[str, Any]) -> list[str]:
    return [f"{key}: {value}" for key, value in report.items()]


def _hints(report: dict[str, Any]) -> list[str]:
    """What to do about what `verify` found."""
    hints = [f"repaired: {repair}" for repair in report["repaired"]]
    if report["metadata_problems"]:
        hints.append(
            "the metadata database is damaged: restore it from a backup, or move it aside "
            "and sync again"
        )
    if report["chunks_missing"] or report["store_problems"] or not report["collection_exists"]:
        hints.append("the index needs repair: run `biomcp index rebuild`")
    elif report["chunks_without_sentences"]:
        hints.append(
            f"{report['chunks_without_sentences']} chunks have no sentence vectors, so search "
            "ranks them by the whole chunk only: run `biomcp index rebuild` to add them"
        )
    return hints


@app.command("verify")
def verify(json_output: JsonOption = False, quiet: QuietOption = False) -> None:
    """Check that every stored document's chunks are in the vector store, that the
    store's files match their checksums and that the metadata database passes its
    integrity check. Exit status 1 when something is wrong, or was and got repaired."""
    settings = cli_settings(json_output)
    progress = _Progress("verify", enabled=not quiet)

    async def work(services: Services) -> dict[str, Any]:
        return (await services.maintenance.verify(progress=progress)).as_dict()

    report = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(report)
    else:
        typer.echo("\n".join(_lines(report)))
        for hint in _hints(report):
            typer.echo(hint, err=True)
    if not report["ok"]:
        raise typer.Exit(code=EXIT_FAILURE)


@app.command("rebuild")
def rebuild(
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    reset: Annotated[
        bool,
        typer.Option(
            "--reset",
            help="Drop the collection first (done anyway when its files cannot be opened).",
        ),
    ] = False,
    rederive: Annotated[
        bool,
        typer.Option(
            "--rederive",
            help="First derive every record's tier, study design and quality again under "
            "the rules in force (after an upgrade that changed them).",
        ),
    ] = False,
) -> None:
    """Re-chunk and re-index every stored document from SQL (through the embedding
    cache), replacing whatever the vector store holds for them."""
    settings = cli_settings(json_output)
    progress = _Progress("rebuild", enabled=not quiet)

    async def work(services: Services) -> dict[str, Any]:
        report = await services.maintenance.rebuild(
            progress=progress, reset=reset, rederive=rederive
        )
        return report.as_dict()

    report = execute(settings, work, json_output=json_output)
    if json_output:
        emit_json(report)
    else:
        typer.echo("\n".join(_lines(report)))
