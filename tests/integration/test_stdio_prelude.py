"""`biomcp serve` answers the MCP handshake from the answers its SDK gave before
(entrypoints/mcp/prelude.py): real server processes over stdio, raw JSON-RPC lines."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import START_TIMEOUT_S, biomcp_command, server_env

pytestmark = pytest.mark.integration

NOWHERE = "http://127.0.0.1:9/"  # nothing here talks to NCBI
BOOK = Path("cache/mcp-stdio-answers.json")
LATER = "answered {n} handshake requests from the recorded answers"


def initialize(ident: int, version: str = "2025-06-18") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "prelude-test", "version": "1"},
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
PROMPTS = {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}
CALL = {
    "jsonrpc": "2.0",
    "id": 4,
    "method": "tools/call",
    "params": {"name": "rag_search", "arguments": {"query": "aspirin"}},
}
HANDSHAKE = [initialize(1), INITIALIZED, TOOLS, PROMPTS, CALL]


def session(data: Path, messages: list[dict[str, Any]], **env: str) -> tuple[dict[Any, Any], str]:
    """Send `messages` at once (as a client that does not wait does), read one answer per
    request, close stdin; the answers by id, and the server's stderr."""
    with subprocess.Popen(  # noqa: S603 - our own entry point
        [*biomcp_command(), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(data, NOWHERE, **env),
        text=True,
    ) as child:
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stderr is not None
        child.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        child.stdin.flush()
        answers: dict[Any, Any] = {}
        try:
            for _ in [m for m in messages if "id" in m]:
                line = child.stdout.readline()
                assert line, "the server closed stdout early"
                answer = json.loads(line)
                answers[answer["id"]] = answer
        finally:
            child.stdin.close()
            child.wait(timeout=START_TIMEOUT_S)
            stderr = child.stderr.read()
    assert child.returncode == 0, stderr[-2000:]
    return answers, stderr


def results(answers: dict[Any, Any]) -> dict[Any, Any]:
    return {ident: answer.get("result", answer.get("error")) for ident, answer in answers.items()}


def test_a_later_start_answers_the_handshake_as_the_sdk_did(tmp_path: Path) -> None:
    first, first_log = session(tmp_path, HANDSHAKE)
    assert "from the recorded answers" not in first_log
    assert (tmp_path / BOOK).is_file()
    assert first[1]["result"]["protocolVersion"] == "2025-06-18"
    assert len(first[2]["result"]["tools"]) > 10
    assert "NOT_FOUND" in first[4]["result"]["content"][0]["text"]  # the SDK served the call

    later, later_log = session(tmp_path, HANDSHAKE)
    assert LATER.format(n=3) in later_log
    assert results(later) == results(first)  # the same answers, the call included


def test_a_request_it_cannot_answer_ends_the_early_answers(tmp_path: Path) -> None:
    """After a call the SDK must answer, `tools/list` goes to the SDK too (no answer overtakes
    the call's), and the session is the SDK's from there."""
    session(tmp_path, HANDSHAKE)
    answers, log = session(tmp_path, [initialize(1), INITIALIZED, CALL, TOOLS])
    assert LATER.format(n=1) in log
    assert set(answers) == {1, 2, 4}
    assert len(answers[2]["result"]["tools"]) > 10


def test_other_settings_or_versions_are_answered_by_the_sdk(tmp_path: Path) -> None:
    first, _ = session(tmp_path, HANDSHAKE)

    read_only, log = session(tmp_path, HANDSHAKE, BIOMCP_READ_ONLY="true")
    assert "from the recorded answers" not in log
    names = {tool["name"] for tool in read_only[2]["result"]["tools"]}
    assert "store_chunks" not in names
    assert "store_chunks" in {tool["name"] for tool in first[2]["result"]["tools"]}

    older, log = session(tmp_path, [initialize(1, "2025-03-26"), INITIALIZED, TOOLS])
    assert "from the recorded answers" not in log
    assert older[1]["result"]["protocolVersion"] == "2025-03-26"

    unknown, _ = session(tmp_path, [initialize(1, "1999-01-01"), INITIALIZED, TOOLS])
    assert unknown[1]["result"]["protocolVersion"] == "2025-11-25"  # the SDK's default

    again, log = session(tmp_path, [initialize(1, "2025-03-26"), INITIALIZED, TOOLS])
    assert LATER.format(n=2) in log
    assert results(again) == results(older)


def test_a_stale_record_is_replaced_by_the_sdks_answer(tmp_path: Path) -> None:
    first, _ = session(tmp_path, HANDSHAKE)
    book = json.loads((tmp_path / BOOK).read_text(encoding="utf-8"))
    book["answers"]["2025-06-18"]["initialize"]["instructions"] = "stale"
    (tmp_path / BOOK).write_text(json.dumps(book), encoding="utf-8")

    stale, log = session(tmp_path, HANDSHAKE)
    assert stale[1]["result"]["instructions"] == "stale"  # given before the SDK was there
    assert "recorded initialize answer was stale" in log
    healed, _ = session(tmp_path, HANDSHAKE)
    assert results(healed) == results(first)


def test_a_damaged_record_is_ignored(tmp_path: Path) -> None:
    (tmp_path / BOOK).parent.mkdir(parents=True)
    (tmp_path / BOOK).write_text("{not json", encoding="utf-8")
    answers, log = session(tmp_path, HANDSHAKE)
    assert "from the recorded answers" not in log
    assert answers[1]["result"]["serverInfo"]["name"] == "bio-mcp"
    assert json.loads((tmp_path / BOOK).read_text(encoding="utf-8"))["format"] == 1
