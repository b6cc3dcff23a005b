"""`biomcp db upgrade|current`: schema migrations of the metadata database."""

from __future__ import annotations

from pathlib import Path

import typer

from biomcp.entrypoints.cli.common import CommandGroup

__all__ = ["app"]

app = typer.Typer(
    cls=CommandGroup,
    name="db",
    help="The metadata database: schema migrations.",
    no_args_is_help=True,
)

_DB_URL_HELP = (
    "Database URL (sqlite:///path or postgresql+psycopg://...). Default: $BIOMCP_DATABASE_URL, "
    "else the SQLite file in $BIOMCP_DATA_DIR (default: the user data directory)."
)


def _data_dir() -> Path:
    from biomcp.entrypoints.runtime import load_or_exit

    return load_or_exit().biomcp_data_dir


@app.command("upgrade")
def db_upgrade(url: str | None = typer.Option(None, "--url", help=_DB_URL_HELP)) -> None:
    """Migrate the database schema to the newest revision this bio-mcp ships."""
    from biomcp.entrypoints.backends import migrate_database
    from biomcp.ports.store_errors import MetadataStoreError

    try:
        state = migrate_database(url, _data_dir())
    except MetadataStoreError as exc:
        typer.echo(f"db upgrade: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    typer.echo(f"{state.database}: at revision {state.head} (head)")


@app.command("current")
def db_current(url: str | None = typer.Option(None, "--url", help=_DB_URL_HELP)) -> None:
    """Print the schema revision of the database and whether it is the newest."""
    from biomcp.entrypoints.backends import database_schema
    from biomcp.ports.store_errors import MetadataStoreError

    try:
        schema = database_schema(url, _data_dir())
        shown, current, head = schema.database, schema.current, schema.head
    except MetadataStoreError as exc:
        typer.echo(f"db current: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    if current == head:
        typer.echo(f"{shown}: at revision {current} (head)")
    else:
        state = f"at revision {current}" if current else "not migrated"
        typer.echo(f"{shown}: {state}; head is {head}: run `biomcp db upgrade`")
