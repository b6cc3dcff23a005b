"""A real third-party MCP client: the MCP Inspector's CLI (Node), on both transports.

`npx -y @modelcontextprotocol/inspector@2.12.0 --cli <command or URL> --method ...` lists the
tools (with its schema-portability lint, `--strict`: findings on stderr, and in the JSON
envelope's `schemaFindings` with `--format json`; none allowed), calls them and reads the
resources. Skipped
with the reason when `npx` is missing or the package cannot be fetched; when the `CI` variable
is set those are failures instead (CI warms the npx cache first, see `.ci/run`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import jwt
import pytest

from biomcp.testing.eutils import FakeCorpus, FakeEutilsServer, generate_articles
from tests.support.servers import DEFAULT_TOOLS as TOOLS
from tests.support.servers import biomcp_command, serve_http, server_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
#: The first npx run downloads the package (CI prefetches it); later runs start in seconds.
FETCH_TIMEOUT_S = 600.0
CALL_TIMEOUT_S = 300.0
PROJECT = "inspector/notes"
FIRST_PMID = "30000000"  # generate_articles numbers PMIDs from 30000000 upwards


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the MCP Inspector tests (see .ci/run)")
    pytest.skip(reason)


@dataclass(frozen=True)
class Inspector:
    npx: str
    home: Path

    def run(
        self, target: Sequence[str], *args: str, env: Mapping[str, str], cwd: Path
    ) -> subprocess.CompletedProcess[str]:
        child = {
            **env,
            # Keep the Inspector's own catalog, config and state out of the user's home.
            "MCP_CATALOG_PATH": str(self.home / "catalog.json"),
            "MCP_CLIENT_CONFIG_PATH": str(self.home / "client.json"),
            "MCP_STORAGE_DIR": str(self.home / "storage"),
        }
        return subprocess.run(  # noqa: S603 - fixed arguments
            [self.npx, "-y", PACKAGE, "--cli", *target, *args],
            env=child,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=False,
        )

    def json(
        self, target: Sequence[str], *args: str, env: Mapping[str, str], cwd: Path
    ) -> dict[str, Any]:
        result = self.run(target, *args, env=env, cwd=cwd)
        assert result.returncode == 0, (
            f"inspector {' '.join(args)} exited {result.returncode}\nstdout:\n{result.stdout}\n"
            f"stderr:\n{_without_npm_noise(result.stderr)}"
        )
        answer: dict[str, Any] = json.loads(result.stdout)
        return answer


def _without_npm_noise(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("npm warn"))


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Inspector:
    npx = shutil.which("npx")
    if npx is None:
        _unavailable("npx is not installed (Node.js is needed for the MCP Inspector)")
        raise AssertionError("unreachable")
    try:
        probe = subprocess.run(  # noqa: S603 - fixed arguments
            [npx, "-y", PACKAGE, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=FETCH_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _unavailable(f"npx could not fetch {PACKAGE} within {FETCH_TIMEOUT_S:g}s")
        raise AssertionError("unreachable") from None
    if probe.returncode != 0:
        tail = _without_npm_noise(probe.stderr).strip().splitlines()[-5:]
        _unavailable(f"npx could not run {PACKAGE}: {' / '.join(tail) or probe.returncode}")
    return Inspector(npx, tmp_path_factory.mktemp("inspector-home"))


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEutilsServer]:
    today = date.today()
    xml = generate_articles(20, start=today - timedelta(days=10), end=today, seed=3)
    with FakeEutilsServer(FakeCorpus.from_xml_bytes(xml)) as server:
        yield server


@dataclass
class Target:
    """How the Inspector reaches one bio-mcp: a command line (stdio) or a URL."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


@pytest.fixture(scope="module", params=["stdio", "http"])
def target(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    fake: FakeEutilsServer,
    inspector: Inspector,
) -> Iterator[Target]:
    root = tmp_path_factory.mktemp(request.param)
    env = server_env(root / "data", fake.base_url)
    (root / "data").mkdir()
    (root / "data" / "projects.toml").write_text(f'[projects."{PROJECT}"]\n')
    if request.param == "stdio":
        command = biomcp_command()
        assert len(command) == 1, "the Inspector needs the `biomcp` script of the environment"
        # The Inspector starts the server with a minimal environment plus these (-e).
        passed = ["BIOMCP_DATA_DIR", "BIOMCP_EMBEDDINGS", "NCBI_EUTILS_BASE_URL", "BIOMCP_TOOLSETS"]
        options = [arg for name in passed for arg in ("-e", f"{name}={env[name]}")]
        yield Target([*options, command[0], "serve"], env, root)
        return
    with serve_http(["--port", "0"], env=env, cwd=root) as server:
        yield Target([server.url], env, root)


def test_tools_list_has_no_portability_findings(inspector: Inspector, target: Target) -> None:
    """The Inspector's lint (type arrays, remote `$ref`, untyped or boolean schemas) prints
    each finding on stderr as `Warning: tool "<name>"` / `Error: tool "<name>"` and a closing
    count (`N errors, M warnings across K tools.`); with none it prints nothing. Its JSON
    envelope carries `schemaFindings` when there are any."""
    result = inspector.run(
        target.argv, "--method", "tools/list", "--strict", env=target.env, cwd=target.cwd
    )
    report = _without_npm_noise(result.stderr)
    assert result.returncode == 0, f"exit {result.returncode}\n{report}"
    # (stderr also carries the stdio server's own log lines)
    assert not re.search(r'^(Warning|Error): tool "', report, re.MULTILINE), report
    assert not re.search(r"\d+ errors?, \d+ warnings? across", report), report
    listed = json.loads(result.stdout)
    envelope = inspector.json(
        target.argv, "--method", "tools/list", "--strict", "--format", "json",
        env=target.env, cwd=target.cwd,
    )  # fmt: skip
    assert "schemaFindings" not in envelope, envelope.get("schemaFindings")
    assert envelope["result"]["tools"] == listed["tools"]
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool["inputSchema"]["type"] == "object"
        assert tool["outputSchema"]["type"] == "object"
        assert tool["title"]


def test_tools_call_and_resources_read(
    inspector: Inspector, target: Target, fake: FakeEutilsServer
) -> None:
    def run(*args: str) -> dict[str, Any]:
        return inspector.json(target.argv, *args, env=target.env, cwd=target.cwd)

    synced = run(
        "--method",
        "tools/call",
        "--tool-name",
        "pubmed_sync_delta",
        "--tool-arg",
        "query_key=inspector",
        "term=humans[mh] OR animals[mh]",
    )
    assert synced.get("isError") is not True, synced
    assert synced["structuredContent"]["inserted"] + synced["structuredContent"]["skipped"] == len(
        fake.corpus
    )

    got = run(
        "--method",
        "tools/call",
        "--tool-name",
        "rag_get",
        "--tool-arg",
        f"doc_id=pmid:{FIRST_PMID}",
    )
    assert got.get("isError") is not True, got
    document = got["structuredContent"]
    assert document["doc_id"] == f"pmid:{FIRST_PMID}"
    assert json.loads(got["content"][0]["text"]) == document

    paper = run("--method", "resources/read", "--uri", f"resource://pubmed/paper/{FIRST_PMID}")
    contents = paper["contents"][0]
    assert contents["mimeType"] == "application/json"
    assert json.loads(contents["text"]) == document

    guide = run("--method", "resources/read", "--uri", "biomcp://help")
    assert guide["contents"][0]["mimeType"] == "text/markdown"
    assert "rag_get" in guide["contents"][0]["text"]

    templates = run("--method", "resources/templates/list")
    uris = {t["uriTemplate"] for t in templates["resourceTemplates"]}
    assert "resource://pubmed/paper/{pmid}" in uris


def test_the_project_tools_store_and_find(inspector: Inspector, target: Target) -> None:
    def run(*args: str) -> dict[str, Any]:
        return inspector.json(target.argv, *args, env=target.env, cwd=target.cwd)

    listed = run("--method", "tools/call", "--tool-name", "list_projects")
    assert [p["id"] for p in listed["structuredContent"]["projects"]] == [PROJECT]
    items = [{"id": "n1", "text": "Value objects have no identity.", "metadata": {"tags": ["ddd"]}}]
    stored = run(
        "--method", "tools/call", "--tool-name", "store_chunks",
        "--tool-arg", f"project={PROJECT}", f"items={json.dumps(items)}",
    )  # fmt: skip
    assert stored.get("isError") is not True, stored
    assert stored["structuredContent"]["chunks_written"] == 1
    found = run(
        "--method", "tools/call", "--tool-name", "query_hybrid",
        "--tool-arg", f"project={PROJECT}", "query=value objects", 'filters={"tags": ["ddd"]}',
    )  # fmt: skip
    assert found.get("isError") is not True, found
    assert [i["id"] for i in found["structuredContent"]["items"]] == ["n1"]


def test_the_live_tools_are_called_and_the_pubmed_resources_read(
    inspector: Inspector, target: Target
) -> None:
    def call(tool: str, *arguments: str) -> dict[str, Any]:
        answer = inspector.json(
            target.argv,
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-arg",
            *arguments,
            env=target.env,
            cwd=target.cwd,
        )
        assert answer.get("isError") is not True, answer
        structured: dict[str, Any] = answer["structuredContent"]
        return structured

    # The Inspector reads --tool-arg values as JSON: a PMID string needs its quotes.
    found = call("pubmed_search_articles", "queryTerm=humans[mh]", "maxResults=5")
    assert 0 < len(found["pmids"]) <= 5
    assert found["totalFound"] >= len(found["pmids"])
    details = call("pubmed_fetch_article_details", f'pmids=["{FIRST_PMID}"]')
    assert [a["pmid"] for a in details["articles"]] == [FIRST_PMID]
    assert details["notFoundPmids"] == []
    cited = call(
        "pubmed_article_relationships",
        f'sourcePmid="{FIRST_PMID}"',
        "relationshipType=citation_formats",
        'citationStyles=["ris", "apa_string"]',
    )
    assert cited["citations"]["ris"].startswith("TY  - JOUR")
    assert cited["sourcePmid"] == FIRST_PMID
    assert "apa_string" in cited["citations"]

    for uri in ("pubmed-connect://info", "pubmed-connect://stats/pubmed"):
        read = inspector.json(
            target.argv, "--method", "resources/read", "--uri", uri, env=target.env, cwd=target.cwd
        )
        contents = read["contents"][0]
        assert contents["mimeType"] == "application/json"
        assert json.loads(contents["text"])


def test_a_failing_call_reaches_the_inspector_as_a_tool_error(
    inspector: Inspector, target: Target
) -> None:
    result = inspector.run(
        target.argv,
        "--method",
        "tools/call",
        "--tool-name",
        "rag_get",
        "--tool-arg",
        "doc_id=not-a-pmid",
        env=target.env,
        cwd=target.cwd,
    )
    # The Inspector prints the tool result and exits 5 ("the tool returned isError").
    assert result.returncode == 5, result.stderr
    answer = json.loads(result.stdout)
    assert answer["isError"] is True
    assert "structuredContent" not in answer
    envelope = json.loads(answer["content"][0]["text"])
    assert envelope["error"]["code"] == "VALIDATION"
    assert "doc_id" in envelope["error"]["message"]


def test_a_bearer_token_passed_as_a_header_opens_the_protected_endpoint(
    inspector: Inspector, tmp_path: Path, fake: FakeEutilsServer
) -> None:
    secret = "inspector-test-secret-0123456789abcdefghij"  # noqa: S105 - a test key
    env = server_env(tmp_path / "data", fake.base_url, MCP_AUTH_SECRET_KEY=secret)
    now = int(time.time())
    token = jwt.encode({"sub": "inspector", "scope": "read", "exp": now + 600}, secret)
    with serve_http(["--port", "0"], env=env, cwd=tmp_path) as server:
        listed = inspector.json(
            [server.url],
            "--method",
            "tools/list",
            "--header",
            f"Authorization: Bearer {token}",
            env=env,
            cwd=tmp_path,
        )
        assert {tool["name"] for tool in listed["tools"]} == TOOLS
        refused = inspector.run(
            [server.url], "--method", "tools/list", "--stored-auth-only", env=env, cwd=tmp_path
        )
        assert refused.returncode != 0
        assert "auth_required" in refused.stdout + refused.stderr
        assert '"tools"' not in refused.stdout
