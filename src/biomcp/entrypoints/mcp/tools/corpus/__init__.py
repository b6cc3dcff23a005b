"""The corpus tools: spec 01's five (sync, search, get, and the checkpoints: read and move),
`corpus_sync_status` and `corpus_overview`.

Spec 01's inputs are bounded (`schemas.TOOL_INPUTS`); their answers and output schemas follow
the contract the settings name (`BIOMCP_CONTRACT`): v1.1 by default, spec 01's v1.0 exactly on
request, cut down in one place (`contract.in_contract`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_types import ToolAnnotations

from biomcp.entrypoints.mcp.contract import Contract, contract_outputs, in_contract
from biomcp.entrypoints.mcp.tools.corpus.handlers import CorpusHandlers
from biomcp.entrypoints.mcp.tools.corpus.schemas import (
    CORPUS_OVERVIEW_INPUT,
    CORPUS_OVERVIEW_OUTPUT,
    SYNC_STATUS_INPUT,
    SYNC_STATUS_OUTPUT,
    TOOL_INPUTS,
)
from biomcp.entrypoints.mcp.toolspec import READING_LOCAL, Handler, ToolSpec

if TYPE_CHECKING:
    from biomcp.entrypoints.services import Services

__all__ = ["TOOLSET", "specs"]

#: The toolset of these tools: `BIOMCP_TOOLSETS` names it to offer them.
TOOLSET = "corpus"

_TITLES = {
    "pubmed.sync_delta": "Sync a saved PubMed query into the corpus",
    "corpus.sync_status": "Follow a sync job",
    "corpus.overview": "Corpus overview",
    "rag.search": "Search the evidence corpus",
    "rag.get": "Get a corpus document",
    "corpus.checkpoint.get": "Read a sync checkpoint",
    "corpus.checkpoint.set": "Move a sync checkpoint",
}


def _writing(*, open_world: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=open_world,
    )


def _descriptions(sync_wait_s: float, *, v11: bool) -> dict[str, str]:
    """The tools' descriptions: the sync wait, and what search and get answer under the
    contract (v1.1's fields, or spec 01's)."""
    return {
        "pubmed.sync_delta": "Sync the PubMed records matching `term` into the corpus under "
        "the saved-query name `query_key`: records newer than its checkpoint (minus "
        "`overlap_days`) are fetched, classified, scored, chunked and embedded; replay is "
        f"safe. After {sync_wait_s:g} s a long sync answers with the counts so far and a "
        "warning naming its job, which goes on: follow it with corpus_sync_status.",
        "corpus.sync_status": "A sync job's state by job_id: progress, final report or error "
        "(interrupted: its process stopped, sync again).",
        "corpus.overview": "What the corpus holds: record and chunk counts, and each saved "
        "query with its term, last_edat, last sync and records. A query_key narrows "
        "rag_search.",
        "rag.search": "Hybrid (BM25 + vector) search of the synced corpus: the top_k best "
        + ("chunks, or papers (group_by)" if v11 else "abstract chunks")
        + ", reranked by study quality and evidence tier (quality_bias). Results carry doc_id "
        "(pmid:<digits>, for rag_get), "
        + (
            "text, section, evidence type, design, quality (0-10), year and scores; "
            "nothing_relevant: no hit passed the relevance floor. Filters: biomcp://help."
            if v11
            else "the chunk's uuid, quality (0-10) and the raw and final scores."
        ),
        "rag.get": "One corpus document by doc_id (pmid:<digits>): "
        "title, abstract, journal, publication types, dates, "
        + (
            "evidence type and the quality score with its breakdown."
            if v11
            else "and the quality score with its parts (design, recency, journal, human)."
        ),
        "corpus.checkpoint.get": "A saved query's Entrez-date watermark (ISO 8601 UTC; null "
        "before its first sync), where its next sync starts (minus the overlap).",
        "corpus.checkpoint.set": "Set a saved query's Entrez-date watermark (ISO 8601 UTC); "
        "backward re-syncs a period. Audited.",
    }


def specs(services: Services) -> list[ToolSpec]:
    """The corpus tools: spec 01's five (bounded inputs, answers in the configured contract),
    `corpus_sync_status` and `corpus_overview`."""
    settings = services.settings
    contract: Contract = settings.biomcp_contract
    outputs = contract_outputs(contract)
    words = _descriptions(settings.biomcp_sync_wait_s, v11=contract == "1.1")
    run = CorpusHandlers(services)

    def spec01(
        name: str, handler: Handler, annotations: ToolAnnotations, *, writes: bool = False
    ) -> ToolSpec:
        return ToolSpec(
            name,
            name.replace(".", "_"),
            _TITLES[name],
            words[name],
            in_contract(name, handler, contract, settings.biomcp_vector_backend),
            writes=writes,
            annotations=annotations,
            input_schema=TOOL_INPUTS[name],
            output_schema=outputs[name],
        )

    def own(name: str, handler: Handler, schemas: tuple[dict[str, Any], ...]) -> ToolSpec:
        return ToolSpec(
            name,
            name.replace(".", "_"),
            _TITLES[name],
            words[name],
            handler,
            writes=False,
            annotations=READING_LOCAL,
            input_schema=schemas[0],
            output_schema=schemas[1],
        )

    return [
        spec01("pubmed.sync_delta", run.sync_delta, _writing(open_world=True), writes=True),
        own("corpus.sync_status", run.sync_status, (SYNC_STATUS_INPUT, SYNC_STATUS_OUTPUT)),
        own("corpus.overview", run.overview, (CORPUS_OVERVIEW_INPUT, CORPUS_OVERVIEW_OUTPUT)),
        spec01("rag.search", run.rag_search, READING_LOCAL),
        spec01("rag.get", run.rag_get, READING_LOCAL),
        spec01("corpus.checkpoint.get", run.checkpoint_get, READING_LOCAL),
        spec01(
            "corpus.checkpoint.set", run.checkpoint_set, _writing(open_world=False), writes=True
        ),
    ]
