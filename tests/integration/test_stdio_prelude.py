"""`biomcp serve` answers the MCP handshake from the answers its SDK gave before
(entrypoints/mcp/prelude.py): real server processes over stdio, raw JSON-RPC lines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import biomcp
from biomcp.entrypoints.mcp.prelude import BOOK_FORMAT, AnswerBook
from tests.support.servers import START_TIMEOUT_S, biomcp_command, server_env

pytestmark = pytest.mark.integration

NOWHERE = "http://127.0.0.1:9/"  # nothing here talks to NCBI
BOOK = Path("cache/mcp-stdio-answers.json")
GATE = Path(__file__).parents[1] / "support" / "sdk_gate.py"
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


@pytest.fixture(scope="module", autouse=True)
def frozen_code(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The servers run a copy of the code taken once: the record's key is a digest of the
    code, which an edit of the checkout during the run would change between two starts."""
    code = tmp_path_factory.mktemp("code")
    shutil.copytree(
        Path(biomcp.__file__).parent, code / "biomcp", ignore=shutil.ignore_patterns("__pycache__")
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(code))  # passed on by server_env
        yield code


def converse(
    data: Path,
    messages: list[dict[str, Any]],
    *,
    until: str | None = None,
    early: int | None = None,
    **env: str,
) -> tuple[dict[Any, Any], list[str], str]:
    """Send `messages` at once (as a client that does not wait does), read until every request
    is answered (and the notification `until` came), close stdin; the answers by id, the
    methods of the notifications, and the server's stderr. A server that does not get there
    within START_TIMEOUT_S is killed. With `early`, the SDK's import is held (sdk_gate.py)
    until that many answers came, so they are the prelude's whatever the machine's speed."""
    release = data.with_name(data.name + ".release")
    release.unlink(missing_ok=True)
    command = [*biomcp_command(), "serve"]
    if early is not None:
        command = [sys.executable, str(GATE), str(release), "serve"]
        if early == 0:
            release.touch()
    with subprocess.Popen(  # noqa: S603 - our own entry point
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(data, NOWHERE, **env),
        text=True,
    ) as child:
        assert child.stdin is not None
        assert child.stdout is not None
        assert child.stderr is not None
        watchdog = threading.Timer(START_TIMEOUT_S, child.kill)
        watchdog.start()
        child.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        child.stdin.flush()
        waiting = {m["id"] for m in messages if "id" in m}
        answers: dict[Any, Any] = {}
        notices: list[str] = []
        try:
            while waiting or (until is not None and until not in notices):
                line = child.stdout.readline()
                if not line:  # it exited: say why
                    child.wait(timeout=START_TIMEOUT_S)
                    pytest.fail(
                        f"the server closed stdout early (exit {child.returncode}): "
                        f"{child.stderr.read()[-3000:]}"
                    )
                message = json.loads(line)
                if "id" in message:
                    answers[message["id"]] = message
                    waiting.discard(message["id"])
                    if len(answers) == early:
                        release.touch()  # the SDK may load now
                else:
                    notices.append(message["method"])
        finally:
            child.stdin.close()
            child.wait(timeout=START_TIMEOUT_S)
            watchdog.cancel()
            stderr = child.stderr.read()
    assert child.returncode == 0, stderr[-2000:]
    return answers, notices, stderr


def session(
    data: Path, messages: list[dict[str, Any]], *, early: int | None = None, **env: str
) -> tuple[dict[Any, Any], str]:
    """`converse`, without the notifications."""
    answers, _, stderr = converse(data, messages, early=early, **env)
    return answers, stderr


def recorded(data: Path) -> AnswerBook:
    """The book the server wrote, read as the server reads it (under its own fingerprint)."""
    fingerprint = json.loads((data / BOOK).read_text(encoding="utf-8"))["fingerprint"]
    return AnswerBook(data / BOOK, fingerprint).load()


def tool_names(answers: dict[Any, Any]) -> set[str]:
    return {tool["name"] for tool in answers[2]["result"]["tools"]}


def results(answers: dict[Any, Any]) -> dict[Any, Any]:
    return {ident: answer.get("result", answer.get("error")) for ident, answer in answers.items()}


def test_a_later_start_answers_the_handshake_as_the_sdk_did(tmp_path: Path) -> None:
    first, first_log = session(tmp_path, HANDSHAKE)
    assert "from the recorded answers" not in first_log
    assert (tmp_path / BOOK).is_file()
    assert first[1]["result"]["protocolVersion"] == "2025-06-18"
    assert len(first[2]["result"]["tools"]) > 10
    assert "NOT_FOUND" in first[4]["result"]["content"][0]["text"]  # the SDK served the call

    later, later_log = session(tmp_path, HANDSHAKE, early=3)
    assert LATER.format(n=3) in later_log
    assert results(later) == results(first)  # the same answers, the call included


def test_a_request_it_cannot_answer_ends_the_early_answers(tmp_path: Path) -> None:
    """After a call the SDK must answer, `tools/list` goes to the SDK too (no answer overtakes
    the call's), and the session is the SDK's from there."""
    session(tmp_path, HANDSHAKE)
    answers, log = session(tmp_path, [initialize(1), INITIALIZED, CALL, TOOLS], early=1)
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

    again, log = session(tmp_path, [initialize(1, "2025-03-26"), INITIALIZED, TOOLS], early=2)
    assert LATER.format(n=2) in log
    assert results(again) == results(older)


def test_a_stale_record_is_replaced_by_the_sdks_answer(tmp_path: Path) -> None:
    first, _ = session(tmp_path, HANDSHAKE)
    book = recorded(tmp_path)
    initialized = book.answer("2025-06-18", "initialize")
    assert initialized is not None
    book.record("2025-06-18", "initialize", {**initialized, "instructions": "stale"})
    book.save()  # with a checksum that verifies: only the server can tell it is stale

    stale, log = session(tmp_path, HANDSHAKE, early=3)
    assert stale[1]["result"]["instructions"] == "stale"  # given before the SDK was there
    assert "recorded initialize answer was stale" in log
    healed, _ = session(tmp_path, HANDSHAKE)
    assert results(healed) == results(first)


def test_a_damaged_record_is_ignored(tmp_path: Path) -> None:
    (tmp_path / BOOK).parent.mkdir(parents=True)
    (tmp_path / BOOK).write_text("{not json", encoding="utf-8")
    answers, log = session(tmp_path, HANDSHAKE)
    assert "from the recorded answers" not in log
    assert "WARNING biomcp.server.prelude: cannot read the recorded MCP answers" in log
    assert answers[1]["result"]["serverInfo"]["name"] == "bio-mcp"
    assert json.loads((tmp_path / BOOK).read_text(encoding="utf-8"))["format"] == BOOK_FORMAT


def test_a_record_with_one_flipped_byte_is_never_served(tmp_path: Path) -> None:
    session(tmp_path, HANDSHAKE)
    original = (tmp_path / BOOK).read_bytes()
    flipped = original.replace(b'"name":"rag_search"', b'"name":"rag_eearch"', 1)
    assert flipped != original
    (tmp_path / BOOK).write_bytes(flipped)
    json.loads(flipped)  # still valid JSON, of the same size

    answers, log = session(tmp_path, HANDSHAKE)
    assert "WARNING biomcp.server.prelude: the recorded MCP answers" in log
    assert "fail their checksum" in log
    assert "from the recorded answers" not in log
    assert "rag_search" in tool_names(answers)
    assert "rag_eearch" not in tool_names(answers)
    rebuilt = recorded(tmp_path).answer("2025-06-18", "tools/list")
    assert rebuilt == answers[2]["result"]


def test_a_stale_list_that_passes_its_checksum_is_corrected_at_once(tmp_path: Path) -> None:
    first, _ = session(tmp_path, HANDSHAKE)
    assert first[1]["result"]["capabilities"]["tools"]["listChanged"] is True
    book = recorded(tmp_path)
    listed = book.answer("2025-06-18", "tools/list")
    assert listed is not None
    renamed = [
        {**tool, "name": "rag_eearch"} if tool["name"] == "rag_search" else tool
        for tool in listed["tools"]
    ]
    book.record("2025-06-18", "tools/list", {**listed, "tools": renamed})
    book.save()

    answers, notices, log = converse(
        tmp_path, HANDSHAKE, until="notifications/tools/list_changed", early=3
    )
    assert "rag_eearch" in tool_names(answers)  # replayed before the server was there
    assert "WARNING biomcp.server.prelude: the recorded tools/list answer was stale" in log
    assert notices == ["notifications/tools/list_changed"]  # so the client lists again
    assert recorded(tmp_path).answer("2025-06-18", "tools/list") == first[2]["result"]


def test_a_same_size_edit_of_the_code_with_its_mtime_kept_is_not_served(
    tmp_path: Path, frozen_code: Path
) -> None:
    code = tmp_path / "code"
    shutil.copytree(
        frozen_code / "biomcp", code / "biomcp", ignore=shutil.ignore_patterns("__pycache__")
    )  # mtimes kept
    data = tmp_path / "data"
    # compiled from the source
    session(data, HANDSHAKE, PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")

    source = code / "biomcp" / "entrypoints" / "mcp" / "tools" / "fulltext.py"
    before = source.stat()
    text = source.read_text(encoding="utf-8")
    edited = text.replace("PubMed Central full text", "PubMed Central FULL text", 1)
    assert edited != text
    source.write_text(edited, encoding="utf-8")
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (source.stat().st_size, source.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )

    answers, log = session(data, HANDSHAKE, PYTHONPATH=str(code), PYTHONDONTWRITEBYTECODE="1")
    assert "from the recorded answers" not in log
    [described] = [
        tool["description"]
        for tool in answers[2]["result"]["tools"]
        if tool["name"] == "pubmed_fetch_fulltext"
    ]
    assert described.startswith("PubMed Central FULL text")


def test_the_setting_turns_the_shortcut_off(tmp_path: Path) -> None:
    first, _ = session(tmp_path, HANDSHAKE)
    book = (tmp_path / BOOK).read_bytes()

    off, log = session(tmp_path, HANDSHAKE, BIOMCP_STDIO_PRELUDE="false")
    assert "from the recorded answers" not in log
    assert results(off) == results(first)
    assert (tmp_path / BOOK).read_bytes() == book  # nothing read, nothing recorded

    on, log = session(tmp_path, HANDSHAKE, early=3)
    assert LATER.format(n=3) in log  # the record was good for that start: the setting refused it
    assert results(on) == results(first)
