"""`biomcp doctor`'s checks that need no store: the platform, the data folder, NCBI's settings
and how `serve-http` authenticates. Secrets never appear: keys are said to be set or not, URLs
lose their credentials."""

from __future__ import annotations

import os
import platform
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from biomcp.entrypoints.settings import Settings

__all__ = [
    "NCBI_KEY_URL",
    "Check",
    "Status",
    "auth_check",
    "data_folder_check",
    "ncbi_settings_check",
    "platform_check",
    "stores_in_data_folder",
    "without_credentials",
]

Status = Literal["ok", "warn", "fail", "skip"]

#: Below this much free space in the data folder a sync may run out of room (a warning).
LOW_DISK_BYTES = 1 << 30
NCBI_KEY_URL = "https://www.ncbi.nlm.nih.gov/account/settings/"


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: its status, what was found and, unless it is `ok`, what to do."""

    name: str
    status: Status
    detail: str
    hint: str | None = None


def platform_check(
    os_name: str = os.name, system: str | None = None, *, embedded: bool = True
) -> Check:
    """Whether this operating system can run the configured stores: the embedded ones take
    POSIX file locks; PostgreSQL and Weaviate need none, but bio-mcp is tested on POSIX only."""
    system = system or f"{platform.system()} {platform.machine()}"
    where = f"{system}, Python {platform.python_version()}"
    if os_name == "posix":
        return Check("platform", "ok", where)
    if embedded:
        return Check(
            "platform",
            "fail",
            f"{where}: the embedded stores take POSIX file locks (flock), which this system "
            "does not have",
            "run bio-mcp on Linux or macOS (on Windows: inside WSL), or use PostgreSQL and "
            "Weaviate (BIOMCP_DATABASE_URL, BIOMCP_VECTOR_BACKEND=weaviate)",
        )
    return Check(
        "platform",
        "warn",
        f"{where}: PostgreSQL and Weaviate need no file locks, but bio-mcp is tested on Linux",
        "report what fails: Linux, macOS or WSL are the tested ways",
    )


def without_credentials(url: str) -> str:
    """`url` without its user and password (an E-utilities URL may carry them)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.1f} GiB"


def stores_in_data_folder(settings: Settings) -> bool:
    """Whether a store lives in the data folder (SQLite by default, the embedded index)."""
    return settings.biomcp_database_url is None or settings.biomcp_vector_backend == "embedded"


def data_folder_check(settings: Settings) -> Check:
    """Where the embedded stores live: present and writable, with room to grow."""
    folder = settings.biomcp_data_dir
    if not stores_in_data_folder(settings):
        return Check("data folder", "ok", f"{folder} (the embedding cache and model copies)")
    if not folder.exists():
        return Check(
            "data folder",
            "ok",
            f"{folder} does not exist yet: the first serve, sync or search creates it",
        )
    if not folder.is_dir():
        return Check(
            "data folder",
            "fail",
            f"{folder} is not a folder",
            "point BIOMCP_DATA_DIR at a folder",
        )
    free = shutil.disk_usage(folder).free
    if not os.access(folder, os.W_OK):
        if settings.biomcp_read_only:
            return Check("data folder", "ok", f"{folder} (read-only, as configured)")
        return Check(
            "data folder",
            "fail",
            f"{folder} is not writable by this user",
            "give this user write access, or set BIOMCP_READ_ONLY=true for a corpus others sync",
        )
    if free < LOW_DISK_BYTES:
        return Check(
            "data folder",
            "warn",
            f"{folder}: {_gib(free)} free",
            "free some space: a sync of 10,000 records needs a few hundred MB",
        )
    return Check("data folder", "ok", f"{folder} ({_gib(free)} free)")


def ncbi_settings_check(settings: Settings) -> Check:
    """The NCBI identity: an API key (10 requests/s instead of 3) and a contact email."""
    base = settings.ncbi_eutils_base_url.rstrip("/")
    where = (
        ""
        if base == "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
        else f"; E-utilities at {without_credentials(base)} (NCBI_EUTILS_BASE_URL)"
    )
    key = settings.ncbi_api_key is not None and bool(settings.ncbi_api_key.get_secret_value())
    email = bool(settings.ncbi_admin_email)
    rate = "API key set: up to 10 requests/s" if key else "no API key: up to 3 requests/s"
    detail = f"{rate}; contact email {'set' if email else 'not set'}{where}"
    missing = [
        name
        for name, present in (("NCBI_API_KEY", key), ("NCBI_ADMIN_EMAIL", email))
        if not present
    ]
    if not missing:
        return Check("ncbi settings", "ok", detail)
    hint = f"set {' and '.join(missing)}"
    if not key:
        hint += f" (a free key: {NCBI_KEY_URL})"
    return Check("ncbi settings", "warn", detail, hint + "; NCBI asks every tool for both")


def auth_check(settings: Settings) -> Check:
    """How `biomcp serve-http` authenticates clients (stdio needs nothing)."""
    mode = settings.auth_mode
    if mode == "hs256":
        detail = "serve-http: HS256 bearer tokens (MCP_AUTH_SECRET_KEY)"
    elif mode == "oauth":
        detail = f"serve-http: OAuth access tokens of {settings.mcp_auth_issuer}"
    else:
        detail = (
            "serve-http: no tokens, so it serves loopback only (set MCP_AUTH_SECRET_KEY or the "
            "MCP_AUTH_ISSUER family to serve other hosts)"
        )
    if settings.biomcp_read_only:
        detail += "; read-only: the writing tools are not offered"
    return Check("http auth", "ok", detail)
