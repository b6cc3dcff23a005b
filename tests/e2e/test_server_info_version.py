"""`pubmed-connect://info` names the protocol version the client negotiated (`mcpSpecVersion`).

A raw JSON-RPC client over stdio (`biomcp serve`) asks for an older protocol version, then
reads the resource: the version it reports is the one that session speaks, not the SDK's
latest.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import START_TIMEOUT_S, biomcp_command, server_env

pytestmark = pytest.mark.e2e

NOWHERE = "http://127.0.0.1:9"  # no NCBI call is made
INFO = "pubmed-connect://info"


def _conversation(version: str) -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "version-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": INFO}},
    ]


def _answers(data: Path, messages: list[dict[str, Any]]) -> dict[int, Any]:
    """The server's answers by id, once every request is answered and stdin is closed."""
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    waiting = {m["id"] for m in messages if "id" in m}
    with subprocess.Popen(  # noqa: S603 - our own entry point
        [*biomcp_command(), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(data, NOWHERE),
        text=True,
    ) as child:
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write(lines)
        child.stdin.flush()
        answers: dict[int, Any] = {}
        try:
            while waiting:
                line = child.stdout.readline()
                assert line, "the server closed stdout before answering"
                message = json.loads(line)
                if message.get("id") in waiting:
                    answers[message["id"]] = message
                    waiting.discard(message["id"])
        finally:
            child.stdin.close()
            child.wait(timeout=START_TIMEOUT_S)
    return answers


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
def test_server_info_reports_the_negotiated_protocol_version(tmp_path: Path, version: str) -> None:
    answers = _answers(tmp_path / "data", _conversation(version))
    assert answers[1]["result"]["protocolVersion"] == version
    contents = answers[2]["result"]["contents"]
    assert contents[0]["mimeType"] == "application/json"
    info = json.loads(contents[0]["text"])
    assert info["mcpSpecVersion"] == version
