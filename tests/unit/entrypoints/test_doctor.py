"""`biomcp doctor`'s checks that need no store: the platform, NCBI's settings, auth."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from biomcp.entrypoints.cli.commands.doctor.checks import (
    auth_check,
    data_folder_check,
    ncbi_settings_check,
    platform_check,
)
from biomcp.entrypoints.settings import Settings

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def _no_settings_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("MCP_", "NCBI_", "BIOMCP_", "WEAVIATE_", "OPENAI_")):
            monkeypatch.delenv(name)


def _settings(tmp_path: Path, **values: Any) -> Settings:
    return Settings(_env_file=None, biomcp_data_dir=tmp_path / "data", **values)


def test_a_system_without_posix_locks_fails_with_the_way_out() -> None:
    check = platform_check("nt", "Windows AMD64")
    assert check.status == "fail"
    assert check.detail.startswith("Windows AMD64, Python ")
    assert "WSL" in (check.hint or "")
    # without the embedded stores nothing needs the locks: untested, not impossible
    assert platform_check("nt", "Windows AMD64", embedded=False).status == "warn"
    assert platform_check("posix", "Linux x86_64").status == "ok"


def test_ncbi_settings_say_whether_a_key_is_set_never_what_it_is(tmp_path: Path) -> None:
    secret = "0123456789abcdef-secret"  # noqa: S105 - a test value
    check = ncbi_settings_check(
        _settings(
            tmp_path,
            ncbi_api_key=SecretStr(secret),
            ncbi_admin_email="ops@example.org",
            ncbi_eutils_base_url="https://user:hunter2@proxy.example.org:8443/eutils",
        )
    )
    assert check.status == "ok"
    assert secret not in repr(check)
    assert "hunter2" not in repr(check)
    assert "user" not in check.detail
    assert "proxy.example.org:8443/eutils (NCBI_EUTILS_BASE_URL)" in check.detail
    bare = ncbi_settings_check(_settings(tmp_path))
    assert bare.status == "warn"
    assert bare.detail == "no API key: up to 3 requests/s; contact email not set"


def test_a_missing_data_folder_is_reported_not_created(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    check = data_folder_check(settings)
    assert check.status == "ok"
    assert "does not exist yet" in check.detail
    assert not settings.biomcp_data_dir.exists()
    (tmp_path / "data").write_text("not a folder")
    assert data_folder_check(settings).status == "fail"


def test_auth_says_what_serve_http_requires(tmp_path: Path) -> None:
    assert "loopback only" in auth_check(_settings(tmp_path)).detail
    key = SecretStr("k" * 40)
    hs256 = auth_check(_settings(tmp_path, mcp_auth_secret_key=key, biomcp_read_only=True))
    assert hs256.detail.startswith("serve-http: HS256 bearer tokens")
    assert "read-only" in hs256.detail
    assert "k" * 40 not in hs256.detail
