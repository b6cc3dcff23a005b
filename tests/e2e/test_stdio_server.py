"""`biomcp serve` as a child process, driven by the SDK's stdio client.

Also: launched by hand with stdin closed (or /dev/null, or an empty file), it prints the guidance
that points to `biomcp serve-http` and exits 0, instead of waiting for a handshake that never
comes.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from biomcp.entrypoints.mcp.contract import ERROR_ENVELOPE
from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.mcp_inprocess import call_structured as call
from tests.support.servers import DEFAULT_TOOLS as TOOLS
from tests.support.servers import START_TIMEOUT_S, biomcp_command, mcp_stdio, run_biomcp, server_env

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(25, start=today - timedelta(days=20), end=today, seed=5)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml)) as server:
        yield server


def test_a_stdio_client_lists_and_calls_the_tools(tmp_path: Path, fake: FakeEutilsServer) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    errlog_path = tmp_path / "serve.stderr"

    async def scenario() -> None:
        with errlog_path.open("w", encoding="utf-8") as errlog:
            async with mcp_stdio(env, tmp_path, errlog) as client:
                listed = {tool.name for tool in (await client.list_tools()).tools}
                assert listed == TOOLS

                error, report = await call(
                    client,
                    "pubmed_sync_delta",
                    {"query_key": "stdio", "term": "humans[mh] OR animals[mh]"},
                )
                assert not error, report
                assert report["inserted"] == len(fake.corpus)

                error, found = await call(client, "rag_search", {"query": "trial", "top_k": 4})
                assert not error, found
                assert 1 <= len(found["results"]) <= 4
                doc_id = found["results"][0]["doc_id"]
                error, document = await call(client, "rag_get", {"doc_id": doc_id})
                assert not error
                assert document["doc_id"] == doc_id

                error, answer = await call(client, "rag_get", {"doc_id": "not-a-pmid"})
                assert error
                Draft202012Validator(ERROR_ENVELOPE).validate(answer)
                assert answer["error"]["code"] == "VALIDATION"

                # No write guard on stdio: the client that started the server owns it.
                error, moved = await call(
                    client,
                    "corpus_checkpoint_set",
                    {"query_key": "stdio", "last_edat": "2022-01-01T00:00:00Z"},
                )
                assert not error
                assert moved["ok"] is True

                help_text = await client.read_resource("biomcp://help")
                assert "rag_search" in help_text.contents[0].text  # type: ignore[union-attr]
                paper = await client.read_resource(
                    f"resource://pubmed/paper/{doc_id.removeprefix('pmid:')}"
                )
                assert json.loads(paper.contents[0].text) == document  # type: ignore[union-attr]

    asyncio.run(scenario())
    # stdout is the protocol channel: the server's logs went to stderr, not into the stream.
    assert "Traceback" not in errlog_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("stdin", ["closed", "devnull", "empty file"])
def test_serve_with_no_stdin_ends_cleanly_with_guidance(
    tmp_path: Path, fake: FakeEutilsServer, stdin: str
) -> None:
    env = server_env(tmp_path / "data", fake.base_url)
    if stdin == "closed":
        command = " ".join(shlex.quote(part) for part in [*biomcp_command(), "serve"])
        result = subprocess.run(  # noqa: S603 - fixed arguments
            ["/bin/sh", "-c", f"exec {command} <&-"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
        )
    elif stdin == "devnull":
        result = run_biomcp(["serve"], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    else:
        empty = tmp_path / "empty.jsonl"
        empty.write_bytes(b"")
        with empty.open("rb") as handle:
            result = run_biomcp(["serve"], env=env, cwd=tmp_path, stdin=handle)
    assert result.returncode == 0, result  # a stdio server ends cleanly when its input ends
    assert "serve-http" in result.stderr
    assert "stdin" in result.stderr
    assert result.stdout == ""
