"""`biomcp sync|search|get|checkpoint`: the corpus from the command line."""

from __future__ import annotations

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the corpus commands to `app`."""
