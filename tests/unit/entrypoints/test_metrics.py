"""The metrics of the HTTP app: what their labels may carry."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from prometheus_client.parser import text_string_to_metric_families

from biomcp.entrypoints.http.metrics import Metrics
from biomcp.entrypoints.mcp.server import build_server
from biomcp.entrypoints.services import build_services
from tests.support.mcp_inprocess import call_structured as call
from tests.support.mcp_inprocess import test_settings

MARKER = "secretmarkerquery"


def test_labels_carry_tool_names_and_codes_never_the_query_text(tmp_path: Path) -> None:
    async def main() -> str:
        services = build_services(test_settings(tmp_path, "http://127.0.0.1:9"))
        server = build_server(services)
        metrics = Metrics(services)
        server.tool_observer = metrics.record_tool_call
        try:
            async with Client(server) as client:
                error, _ = await call(client, "rag_search", {"query": MARKER, "top_k": 0})
                assert error
                error, _ = await call(client, "rag_get", {"doc_id": MARKER})
                assert error
                with pytest.raises(MCPError):
                    await client.call_tool(MARKER, {"query": MARKER})
            metrics.record_tool_call("rag_search", f"not a code: {MARKER}", 0.5)
            return (await metrics.render()).decode()
        finally:
            await services.aclose()

    text = asyncio.run(main())
    assert MARKER not in text
    calls = {
        (s.labels["tool"], s.labels["outcome"]): s.value
        for family in text_string_to_metric_families(text)
        if family.name == "biomcp_tool_calls"
        for s in family.samples
        if s.name == "biomcp_tool_calls_total"
    }
    assert calls == {
        ("rag_search", "VALIDATION"): 1,
        ("rag_get", "VALIDATION"): 1,
        ("rag_search", "OTHER"): 1,
    }


def test_two_apps_in_one_process_keep_their_counts_apart(tmp_path: Path) -> None:
    services = build_services(test_settings(tmp_path, "http://127.0.0.1:9"))
    first, second = Metrics(services), Metrics(services)
    first.record_tool_call("rag_search", "ok", 0.01)
    assert (
        first.registry.get_sample_value(
            "biomcp_tool_calls_total", {"tool": "rag_search", "outcome": "ok"}
        )
        == 1
    )
    assert (
        second.registry.get_sample_value(
            "biomcp_tool_calls_total", {"tool": "rag_search", "outcome": "ok"}
        )
        is None
    )
