"""The corpus tools' handlers: each parses its arguments, calls one use case and shapes the
answer (v1.1; `contract.in_contract` cuts it down to v1.0 on request)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context

from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.search_filters import with_source
from biomcp.usecases.sync import SyncProgress

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["CorpusHandlers"]


def _search_filters(args: dict[str, Any]) -> SearchFilters | None:
    """`rag_search`'s optional filters (the schema bounded them), or None when none is set."""
    tiers = args.get("evidence_type")
    filters = SearchFilters(
        evidence_types=frozenset(tiers) if tiers else None,
        year_min=args.get("year_min"),
        year_max=args.get("year_max"),
        min_quality=args.get("min_quality"),
    )
    return None if filters == SearchFilters() else filters


class CorpusHandlers:
    """The handlers of the corpus tools, over `services`."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def sync_delta(
        self, args: dict[str, Any], context: Context[Any, Any] | None
    ) -> dict[str, Any]:
        async def progress(state: SyncProgress) -> None:
            if context is None or state.total == 0:
                return
            message = f"{state.processed}/{state.total} records, {state.chunks_embedded} chunks"
            with contextlib.suppress(Exception):  # a client without a progress token
                await context.report_progress(state.processed, state.total, message)

        outcome = await self.services.jobs.run(
            args["query_key"],
            args["term"],
            args["overlap_days"],
            wait_s=self.services.settings.biomcp_sync_wait_s,
            progress=progress,
            fulltext=args.get("fulltext"),
        )
        return outcome.as_payload()

    async def sync_status(
        self, args: dict[str, Any], _: Context[Any, Any] | None
    ) -> dict[str, Any]:
        return await self.services.jobs.status(args["job_id"])

    async def overview(self, _args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await self.services.saved_queries.overview()

    async def rag_search(self, args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        outcome = await self.services.search.search(
            args["query"],
            args["top_k"],
            args["quality_bias"],
            group_by=args.get("group_by", "chunk"),
            filters=with_source(_search_filters(args), args.get("source")),
            include_retracted=bool(args.get("include_retracted", False)),
            study_designs=args.get("study_design"),
            query_key=args.get("query_key"),
            trial_id=args.get("trial_id"),
        )
        return outcome.as_payload()

    async def rag_get(self, args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await self.services.documents.run(args["doc_id"], fulltext=args.get("fulltext"))

    async def checkpoint_get(
        self, args: dict[str, Any], _: Context[Any, Any] | None
    ) -> dict[str, Any]:
        return await self.services.saved_queries.get_payload(args["query_key"])

    async def checkpoint_set(
        self, args: dict[str, Any], _: Context[Any, Any] | None
    ) -> dict[str, Any]:
        audit = await self.services.saved_queries.set(
            args["query_key"], args["last_edat"], actor="mcp", reason="corpus.checkpoint.set"
        )
        return {
            "ok": True,
            "query_key": audit.query_key,
            "previous_edat": iso_utc(audit.previous),
            "last_edat": iso_utc(audit.new),
        }
