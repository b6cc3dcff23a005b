"""Start-up helpers shared by the command line entry points."""

from __future__ import annotations

import typer
from pydantic import ValidationError

from biomcp.entrypoints.settings import Settings, format_settings_error, load_settings

__all__ = ["load_or_exit"]


def load_or_exit(**overrides: object) -> Settings:
    """The settings, or exit 2 with one line per bad variable."""
    try:
        return load_settings(**overrides)
    except ValidationError as exc:
        typer.echo(format_settings_error(exc), err=True)
        raise typer.Exit(code=2) from exc
