"""The library: the corpus from plain Python (a script, a notebook or async code).

    import biomcp

    with biomcp.open_corpus(biomcp_embeddings="hashing") as corpus:
        report = corpus.sync("asthma_v1", "asthma[mh] AND randomized controlled trial[pt]")
        for hit in corpus.search("inhaled corticosteroids exacerbations", top_k=5):
            print(hit.score, hit.doc_id, hit.text)
        corpus.get(hit.doc_id)["title"]

`AsyncCorpus` has every operation as a coroutine under its plain name (`sync`, `search`,
`get`, `export`, `checkpoint`...); `Corpus` has the same methods, blocking. Both hold the same
services as the server and the CLI and run the work on a private event loop in a background
thread, so `Corpus` works inside a running event loop (Jupyter runs one), an `AsyncCorpus`
may be awaited from any loop, and `corpus.aio` mixes both on one corpus.

Failures raise the typed errors of the layers below: `biomcp.usecases.errors.NotFoundError`,
`InvalidRequestError`, and the ports' `EntrezError`, `MetadataStoreError`, `VectorStoreError`,
`EmbeddingError`. `biomcp.entrypoints.errors.classify(exc)` names spec 01's code of any of them.

`corpus.pubmed` asks PubMed itself, now, as the live MCP tools do: `search`, `fetch`,
`related`, `cite`, `fulltext`, `mesh`, `ids` and `match` (`live`).

Most calls answer frozen dataclasses with `as_payload()`; `get`, `overview`, `sync_status` and
the project calls answer the MCP tool's payload, a `dict` typed by a `TypedDict` (`payloads`).
"""

from biomcp.entrypoints.library.async_corpus import AsyncCorpus, CorpusClosedError
from biomcp.entrypoints.library.corpus import Corpus
from biomcp.entrypoints.library.live import AsyncPubMed, PubMed
from biomcp.entrypoints.library.live_results import (
    Articles,
    Citations,
    PubMedSearch,
    Relationships,
)
from biomcp.entrypoints.library.lookup_results import (
    CitationMatches,
    ConvertedIds,
    FullTexts,
    MeshLookup,
)
from biomcp.entrypoints.library.opening import open_async_corpus, open_corpus
from biomcp.entrypoints.library.payloads import (
    ChunksStored,
    CollectionInspection,
    CorpusOverview,
    Document,
    FoundChunks,
    ProjectList,
    SyncJobStatus,
)
from biomcp.entrypoints.library.results import (
    CheckpointMove,
    CheckpointState,
    CheckpointSummary,
    ForgetReport,
    ProjectCreated,
    PruneReport,
)
from biomcp.usecases.export import ExportSummary
from biomcp.usecases.paper_results import PaperHit, SearchOutcome
from biomcp.usecases.search import SearchHit
from biomcp.usecases.sync import SyncProgress, SyncReport

__all__ = [
    "Articles",
    "AsyncCorpus",
    "AsyncPubMed",
    "CheckpointMove",
    "CheckpointState",
    "CheckpointSummary",
    "ChunksStored",
    "CitationMatches",
    "Citations",
    "CollectionInspection",
    "ConvertedIds",
    "Corpus",
    "CorpusClosedError",
    "CorpusOverview",
    "Document",
    "ExportSummary",
    "ForgetReport",
    "FoundChunks",
    "FullTexts",
    "MeshLookup",
    "PaperHit",
    "ProjectCreated",
    "ProjectList",
    "PruneReport",
    "PubMed",
    "PubMedSearch",
    "Relationships",
    "SearchHit",
    "SearchOutcome",
    "SyncJobStatus",
    "SyncProgress",
    "SyncReport",
    "open_async_corpus",
    "open_corpus",
]
