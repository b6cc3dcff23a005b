"""Project collections (spec 02): agents store their own chunks per project and search them.

Each project has its own vector collection (its name derived from the project id, never
shared); every search also filters on the project's id, so nothing of another project can be
returned even if two collections were ever confused. A chunk is an item the agent chose: a
deterministic `id` (the same id overwrites: last write wins), its `text`, a JSON `metadata`
payload (spec 02's project, source, zotero, doc, embed_model, version...) and, optionally,
its `embedding`. Without one the server embeds the text with the project's model (agents
cannot compute embeddings); with one, it must be of the project's model and dimension.

Decisions where spec 02 is open: 1 to 500 items per call (fewer than 100 are accepted); a
batch is all-or-nothing (checked whole before anything is written, written in one store
call; a timeout can only strike before the write); `full_text` is the item's whole text,
returned only when asked for; an item longer than the embedder's window is stored as several
parts, each its own vector, and found once by its best part (`project_parts`); vector scores
are cosines (blended with the best sentence's) clamped to [0, 1], hybrid scores the
relative-score fusion of both arms (already in [0, 1]).

Sentence vectors: the server also embeds each sentence of the parts it embeds
(`project_sentences`). A search can then match an item by one sentence. Items given with their
embedding are ranked by it alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from biomcp.domain.errors import InvalidConfigError
from biomcp.domain.item_parts import part_budget
from biomcp.domain.projects import check_project_id, collection_name, trim_text, unit_score
from biomcp.ports.embeddings import Embedder
from biomcp.ports.projects import ProjectInfo, ProjectRegistry
from biomcp.ports.vectors import (
    ChunkRecord,
    CollectionNotFoundError,
    Fusion,
    ObjectError,
    SearchFilters,
    VectorHit,
    VectorStore,
    VectorStoreUnavailableError,
)
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.project_items import (
    FACET_KEYS,
    PROJECT_FACET,
    ProjectError,
    ProjectLimits,
    checked_items,
    citation,
    refused_chunks,
    strings,
    with_vector,
)
from biomcp.usecases.project_parts import (
    best_per_item,
    drop_stale_parts,
    part_count,
    part_uuids,
    plan_items,
    split_warning,
    stored_part_counts,
    whole_texts,
)
from biomcp.usecases.project_sentences import embed_sentences
from biomcp.usecases.ranking import hybrid_search

__all__ = [
    "FACET_KEYS",
    "ProjectCollections",
    "ProjectError",
    "ProjectLimits",
]

T = TypeVar("T")
_log = logging.getLogger("biomcp.projects")
_SAMPLE_MAX = 5
#: How many times a search asks for four times more hits when split items crowd its list.
_WIDENINGS = 3


class ProjectCollections:
    """The five project tools over a registry, a vector store and the server's embedder.
    `configured` gives the declared projects, (id, hybrid) pairs, registered on first use.
    `sentence_vectors` embeds the sentences of the parts the server embeds."""

    def __init__(
        self,
        registry: ProjectRegistry,
        vectors: VectorStore,
        embedder: Embedder,
        *,
        limits: ProjectLimits | None = None,
        configured: Callable[[], Sequence[tuple[str, bool]]] | None = None,
        sentence_vectors: bool = True,
    ) -> None:
        self._registry = registry
        self._sentences = sentence_vectors
        self._vectors = vectors
        self._embedder = embedder
        self.limits = limits or ProjectLimits()
        self._configured = configured
        self._config_loaded = False
        #: Why the declared projects could not be read (listed as a warning), if so.
        self._config_error: str | None = None
        self._config_lock = asyncio.Lock()

    # --- projects ----------------------------------------------------------------------

    def project_for(self, project_id: str, *, hybrid: bool = True) -> ProjectInfo:
        """A new project on this server's embedding model."""
        try:
            check_project_id(project_id)
        except ValueError as exc:
            raise InvalidRequestError(str(exc), {"project_id": project_id}) from None
        return ProjectInfo(
            project_id=project_id,
            collection=collection_name(project_id),
            model_id=self._embedder.model_id,
            dim=self._embedder.dim,
            hybrid=hybrid,
        )

    async def create_project(self, project_id: str, *, hybrid: bool = True) -> ProjectInfo:
        """Register the project (the stored one wins when it exists) and make its collection."""
        project = await self._registry.register_project(self.project_for(project_id, hybrid=hybrid))
        await self._ensure_collection(project)
        return project

    async def _load_configured(self) -> None:
        """Register the projects of the projects file once per process."""
        if self._config_loaded or self._configured is None:
            return
        async with self._config_lock:
            if self._config_loaded:
                return
            try:
                declared = self._configured()
            except ValueError as exc:  # a malformed projects file: the registry still serves
                _log.warning("the declared projects cannot be read: %s", exc)
                self._config_error = f"the declared projects cannot be read: {exc}"
                declared = []
            for project_id, hybrid in declared:
                await self._registry.register_project(self.project_for(project_id, hybrid=hybrid))
            self._config_loaded = True

    async def _projects(self) -> list[ProjectInfo]:
        await self._load_configured()
        return await self._registry.list_projects()

    async def _project(self, project_id: str) -> ProjectInfo:
        await self._load_configured()
        found = await self._registry.get_project(project_id)
        if found is None:
            available = [p.project_id for p in await self._registry.list_projects()]
            raise ProjectError(
                "INVALID_PROJECT",
                f"Project {project_id!r} not found. Available projects: {available}",
                {"project_id": project_id, "available_projects": available},
            )
        return found

    async def _ensure_collection(self, project: ProjectInfo) -> None:
        await self._vectors.ensure_schema(
            project.collection, dim=project.dim, model_id=project.model_id
        )

    async def list_projects(self) -> dict[str, Any]:
        projects = await self._bounded(self._projects(), self.limits.list_timeout_s)
        warnings = [self._config_error] if self._config_error else []
        return {
            "warnings": warnings,
            "projects": [
                {
                    "id": p.project_id,
                    "collection": p.collection,
                    "embed_model": p.model_id,
                    "hybrid_enabled": p.hybrid,
                }
                for p in projects
            ],
        }

    # --- store ---------------------------------------------------------------------------

    async def store_chunks(
        self,
        project_id: str,
        items: Sequence[Mapping[str, Any]],
        *,
        allow_model_change: bool = False,
    ) -> dict[str, Any]:
        """Store `items` all or none. A project whose vectors come from another model than
        this server's embedder is refused (EMBEDDING_MISMATCH) unless `allow_model_change`:
        then its chunks are dropped and it takes the server's model (a migration)."""
        project = await self._on_server_model(
            await self._project(project_id), migrate=allow_model_change
        )
        records = checked_items(project, items, self.limits)
        planned = plan_items(records, project.project_id, self._budget)
        missing = [p for item in planned if item.vector is None for p in item.parts]

        async def embed() -> list[list[float]]:
            return await self._embedder.embed([part.text for part in missing])

        clock = asyncio.get_running_loop().time
        started = clock()
        embedded = await self._bounded(embed(), self.limits.store_timeout_s) if missing else []
        vectors = {part.uuid: vector for part, vector in zip(missing, embedded, strict=True)}
        limit_s = self.limits.store_timeout_s
        sentences, late = (
            await embed_sentences(self._embedder, missing, limit_s - (clock() - started), limit_s)
            if self._sentences
            else ({}, [])
        )
        chunks = [
            with_vector(
                part,
                item.vector if item.vector is not None else vectors[part.uuid],
                sentences.get(part.uuid, ()),
            )
            for item in planned
            for part in item.parts
        ]
        await self._ensure_collection(project)
        refused = refused_chunks(chunks, project.dim)
        if refused:
            raise _refusal(project, refused)
        firsts = [item.parts[0] for item in planned]
        stored = await stored_part_counts(self._vectors, project.collection, firsts)
        await self._write(project, chunks, stored)
        await drop_stale_parts(self._vectors, project.collection, planned, stored)
        return {
            "chunks_written": len(planned),
            "project": project.project_id,
            "embed_model": project.model_id,
            "warnings": split_warning(planned, self._embedder.max_tokens) + late,
        }

    @property
    def _budget(self) -> int | None:
        """The estimated tokens an item (or a part of one) may hold: the embedder's window."""
        try:
            return part_budget(self._embedder.max_tokens)
        except InvalidConfigError:
            return None  # a window too small to split for: items are stored whole

    async def _write(
        self, project: ProjectInfo, chunks: Sequence[ChunkRecord], stored: Mapping[str, int]
    ) -> None:
        """Write `chunks` all or none; a store that takes a batch in part is undone."""
        # What the batch replaces (every part each item had), to put back if the store takes
        # only part of it (a store whose batches are atomic never does).
        atomic = self._vectors.atomic_batches
        uuids = {c.uuid for c in chunks}
        for doc_id, count in stored.items():
            uuids.update(part_uuids(project.project_id, doc_id, count))
        previous = [] if atomic else await self._vectors.fetch_chunks(project.collection, uuids)
        report = await self._vectors.upsert_chunks(project.collection, chunks)
        if report.errors:
            if not atomic:
                await self._take_back(project, chunks, previous)
            raise _refusal(project, report.errors)

    async def _take_back(
        self, project: ProjectInfo, chunks: Sequence[ChunkRecord], previous: list[ChunkRecord]
    ) -> None:
        """Undo a batch the store took in part: remove what it added, restore what it
        replaced."""
        held = {c.uuid for c in previous}
        for doc_id in dict.fromkeys(c.doc_id for c in chunks if c.uuid not in held):
            await self._vectors.delete_chunks(project.collection, doc_id)
        if previous:
            await self._vectors.upsert_chunks(project.collection, previous)

    async def _on_server_model(self, project: ProjectInfo, *, migrate: bool) -> ProjectInfo:
        """`project` when its vectors are of this server's embedder; else EMBEDDING_MISMATCH,
        or with `migrate` the project emptied and moved to the server's model."""
        model, dim = self._embedder.model_id, self._embedder.dim
        if (project.model_id, project.dim) == (model, dim):
            return project
        if not migrate:
            raise ProjectError(
                "EMBEDDING_MISMATCH",
                f"project {project.project_id!r} holds {project.model_id} ({project.dim}-d) "
                f"vectors; this server embeds with {model} ({dim}-d). Run the server with "
                "that model, or store with allow_model_change=true to drop the project's "
                "chunks and store them again with this model.",
                {
                    "project_id": project.project_id,
                    "stored_model": project.model_id,
                    "server_model": model,
                },
            )
        await self._vectors.ensure_schema(
            project.collection, dim=dim, model_id=model, allow_model_change=True
        )
        return await self._registry.set_project_model(project.project_id, model, dim)

    # --- search --------------------------------------------------------------------------

    async def find_chunks(
        self,
        project_id: str,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        full_text: bool = False,
    ) -> dict[str, Any]:
        project = await self._project(project_id)
        hits, whole = await self._bounded(
            self._search(project, query, top_k, filters, alpha=1.0, full_text=full_text),
            self.limits.find_timeout_s,
        )
        items = [self._item(hit, whole, full_text, hit.score) for hit in hits]
        return {"items": items, "count": len(items)}

    async def query_hybrid(
        self,
        project_id: str,
        query: str,
        *,
        top_k: int | None = None,
        filters: Mapping[str, Any] | None = None,
        full_text: bool = False,
    ) -> dict[str, Any]:
        project = await self._project(project_id)
        if not project.hybrid:
            raise ProjectError(
                "HYBRID_NOT_SUPPORTED",
                f"Hybrid search is not enabled for project {project_id!r}; use find_chunks",
                {"project_id": project_id, "hybrid_enabled": False},
            )
        hits, whole = await self._bounded(
            self._search(
                project, query, top_k, filters, alpha=self.limits.alpha, full_text=full_text
            ),
            self.limits.hybrid_timeout_s,
        )
        items = [self._item(hit, whole, full_text, hit.score) for hit in hits]
        return {"items": items, "count": len(items), "hybrid_enabled": True}

    async def _search(
        self,
        project: ProjectInfo,
        query: str,
        top_k: int | None,
        filters: Mapping[str, Any] | None,
        *,
        alpha: float,
        full_text: bool,
    ) -> tuple[list[VectorHit], dict[str, str]]:
        """The best part of each of the `top_k` best items, and with `full_text` the whole
        text of each split one. `alpha` 1 searches by vectors alone."""
        if not query.strip():
            raise InvalidRequestError("query must be non-empty text")
        project = await self._on_server_model(project, migrate=False)
        limit = self._top_k(top_k)
        wanted = self._filters(project, filters)
        [vector] = await self._embedder.embed([query])
        try:
            asked = limit
            for _ in range(_WIDENINGS + 1):
                hits = await hybrid_search(
                    self._vectors,
                    project.collection,
                    query,
                    vector,
                    limit=asked,
                    alpha=alpha,
                    fusion=Fusion.RELATIVE_SCORE,
                    filters=wanted,
                )
                best = best_per_item(hits)[:limit]
                if len(best) == limit or len(hits) < asked:
                    break
                asked *= 4  # parts of one item filled the list: make room for others
            whole = (
                await whole_texts(self._vectors, project.collection, project.project_id, best)
                if full_text
                else {}
            )
        except CollectionNotFoundError:
            return [], {}  # a project nothing was stored in yet
        except VectorStoreUnavailableError as exc:
            raise ProjectError(
                "INDEX_UNAVAILABLE",
                f"the collection of project {project.project_id!r} cannot be searched now: {exc}",
                {"project_id": project.project_id},
            ) from exc
        return best, whole

    def _top_k(self, top_k: int | None) -> int:
        limits = self.limits
        if top_k is None:
            return limits.top_k_default
        if not 1 <= top_k <= limits.top_k_max:
            raise InvalidRequestError(
                f"top_k must be within 1..{limits.top_k_max} on this server, got {top_k}",
                {"top_k": top_k, "max": limits.top_k_max},
            )
        return top_k

    @staticmethod
    def _filters(project: ProjectInfo, filters: Mapping[str, Any] | None) -> SearchFilters:
        """The project facet always, and the caller's facets (each: a string or strings)."""
        facets: list[tuple[str, frozenset[str]]] = [
            (PROJECT_FACET, frozenset({project.project_id}))
        ]
        for key, value in (filters or {}).items():
            if key not in FACET_KEYS:
                raise InvalidRequestError(
                    f"unknown filter {key!r}: filters may name {list(FACET_KEYS)}",
                    {"filter": key, "allowed": list(FACET_KEYS)},
                )
            values = strings(value)
            if not values and value not in ([], ""):
                raise InvalidRequestError(f"filter {key!r} takes a string or a list of strings")
            facets.append((key, frozenset(values)))
        return SearchFilters(facets=tuple(facets))

    def _item(
        self, hit: VectorHit, whole: Mapping[str, str], full_text: bool, score: float
    ) -> dict[str, Any]:
        """One result: the matched part's text (of a split item) or the item's, trimmed."""
        text = hit.text or ""
        shown = text.strip() if part_count(hit.chunk_id) > 1 else text
        return {
            "id": hit.doc_id,
            "render_text": trim_text(shown, self.limits.max_chars_per_chunk) if shown else "",
            "score": round(unit_score(score), 6),
            **citation(hit.metadata),
            "full_text": whole.get(hit.doc_id, text) if full_text else None,
        }

    # --- inspect -------------------------------------------------------------------------

    async def inspect_collection(self, project_id: str, sample: int = 0) -> dict[str, Any]:
        project = await self._project(project_id)
        if sample < 0:
            raise InvalidRequestError(f"sample must be 0 or more, got {sample}")
        return await self._bounded(
            self._inspect(project, min(sample, _SAMPLE_MAX)), self.limits.inspect_timeout_s
        )

    async def _inspect(self, project: ProjectInfo, sample: int) -> dict[str, Any]:
        try:
            size = await self._vectors.count(project.collection)
            shown = await self._vectors.sample(project.collection, max(sample, 20))
        except CollectionNotFoundError:
            size, shown = 0, []
        except VectorStoreUnavailableError as exc:
            raise ProjectError(
                "INDEX_UNAVAILABLE",
                f"the collection of project {project.project_id!r} cannot be read now: {exc}",
                {"project_id": project.project_id},
            ) from exc
        shown = best_per_item(shown)  # a split item's parts share one payload
        keys = sorted({key for hit in shown for key in hit.metadata})  # of up to 20 chunks
        return {
            "project": project.project_id,
            "collection": project.collection,
            "size": size,
            "embed_model": project.model_id,
            "hybrid_enabled": project.hybrid,
            "payload_keys": keys,
            "indexes": {
                "keyword": [PROJECT_FACET, *FACET_KEYS],
                "fulltext": ["text"] if project.hybrid else [],
            },
            "sample": [{"id": hit.doc_id, **hit.metadata} for hit in shown[:sample]],
        }

    # --- time bounds ---------------------------------------------------------------------

    @staticmethod
    async def _bounded(work: Awaitable[T], seconds: float) -> T:
        try:
            async with asyncio.timeout(seconds):
                return await work
        except TimeoutError:
            raise ProjectError(
                "TIMEOUT",
                f"the operation took longer than its {seconds:g} s limit and was cancelled; "
                "nothing was written",
                {"timeout_s": seconds},
            ) from None


def _refusal(project: ProjectInfo, errors: Sequence[ObjectError]) -> ProjectError:
    refused = "; ".join(f"{e.uuid}: {e.message}" for e in errors[:5])
    return ProjectError(
        "INDEX_UNAVAILABLE",
        f"the vector store refused part of the batch ({refused}); nothing of the "
        "batch was kept: retry it",
        {"project_id": project.project_id, "refused": len(errors)},
    )
