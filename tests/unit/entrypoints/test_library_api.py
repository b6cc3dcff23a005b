"""The library's public surface is pinned: `biomcp.__all__`, the methods of `AsyncCorpus` and
`Corpus`, and each blocking method the twin of an async one with the same signature. A change
here is a change of the public API: make it on purpose."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any, is_typeddict

import pytest

import biomcp
from biomcp.entrypoints import library
from biomcp.entrypoints.library.corpus import DEPRECATED_ALIASES

pytestmark = pytest.mark.unit

EXPORTED = [
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

OPERATIONS = [
    "checkpoint",
    "checkpoints",
    "close",
    "create_project",
    "export",
    "find_chunks",
    "forget_query",
    "get",
    "inspect_collection",
    "list_projects",
    "overview",
    "prune_records",
    "search",
    "set_checkpoint",
    "store_chunks",
    "sync",
    "sync_status",
]

OLD_NAMES = {
    "acheckpoint": "checkpoint",
    "aclose": "close",
    "aget": "get",
    "aset_checkpoint": "set_checkpoint",
    "astore_chunks": "store_chunks",
    "async_status": "sync_status",
    "asearch": "search",
    "sync_async": "sync",
}

RESULTS = [
    "Articles",
    "CheckpointMove",
    "CheckpointState",
    "CheckpointSummary",
    "CitationMatches",
    "Citations",
    "ConvertedIds",
    "ExportSummary",
    "ForgetReport",
    "FullTexts",
    "MeshLookup",
    "PaperHit",
    "ProjectCreated",
    "PruneReport",
    "PubMedSearch",
    "Relationships",
    "SearchHit",
    "SearchOutcome",
    "SyncReport",
]

#: `corpus.pubmed`'s calls: the live tools, by the library's name.
LIVE = ["cite", "fetch", "fulltext", "ids", "match", "mesh", "related", "search"]
#: The tools' arguments the library spells differently (snake_case), by method.
TOOL_ARGUMENTS = {
    "search": [
        "queryTerm",
        "maxResults",
        "sortBy",
        "dateRange",
        "filterByPublicationTypes",
        "fetchBriefSummaries",
        "offset",
        "cursor",
    ],
    "fetch": ["pmids", "detailLevel", "includeMeshTerms", "includeGrantInfo"],
    "related": ["sourcePmid", "relationshipType", "maxRelatedResults", "citationStyles"],
    "cite": ["pmids", "citationStyles"],
    "fulltext": [
        "ids",
        "sections",
        "maxChars",
        "maxSectionChars",
        "outline",
        "includeReferences",
    ],
    "mesh": ["term", "maxResults"],
    "ids": ["ids"],
    "match": ["references"],
}

#: The calls that answer the MCP tool's payload, and the `TypedDict` each one is annotated with.
PAYLOADS = {
    "find_chunks": "FoundChunks",
    "get": "Document",
    "inspect_collection": "CollectionInspection",
    "list_projects": "ProjectList",
    "overview": "CorpusOverview",
    "store_chunks": "ChunksStored",
    "sync_status": "SyncJobStatus",
}


def _methods(cls: type) -> list[str]:
    return sorted(
        name
        for name, member in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(member)
    )


def _properties(cls: type) -> list[str]:
    return sorted(name for name, member in vars(cls).items() if isinstance(member, property))


def test_the_package_exports_exactly_the_pinned_names() -> None:
    assert biomcp.__all__ == EXPORTED
    assert library.__all__ == [name for name in EXPORTED if name != "__version__"]
    for name in library.__all__:
        assert getattr(biomcp, name) is getattr(library, name)
    assert set(EXPORTED) <= set(dir(biomcp))


def test_the_async_corpus_has_every_operation_as_a_coroutine() -> None:
    assert _methods(biomcp.AsyncCorpus) == OPERATIONS
    for name in OPERATIONS:
        assert inspect.iscoroutinefunction(getattr(biomcp.AsyncCorpus, name)), name
    assert _properties(biomcp.AsyncCorpus) == ["closed", "pubmed", "services", "settings"]


def test_the_corpus_has_the_same_operations_blocking_plus_the_old_async_names() -> None:
    assert _methods(biomcp.Corpus) == sorted([*OPERATIONS, *OLD_NAMES])
    assert DEPRECATED_ALIASES == OLD_NAMES
    for name in OPERATIONS:
        assert not inspect.iscoroutinefunction(getattr(biomcp.Corpus, name)), name
    assert _properties(biomcp.Corpus) == ["aio", "closed", "pubmed", "services", "settings"]


@pytest.mark.parametrize("name", OPERATIONS)
def test_each_blocking_method_has_the_signature_and_docs_of_its_async_twin(name: str) -> None:
    blocking, awaited = getattr(biomcp.Corpus, name), getattr(biomcp.AsyncCorpus, name)
    assert inspect.signature(blocking) == inspect.signature(awaited)
    assert inspect.getdoc(blocking) == inspect.getdoc(awaited)
    assert inspect.getdoc(blocking)


@pytest.mark.parametrize(("old", "new"), sorted(OLD_NAMES.items()))
def test_each_old_async_name_is_a_coroutine_with_the_new_signature(old: str, new: str) -> None:
    alias = getattr(biomcp.Corpus, old)
    assert inspect.iscoroutinefunction(alias)
    assert inspect.signature(alias) == inspect.signature(getattr(biomcp.AsyncCorpus, new))
    assert f"aio.{new}" in (alias.__doc__ or "")


@pytest.mark.parametrize("name", RESULTS)
def test_every_result_is_a_frozen_dataclass_with_a_payload(name: str) -> None:
    result: Any = getattr(biomcp, name)
    assert dataclasses.fields(result)  # raises TypeError for a class that is no dataclass
    assert result.__dataclass_params__.frozen
    assert callable(result.as_payload)


@pytest.mark.parametrize(("method", "name"), sorted(PAYLOADS.items()))
def test_every_dict_answer_is_annotated_with_its_typed_dict(method: str, name: str) -> None:
    assert is_typeddict(getattr(biomcp, name))
    for cls in (biomcp.AsyncCorpus, biomcp.Corpus):
        assert inspect.signature(getattr(cls, method)).return_annotation == name


def test_an_optional_key_of_a_typed_dict_is_not_required() -> None:
    assert biomcp.FoundChunks.__optional_keys__ == {"hybrid_enabled"}
    assert biomcp.FoundChunks.__required_keys__ == {"items", "count"}


def test_the_live_pubmed_has_every_tool_as_a_method_both_ways() -> None:
    assert _methods(biomcp.AsyncPubMed) == LIVE
    assert _methods(biomcp.PubMed) == LIVE
    for name in LIVE:
        assert inspect.iscoroutinefunction(getattr(biomcp.AsyncPubMed, name)), name
        blocking, awaited = getattr(biomcp.PubMed, name), getattr(biomcp.AsyncPubMed, name)
        assert not inspect.iscoroutinefunction(blocking), name
        assert inspect.signature(blocking) == inspect.signature(awaited)
        assert inspect.getdoc(blocking) == inspect.getdoc(awaited)


@pytest.mark.parametrize(("method", "arguments"), sorted(TOOL_ARGUMENTS.items()))
def test_the_live_methods_take_the_tools_arguments_in_snake_case(
    method: str, arguments: list[str]
) -> None:
    snake = [re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), a) for a in arguments]
    parameters = list(inspect.signature(getattr(biomcp.AsyncPubMed, method)).parameters)
    assert parameters == ["self", *snake]


def test_the_live_defaults_are_the_tools_defaults() -> None:
    from biomcp.entrypoints.mcp.tools.citations import CITATION_INPUT
    from biomcp.entrypoints.mcp.tools.fulltext import FULLTEXT_INPUT
    from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_INPUTS
    from biomcp.entrypoints.mcp.tools.mesh import MESH_INPUT

    def defaults(method: str) -> dict[str, Any]:
        found = inspect.signature(getattr(biomcp.AsyncPubMed, method)).parameters.values()
        return {p.name: p.default for p in found if p.default is not inspect.Parameter.empty}

    def declared(schema: dict[str, Any]) -> dict[str, Any]:
        properties = schema["properties"].items()
        return {
            re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name): spec["default"]
            for name, spec in properties
            if "default" in spec
        }

    def same(value: Any) -> Any:
        return list(value) if isinstance(value, tuple) else value

    tools = {
        "search": LIVE_INPUTS["searchPubMedArticles"],
        "fetch": LIVE_INPUTS["fetchArticleDetails"],
        "related": LIVE_INPUTS["getArticleRelationships"],
        "cite": CITATION_INPUT,
        "fulltext": FULLTEXT_INPUT,
        "mesh": MESH_INPUT,
    }
    for method, schema in tools.items():
        ours = {k: same(v) for k, v in defaults(method).items()}
        assert declared(schema).items() <= ours.items(), method


def test_the_corpus_filters_are_named_as_rag_search_names_them() -> None:
    from biomcp.entrypoints.mcp.tools.corpus.schemas import TOOL_INPUTS

    tool = set(TOOL_INPUTS["rag.search"]["properties"])
    for cls in (biomcp.Corpus, biomcp.AsyncCorpus):
        ours = set(inspect.signature(cls.search).parameters) - {"self"}
        assert tool <= ours, tool - ours
        library_only = ours - tool
        assert library_only == {"journals", "doc_ids"}
