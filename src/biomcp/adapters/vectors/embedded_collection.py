"""One embedded collection: the row store plus its two derived indexes, kept in step.

Write path: validate, commit the rows to SQLite (the source of truth; one transaction, one new
generation), then apply the change to the lexical index (committed at once, so it is
searchable) and to the in-memory vector index (snapshotted now and then). A crash anywhere
leaves the rows either old or new for each chunk; the next open replays into each index
whatever its recorded generation misses, and rebuilds an index that is missing, unreadable,
from before a model change, or whose document count disagrees with the rows.

Every method is synchronous and takes the collection's mutex; the store runs them in worker
threads.
"""

from __future__ import annotations

import fcntl
import json
import math
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from biomcp.adapters.vectors.embedded_ann import AnnSettings, MetaRow, VectorIndex
from biomcp.adapters.vectors.embedded_lexical import LexicalDoc, LexicalIndex, query_terms
from biomcp.adapters.vectors.embedded_rows import (
    HIT_COLUMNS,
    ChunkRow,
    Manifest,
    RowStore,
)
from biomcp.domain.fusion import ranked_fusion, relative_score_fusion
from biomcp.ports.vectors import (
    ChunkRecord,
    CollectionStats,
    Fusion,
    InvalidVectorError,
    ObjectError,
    SearchFilters,
    UpsertReport,
    VectorHit,
    VectorStoreError,
    VectorStoreUnavailableError,
)

__all__ = ["EmbeddedCollection", "StoreSettings", "check_vector"]

NORM_TOLERANCE = 1e-3
_META_COLUMNS = "doc_id, year, evidence_type, quality_total, journal"
_LEXICAL_COLUMNS = f"rid, text, {_META_COLUMNS}"


class StoreSettings:
    """Tuning of the embedded store; the defaults suit 10k to 1M chunks on a laptop."""

    def __init__(
        self,
        *,
        ann: AnnSettings | None = None,
        lexical_heap_bytes: int = 64_000_000,
        lexical_threads: int = 1,
        snapshot_min_changes: int = 50_000,
        candidates_min: int = 100,
        candidates_factor: int = 5,
    ) -> None:
        self.ann = ann or AnnSettings()
        self.lexical_heap_bytes = lexical_heap_bytes
        self.lexical_threads = lexical_threads
        self.snapshot_min_changes = snapshot_min_changes
        self.candidates_min = candidates_min
        self.candidates_factor = candidates_factor


def check_vector(vector: Any, dim: int) -> np.ndarray:
    """The vector as float32, or ValueError saying why it is not a unit vector of `dim`."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"vector is not a sequence of numbers ({exc})") from None
    if array.ndim != 1 or array.shape[0] != dim:
        raise ValueError(f"vector has shape {array.shape}, the collection holds {dim}-d vectors")
    if not np.all(np.isfinite(array)):
        raise ValueError("vector holds NaN or infinity")
    norm = math.sqrt(float(array @ array))
    if abs(norm - 1.0) > NORM_TOLERANCE:
        raise ValueError(f"vector is not unit length (norm {norm:.6f})")
    return array.astype(np.float32)


def _meta(row: Sequence[Any]) -> MetaRow:
    return (row[0], row[1], row[2], row[3], row[4])


class EmbeddedCollection:
    def __init__(self, name: str, root: Path, settings: StoreSettings) -> None:
        self.name = name
        self.root = root
        self.settings = settings
        self.mutex = threading.Lock()
        self.broken = False
        self._lock_file: Any = None
        self._rows: RowStore | None = None
        self._lexical: LexicalIndex | None = None
        self._vectors: VectorIndex | None = None
        self.manifest: Manifest | None = None
        self._unsaved = 0

    # --- open / close --------------------------------------------------------------------

    def open(self, create: tuple[str, int] | None = None) -> bool:
        """Open (creating it when `create` = (model_id, dim) is given); False if absent."""
        if create is None and not (self.root / "rows.sqlite").exists():
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        self._lock_file = (self.root / "LOCK").open("a")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock_file.close()
            self._lock_file = None
            raise VectorStoreUnavailableError(
                f"collection {self.name!r} is open in another process or store ({self.root})"
            ) from exc
        try:
            self._rows = RowStore(self.root / "rows.sqlite")
            self.manifest = self._rows.manifest()
            if self.manifest is None:
                if create is None:
                    self._close(save=False)
                    return False
                self.manifest = self._rows.create(*create)
            self._open_lexical()
            self._open_vectors()
        except BaseException:
            self._close(save=False)
            raise
        return True

    def close(self, *, save: bool = True) -> None:
        with self.mutex:
            self._close(save=save)

    def _close(self, *, save: bool) -> None:
        try:
            vectors = self._vectors
            if save and not self.broken and vectors is not None and self._rows is not None:
                generation = self._generation()
                if self._unsaved or vectors.generation != generation:
                    vectors.save(self.root, generation)
            if self._lexical is not None:
                self._lexical.close()
            if self._rows is not None:
                self._rows.close()
        finally:
            self._rows = self._lexical = self._vectors = None
            if self._lock_file is not None:
                self._lock_file.close()  # releases the flock
                self._lock_file = None

    def _generation(self) -> int:
        return self.rows.generation()

    @property
    def schema(self) -> Manifest:
        if self.manifest is None:
            raise VectorStoreUnavailableError(f"collection {self.name!r} is not open")
        return self.manifest

    @property
    def rows(self) -> RowStore:
        if self._rows is None:
            raise VectorStoreUnavailableError(f"collection {self.name!r} is closed")
        return self._rows

    @property
    def lexical(self) -> LexicalIndex:
        if self._lexical is None:
            raise VectorStoreUnavailableError(f"collection {self.name!r} is closed")
        return self._lexical

    @property
    def vectors(self) -> VectorIndex:
        if self._vectors is None:
            raise VectorStoreUnavailableError(f"collection {self.name!r} is closed")
        return self._vectors

    def _open_lexical(self) -> None:
        settings = self.settings
        lexical = LexicalIndex(
            self.root, heap_bytes=settings.lexical_heap_bytes, threads=settings.lexical_threads
        )
        self._lexical = lexical
        gen, reset = self.rows.generation(), self.schema.reset_generation
        if not reset <= lexical.generation <= gen:
            self._rebuild_lexical(gen)
            return
        if lexical.generation < gen:
            for batch in self.rows.iter_rows(_LEXICAL_COLUMNS, since=lexical.generation):
                lexical.delete([r[0] for r in batch])
                lexical.add(LexicalDoc(r[0], r[1], *_meta(r[2:])) for r in batch)
            lexical.delete(self.rows.deleted_since(lexical.generation))
            lexical.commit(gen)
        if lexical.num_docs() != self.rows.count():
            self._rebuild_lexical(gen)

    def _rebuild_lexical(self, gen: int) -> None:
        self.lexical.wipe()
        for batch in self.rows.iter_rows(_LEXICAL_COLUMNS):
            self.lexical.add(LexicalDoc(r[0], r[1], *_meta(r[2:])) for r in batch)
        self.lexical.commit(gen)

    def _open_vectors(self) -> None:
        dim, ann = self.schema.dim, self.settings.ann
        gen, reset = self.rows.generation(), self.schema.reset_generation
        try:
            vectors = VectorIndex.load(self.root, dim, ann)
        except (OSError, RuntimeError, ValueError, KeyError):
            vectors = None
        if vectors is None or not reset <= vectors.generation <= gen:
            vectors = VectorIndex(dim, ann)
        self._vectors = vectors
        snapshot = vectors.generation
        stale: list[int] = []
        if snapshot >= 0:
            for batch in self.rows.iter_rows(f"rid, gen, {_META_COLUMNS}"):
                old = [row for row in batch if row[1] <= snapshot]
                stale.extend(row[0] for row in batch if row[1] > snapshot)
                found = vectors.revive([r[0] for r in old], [_meta(r[2:]) for r in old])
                stale.extend(r[0] for r, ok in zip(old, found, strict=True) if not ok)
            for start in range(0, len(stale), 10_000):
                part = self.rows.rows_by_rid(
                    stale[start : start + 10_000], f"rid, vector, {_META_COLUMNS}"
                )
                self._add_vectors(part)
        else:
            for batch in self.rows.iter_rows(f"rid, vector, {_META_COLUMNS}"):
                self._add_vectors(batch)
                stale.extend(r[0] for r in batch)
        vectors.drop_unrevived()
        compacted = vectors.needs_compaction()
        if compacted:
            vectors.compact()
        self._unsaved = len(stale) + int(compacted)  # a compacted index no longer matches
        if self._unsaved >= self._snapshot_threshold() or (snapshot < 0 and stale):
            self._snapshot()  # a full rebuild is saved at once, a long replay too

    def _add_vectors(self, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        dim = self.vectors.dim
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(-1, dim)
        self.vectors.upsert([r[0] for r in rows], matrix, [_meta(r[2:]) for r in rows])

    def _snapshot_threshold(self) -> int:
        return max(self.settings.snapshot_min_changes, self.vectors.alive_count // 4)

    def _snapshot(self) -> None:
        self.vectors.save(self.root, self._generation())
        self._unsaved = 0

    # --- schema --------------------------------------------------------------------------

    def reset(self, model_id: str, dim: int) -> None:
        """Drop every chunk and take a new model."""
        with self.mutex:
            self.manifest = self.rows.reset(model_id, dim)
            gen = self.manifest.generation
            with self._until_indexed():
                self.lexical.wipe()
                self.lexical.commit(gen)
                self._vectors = VectorIndex(dim, self.settings.ann)
                self._snapshot()

    # --- writes --------------------------------------------------------------------------

    def upsert(self, chunks: Sequence[ChunkRecord]) -> UpsertReport:
        dim = self.schema.dim
        valid: dict[str, ChunkRow] = {}
        errors: list[ObjectError] = []
        for chunk in chunks:
            try:
                if not isinstance(chunk.uuid, str) or not chunk.uuid:
                    raise ValueError("uuid must be a non-empty string")
                vector = check_vector(chunk.vector, dim)
            except ValueError as exc:
                errors.append(ObjectError(str(chunk.uuid), str(exc)))
                continue
            valid.pop(chunk.uuid, None)  # the last occurrence of a uuid wins
            valid[chunk.uuid] = ChunkRow(chunk, vector)
        if not valid:
            return UpsertReport(0, tuple(errors))
        rows = list(valid.values())
        with self.mutex:
            gen, rids = self.rows.upsert(rows, prune_below=self.lexical.generation)
            with self._until_indexed():
                self._index_upsert(gen, rids, rows)
        return UpsertReport(len(rows), tuple(errors))

    def _index_upsert(self, gen: int, rids: Sequence[int], rows: Sequence[ChunkRow]) -> None:
        records = [r.record for r in rows]
        metas: list[MetaRow] = [
            (r.doc_id, r.year, r.evidence_type, r.quality_total, r.journal) for r in records
        ]
        self.lexical.delete(rids)
        self.lexical.add(
            LexicalDoc(rid, r.text, *meta)
            for rid, r, meta in zip(rids, records, metas, strict=True)
        )
        self.lexical.commit(gen)
        self.vectors.upsert(rids, np.stack([r.vector for r in rows]), metas)
        self._after_vector_change(len(rows))

    def delete(self, doc_id: str, keep: Collection[str]) -> int:
        with self.mutex:
            gen, rids = self.rows.delete_doc(doc_id, keep, prune_below=self.lexical.generation)
            if not rids:
                return 0
            with self._until_indexed():
                self.lexical.delete(rids)
                self.lexical.commit(gen)
                self.vectors.remove(rids)
                self._after_vector_change(len(rids))
            return len(rids)

    @contextmanager
    def _until_indexed(self) -> Iterator[None]:
        """The rows committed; a failure before the indexes follow marks the collection
        broken, and the store reopens it (which replays the change into the indexes)."""
        try:
            yield
        except BaseException:
            self.broken = True
            raise

    def _after_vector_change(self, changed: int) -> None:
        self._unsaved += changed
        if self.vectors.needs_compaction():
            self.vectors.compact()
        if self._unsaved >= self._snapshot_threshold():
            self._snapshot()

    # --- reads ---------------------------------------------------------------------------

    def existing(self, uuids: Collection[str]) -> set[str]:
        with self.mutex:
            return self.rows.existing(list(uuids))

    def count(self) -> int:
        with self.mutex:
            return self.rows.count()

    def stats(self) -> CollectionStats:
        with self.mutex:
            return CollectionStats(
                self.name,
                self.rows.count(),
                self.schema.dim,
                self.schema.model_id,
                self.rows.documents(),
            )

    def index_counts(self) -> dict[str, int]:
        with self.mutex:
            return {
                "rows": self.rows.count(),
                "lexical": self.lexical.num_docs(),
                "vectors": self.vectors.alive_count,
                "generation": self.rows.generation(),
                "lexical_generation": self.lexical.generation,
                "vectors_snapshot_generation": self.vectors.generation,
            }

    def search(
        self,
        text: str,
        vector: Sequence[float] | None,
        limit: int,
        alpha: float,
        fusion: Fusion,
        filters: SearchFilters | None,
    ) -> list[VectorHit]:
        """Hybrid search. Each arm takes max(limit * 5, 100) candidates after filtering; the
        arm whose weight is 0 (alpha = 0: vector, alpha = 1: BM25) is not run. `sim` is exact
        for every hit when a query vector is given (a BM25-only hit's cosine is computed from
        its stored vector); `bm25` is None for a hit the BM25 arm did not return."""
        if not 0.0 <= alpha <= 1.0 or math.isnan(alpha):
            raise VectorStoreError(f"alpha must be within [0, 1], got {alpha}")
        query: np.ndarray | None = None
        if vector is not None:
            try:
                query = check_vector(vector, self.schema.dim)
            except ValueError as exc:
                raise InvalidVectorError(f"query {exc}") from None
        if limit <= 0:
            return []
        k = max(limit * self.settings.candidates_factor, self.settings.candidates_min)
        weight = 0.0 if query is None else alpha
        with self.mutex:
            lexical: list[tuple[int, float]] = []
            if weight < 1.0:
                lexical = self.lexical.search(query_terms(self.lexical.analyzer, text), k, filters)
            dense = (
                self.vectors.search(query, k, filters) if query is not None and weight > 0 else []
            )
            candidates = sorted({r for r, _ in lexical} | {r for r, _ in dense})
            uuid_of = self.rows.uuids_by_rid(candidates)
            bm25 = {uuid_of[rid]: score for rid, score in lexical if rid in uuid_of}
            sims = {uuid_of[rid]: sim for rid, sim in dense if rid in uuid_of}
            fuse = relative_score_fusion if fusion is Fusion.RELATIVE_SCORE else ranked_fusion
            fused = fuse(list(sims.items()), list(bm25.items()), weight)[:limit]
            rid_of = {u: rid for rid, u in uuid_of.items()}
            top = [rid_of[u] for u, _ in fused]
            rows = {r[1]: r for r in self.rows.rows_by_rid(top, HIT_COLUMNS)}
            if query is not None:
                missing = [rid_of[u] for u, _ in fused if u not in sims]
                sims.update(self._exact_sims(query, missing, uuid_of))
        return [self._hit(rows[u], score, bm25.get(u), sims.get(u)) for u, score in fused]

    def _exact_sims(
        self, query: np.ndarray, rids: Sequence[int], uuid_of: dict[int, str]
    ) -> dict[str, float]:
        slots = self.vectors.slots_of(rids)
        known = slots >= 0
        sims = self.vectors.similarities(slots[known], query)
        found = [rid for rid, ok in zip(rids, known, strict=True) if ok]
        return {uuid_of[rid]: float(sim) for rid, sim in zip(found, sims, strict=True)}

    @staticmethod
    def _hit(row: Sequence[Any], score: float, bm25: float | None, sim: float | None) -> VectorHit:
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
