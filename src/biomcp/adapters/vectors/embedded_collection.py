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

import logging
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from biomcp.adapters.vectors.embedded_ann import MetaRow, VectorIndex
from biomcp.adapters.vectors.embedded_lexical import LexicalDoc, LexicalIndex
from biomcp.adapters.vectors.embedded_lock import UNWRITABLE, WriterLock
from biomcp.adapters.vectors.embedded_reads import CollectionReads
from biomcp.adapters.vectors.embedded_rows import (
    ChunkRow,
    Manifest,
    RowStore,
)
from biomcp.adapters.vectors.embedded_settings import StoreSettings
from biomcp.adapters.vectors.embedded_upkeep import (
    META_COLUMNS,
    add_vectors,
    fresh_limit,
    rebuild_lexical,
    repair_lexical,
    revive_from_rows,
)
from biomcp.adapters.vectors.embedded_view import VectorView
from biomcp.adapters.vectors.sentence_blobs import encode
from biomcp.ports.vectors import (
    ChunkRecord,
    InvalidVectorError,
    ObjectError,
    StoreCheck,
    UpsertReport,
    VectorStoreUnavailableError,
    check_sentence_vectors,
    check_unit_vector,
)

__all__ = ["EmbeddedCollection"]

_log = logging.getLogger("biomcp.vectors")


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
        #: Damage repaired since the last `verify`, each said in a sentence.
        self._repaired: list[str] = []
        #: The generation of a snapshot found damaged (not loaded again).
        self._bad_snapshot: int | None = None
        self.reads = CollectionReads(self)

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

    @property
    def seen(self) -> int:
        """The rows' generation this process's vector index reflects."""
        return self._seen

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
        try:
            with self.writer.turn(wait=not self.lexical.usable) as mine, self._released_tantivy():
                if mine:
                    self._repair_lexical()
                elif self.writer.unwritable is not None:
                    self._lexical_as_it_is(self.writer.unwritable)
        except OSError as exc:
            if exc.errno not in UNWRITABLE:
                raise
            self._lexical_as_it_is(exc)

    def _lexical_as_it_is(self, exc: OSError) -> None:
        """The folder cannot be written, so the lexical index cannot be repaired: searches use
        it as it is (an older analyzer's, or behind the rows), or skip the BM25 arm."""
        lexical = self.lexical
        why = f"the folder cannot be written ({exc.strerror})"
        if lexical.usable:
            _log.warning("%s: %s; its lexical index is searched as it is", self.name, why)
        elif (other := lexical.open_as_built()) is not None:
            _log.warning(
                "%s: %s; its lexical index, built by %s, is searched as it is until a writer "
                "rebuilds it",
                self.name, why, other,
            )  # fmt: skip
        else:
            _log.warning("%s: %s; it has no lexical index, so searches use vectors only",
                         self.name, why)  # fmt: skip

    def _lexical_behind(self) -> bool:
        lexical = self.lexical
        return not lexical.usable or lexical.generation != self.rows.generation()

    def _repair_lexical(self) -> None:
        reset = self.rows_manifest().reset_generation
        repair_lexical(self.rows, self.lexical, reset, self._note_repair)

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
        added = revive_from_rows(self.rows, view, view.generation, self.settings.fresh_max)
        self._seen = gen
        self._unsaved = added + int(self.vectors.compact_if_needed())

    def _fresh_limit(self) -> int:
        return fresh_limit(self.settings.fresh_max, self.vectors)

    def follow(self) -> None:
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
                self._unsaved += revive_from_rows(
                    self.rows, self.vectors, self._seen, self.settings.fresh_max
                )
            else:
                for batch in self.rows.iter_rows(f"rid, vector, {META_COLUMNS}", since=self._seen):
                    add_vectors(self.vectors, batch, stage=True)
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
            self.follow()
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
                vector = np.asarray(check_unit_vector(chunk.vector, dim), dtype=np.float32)
                sentences = encode(check_sentence_vectors(chunk.sentence_vectors, dim))
            except (ValueError, InvalidVectorError) as exc:
                errors.append(ObjectError(str(chunk.uuid), str(exc)))
                continue
            valid.pop(chunk.uuid, None)  # the last occurrence of a uuid wins
            valid[chunk.uuid] = ChunkRow(chunk, vector, sentences)
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
            self.follow()
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
            rebuild_lexical(self.rows, self.lexical, self.rows.generation())

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
