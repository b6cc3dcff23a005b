"""Project collections (spec 02) through the use case, on real stores: the SQLite project
registry, the embedded vector store and the deterministic embedder. Isolation, idempotence,
limits, all-or-nothing batches, embedding checks, filters, shaping and timeouts."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biomcp.adapters.embeddings.hashing import HashingEmbedder
from biomcp.adapters.sql import SqlMetadataStore, upgrade
from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.adapters.vectors.weaviate_store import WeaviateVectorStore
from biomcp.domain.projects import COLLECTION_PREFIX, ELLIPSIS
from biomcp.ports.vectors import (
    ChunkRecord,
    ObjectError,
    UpsertReport,
    VectorStore,
    VectorStoreUnavailableError,
)
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.projects import ProjectCollections, ProjectError, ProjectLimits
from tests.support.services import postgres_url, weaviate_url
from tests.support.sql_databases import postgres_schema

pytestmark = pytest.mark.integration

DIM = 32
MODEL = "deterministic-v1"


class Rig:
    """The use case on one backend pair: SQLite + the embedded store, or PostgreSQL (a
    schema of its own) + Weaviate (its project collections dropped before and after)."""

    def __init__(self, root: Path, backend: str, **limits: Any) -> None:
        self.backend = backend
        self._schema: Any = None
        self.vectors: VectorStore
        if backend == "embedded":
            self.registry = SqlMetadataStore(f"sqlite:///{root / 'meta.sqlite3'}")
            self.vectors = EmbeddedVectorStore(root / "vectors")
        else:
            self._schema = postgres_schema(postgres_url())
            url = self._schema.__enter__()
            upgrade(url)
            self.registry = SqlMetadataStore(url)
            grpc = int(os.environ.get("BIOMCP_TEST_WEAVIATE_GRPC_PORT", "50051"))
            self.vectors = WeaviateVectorStore(weaviate_url(), grpc_port=grpc)
        self.embedder = HashingEmbedder(DIM, MODEL)
        self.tools = ProjectCollections(
            self.registry, self.vectors, self.embedder, limits=ProjectLimits(**limits)
        )

    async def drop_projects(self) -> None:
        for name in await self.vectors.collections():
            if name.startswith(COLLECTION_PREFIX):
                await self.vectors.drop_collection(name)

    async def aclose(self) -> None:
        try:
            if self.backend == "weaviate":
                await self.drop_projects()
        finally:
            await self.vectors.aclose()
            await self.registry.aclose()
            if self._schema is not None:
                self._schema.__exit__(None, None, None)


BACKENDS = ["embedded", "weaviate"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "weaviate":
        postgres_url()
        weaviate_url()
    return name


def scenario(
    tmp_path: Path, backend: str, work: Callable[[Rig], Awaitable[None]], **limits: Any
) -> None:
    async def main() -> None:
        rig = Rig(tmp_path, backend, **limits)
        try:
            if backend == "weaviate":
                await rig.drop_projects()
            await work(rig)
        finally:
            await rig.aclose()

    asyncio.run(main())


def item(item_id: str, text: str, **metadata: Any) -> dict[str, Any]:
    return {"id": item_id, "text": text, "metadata": metadata}


NOTES = [
    item(
        "n1",
        "Entities and value objects are distinct. Entities have identity over time.",
        zotero={"citekey": "evans2003", "tags": ["architecture", "ddd"]},
        doc={"section": "Entities", "page_span": [45, 46], "section_path": ["Part I", "Ch 3"]},
        doi="10.1000/xyz123",
    ),
    item(
        "n2",
        "Metformin lowers HbA1c by 1.1% versus placebo in type 2 diabetes.",
        zotero={"citekey": "smith2019", "tags": ["diabetes"]},
        url="https://example.org/smith",
    ),
    item("n3", "Use cases orchestrate the domain; adapters stay thin.", tags=["architecture"]),
]


async def errors_of(call: Awaitable[Any]) -> ProjectError:
    with pytest.raises(ProjectError) as caught:
        await call
    return caught.value


def test_projects_are_listed_created_once_and_unknown_ones_name_the_available(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        assert await rig.tools.list_projects() == {"warnings": [], "projects": []}
        made = await rig.tools.create_project("citeloom/clean-arch")
        await rig.tools.create_project("citeloom/ddd", hybrid=False)
        again = await rig.tools.create_project("citeloom/clean-arch", hybrid=False)
        assert again == made  # the stored project wins
        listed = (await rig.tools.list_projects())["projects"]
        assert [(p["id"], p["hybrid_enabled"], p["embed_model"]) for p in listed] == [
            ("citeloom/clean-arch", True, MODEL),
            ("citeloom/ddd", False, MODEL),
        ]
        assert listed[0]["collection"].startswith("Proj_citeloom_clean_arch_")
        error = await errors_of(rig.tools.find_chunks("citeloom/unknown", "x"))
        assert error.code == "INVALID_PROJECT"
        assert error.details == {
            "project_id": "citeloom/unknown",
            "available_projects": ["citeloom/clean-arch", "citeloom/ddd"],
        }

    scenario(tmp_path, backend, work)


def test_store_is_idempotent_the_last_write_wins_and_search_is_shaped(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        written = await rig.tools.store_chunks("p", NOTES)
        assert written == {
            "chunks_written": 3,
            "project": "p",
            "embed_model": MODEL,
            "warnings": [],
        }
        await rig.tools.store_chunks("p", NOTES)  # again: nothing duplicated
        assert (await rig.tools.inspect_collection("p"))["size"] == 3

        found = await rig.tools.find_chunks("p", "entities value objects identity")
        top = found["items"][0]
        assert found["count"] == len(found["items"]) == 3
        assert top["id"] == "n1"
        assert top["citekey"] == "evans2003"
        assert top["section"] == "Entities"
        assert top["page_span"] == [45, 46]
        assert top["section_path"] == ["Part I", "Ch 3"]
        assert top["doi"] == "10.1000/xyz123"
        assert top["url"] is None
        assert top["full_text"] is None
        assert all(0.0 <= i["score"] <= 1.0 for i in found["items"])
        scores = [i["score"] for i in found["items"]]
        assert scores == sorted(scores, reverse=True)

        changed = item("n2", "Metformin was withdrawn from the study arm.", tags=["diabetes"])
        await rig.tools.store_chunks("p", [changed])
        hits = await rig.tools.find_chunks("p", "metformin", filters={"doc_id": "n2"})
        assert [h["render_text"] for h in hits["items"]] == [changed["text"]]
        assert hits["items"][0]["citekey"] is None  # the whole payload was replaced

    scenario(tmp_path, backend, work)


def test_text_is_trimmed_and_full_text_only_on_request(tmp_path: Path, backend: str) -> None:
    long_text = " ".join(f"Sentence number {i} says something about outcomes." for i in range(80))

    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks("p", [item("long", long_text)])
        plain = (await rig.tools.find_chunks("p", "outcomes"))["items"][0]
        assert len(plain["render_text"]) <= 300
        assert long_text.startswith(plain["render_text"].removesuffix(ELLIPSIS))
        assert plain["full_text"] is None
        full = (await rig.tools.query_hybrid("p", "outcomes", full_text=True))["items"][0]
        assert full["full_text"] == long_text

    scenario(tmp_path, backend, work, max_chars_per_chunk=300)


def test_filters_match_tags_and_citekeys_and_unknown_filters_are_refused(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks("p", NOTES)
        tagged = await rig.tools.find_chunks("p", "domain", filters={"tags": ["architecture"]})
        assert {i["id"] for i in tagged["items"]} == {"n1", "n3"}
        both = await rig.tools.query_hybrid(
            "p", "domain", filters={"tags": ["architecture"], "citekey": "evans2003"}
        )
        assert [i["id"] for i in both["items"]] == ["n1"]
        assert both["hybrid_enabled"] is True
        none = await rig.tools.find_chunks("p", "domain", filters={"tags": ["nope"]})
        assert none == {"items": [], "count": 0}
        with pytest.raises(InvalidRequestError, match="unknown filter 'colour'"):
            await rig.tools.find_chunks("p", "domain", filters={"colour": "red"})

    scenario(tmp_path, backend, work)


def test_batches_are_bounded_and_all_or_nothing(tmp_path: Path, backend: str) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        with pytest.raises(InvalidRequestError, match="1 to 5"):
            await rig.tools.store_chunks("p", [item(f"i{n}", "text") for n in range(6)])
        with pytest.raises(InvalidRequestError, match="1 to 5"):
            await rig.tools.store_chunks("p", [])
        bad = [item("ok1", "fine"), item("ok2", "fine too"), {"id": "", "text": "no id"}]
        with pytest.raises(InvalidRequestError, match=r"items\[2\]\.id"):
            await rig.tools.store_chunks("p", bad)
        assert (await rig.tools.inspect_collection("p"))["size"] == 0  # nothing of the batch
        assert (await rig.tools.store_chunks("p", bad[:2]))["chunks_written"] == 2

    scenario(tmp_path, backend, work, max_items=5)


def test_embeddings_must_be_of_the_projects_model_both_ways(tmp_path: Path, backend: str) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        [own] = await rig.embedder.embed(["a note the agent embedded itself"])
        mine = {**item("e1", "a note the agent embedded itself", embed_model=MODEL)}
        written = await rig.tools.store_chunks("p", [{**mine, "embedding": own}])
        assert written["chunks_written"] == 1

        other_model = {**item("e2", "x", embed_model="text-embedding-3-small"), "embedding": own}
        wrong_dim = {**item("e3", "x", embed_model=MODEL), "embedding": own[:-1]}
        unnamed = {**item("e4", "x"), "embedding": own}
        for bad in (other_model, wrong_dim, unnamed):
            error = await errors_of(rig.tools.store_chunks("p", [bad]))
            assert error.code == "EMBEDDING_MISMATCH"
        assert (await rig.tools.inspect_collection("p"))["size"] == 1

    scenario(tmp_path, backend, work)


def test_hybrid_is_refused_for_a_project_without_it(tmp_path: Path, backend: str) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("vector-only", hybrid=False)
        await rig.tools.store_chunks("vector-only", NOTES)
        error = await errors_of(rig.tools.query_hybrid("vector-only", "entities"))
        assert error.code == "HYBRID_NOT_SUPPORTED"
        assert (await rig.tools.find_chunks("vector-only", "entities"))["count"] == 3
        shown = await rig.tools.inspect_collection("vector-only", sample=2)
        assert shown["indexes"]["fulltext"] == []

    scenario(tmp_path, backend, work)


def test_inspect_samples_at_most_five_payloads(tmp_path: Path, backend: str) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks(
            "p", [item(f"i{n}", f"note {n}", tags=["t"]) for n in range(8)]
        )
        shown = await rig.tools.inspect_collection("p", sample=50)
        assert shown["size"] == 8
        assert len(shown["sample"]) == 5
        assert {"project", "embed_model", "tags"} <= set(shown["payload_keys"])
        assert {"project", "tags"} <= set(shown["indexes"]["keyword"])
        assert all(s["project"] == "p" for s in shown["sample"])
        assert (await rig.tools.inspect_collection("p"))["sample"] == []

    scenario(tmp_path, backend, work)


def test_a_malformed_projects_file_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    async def work(rig: Rig) -> None:
        def broken() -> list[tuple[str, bool]]:
            raise ValueError("projects.toml: project 'x' takes only `hybrid = true|false`")

        await rig.tools.create_project("kept")
        tools = ProjectCollections(rig.registry, rig.vectors, rig.embedder, configured=broken)
        listed = await tools.list_projects()
        assert [p["id"] for p in listed["projects"]] == ["kept"]
        assert "hybrid = true|false" in listed["warnings"][0]
        assert (await tools.find_chunks("kept", "anything"))["count"] == 0

    scenario(tmp_path, "embedded", work)


def test_a_project_on_another_model_is_refused_until_migrated(tmp_path: Path, backend: str) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks("p", NOTES)
        other = ProjectCollections(
            rig.registry, rig.vectors, HashingEmbedder(DIM + 8, "other-model")
        )
        for call in (
            other.store_chunks("p", NOTES[:1]),
            other.find_chunks("p", "entities"),
            other.query_hybrid("p", "entities"),
        ):
            error = await errors_of(call)
            assert error.code == "EMBEDDING_MISMATCH"
            assert error.details["stored_model"] == MODEL  # type: ignore[index]
        assert (await rig.tools.inspect_collection("p"))["size"] == 3  # nothing touched

        moved = await other.store_chunks("p", NOTES[:1], allow_model_change=True)
        assert moved["embed_model"] == "other-model"
        shown = await other.inspect_collection("p")
        assert (shown["size"], shown["embed_model"]) == (1, "other-model")  # old chunks dropped
        assert [i["id"] for i in (await other.find_chunks("p", "entities"))["items"]] == ["n1"]
        error = await errors_of(rig.tools.find_chunks("p", "entities"))
        assert error.code == "EMBEDDING_MISMATCH"  # the first model's server now mismatches

    scenario(tmp_path, backend, work)


class PartialStore:
    """The embedded store, except that a batch of several chunks is taken only in part (its
    last chunk refused), as a server under trouble might."""

    atomic_batches = False

    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def upsert_chunks(self, collection: str, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        if len(chunks) < 2:
            return await self._inner.upsert_chunks(collection, chunks)
        report = await self._inner.upsert_chunks(collection, chunks[:-1])
        return UpsertReport(report.upserted, (ObjectError(chunks[-1].uuid, "refused"),))


def test_a_batch_the_store_takes_in_part_leaves_nothing_of_it(tmp_path: Path) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks("p", NOTES[:2])
        before = await rig.tools.find_chunks("p", "entities metformin", full_text=True)
        flaky = ProjectCollections(rig.registry, PartialStore(rig.vectors), rig.embedder)
        batch = [
            item("n1", "Entities were rewritten."),
            item("n9", "A brand new note."),
            item("n2", "Metformin was rewritten too."),
        ]
        error = await errors_of(flaky.store_chunks("p", batch))
        assert error.code == "INDEX_UNAVAILABLE"
        after = await rig.tools.find_chunks("p", "entities metformin", full_text=True)
        assert after == before  # n1 restored, n9 removed, n2 never written
        assert (await rig.tools.inspect_collection("p"))["size"] == 2

    scenario(tmp_path, "embedded", work)


class UnreadableStore:
    """The embedded store (atomic batches), except that it cannot read chunks back."""

    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def fetch_chunks(self, collection: str, uuids: Collection[str]) -> list[ChunkRecord]:
        raise VectorStoreUnavailableError("reading back is not possible")


def test_a_store_with_atomic_batches_is_not_read_back_before_a_write(tmp_path: Path) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        tools = ProjectCollections(rig.registry, UnreadableStore(rig.vectors), rig.embedder)
        assert (await tools.store_chunks("p", NOTES[:2]))["chunks_written"] == 2
        assert (await rig.tools.inspect_collection("p"))["size"] == 2

    scenario(tmp_path, "embedded", work)


class SkewedEmbedder(HashingEmbedder):
    """Embeds one text in three to a vector that is not unit length."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = await super().embed(texts)
        return [
            [2 * v for v in vector] if "skewed" in t else vector
            for t, vector in zip(texts, vectors, strict=True)
        ]


def test_a_batch_holding_a_vector_no_store_takes_writes_nothing(
    tmp_path: Path, backend: str
) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        await rig.tools.store_chunks("p", NOTES[:1])
        skewed = ProjectCollections(rig.registry, rig.vectors, SkewedEmbedder(DIM, MODEL))
        batch = [item("n7", "A fine note."), item("n8", "A skewed note.")]
        error = await errors_of(skewed.store_chunks("p", batch))
        assert error.code == "INDEX_UNAVAILABLE"
        assert (await rig.tools.inspect_collection("p"))["size"] == 1

    scenario(tmp_path, backend, work)


class SlowEmbedder(HashingEmbedder):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        await asyncio.sleep(30)
        return await super().embed(texts)


def test_a_timeout_cancels_the_work_and_writes_nothing(tmp_path: Path, backend: str) -> None:
    async def work(rig: Rig) -> None:
        await rig.tools.create_project("p")
        slow = ProjectCollections(
            rig.registry,
            rig.vectors,
            SlowEmbedder(DIM, MODEL),
            limits=ProjectLimits(store_timeout_s=0.05, find_timeout_s=0.05, hybrid_timeout_s=0.05),
        )
        for call in (
            slow.store_chunks("p", NOTES),
            slow.find_chunks("p", "entities"),
            slow.query_hybrid("p", "entities"),
        ):
            error = await errors_of(call)
            assert error.code == "TIMEOUT"
        assert (await rig.tools.inspect_collection("p"))["size"] == 0

    scenario(tmp_path, backend, work)


# --- isolation --------------------------------------------------------------------------

# Ids that look alike once punctuation or case is folded, and the same item ids and texts in
# every project: nothing may cross from one project to another.
LOOKALIKE_IDS = st.sampled_from(
    ["x-1", "x_1", "x 1", "X-1", "x/1", "x.1", "proj", "Proj", "a/b/c", "a_b_c", "ünï"]
)
STORES = st.lists(
    st.tuples(
        LOOKALIKE_IDS,
        st.sampled_from(["c1", "c2", "c3"]),
        st.sampled_from(["shared text about outcomes", "metformin trial", "notes"]),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(stores=STORES)
def test_no_call_on_one_project_sees_anothers_chunks(
    tmp_path_factory: Any, backend: str, stores: Any
) -> None:
    root = tmp_path_factory.mktemp("isolation")

    async def work(rig: Rig) -> None:
        expected: dict[str, dict[str, str]] = {}
        for project_id, chunk_id, text in stores:
            await rig.tools.create_project(project_id)
            marked = f"{text} [{project_id}]"
            await rig.tools.store_chunks(project_id, [item(chunk_id, marked, tags=[project_id])])
            expected.setdefault(project_id, {})[chunk_id] = marked
        for project_id, chunks in expected.items():
            shown = await rig.tools.inspect_collection(project_id, sample=5)
            assert shown["size"] == len(chunks)
            assert all(s["project"] == project_id for s in shown["sample"])
            for search in (rig.tools.find_chunks, rig.tools.query_hybrid):
                found = await search(project_id, "shared text outcomes metformin notes")
                assert {i["id"]: i["render_text"] for i in found["items"]} == chunks

    scenario(root, backend, work, top_k_max=20, top_k_default=20)
