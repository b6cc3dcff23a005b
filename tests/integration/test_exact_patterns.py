"""Identifiers are matched whole: a trailing newline or a non-ASCII digit never passes a
published `pattern` (`^pmid:[0-9]+$`, `^\\d+$`), though Python's `re` would let it. Through an
in-process MCP client on a corpus synced from the fake E-utilities over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from mcp import Client

from biomcp.entrypoints.mcp.server import BioMcpServer
from biomcp.entrypoints.services import Services
from biomcp.testing.eutils import FakeEutilsServer
from tests.support.mcp_inprocess import call_json, serve, test_settings
from tests.support.sync_harness import make_corpus

pytestmark = pytest.mark.integration


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(10, date(2024, 1, 1), date(2024, 1, 31)), warm=True) as f:
        yield f


def test_a_doc_id_with_a_trailing_newline_is_refused_as_validation(
    fake: FakeEutilsServer, tmp_path: Path
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        error, synced = await call_json(
            client, "pubmed_sync_delta", {"query_key": "all_v1", "term": "Humans[mh]"}
        )
        assert not error, synced
        doc_id = f"pmid:{fake.corpus.pmids()[0]}"
        error, document = await call_json(client, "rag_get", {"doc_id": doc_id})
        assert not error, document  # stored: only the newline can refuse it below

        for bad in (f"{doc_id}\n", f"{doc_id}\r\n"):
            error, answer = await call_json(client, "rag_get", {"doc_id": bad})
            assert error, answer
            assert answer["error"]["code"] == "VALIDATION"
            assert answer["error"]["details"] == [
                {"field": "doc_id", "problem": f"must match the pattern ^pmid:[0-9]+$, got {bad!r}"}
            ]

    serve(test_settings(tmp_path, fake.base_url), body)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("pubmed_fetch_article_details", {"pmids": ["30000001\n"]}),
        ("pubmed_fetch_article_details", {"pmids": ["٣٠٠٠٠٠٠١"]}),  # Arabic-Indic digits
        ("pubmed_article_relationships", {"sourcePmid": "30000001\n"}),
        ("pubmed_fetch_fulltext", {"ids": ["PMC30000001\n"]}),
    ],
)
def test_live_tool_identifiers_are_matched_whole_before_any_request(
    fake: FakeEutilsServer, tmp_path: Path, tool: str, arguments: dict[str, object]
) -> None:
    async def body(client: Client, server: BioMcpServer, services: Services) -> None:
        requests = len(fake.log)
        error, answer = await call_json(client, tool, arguments)
        assert error, answer
        assert answer["error"]["code"] == "VALIDATION"
        assert "must match the pattern" in answer["error"]["message"]
        assert len(fake.log) == requests  # refused before NCBI was asked

    serve(test_settings(tmp_path, fake.base_url), body)
