"""The library's public surface is pinned: `biomcp.__all__`, the methods of `AsyncCorpus` and
`Corpus`, and each blocking method the twin of an async one with the same signature. A change
here is a change of the public API: make it on purpose."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, is_typeddict

import pytest

import biomcp
from biomcp.entrypoints import library
from biomcp.entrypoints.library.corpus import DEPRECATED_ALIASES

pytestmark = pytest.mark.unit

EXPORTED = [
    "AsyncCorpus",
    "CheckpointMove",
    "CheckpointState",
    "CheckpointSummary",
    "ChunksStored",
    "CollectionInspection",
    "Corpus",
    "CorpusClosedError",
    "CorpusOverview",
    "Document",
    "ExportSummary",
    "ForgetReport",
    "FoundChunks",
    "PaperHit",
    "ProjectCreated",
    "ProjectList",
    "PruneReport",
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
    "CheckpointMove",
    "CheckpointState",
    "CheckpointSummary",
    "ExportSummary",
    "ForgetReport",
    "PaperHit",
    "ProjectCreated",
    "PruneReport",
    "SearchHit",
    "SearchOutcome",
    "SyncReport",
]

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
    assert _properties(biomcp.AsyncCorpus) == ["closed", "services", "settings"]


def test_the_corpus_has_the_same_operations_blocking_plus_the_old_async_names() -> None:
    assert _methods(biomcp.Corpus) == sorted([*OPERATIONS, *OLD_NAMES])
    assert DEPRECATED_ALIASES == OLD_NAMES
    for name in OPERATIONS:
        assert not inspect.iscoroutinefunction(getattr(biomcp.Corpus, name)), name
    assert _properties(biomcp.Corpus) == ["aio", "closed", "services", "settings"]


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
