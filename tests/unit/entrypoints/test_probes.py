"""What `/readyz` and `/` say, computed without a server: readiness from the stores' answers
(secrets redacted) and the auth the index describes."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from biomcp.entrypoints.http.probes import _auth_description, _readiness
from biomcp.entrypoints.mcp.policy import READ_SCOPE, WRITE_SCOPE
from biomcp.entrypoints.services import Services

pytestmark = pytest.mark.unit


class _Stores:
    """Stands in for `Services.readiness`: the answer of each store."""

    def __init__(self, checks: dict[str, str]) -> None:
        self.checks = checks

    async def readiness(self) -> dict[str, str]:
        return dict(self.checks)


def _ready(checks: dict[str, str], secrets: list[str]) -> tuple[bool, dict[str, str]]:
    services = cast("Services", _Stores(checks))
    return asyncio.run(_readiness(services, None, secrets))


def test_ready_when_every_store_answers_ok() -> None:
    assert _ready({"metadata": "ok", "vectors": "ok"}, []) == (
        True,
        {"metadata": "ok", "vectors": "ok"},
    )


def test_not_ready_with_the_failing_stores_reason_and_its_secrets_redacted() -> None:
    ready, checks = _ready(
        {"metadata": "ok", "vectors": "cannot reach https://user:pw@host with key sk-123"},
        ["sk-123"],
    )
    assert not ready
    assert checks["vectors"] == "cannot reach https://user:***@host with key ***"


def test_not_ready_when_no_store_answers_at_all() -> None:
    assert _ready({}, []) == (False, {})


@pytest.mark.parametrize(
    ("mode", "algorithm", "read_scope", "write_scope"),
    [
        ("none", None, None, None),
        ("hs256", "HS256", None, WRITE_SCOPE),
        ("oauth", "RS256/ES256", READ_SCOPE, WRITE_SCOPE),
    ],
)
def test_the_index_describes_how_a_client_authenticates(
    mode: str, algorithm: str | None, read_scope: str | None, write_scope: str | None
) -> None:
    auth = _auth_description(mode)
    assert auth == {
        "enabled": mode != "none",
        "scheme": None if mode == "none" else "bearer",
        "mode": mode,
        "algorithm": algorithm,
        "read_scope": read_scope,
        "write_scope": write_scope,
    }
