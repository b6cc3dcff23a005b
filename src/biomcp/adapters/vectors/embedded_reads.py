"""The reads of one embedded collection: each arm's candidates, hits by uuid (with exact
cosines), samples, counts. Each read takes the collection's mutex and first follows what
other processes committed."""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from biomcp.adapters.vectors.embedded_lexical import LexicalIndex
from biomcp.adapters.vectors.embedded_rows import HIT_COLUMNS, Manifest, RowStore
from biomcp.adapters.vectors.embedded_rowset import RowSet
from biomcp.adapters.vectors.embedded_view import VectorView
from biomcp.adapters.vectors.lexical_analysis import query_terms
from biomcp.adapters.vectors.sentence_blobs import best_cosines
from biomcp.ports.vectors import (
    ArmHit,
    Arms,
    ChunkRecord,
    CollectionStats,
    InvalidVectorError,
    SearchFilters,
    VectorHit,
    check_unit_vector,
)

__all__ = ["CollectionReads", "hit_of"]


class _Followed(Protocol):
    """What the reads need of the collection."""

    name: str
    mutex: threading.Lock

    @property
    def rows(self) -> RowStore: ...
    @property
    def lexical(self) -> LexicalIndex: ...
    @property
    def vectors(self) -> VectorView: ...
    @property
    def schema(self) -> Manifest: ...
    @property
    def seen(self) -> int: ...
    def follow(self) -> None: ...


_Facets = tuple[tuple[str, frozenset[str]], ...]
_Allowed = tuple[frozenset[int] | None, frozenset[int] | None]


def _query(vector: Sequence[float], dim: int) -> np.ndarray:
    try:
        return np.asarray(check_unit_vector(vector, dim), dtype=np.float32)
    except InvalidVectorError as exc:
        raise InvalidVectorError(f"query {exc}") from None


class CollectionReads:
    def __init__(self, collection: _Followed) -> None:
        self._c = collection
        #: Facet filters -> the rows they let through and skip, at generation `seen`.
        self._facet_memo: dict[tuple[int, _Facets, _Facets], _Allowed] = {}

    def existing(self, uuids: Collection[str]) -> set[str]:
        with self._c.mutex:
            return self._c.rows.existing(list(uuids))  # the rows are always current

    def fetch(self, uuids: Collection[str]) -> list[ChunkRecord]:
        with self._c.mutex:
            return self._c.rows.records(list(uuids))

    def page(self, after: str | None, limit: int) -> list[ChunkRecord]:
        with self._c.mutex:
            rows = self._c.rows
            return sorted(rows.records(rows.uuids_after(after, limit)), key=lambda r: r.uuid)

    def count(self) -> int:
        with self._c.mutex:
            return self._c.rows.count()

    def stats(self) -> CollectionStats:
        with self._c.mutex:
            return CollectionStats(
                self._c.name,
                self._c.rows.count(),
                self._c.schema.dim,
                self._c.schema.model_id,
                self._c.rows.documents(),
            )

    def index_counts(self) -> dict[str, int]:
        with self._c.mutex:
            self._c.follow()
            return {
                "rows": self._c.rows.count(),
                "lexical": self._c.lexical.num_docs(),
                "vectors": self._c.vectors.alive_count,
                "generation": self._c.rows.generation(),
                "lexical_generation": self._c.lexical.generation,
                "vectors_snapshot_generation": self._c.vectors.generation,
                "vectors_fresh": self._c.vectors.fresh_count,
            }

    def search_arms(
        self,
        text: str,
        vector: Sequence[float] | None,
        keyword_limit: int,
        vector_limit: int,
        filters: SearchFilters | None,
    ) -> Arms:
        """Each arm's candidates after filtering (`VectorStore.search_arms`)."""
        query = None if vector is None else _query(vector, self._c.schema.dim)
        if keyword_limit <= 0 and (query is None or vector_limit <= 0):
            return Arms()
        with self._c.mutex:
            self._c.follow()
            rids: frozenset[int] | None = None
            skip: frozenset[int] | None = None
            if filters is not None and (filters.facets or filters.exclude_facets):
                rids, skip = self._facet_rows(filters.facets or (), filters.exclude_facets or ())
                filters = replace(filters, facets=None, exclude_facets=None)
                if rids is not None and not rids:
                    return Arms()
            lexical: list[tuple[int, float]] = []
            if keyword_limit > 0:
                terms = query_terms(text)
                lexical = self._c.lexical.search(
                    terms, keyword_limit, filters, rids=rids, skip=skip
                )
            dense: list[tuple[int, float]] = []
            if query is not None and vector_limit > 0:
                dense = self._c.vectors.search(query, vector_limit, filters, rids=rids, skip=skip)
            uuid_of = self._c.rows.uuids_by_rid(
                sorted({r for r, _ in lexical} | {r for r, _ in dense})
            )
        return Arms(
            keyword=tuple(ArmHit(uuid_of[r], score) for r, score in lexical if r in uuid_of),
            vector=tuple(ArmHit(uuid_of[r], sim) for r, sim in dense if r in uuid_of),
        )

    def hits(self, uuids: Collection[str], vector: Sequence[float] | None) -> list[VectorHit]:
        """The chunks of `uuids` as hits, `sim` exact when `vector` is given."""
        query = None if vector is None else _query(vector, self._c.schema.dim)
        with self._c.mutex:
            self._c.follow()
            rows = self._c.rows.rows_by_uuid(list(uuids), HIT_COLUMNS)
            sims = (
                {} if query is None else self._c.vectors.similarities([r[0] for r in rows], query)
            )
        return [hit_of(row, 0.0, None, sims.get(row[0])) for row in rows]

    def sentence_scores(self, uuids: Collection[str], vector: Sequence[float]) -> dict[str, float]:
        """uuid -> the best cosine of the chunk's sentence vectors (the rows that have them)."""
        dim = self._c.schema.dim
        query = _query(vector, dim)
        with self._c.mutex:
            self._c.follow()
            rows = self._c.rows
            rid_uuid = rows.rows_by_uuid(list(uuids), "rid, uuid")
            blobs = rows.sentence_blobs([rid for rid, _ in rid_uuid])
        return best_cosines({uuid: blobs.get(rid) for rid, uuid in rid_uuid}, dim, query)

    def _facet_rows(self, facets: _Facets, exclude: _Facets) -> _Allowed:
        """The rows facet filters let through, as (allowed, skipped): `allowed` None when the
        `facets` let every row through (a project's own id in its collection), `skipped` the
        rows `exclude` drops (None: none). Remembered until the rows this process follows
        change."""
        key = (self._c.seen, facets, exclude)
        if key in self._facet_memo:
            return self._facet_memo[key]
        allowed: RowSet | None = None
        if facets:
            matched, everything = self._c.rows.rids_with_facets(facets)
            allowed = None if everything else RowSet(matched)
        skipped = RowSet(self._c.rows.rids_with_any_facet(exclude)) if exclude else None
        skipped = skipped or None
        if allowed is not None and skipped is not None:  # one set is cheaper to search with
            allowed, skipped = RowSet(allowed - skipped), None
        if len(self._facet_memo) >= 64 or any(k[0] != self._c.seen for k in self._facet_memo):
            self._facet_memo.clear()
        self._facet_memo[key] = (allowed, skipped)
        return allowed, skipped

    def sample(self, n: int) -> list[VectorHit]:
        with self._c.mutex:
            return [hit_of(row, 0.0, None, None) for row in self._c.rows.sample(n, HIT_COLUMNS)]


def hit_of(row: Sequence[Any], score: float, bm25: float | None, sim: float | None) -> VectorHit:
    (_, uuid, doc_id, chunk_id, text, section, evidence, quality, year, journal) = row[:10]
    has_numbers, metadata = row[10], row[11]
    return VectorHit(
        uuid=uuid,
        doc_id=doc_id,
        chunk_id=chunk_id,
        score=score,
        bm25=bm25,
        sim=sim,
        text=text,
        section=section,
        evidence_type=evidence,
        quality_total=quality,
        year=year,
        journal=journal,
        has_numbers=None if has_numbers is None else bool(has_numbers),
        metadata=json.loads(metadata),
    )
