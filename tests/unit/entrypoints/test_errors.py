"""The error envelope as MCP clients see it: spec 01's codes, and no path of this machine."""

from __future__ import annotations

import pytest

from biomcp.entrypoints.errors import classify, envelope, without_paths
from biomcp.ports.entrez import EntrezApiKeyError, EntrezRequestError
from biomcp.ports.store_errors import StoreUnavailableError
from biomcp.ports.vectors import VectorStoreBusyError, VectorStoreUnavailableError

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("opening /srv/data/vectors/PubMedChunk/rows.sqlite failed", "opening <path> failed"),
        (
            "Directory does not exist: '/root/.local/share/x'.",
            "Directory does not exist: '<path>'.",
        ),
        ("sqlite:////home/ana/db.sqlite3: locked", "sqlite:///<path>: locked"),
        ("see http://127.0.0.1:8000/mcp", "see http://127.0.0.1:8000/mcp"),
        ("window 1990/01/01 to 1991/12/31, and/or", "window 1990/01/01 to 1991/12/31, and/or"),
        ("GET /readyz answered 503", "GET /readyz answered 503"),
    ],
)
def test_absolute_paths_are_hidden_and_everything_else_is_kept(text: str, expected: str) -> None:
    assert without_paths(text) == expected


def test_a_public_envelope_hides_paths_in_message_and_details_the_cli_one_keeps_them() -> None:
    exc = StoreUnavailableError("opening sqlite:////var/lib/biomcp/biomcp.sqlite3: disk I/O")
    public = envelope(exc, public=True)["error"]
    assert public["code"] == "STORE"
    assert "/var/lib" not in public["message"]
    assert "/var/lib" in envelope(exc)["error"]["message"]
    busy = VectorStoreBusyError("busy", holder={"pid": 7, "program": "/opt/venv/bin/biomcp"})
    details = envelope(busy, public=True)["error"]["details"]
    assert details == {"retryable": True, "holder": {"pid": 7, "program": "<path>"}}


def test_a_writer_waiting_too_long_is_a_retryable_timeout_not_a_store_failure() -> None:
    code, message, details = classify(VectorStoreBusyError("collection 'C' is being written"))
    assert code == "TIMEOUT"
    assert "retry" in message
    assert details["retryable"] is True
    assert classify(VectorStoreUnavailableError("gone"))[0] == "STORE"


def test_a_refused_api_key_names_the_setting_not_the_query() -> None:
    code, message, _ = classify(EntrezApiKeyError("NCBI esearch refused the API key (HTTP 400)"))
    assert code == "ENTREZ"
    assert "NCBI_API_KEY" in message
    assert "query syntax" not in message
    # any other refusal is still the query's
    assert "query syntax" in classify(EntrezRequestError("bad term"))[1]
