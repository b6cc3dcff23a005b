"""What the PostgreSQL pieces that speak psycopg directly share: the URL libpq reads, and the
advisory-lock key of a name. They skip SQLAlchemy, so this module imports nothing heavy."""

from __future__ import annotations

import hashlib

__all__ = ["advisory_key", "libpq_url"]


def libpq_url(url: str) -> str:
    """`url` as libpq reads it: SQLAlchemy's `postgresql+psycopg://` becomes `postgresql://`.

    Raises:
        ValueError: `url` is not a PostgreSQL URL.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.split("+", 1)[0].lower() not in {"postgresql", "postgres"}:
        raise ValueError("this needs a postgresql:// database URL")
    return f"postgresql://{rest}"


def advisory_key(name: str) -> int:
    """The signed 64-bit advisory-lock key of `name` (`biomcp:` + name, hashed)."""
    digest = hashlib.sha256(b"biomcp:" + name.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
