"""What the library's dict answers hold: `TypedDict`s of the tools' answers.

`get`, `overview`, `sync_status` and the project calls answer with the MCP tool's payload
unchanged, a plain `dict` at run time. These types name its keys and value types for a type
checker (the schemas are `biomcp.entrypoints.mcp.contract` and the tool families' modules). A
key is required, and a value not None, where the payload always has it so, even where the
schema allows less.
"""

# No `from __future__ import annotations`: `TypedDict` reads `NotRequired` only from evaluated
# annotations (on Python 3.11), and the key checks read `__required_keys__`.
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "ChunksStored",
    "CollectionIndexes",
    "CollectionInspection",
    "CorpusOverview",
    "Document",
    "FoundChunk",
    "FoundChunks",
    "FullTextState",
    "ProjectEntry",
    "ProjectList",
    "QualityBreakdown",
    "QualityScores",
    "RetractionNotice",
    "SavedQueryOverview",
    "SyncJobProgress",
    "SyncJobReport",
    "SyncJobStatus",
]

# --- get: `rag.get` (spec 01, contract v1.1) ---------------------------------------------------


class QualityScores(TypedDict):
    """Spec 01's quality components and their `total`."""

    design: int
    recency: int
    journal: int
    human: int
    total: int


class QualityBreakdown(TypedDict):
    """Every quality component, the study design and what the sample size was read from."""

    design: int
    study_design: str
    recency: int
    journal: int
    human: int
    sample_size: int
    sample_size_n: int | None
    sample_size_text: str | None
    sample_size_refused: list[str]
    retracted: bool
    total: int


class RetractionNotice(TypedDict):
    """The PMID and citation of a retraction notice (both None when the record names none)."""

    notice_pmid: str | None
    source: str | None


class FullTextState(TypedDict):
    """What the last full-text check of a document found (`status`: available,
    not_open_access, not_in_pmc, withdrawn, too_large or failed, and why)."""

    status: str
    reason: str | None
    pmcid: str | None
    checked_at: str | None
    chunks: int


class Document(TypedDict):
    """One stored document: the `rag.get` answer (times as ISO 8601 UTC text)."""

    doc_id: str
    title: str | None
    abstract: str | None
    journal: str | None
    pub_types: list[str]
    pdat: str | None
    edat: str | None
    lr: str | None
    pmcid: str | None
    quality: QualityScores
    version: int
    evidence_type: str
    evidence_rule: str
    has_numbers: bool
    has_biomarker: bool
    study_design: str
    design_rule: str
    quality_breakdown: QualityBreakdown
    doi: str | None
    pdat_text: str | None
    authors: list[str]
    mesh_terms: list[str]
    trial_ids: list[str]
    retracted: bool
    retraction: RetractionNotice | None
    url: str
    #: None when no sync checked its full text (its saved query does not keep full text).
    fulltext: FullTextState | None


# --- overview: `corpus_overview` --------------------------------------------------------------


class SavedQueryOverview(TypedDict):
    """One saved query: its term, checkpoint, latest sync's status and what it holds."""

    query_key: str
    term: str | None
    last_edat: str | None
    last_sync: str | None
    records: int
    pending_pmids: int
    #: whether its syncs keep the PMC full text of its records
    fulltext: bool


class CorpusOverview(TypedDict):
    """What the corpus holds and its saved queries (`queries_total` counts all of them);
    `fulltext` counts the records by full-text status."""

    records: int
    chunks: int
    queries_total: int
    fulltext: dict[str, int]
    queries: list[SavedQueryOverview]


# --- sync_status: `corpus_sync_status` --------------------------------------------------------


class SyncJobProgress(TypedDict):
    """A running job's counts so far; `here` when it runs in this process."""

    total: int | None
    processed: int
    inserted: int
    updated: int
    skipped: int
    chunks_embedded: int
    elapsed_s: float | None
    here: bool


class SyncJobReport(TypedDict):
    """A succeeded job's final report: spec 01's `pubmed.sync_delta` answer."""

    job_id: str
    inserted: int
    updated: int
    skipped: int
    pmids_processed: int
    max_edat_seen: str | None
    warnings: list[str]


class SyncJobStatus(TypedDict):
    """The state of one sync job: `progress` while it runs, `report` once it succeeded,
    `error` once it failed or was interrupted."""

    job_id: str
    query_key: str
    status: Literal["queued", "running", "succeeded", "failed", "interrupted"]
    started_at: str | None
    finished_at: str | None
    progress: SyncJobProgress | None
    report: SyncJobReport | None
    error: str | None


# --- project collections (spec 02) ------------------------------------------------------------


class ProjectEntry(TypedDict):
    """One project: its collection, embedding model and whether it keeps a keyword index."""

    id: str
    collection: str
    embed_model: str
    hybrid_enabled: bool


class ProjectList(TypedDict):
    """The `list_projects` answer."""

    projects: list[ProjectEntry]
    warnings: list[str]


class ChunksStored(TypedDict):
    """The `store_chunks` answer."""

    chunks_written: int
    project: str
    embed_model: str
    warnings: list[str]


class FoundChunk(TypedDict):
    """One citation-ready result; `full_text` is None unless asked for."""

    id: str
    render_text: str
    score: float
    citekey: str | None
    section: str | None
    page_span: list[int] | None
    section_path: list[str] | None
    doi: str | None
    url: str | None
    full_text: str | None


class FoundChunks(TypedDict):
    """The `find_chunks` answer; a hybrid search (`query_hybrid`) adds `hybrid_enabled`."""

    items: list[FoundChunk]
    count: int
    hybrid_enabled: NotRequired[bool]


class CollectionIndexes(TypedDict):
    """The payload keys a project's collection indexes, by kind of index."""

    keyword: list[str]
    fulltext: list[str]


class CollectionInspection(TypedDict):
    """The `inspect_collection` answer: each `sample` is a stored payload with its `id`."""

    project: str
    collection: str
    size: int
    embed_model: str
    hybrid_enabled: bool
    payload_keys: list[str]
    indexes: CollectionIndexes
    sample: list[dict[str, Any]]
