"""`biomcp doctor`: check this install and its configuration, as the server would use them.

One line per check, each `ok`, `warn`, `fail` or `skip`, with what to do when it is not `ok`:
the platform, the data folder, the metadata database (its schema and, on SQLite, its
integrity: `PRAGMA quick_check`, as `biomcp index verify` runs it), the vector store and its
index, whether stored tiers, designs and scores follow this version's rules, the embedding
model (loaded and run on one sentence), whether the corpus was embedded by that model, NCBI's
settings and, unless `--offline`, one real ESearch through the configured client (so an API key
NCBI refuses, a proxy or a firewall shows here, not in the first sync).
Exit status 1 when a check fails, 0 otherwise (warnings do not fail).

It opens the stores as `biomcp serve` would, except that in a data folder that does not exist
yet it creates no database and no index (only the model's rewritten graph is kept there, as at
any start). Secrets never appear in its output: keys are said to be set or not, URLs lose their
credentials.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from typing import TYPE_CHECKING

import typer

from biomcp import __version__
from biomcp.entrypoints.cli.commands.doctor.checks import (
    Check,
    auth_check,
    data_folder_check,
    platform_check,
    stores_in_data_folder,
)
from biomcp.entrypoints.cli.commands.doctor.probes import Doctor
from biomcp.entrypoints.cli.common import (
    EXIT_FAILURE,
    JsonOption,
    cli_settings,
    emit_json,
    execute,
)

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["doctor"]


def _show(checks: list[Check]) -> str:
    width = max(len(check.name) for check in checks)
    lines = [f"bio-mcp {__version__}: this install and its settings"]
    for check in checks:
        lines.append(f"  {check.status:<4}  {check.name:<{width}}  {check.detail}")
        if check.hint and check.status != "ok":
            lines.append(f"        {'':<{width}}  -> {check.hint}")
    failed = sum(check.status == "fail" for check in checks)
    warned = sum(check.status == "warn" for check in checks)
    verdict = f"{failed} check{'s' if failed > 1 else ''} failed" if failed else "ready"
    if warned:
        verdict += f" ({warned} warning{'s' if warned > 1 else ''})"
    lines.append(verdict)
    return "\n".join(lines)


def doctor(
    offline: bool = typer.Option(
        False, "--offline", help="Do not contact NCBI (every other check still runs)."
    ),
    json_output: JsonOption = False,
) -> None:
    """Check this install and its settings: platform, data folder, metadata database,
    vector store, embedding model, the corpus's model, NCBI (one ESearch).

    Exits 1 when a check fails, 0 otherwise; each problem comes with what to do.
    """
    settings = cli_settings(json_output)
    checks = [platform_check(embedded=stores_in_data_folder(settings)), data_folder_check(settings)]

    async def work(services: Services) -> list[Check]:
        return await Doctor(services, settings, offline=offline).run()

    checks += execute(settings, work, json_output=json_output)
    checks.append(auth_check(settings))
    failed = any(check.status == "fail" for check in checks)
    if json_output:
        emit_json(
            {
                "version": __version__,
                "ok": not failed,
                "checks": [asdict(check) for check in checks],
            }
        )
    else:
        typer.echo(_show(checks))
    sys.stdout.flush()
    if failed:
        raise typer.Exit(code=EXIT_FAILURE)
