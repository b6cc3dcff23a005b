"""Start-up helpers shared by the command line entry points."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import typer
from pydantic import ValidationError

from biomcp.entrypoints.settings import (
    Settings,
    format_settings_error,
    load_settings,
    unknown_variables,
)

__all__ = ["load_or_exit", "warn_unknown_variables"]


def load_or_exit(**overrides: object) -> Settings:
    """The settings, or exit 2 with one line per bad variable; a variable that looks meant
    for bio-mcp but is no setting is named on stderr (`warn_unknown_variables`)."""
    warn_unknown_variables()
    try:
        return load_settings(**overrides)
    except ValidationError as exc:
        typer.echo(format_settings_error(exc), err=True)
        raise typer.Exit(code=2) from exc


def warn_unknown_variables() -> None:
    """Name on stderr each environment or `.env` variable that looks meant for bio-mcp but
    is no setting (it would be ignored without a word)."""
    names = list(os.environ)
    dotenv = Path(".env")
    if dotenv.is_file():
        from dotenv import dotenv_values

        with contextlib.suppress(OSError, ValueError):  # the settings report an unreadable file
            names += list(dotenv_values(dotenv))
    for warning in unknown_variables(names):
        typer.echo(f"warning: {warning}", err=True)
