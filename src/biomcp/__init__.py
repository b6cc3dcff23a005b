"""bio-mcp: trustworthy PubMed evidence for LLM agents.

As a library: `corpus = biomcp.open_corpus()`, then `corpus.sync(...)`, `corpus.search(...)`,
`corpus.get(...)`, and `corpus.pubmed.search(...)` asks PubMed live;
`biomcp.open_async_corpus()` gives the same calls as coroutines (see
`biomcp.entrypoints.library`). `import biomcp` stays light: the corpus machinery is imported on
first use of one of its names.
"""

from importlib import import_module
from typing import Any

# The one place the version is written (pyproject.toml reads it from here): asking the
# installed metadata instead imports importlib.metadata, a tenth of a second at every start.
__version__ = "0.1.0"

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
    "__version__",
    "open_async_corpus",
    "open_corpus",
]

_LAZY = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    # A dynamic import: the lower layers import `biomcp.__version__`, and a static edge from
    # here to the entry points would make each of them depend on the whole application.
    if name in _LAZY:
        value = getattr(import_module("biomcp.entrypoints.library"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'biomcp' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
