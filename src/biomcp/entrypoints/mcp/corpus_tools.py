"""The corpus tools of spec 01: sync, search, get, and the checkpoints (read and move).

Their inputs are spec 01's with bounds (`TOOL_INPUTS`); their answers and output schemas follow
the contract the settings name (`BIOMCP_CONTRACT`): v1.1 by default, spec 01's v1.0 exactly on
request, cut down in one place (`contract_payload`).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.context import Context
from mcp_types import ToolAnnotations

from biomcp.entrypoints.errors import ToolCallError, classify
from biomcp.entrypoints.mcp.schemas import (
    CORPUS_OVERVIEW_INPUT,
    CORPUS_OVERVIEW_OUTPUT,
    SYNC_STATUS_INPUT,
    SYNC_STATUS_OUTPUT,
    TOOL_INPUTS,
    Contract,
    contract_error_code,
    contract_outputs,
    contract_payload,
)
from biomcp.entrypoints.mcp.tools import Handler, ToolSpec
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.payloads import iso_utc
from biomcp.usecases.sync import SyncProgress

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["corpus_tool_specs"]


def _in_contract(name: str, handler: Handler, contract: Contract, backend: str) -> Handler:
    """`handler`, its answers and error codes in `contract` (the one place v1.1 fields and
    codes are turned into v1.0's)."""
    if contract == "1.1":
        return handler

    async def answer(args: dict[str, Any], context: Context[Any, Any] | None) -> dict[str, Any]:
        try:
            payload = await handler(args, context)
        except Exception as exc:
            code, message, details = classify(exc, vector_backend=backend)
            raise ToolCallError(contract_error_code(code, contract), message, details) from exc
        return contract_payload(name, payload, contract)

    return answer


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


def corpus_tool_specs(services: Services) -> list[ToolSpec]:
    """The corpus tools: spec 01's five (bounded inputs, answers in the configured contract)
    and `corpus_sync_status`."""
    contract: Contract = services.settings.biomcp_contract
    outputs = contract_outputs(contract)
    v11 = contract == "1.1"

    def spec_tool(
        name: str,
        portable: str,
        title: str,
        description: str,
        handler: Handler,
        writes: bool,
        annotations: ToolAnnotations,
    ) -> ToolSpec:
        return ToolSpec(
            name,
            portable,
            title,
            description,
            _in_contract(name, handler, contract, services.settings.biomcp_vector_backend),
            writes,
            annotations,
            input_override=TOOL_INPUTS[name],
            output_override=outputs[name],
        )

    async def sync_delta(args: dict[str, Any], context: Context[Any, Any] | None) -> dict[str, Any]:
        async def progress(state: SyncProgress) -> None:
            if context is None or state.total == 0:
                return
            message = f"{state.processed}/{state.total} records, {state.chunks_embedded} chunks"
            with contextlib.suppress(Exception):  # a client without a progress token
                await context.report_progress(state.processed, state.total, message)

        outcome = await services.jobs.run(
            args["query_key"],
            args["term"],
            args["overlap_days"],
            wait_s=services.settings.biomcp_sync_wait_s,
            progress=progress,
        )
        return outcome.as_payload()

    async def sync_status(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.jobs.status(args["job_id"])

    async def overview(_args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.saved_queries.overview()

    async def rag_search(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        hits = await services.search.run(
            args["query"],
            args["top_k"],
            args["quality_bias"],
            filters=_search_filters(args),
            include_retracted=bool(args.get("include_retracted", False)),
            study_designs=args.get("study_design"),
            query_key=args.get("query_key"),
        )
        return {"results": [hit.as_payload() for hit in hits]}

    async def rag_get(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.documents.run(args["doc_id"])

    async def checkpoint_get(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        return await services.saved_queries.get_payload(args["query_key"])

    async def checkpoint_set(args: dict[str, Any], _: Context[Any, Any] | None) -> dict[str, Any]:
        audit = await services.saved_queries.set(
            args["query_key"], args["last_edat"], actor="mcp", reason="corpus.checkpoint.set"
        )
        return {
            "ok": True,
            "query_key": audit.query_key,
            "previous_edat": iso_utc(audit.previous),
            "last_edat": iso_utc(audit.new),
        }

    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    return [
        spec_tool(
            "pubmed.sync_delta",
            "pubmed_sync_delta",
            "Sync a saved PubMed query into the corpus",
            "Incrementally sync the PubMed records matching `term` into the evidence corpus, "
            "under the saved-query name `query_key`: records whose Entrez date falls after the "
            "query's checkpoint (minus `overlap_days`) are fetched, classified (clinical / "
            "preclinical / basic), quality-scored, chunked and embedded; unchanged records are "
            "skipped, so replaying is safe. A long sync runs as a job: after "
            f"{services.settings.biomcp_sync_wait_s:g} s the answer carries the counts so far "
            "and a warning naming the job, which goes on (also when this request is "
            "cancelled); corpus_sync_status reports its progress and final report.",
            sync_delta,
            True,
            ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=True,
            ),
        ),
        ToolSpec(
            "corpus.sync_status",
            "corpus_sync_status",
            "Follow a sync job",
            "The state of a sync job started by <!-- if pubmed_sync_delta -->pubmed_sync_delta"
            "<!-- else -->a sync<!-- end --> (its job_id): queued, running (with "
            "progress), succeeded (with the final report), failed (with the error) or "
            "interrupted (its process stopped; sync again to complete it).",
            sync_status,
            False,
            reading,
            input_override=SYNC_STATUS_INPUT,
            output_override=SYNC_STATUS_OUTPUT,
        ),
        ToolSpec(
            "corpus.overview",
            "corpus_overview",
            "Corpus overview",
            "Which topics the corpus holds: record and chunk counts, and every saved query "
            "with its PubMed term, last_edat, last sync status, records and pending PMIDs. "
            "Its key narrows rag_search (query_key)<!-- if pubmed_sync_delta --> and, with "
            "its term, syncs it again (pubmed_sync_delta)<!-- end -->.",
            overview,
            False,
            reading,
            input_override=CORPUS_OVERVIEW_INPUT,
            output_override=CORPUS_OVERVIEW_OUTPUT,
        ),
        spec_tool(
            "rag.search",
            "rag_search",
            "Search the evidence corpus",
            "Hybrid (BM25 + vector) search over the synced corpus, returning the top_k most "
            "relevant abstract chunks. With quality_bias (default) the ranking favours "
            "higher-quality studies, Results/Conclusions sections and the evidence tier the "
            "question calls for. Each result carries doc_id (pmid:<digits>, for rag_get), "
            + (
                "the chunk text, its section, evidence type, study design, quality (0-10), "
                "year, journal and the raw scores; optional filters by study design, evidence "
                "tier, year and quality."
                if v11
                else "the chunk's uuid, quality (0-10) and the raw and final scores."
            ),
            rag_search,
            False,
            reading,
        ),
        spec_tool(
            "rag.get",
            "rag_get",
            "Get a corpus document",
            "The normalized metadata of one corpus document by doc_id (pmid:<digits>): title, "
            "abstract, journal, publication types, dates, "
            + (
                "evidence type and the quality score with its breakdown (design, recency, "
                "journal, human, sample size)."
                if v11
                else "and the quality score with its parts (design, recency, journal, human)."
            ),
            rag_get,
            False,
            reading,
        ),
        spec_tool(
            "corpus.checkpoint.get",
            "corpus_checkpoint_get",
            "Read a sync checkpoint",
            "The Entrez-date watermark (ISO 8601 UTC, or null before the first sync) of a saved "
            "query: the next <!-- if pubmed_sync_delta -->pubmed_sync_delta<!-- else -->sync"
            "<!-- end --> starts there minus its overlap.",
            checkpoint_get,
            False,
            reading,
        ),
        spec_tool(
            "corpus.checkpoint.set",
            "corpus_checkpoint_set",
            "Move a sync checkpoint",
            "Set the Entrez-date watermark of a saved query (ISO 8601 UTC). It may move "
            "backward to re-sync a period (backfill); every manual move is audited.",
            checkpoint_set,
            True,
            ToolAnnotations(
                read_only_hint=False,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        ),
    ]
