"""One embedded collection: the row store plus its two derived indexes, kept in step, shared
by every process that opens the data folder.

* The rows (SQLite, WAL) are the source of truth; every write is one transaction and one new
  generation. Any number of processes read them at once.
* The lexical index (tantivy) is one index on disk for every process: written only during a
  writer's turn, read by all; a reader reloads it when its recorded generation moves on.
* The vector index (faiss) lives in each process's memory, loaded from the last snapshot and
  brought up to the rows' generation; snapshots are written during a writer's turn, every few
  thousand changes. What a process follows from other writers is held in an exact buffer
  beside its graph until it adopts a newer snapshot (see `embedded_view`).

Writers take turns through `WriterLock` (held only while writing). A turn starts by bringing
this process's indexes, and the shared lexical index, up to the rows' generation: a writer
killed between committing its rows and its lexical change is repaired by the next turn. A
reader checks the rows' generation before each query (one indexed read) and follows what other
processes committed: new and changed rows from the rows themselves, deletions from the
tombstones (or, when those were pruned past what it saw, by re-reading the rows). An index that
is missing, unreadable, from before a model change or whose count disagrees with the rows is
rebuilt from the rows.

Every method is synchronous and takes the collection's mutex; the store runs them in worker
threads.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from biomcp.adapters.vectors.embedded_ann import AnnSettings, MetaRow, VectorIndex
from biomcp.adapters.vectors.embedded_lexical import LexicalDoc, LexicalIndex, query_terms
from biomcp.adapters.vectors.embedded_lock import WriterLock
from biomcp.adapters.vectors.embedded_rows import (
    HIT_COLUMNS,
    ChunkRow,
    Manifest,
    RowStore,
)
from biomcp.adapters.vectors.embedded_view import VectorView
from biomcp.domain.fusion import (
    CANDIDATES_FACTOR,
    CANDIDATES_MIN,
    candidate_count,
    ranked_fusion,
    relative_score_fusion,
)
from biomcp.ports.vectors import (
    ChunkRecord,
    CollectionStats,
    Fusion,
    InvalidVectorError,
    ObjectError,
    SearchFilters,
    StoreCheck,
    UpsertReport,
    VectorHit,
    VectorStoreError,
    VectorStoreUnavailableError,
)

__all__ = ["EmbeddedCollection", "StoreSettings", "check_vector"]

_log = logging.getLogger("biomcp.vectors")

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
        snapshot_min_changes: int = 5_000,
        fresh_max: int = 10_000,
        candidates_min: int = CANDIDATES_MIN,
        candidates_factor: int = CANDIDATES_FACTOR,
        write_wait_s: float = 30.0,
    ) -> None:
        self.ann = ann or AnnSettings()
        #: How long a writer waits for another process's turn before `VectorStoreBusyError`.
        self.write_wait_s = write_wait_s
        self.lexical_heap_bytes = lexical_heap_bytes
        self.lexical_threads = lexical_threads
        #: A writer saves a snapshot after max(this, live vectors / 20) changes.
        self.snapshot_min_changes = snapshot_min_changes
        #: A reader folds the rows it follows into its graph past max(this, live / 10) of
        #: them (it adopts a writer's newer snapshot before that, when there is one).
        self.fresh_max = fresh_max
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
        self.writer = WriterLock(root / "LOCK", name, wait_s=settings.write_wait_s)
        self._rows: RowStore | None = None
        self._lexical: LexicalIndex | None = None
        self._vectors: VectorView | None = None
        self.manifest: Manifest | None = None
        self._unsaved = 0
        #: The rows' generation this process's vector index reflects.
        self._seen = -1
        #: Whether this process wrote to the collection (it then snapshots at close).
        self._wrote = False
        #: Facet filter -> the rows it lets through (None: all), at generation `_seen`.
        self._facet_memo: dict[
            tuple[int, tuple[tuple[str, frozenset[str]], ...]], frozenset[int] | None
        ] = {}
        #: Damage repaired since the last `verify`, each said in a sentence.
        self._repaired: list[str] = []
        #: The generation of a snapshot found damaged (not loaded again).
        self._bad_snapshot: int | None = None

    # --- open / close --------------------------------------------------------------------

    def open(self, create: tuple[str, int] | None = None) -> bool:
        """Open (creating it when `create` = (model_id, dim) is given); False if absent."""
        if create is None and not (self.root / "rows.sqlite").exists():
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._rows = RowStore(self.root / "rows.sqlite")
            self.manifest = self._rows.manifest()
            if self.manifest is None:
                if create is None:
                    self._close(save=False)
                    return False
                with self.writer.turn():
                    self.manifest = self._rows.manifest() or self._rows.create(*create)
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
            if (
                save
                and not self.broken
                and vectors is not None
                and self._rows is not None
                and self._snapshot_due_at_close()
            ):
                with self.writer.turn(wait=False) as mine:  # a busy writer will snapshot
                    if mine and self._generation() == self._seen:
                        vectors.save(self.root, self._seen)
            if self._lexical is not None:
                self._lexical.close()
            if self._rows is not None:
                self._rows.close()
        finally:
            self._rows = self._lexical = self._vectors = None
            self.writer.release()

    def _generation(self) -> int:
        return self.rows.generation()

    def _note_repair(self, what: str) -> None:
        """Log damage this process repaired, and keep it for the next `verify`."""
        message = f"collection {self.name!r}: {what}"
        _log.warning("%s", message)
        self._repaired.append(message)

    def replaced(self) -> bool:
        """True when the rows file this collection has open is no longer the one on disk (the
        collection was dropped or rebuilt by another process): the store then reopens it."""
        rows = self._rows
        if rows is None:
            return False
        try:
            return (self.root / "rows.sqlite").stat().st_ino != rows.inode
        except OSError:
            return True

    def _snapshot_due_at_close(self) -> bool:
        """A process that wrote leaves a snapshot of what it holds; one that only read (a CLI
        search, a notebook) leaves it to the writers unless it replayed a lot."""
        vectors = self.vectors
        behind = self._unsaved > 0 or vectors.generation != self._seen
        return behind and (self._wrote or self._unsaved >= self._snapshot_threshold())

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
    def vectors(self) -> VectorView:
        if self._vectors is None:
            raise VectorStoreUnavailableError(f"collection {self.name!r} is closed")
        return self._vectors

    # --- the lexical index (shared on disk) ----------------------------------------------

    def _open_lexical(self) -> None:
        settings = self.settings
        self._lexical = LexicalIndex(
            self.root, heap_bytes=settings.lexical_heap_bytes, threads=settings.lexical_threads
        )
        if not self._lexical_behind():
            return
        # Repair needs the writer's turn. A reader waits for it only when it cannot search at
        # all; otherwise a busy turn means a writer at work, which brings the index up to date.
        with self.writer.turn(wait=not self.lexical.usable) as mine, self._released_tantivy():
            if mine:
                self._repair_lexical()

    def _lexical_behind(self) -> bool:
        lexical = self.lexical
        return not lexical.usable or lexical.generation != self.rows.generation()

    def _repair_lexical(self) -> None:
        """Under the writer's turn: bring the shared lexical index to the rows' generation
        (replay what it misses, or rebuild it when it cannot be replayed into)."""
        lexical = self.lexical
        lexical.refresh()
        gen, reset = self.rows.generation(), self.rows_manifest().reset_generation
        if not lexical.usable:
            if lexical.unreadable is not None:
                self._note_repair(
                    f"the lexical index (lexical/) cannot be opened ({lexical.unreadable}); "
                    "rebuilt it from the rows"
                )
            elif self.rows.count():
                self._note_repair(
                    "the lexical index (lexical/) is missing; rebuilt it from the rows"
                )
            self._rebuild_lexical(gen)
            return
        if not reset <= lexical.generation <= gen:
            self._note_repair(
                f"the lexical index (lexical.json) records generation {lexical.generation}, "
                f"outside the rows' {reset} to {gen}; rebuilt it from the rows"
            )
            self._rebuild_lexical(gen)
            return
        if lexical.generation < gen:
            if self.rows.pruned_through() > lexical.generation:
                self._note_repair(
                    f"the lexical index reflects generation {lexical.generation}, too far "
                    f"behind the rows' {gen} to catch up; rebuilt it from the rows"
                )
                self._rebuild_lexical(gen)
                return
            self._note_repair(
                f"the lexical index reflects generation {lexical.generation}, the rows {gen} "
                "(a writer stopped in between); replayed the rows' changes into it"
            )
            for batch in self.rows.iter_rows(_LEXICAL_COLUMNS, since=lexical.generation):
                lexical.delete([r[0] for r in batch])
                lexical.add(LexicalDoc(r[0], r[1], *_meta(r[2:])) for r in batch)
            lexical.delete(self.rows.deleted_since(lexical.generation))
            lexical.commit(gen)
        if (held := lexical.num_docs()) != (rows := self.rows.count()):
            self._note_repair(
                f"the lexical index held {held} of {rows} rows; rebuilt it from the rows"
            )
            self._rebuild_lexical(gen)

    def _rebuild_lexical(self, gen: int) -> None:
        self.lexical.wipe()
        for batch in self.rows.iter_rows(_LEXICAL_COLUMNS):
            self.lexical.add(LexicalDoc(r[0], r[1], *_meta(r[2:])) for r in batch)
        self.lexical.commit(gen)

    @contextmanager
    def _released_tantivy(self) -> Iterator[None]:
        """Within a writer's turn: tantivy's own writer is let go at the end of it."""
        try:
            yield
        finally:
            if self._lexical is not None:
                self._lexical.release_writer()

    def rows_manifest(self) -> Manifest:
        manifest = self.rows.manifest()
        if manifest is None:
            raise VectorStoreUnavailableError(f"collection {self.name!r} lost its manifest")
        return manifest

    # --- the vector index (this process's memory) ------------------------------------------

    def _open_vectors(self) -> None:
        view = self._usable_snapshot()
        self._install(view or VectorView.empty(self.schema.dim, self.settings.ann))
        if self._unsaved >= self._snapshot_threshold() or (view is None and self._unsaved):
            with self.writer.turn(wait=False) as mine:  # a busy writer will snapshot instead
                if mine:  # a full rebuild is saved at once, a long replay too
                    self._snapshot()

    def _usable_snapshot(self) -> VectorView | None:
        """The last snapshot, when it loads, matches its checksums and belongs to the rows'
        present model; else None (a damaged one is noted as repaired: the vector index then
        comes from the rows, and the next snapshot replaces it)."""
        saved = VectorIndex.saved_generation(self.root)
        if saved >= 0 and saved == self._bad_snapshot:
            return None
        try:
            view = VectorView.load(self.root, self.schema.dim, self.settings.ann)
        except (OSError, RuntimeError, ValueError, KeyError) as exc:
            self._bad_snapshot = saved
            self._note_repair(
                f"the vector snapshot of generation {saved} (vectors-{saved}.faiss, "
                f"vectors-{saved}.npy) cannot be used ({type(exc).__name__}: {exc}); "
                "rebuilt the vector index from the rows"
            )
            return None
        if view is None or not self.schema.reset_generation <= view.generation:
            return None
        return view

    def _install(self, view: VectorView) -> None:
        """Bring `view` (a snapshot, or empty) to the rows and make it this process's."""
        gen = self.rows.generation()
        if view.generation > gen:  # a snapshot from rows that were replaced since
            view = VectorView.empty(self.schema.dim, self.settings.ann)
        self._vectors = view
        added = self._revive_from_rows(view, view.generation)
        self._seen = gen
        self._unsaved = added + int(self.vectors.compact_if_needed())

    def _revive_from_rows(self, vectors: VectorView, snapshot: int) -> int:
        """Bring `vectors` (a snapshot at generation `snapshot`, or empty) to the rows: every
        row of the snapshot is revived, newer rows are added (to the fresh buffer when they
        are few, else to the graph), rows that are gone are dropped. Returns how many vectors
        the graph gained."""
        stale: list[int] = []
        if snapshot >= 0:
            for batch in self.rows.iter_rows(f"rid, gen, {_META_COLUMNS}"):
                old = [row for row in batch if row[1] <= snapshot]
                stale.extend(row[0] for row in batch if row[1] > snapshot)
                found = vectors.revive([r[0] for r in old], [_meta(r[2:]) for r in old])
                stale.extend(r[0] for r, ok in zip(old, found, strict=True) if not ok)
            stage = len(stale) <= self._fresh_limit()
            for start in range(0, len(stale), 10_000):
                part = self.rows.rows_by_rid(
                    stale[start : start + 10_000], f"rid, vector, {_META_COLUMNS}"
                )
                self._add_vectors(part, stage=stage)  # an unchanged vector keeps its slot
            vectors.drop_unrevived()
            return 0 if stage else len(stale)
        for batch in self.rows.iter_rows(f"rid, vector, {_META_COLUMNS}"):
            self._add_vectors(batch, stage=False)
            stale.extend(r[0] for r in batch)
        vectors.drop_unrevived()
        return len(stale)

    def _fresh_limit(self) -> int:
        return max(self.settings.fresh_max, self.vectors.graph.alive_count // 10)

    def _follow(self) -> None:
        """Bring this process's view up to what every process committed (cheap when nothing
        changed: one read of the generation)."""
        gen = self.rows.generation()
        if gen != self._seen:
            manifest = self.rows_manifest()
            if manifest.reset_generation > self.schema.reset_generation or (
                manifest.model_id,
                manifest.dim,
            ) != (self.schema.model_id, self.schema.dim):
                self._reload(manifest)
            elif self.rows.pruned_through() > self._seen or gen < self._seen:
                self.vectors.mark_all_dead()  # revived below from the rows that remain
                self._unsaved += self._revive_from_rows(self.vectors, self._seen)
            else:
                for batch in self.rows.iter_rows(f"rid, vector, {_META_COLUMNS}", since=self._seen):
                    self._add_vectors(batch, stage=True)
                gone = self.rows.deleted_since(self._seen)
                self.vectors.remove(gone)
                self._unsaved += len(gone) + int(self.vectors.compact_if_needed())
            self._seen = gen
            if self.vectors.fresh_count:
                self._settle_fresh()
        if self.lexical.generation < gen:
            self.lexical.refresh()

    def _settle_fresh(self) -> None:
        """Empty the fresh buffer when a writer saved a newer snapshot (adopt it), or fold it
        into the graph once it outgrew its bound."""
        if VectorIndex.saved_generation(self.root) > self.vectors.generation:
            view = self._usable_snapshot()
            if view is not None and view.generation > self.vectors.generation:
                self._install(view)
                return
        if self.vectors.fresh_count > self._fresh_limit():
            self._unsaved += self.vectors.fold()
            self._unsaved += int(self.vectors.compact_if_needed())

    def _reload(self, manifest: Manifest) -> None:
        """Another process replaced the collection's model: start over from the rows."""
        self.manifest = manifest
        if self._lexical is not None:
            self._lexical.close()
        self._open_lexical()
        self._open_vectors()

    def _add_vectors(self, rows: Sequence[Sequence[Any]], *, stage: bool) -> None:
        if not rows:
            return
        dim = self.vectors.dim
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(-1, dim)
        add = self.vectors.stage if stage else self.vectors.upsert
        add([r[0] for r in rows], matrix, [_meta(r[2:]) for r in rows])

    def _snapshot_threshold(self) -> int:
        return max(self.settings.snapshot_min_changes, self.vectors.alive_count // 20)

    def _snapshot(self) -> None:
        """Under the writer's turn: save this process's vector index (at the rows' current
        generation, which it reflects)."""
        self.vectors.save(self.root, self._seen)
        self._unsaved = 0
        self._bad_snapshot = None

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """The writer's turn: this process's view and the shared lexical index are brought to
        the rows' generation first; tantivy's writer and the turn are let go at the end."""
        with self.writer.turn(), self._released_tantivy():
            self._follow()
            if self._lexical_behind():
                self._repair_lexical()
            self._wrote = True
            yield
            if self._unsaved >= self._snapshot_threshold():
                self._snapshot()

    # --- schema --------------------------------------------------------------------------

    def reset(self, model_id: str, dim: int) -> None:
        """Drop every chunk and take a new model."""
        with self.mutex, self._writing():
            self.manifest = self.rows.reset(model_id, dim)
            gen = self.manifest.generation
            with self._until_indexed():
                self.lexical.wipe()
                self.lexical.commit(gen)
                self._vectors = VectorView.empty(dim, self.settings.ann)
                self._seen = gen
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
        with self.mutex, self._writing():
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
        self._seen = gen
        self._after_vector_change(len(rows))

    def delete(self, doc_id: str, keep: Collection[str]) -> int:
        with self.mutex, self._writing():
            gen, rids = self.rows.delete_doc(doc_id, keep, prune_below=self.lexical.generation)
            return self._unindex(gen, rids)

    def delete_documents(self, doc_ids: Sequence[str]) -> int:
        """Every chunk of `doc_ids`, in one transaction and one index update."""
        if not doc_ids:
            return 0
        with self.mutex, self._writing():
            gen, rids = self.rows.delete_docs(doc_ids, prune_below=self.lexical.generation)
            return self._unindex(gen, rids)

    def _unindex(self, gen: int, rids: list[int]) -> int:
        """Under the mutex: rows `rids`, deleted as generation `gen`, leave the indexes too;
        returns how many."""
        if not rids:
            return 0
        with self._until_indexed():
            self.lexical.delete(rids)
            self.lexical.commit(gen)
            self.vectors.remove(rids)
            self._seen = gen
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
        self._unsaved += changed + int(self.vectors.compact_if_needed())

    # --- reads ---------------------------------------------------------------------------

    def existing(self, uuids: Collection[str]) -> set[str]:
        with self.mutex:
            return self.rows.existing(list(uuids))  # the rows are always current

    def fetch(self, uuids: Collection[str]) -> list[ChunkRecord]:
        with self.mutex:
            return self.rows.records(list(uuids))

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

    def verify(self) -> StoreCheck:
        """What is wrong with this collection's files, and what was repaired since the last
        call. A lexical segment file or a vector snapshot failing its checksum is rebuilt
        from the rows here when the writer's turn is free (and noted as repaired)."""
        with self.mutex:
            problems = [f"rows: {p}" for p in self.rows.quick_check()]
            rows, gen = self.rows.count(), self.rows.generation()
            lexical = self.lexical
            lexical.refresh()
            if lexical.usable and (damaged := lexical.damaged_files()):
                self._rebuild_damaged_lexical(damaged)
            if not lexical.usable:
                problems.append("the lexical index is missing or unreadable")
            elif lexical.generation != gen:
                problems.append(
                    f"the lexical index reflects generation {lexical.generation}, the rows {gen}"
                )
            elif lexical.num_docs() != rows:
                problems.append(f"the lexical index holds {lexical.num_docs()} of {rows} rows")
            self._follow()
            damage = VectorIndex.check(self.root)
            if damage is not None and not self._replace_damaged_snapshot(damage):
                problems.append(f"the vector snapshot cannot be used: {damage}")
            if self.vectors.alive_count != rows:
                problems.append(f"the vector index holds {self.vectors.alive_count} of {rows} rows")
            repaired, self._repaired = self._repaired, []
            return StoreCheck(tuple(problems), tuple(repaired))

    def _rebuild_damaged_lexical(self, damaged: list[str]) -> None:
        """Under the mutex: rebuild the lexical index whose segment files fail their
        checksums, when the writer's turn is free (else `verify` reports it as it is)."""
        with self.writer.turn(wait=False) as mine, self._released_tantivy():
            if not mine:
                return
            self._note_repair(
                f"lexical index files fail their checksums ({'; '.join(damaged)}); "
                "rebuilt the lexical index from the rows"
            )
            self._rebuild_lexical(self.rows.generation())

    def _replace_damaged_snapshot(self, damage: str) -> bool:
        """Under the mutex: save this process's vector index over a snapshot that fails its
        checksums, when the writer's turn is free; whether it was replaced."""
        with self.writer.turn(wait=False) as mine:
            if not mine or self._generation() != self._seen:
                return False
            saved = VectorIndex.saved_generation(self.root)
            self._snapshot()
            self._note_repair(
                f"the vector snapshot of generation {saved} cannot be used ({damage}); "
                f"replaced it by a snapshot of the vector index at generation {self._seen}"
            )
            return True

    def index_counts(self) -> dict[str, int]:
        with self.mutex:
            self._follow()
            return {
                "rows": self.rows.count(),
                "lexical": self.lexical.num_docs(),
                "vectors": self.vectors.alive_count,
                "generation": self.rows.generation(),
                "lexical_generation": self.lexical.generation,
                "vectors_snapshot_generation": self.vectors.generation,
                "vectors_fresh": self.vectors.fresh_count,
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
        settings = self.settings
        k = candidate_count(
            limit, factor=settings.candidates_factor, minimum=settings.candidates_min
        )
        weight = 0.0 if query is None else alpha
        with self.mutex:
            self._follow()
            rids: frozenset[int] | None = None
            if filters is not None and filters.facets:
                rids = self._facet_rows(filters.facets)
                filters = replace(filters, facets=None)
                if rids is not None and not rids:
                    return []
            lexical: list[tuple[int, float]] = []
            if weight < 1.0:
                terms = query_terms(self.lexical.analyzer, text)
                lexical = self.lexical.search(terms, k, filters, rids=rids)
            dense = (
                self.vectors.search(query, k, filters, rids=rids)
                if query is not None and weight > 0
                else []
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
                exact = self.vectors.similarities(missing, query)
                sims.update((uuid_of[rid], sim) for rid, sim in exact.items())
        return [self._hit(rows[u], score, bm25.get(u), sims.get(u)) for u, score in fused]

    def _facet_rows(self, facets: tuple[tuple[str, frozenset[str]], ...]) -> frozenset[int] | None:
        """The rows a facet filter lets through; None when it lets every row through (a
        project's own id in its collection), so the searches run unrestricted. Remembered
        until the rows this process follows change."""
        key = (self._seen, facets)
        if key in self._facet_memo:
            return self._facet_memo[key]
        matched, everything = self.rows.rids_with_facets(facets)
        found = None if everything else frozenset(matched)
        if len(self._facet_memo) >= 64 or any(k[0] != self._seen for k in self._facet_memo):
            self._facet_memo.clear()
        self._facet_memo[key] = found
        return found

    def sample(self, n: int) -> list[VectorHit]:
        with self.mutex:
            return [self._hit(row, 0.0, None, None) for row in self.rows.sample(n, HIT_COLUMNS)]

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
