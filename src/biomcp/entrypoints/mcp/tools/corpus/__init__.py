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

__all__ = ["specs"]

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
        "pubmed.sync_delta": "Incrementally sync the PubMed records matching `term` into the "
        "evidence corpus, under the saved-query name `query_key`: records whose Entrez date "
        "falls after the query's checkpoint (minus `overlap_days`) are fetched, classified "
        "(clinical / preclinical / basic), scored, chunked and embedded; unchanged "
        "records are skipped (replay is safe). A long sync runs as a job: after "
        f"{sync_wait_s:g} s the answer carries the counts so far and a warning naming the job, "
        "which goes on (even if this request is cancelled); corpus_sync_status reports its "
        "progress and result.",
        "corpus.sync_status": "The state of a sync job started by <!-- if pubmed_sync_delta -->"
        "pubmed_sync_delta<!-- else -->a sync<!-- end --> (its job_id), with its progress, "
        "final report or error; interrupted: its process stopped, sync again.",
        "corpus.overview": "Which topics the corpus holds: record and chunk counts, and every "
        "saved query with its term, last_edat, sync status and records. Its key narrows "
        "rag_search (query_key)<!-- if pubmed_sync_delta --> and, with its term, syncs it "
        "again (pubmed_sync_delta)<!-- end -->.",
        "rag.search": "Hybrid (BM25 + vector) search of the synced corpus: the top_k best "
        + ("abstract chunks, or papers (group_by). " if v11 else "abstract chunks. ")
        + "quality_bias (default) favours higher-quality studies, Results/Conclusions and the "
        "evidence tier the question calls for. Each result carries doc_id (pmid:<digits>, for "
        "rag_get), "
        + (
            "text, section, evidence type, design, quality (0-10), year, journal, scores; "
            "nothing_relevant: no hit passed the relevance floor."
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
        "corpus.checkpoint.get": "The Entrez-date watermark (ISO 8601 UTC, or null before the "
        "first sync) of a saved query: the next <!-- if pubmed_sync_delta -->pubmed_sync_delta"
        "<!-- else -->sync<!-- end --> starts there minus its overlap.",
        "corpus.checkpoint.set": "Set the Entrez-date watermark of a saved query (ISO 8601 "
        "UTC). It may move backward to re-sync a period (backfill); every manual move is "
        "audited.",
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
