"""The vector index of one embedded collection: faiss HNSW, derived from the rows.

Vectors live in *slots* (faiss ids, in insertion order) of an `IndexHNSWFlat` with the
inner-product metric (vectors are unit length, so inner product = cosine). The flat storage
of that index doubles as the matrix for exact search, so each vector is held once in memory.
HNSW cannot delete: a deleted or re-embedded row leaves a dead slot, excluded from every
search by an `IDSelectorBitmap`; when dead slots pass a quarter of all slots the index is
rebuilt from the live ones (compaction).

Beside each slot: its row id and the filter columns (year, quality, evidence type, journal,
document) as numpy arrays, so a filter becomes a boolean mask over slots (and a bitmap for
faiss). Search is exact (a single-thread scan of the flat storage restricted to the allowed
slots) when at most `exact_max` slots are allowed, else approximate (HNSW, `efSearch` from
`AnnSettings.ef`, widened by the inverse of the filter's selectivity), falling back to exact
when the graph yields fewer hits than asked for. Similarities returned are always recomputed
from the stored float32 vectors (numpy, no BLAS threads: on two busy cores a threaded BLAS
call was far slower than a single thread; figures: benchmarks/README.md, "Decisions and their
figures").

A snapshot (`vectors-<gen>.faiss` + `vectors-<gen>.npy` slot->rid, named by `vectors.json`)
is written from time to time and at close; at open the rows written after its generation are
replayed into it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from biomcp.adapters.vectors.embedded_lexical import write_json_atomically
from biomcp.adapters.vectors.embedded_rowset import Rids, members
from biomcp.ports.vectors import SearchFilters

__all__ = ["AnnSettings", "MetaRow", "VectorIndex"]

faiss_any: Any = faiss  # its stubs omit the HNSW search parameters and swig helpers
PARALLEL_ADD_MIN = 4096
"""Graph inserts of fewer vectors than this run on one OpenMP thread. A sync's batch is a few
hundred vectors: on two cores, a threaded insert took both from the processes searching the
same folder and was no faster for itself (benchmarks/multiprocess.py; figures in
benchmarks/README.md). Builds, folds and compactions keep every thread."""
MISSING_YEAR = np.iinfo(np.int32).min
_MANIFEST = "vectors.json"
MetaRow = tuple[str, int | None, str | None, float | None, str | None]
"""(doc_id, year, evidence_type, quality_total, journal) of one row."""


class AnnSettings:
    """HNSW and search knobs. The defaults were measured (benchmarks/vectors.py, vectors
    calibrated on MiniLM embeddings of PubMed text): M = 32 and an `ef` growing with the
    collection, max(`ef_search`, min(`ef_search_max`, live / 1000)), keep recall@10 >= 0.95
    up to 1M vectors (M = 16 needed ef > 1024 for 0.94 there)."""

    def __init__(
        self,
        *,
        m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
        ef_search_max: int = 1024,
        ef_max: int = 4096,
        exact_max: int = 20_000,
        compact_min_dead: int = 10_000,
    ) -> None:
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.ef_search_max = ef_search_max
        self.ef_max = ef_max
        self.exact_max = exact_max
        self.compact_min_dead = compact_min_dead

    def ef(self, live: int, k: int, selectivity: float) -> int:
        """efSearch for `k` results among `live` vectors of which `selectivity` pass."""
        base = max(self.ef_search, min(self.ef_search_max, live // 1000), k)
        return min(math.ceil(base / selectivity), max(self.ef_max, k))


class SnapshotDamagedError(ValueError):
    """A snapshot file does not match the checksum written with it."""


def file_digest(path: Path) -> str:
    """BLAKE2b of the file's bytes (hex), read in 1 MiB blocks."""
    digest = hashlib.blake2b(digest_size=32)
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _graph_threads(count: int) -> Iterator[None]:
    """One OpenMP thread for an insert of fewer than PARALLEL_ADD_MIN vectors. OpenMP's
    thread count is per calling thread, so this leaves other threads' searches alone."""
    if count >= PARALLEL_ADD_MIN:
        yield
        return
    before = faiss_any.omp_get_max_threads()
    faiss_any.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss_any.omp_set_num_threads(before)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def verify_snapshot(root: Path, manifest: dict[str, Any]) -> None:
    """Raises SnapshotDamagedError when a snapshot file's bytes differ from the checksum
    recorded with it (a snapshot without checksums, from an older bio-mcp, is rebuilt)."""
    for part in ("index", "slots"):
        expected = manifest.get(f"{part}_blake2b")
        if not isinstance(expected, str):
            raise SnapshotDamagedError(f"the {part} file has no checksum")
        if file_digest(root / manifest[part]) != expected:
            raise SnapshotDamagedError(f"the {part} file does not match its checksum")


class VectorIndex:
    """Not thread-safe: the collection serializes calls."""

    def __init__(self, dim: int, settings: AnnSettings, *, graph: bool = True) -> None:
        self.dim = dim
        self.settings = settings
        #: False: no HNSW graph, only the flat storage, always searched exactly (an insert
        #: costs a copy instead of a graph walk).
        self.graph = graph
        self.generation = -1
        self._index = self._new_index()
        self._size = 0  # slots in use
        self.dead = 0
        self._slot_rid = np.empty(0, np.int64)
        self._alive = np.empty(0, bool)
        self._year = np.empty(0, np.int32)
        self._quality = np.empty(0, np.float32)
        self._evidence = np.empty(0, np.int32)
        self._journal = np.empty(0, np.int32)
        self._doc = np.empty(0, np.int32)
        self._rid_slot = np.full(0, -1, np.int64)
        self._codes: dict[str, dict[str, int]] = {"evidence": {}, "journal": {}, "doc": {}}

    def _new_index(self) -> Any:
        if not self.graph:
            return faiss.IndexFlatIP(self.dim)
        index = faiss.IndexHNSWFlat(self.dim, self.settings.m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = self.settings.ef_construction
        return index

    # --- size and columns ----------------------------------------------------------------

    @property
    def alive_count(self) -> int:
        return self._size - self.dead

    def _reserve(self, slots: int, max_rid: int) -> None:
        if slots > len(self._alive):
            cap = max(slots, int(len(self._alive) * 1.5), 1024)
            grow = cap - len(self._alive)
            self._slot_rid = np.concatenate([self._slot_rid, np.full(grow, -1, np.int64)])
            self._alive = np.concatenate([self._alive, np.zeros(grow, bool)])
            self._year = np.concatenate([self._year, np.full(grow, MISSING_YEAR, np.int32)])
            self._quality = np.concatenate([self._quality, np.full(grow, np.nan, np.float32)])
            for name in ("_evidence", "_journal", "_doc"):
                col = getattr(self, name)
                setattr(self, name, np.concatenate([col, np.full(grow, -1, np.int32)]))
        if max_rid >= len(self._rid_slot):
            grow = max(max_rid + 1, int(len(self._rid_slot) * 1.5), 1024) - len(self._rid_slot)
            self._rid_slot = np.concatenate([self._rid_slot, np.full(grow, -1, np.int64)])

    def _code(self, column: str, value: str | None) -> int:
        if value is None:
            return -1
        codes = self._codes[column]
        return codes.setdefault(value, len(codes))

    def set_meta(self, slots: np.ndarray, metas: Sequence[MetaRow]) -> None:
        """Write the filter columns of `slots` (one meta row each)."""
        if not len(slots):
            return
        self._year[slots] = [MISSING_YEAR if m[1] is None else m[1] for m in metas]
        self._quality[slots] = [np.nan if m[3] is None else m[3] for m in metas]
        self._evidence[slots] = [self._code("evidence", m[2]) for m in metas]
        self._journal[slots] = [
            self._code("journal", None if m[4] is None else m[4].casefold()) for m in metas
        ]
        self._doc[slots] = [self._code("doc", m[0]) for m in metas]

    def slots_of(self, rids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The live slot of each rid, -1 for none."""
        ids = np.asarray(rids, np.int64)
        out = np.full(len(ids), -1, np.int64)
        inside = ids < len(self._rid_slot)
        out[inside] = self._rid_slot[ids[inside]]
        return out

    def vectors(self) -> np.ndarray:
        """The live view of the flat storage, (slots, dim); invalid after the next add."""
        if self._size == 0:
            return np.empty((0, self.dim), np.float32)
        storage: Any = self._flat()
        flat = faiss_any.rev_swig_ptr(storage.get_xb(), self._size * self.dim)
        return np.asarray(flat).reshape(self._size, self.dim)

    # --- writes --------------------------------------------------------------------------

    def keep_unchanged(
        self, rids: Sequence[int], vectors: np.ndarray, metas: Sequence[MetaRow]
    ) -> list[int]:
        """Rows held here with the same vector keep their slot (with fresh metadata); the
        slots of the other rows die. Returns the positions of the rows that need a new slot."""
        slots = self.slots_of(rids)
        held = np.flatnonzero(slots >= 0)
        same = np.zeros(len(rids), bool)
        if len(held):
            same[held] = np.all(self.vectors()[slots[held]] == vectors[held], axis=1)
        kept = np.flatnonzero(same).tolist()
        self.revive([rids[i] for i in kept], [metas[i] for i in kept])
        self._kill(slots[(slots >= 0) & ~same])
        fresh: list[int] = np.flatnonzero(~same).tolist()
        return fresh

    def upsert(self, rids: Sequence[int], vectors: np.ndarray, metas: Sequence[MetaRow]) -> None:
        """Insert or replace rows; a row whose vector is unchanged keeps its slot."""
        if not len(rids):
            return
        self._reserve(self._size + len(rids), max(rids))
        fresh = self.keep_unchanged(rids, vectors, metas)
        if not fresh:
            return
        start = self._size
        added = np.ascontiguousarray(vectors[fresh], dtype=np.float32)
        with _graph_threads(len(added)):
            self._index.add(added)
        self._size += len(fresh)
        new_slots = np.arange(start, self._size)
        new_rids = np.asarray(rids, np.int64)[fresh]
        self._slot_rid[new_slots] = new_rids
        self._alive[new_slots] = True
        self._rid_slot[new_rids] = new_slots
        self.set_meta(new_slots, [metas[i] for i in fresh])

    def remove(self, rids: Sequence[int]) -> None:
        slots = self.slots_of(rids)
        self._kill(slots[slots >= 0])

    def _kill(self, slots: np.ndarray) -> None:
        """Mark `slots` dead and forget them as their rows' slots."""
        if not len(slots):
            return
        self.dead += int(np.count_nonzero(self._alive[slots]))
        self._alive[slots] = False
        rids = self._slot_rid[slots]
        mine = (rids >= 0) & (self._rid_slot[np.maximum(rids, 0)] == slots)
        self._rid_slot[rids[mine]] = -1

    def export_live(self) -> tuple[list[int], np.ndarray, list[MetaRow]]:
        """(rids, vectors, metadata) of every live slot, to move them to another index."""
        live = np.flatnonzero(self._alive[: self._size])
        names = {
            column: {code: value for value, code in codes.items()}
            for column, codes in self._codes.items()
        }
        metas: list[MetaRow] = [
            (
                names["doc"][int(self._doc[slot])],
                None if self._year[slot] == MISSING_YEAR else int(self._year[slot]),
                names["evidence"].get(int(self._evidence[slot])),
                None if np.isnan(self._quality[slot]) else float(self._quality[slot]),
                names["journal"].get(int(self._journal[slot])),
            )
            for slot in live.tolist()
        ]
        return self._slot_rid[live].tolist(), self.vectors()[live].copy(), metas

    def needs_compaction(self) -> bool:
        return self.dead > max(self.settings.compact_min_dead, self._size // 4)

    def compact(self) -> None:
        """Rebuild the graph from the live slots only."""
        live = np.flatnonzero(self._alive[: self._size])
        vectors = self.vectors()[live].copy()
        names = ("_slot_rid", "_year", "_quality", "_evidence", "_journal", "_doc")
        kept = {name: getattr(self, name)[live].copy() for name in names}
        self._index = self._new_index()
        if len(live):
            self._index.add(vectors)
        n = len(live)
        self._size, self.dead = n, 0
        self._alive[:] = False
        self._alive[:n] = True
        self._rid_slot[:] = -1
        for name, values in kept.items():
            column: np.ndarray = getattr(self, name)
            column[:n] = values
        self._slot_rid[n:] = -1
        self._rid_slot[self._slot_rid[:n]] = np.arange(n)

    # --- search --------------------------------------------------------------------------

    def _mask(
        self, filters: SearchFilters | None, rids: Rids = None, skip: Rids = None
    ) -> np.ndarray | None:
        """Allowed slots, or None when every live slot is allowed and none is dead."""
        n = self._size
        if rids is None and not skip and (filters is None or filters == SearchFilters()):
            return None if self.dead == 0 else self._alive[:n]
        mask = self._alive[:n].copy()
        for chosen, invert in ((rids, False), (skip, True)):
            if chosen is not None:
                mask &= members(self._slot_rid[:n], chosen) ^ invert
        if filters is None:
            return mask
        if filters.year_min is not None or filters.year_max is not None:
            year = self._year[:n]
            mask &= year != MISSING_YEAR
            if filters.year_min is not None:
                mask &= year >= filters.year_min
            if filters.year_max is not None:
                mask &= year <= filters.year_max
        if filters.min_quality is not None:
            with np.errstate(invalid="ignore"):
                mask &= self._quality[:n] >= np.float32(filters.min_quality)
        for column, values in (
            ("evidence", filters.evidence_types),
            (
                "journal",
                None if filters.journals is None else {j.casefold() for j in filters.journals},
            ),
            ("doc", filters.doc_ids),
        ):
            if values is None:
                continue
            codes = [self._codes[column][v] for v in values if v in self._codes[column]]
            mask &= np.isin(getattr(self, f"_{column}")[:n], np.asarray(codes, np.int32))
        return mask

    def search(
        self,
        query: np.ndarray,
        k: int,
        filters: SearchFilters | None,
        rids: frozenset[int] | None = None,
        skip: frozenset[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(rid, cosine) of the best `k` allowed rows (among `rids`, none of `skip`), best first."""
        if k <= 0 or self.alive_count == 0:
            return []
        mask = self._mask(filters, rids, skip)
        allowed = self.alive_count if mask is None else int(np.count_nonzero(mask))
        if allowed == 0:
            return []
        slots = np.empty(0, np.int64)
        if self.graph and allowed > self.settings.exact_max:
            slots = self._search(self._index, query, k, mask, allowed)
        if len(slots) < min(k, allowed):  # small, or the graph came up short
            slots = self._search(self._flat(), query, k, mask, allowed)
        sims = self.similarities(slots, query)
        order = np.argsort(-sims, kind="stable")
        return [(int(self._slot_rid[slots[i]]), float(sims[i])) for i in order]

    def similarities(self, slots: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Exact cosines of a few slots (einsum: no BLAS threads for a small product)."""
        rows = self.vectors()[slots]
        return np.asarray(np.einsum("ij,j->i", rows, query), dtype=np.float64)

    def _flat(self) -> Any:
        return faiss_any.downcast_index(self._index.storage) if self.graph else self._index

    def _search(
        self, index: Any, query: np.ndarray, k: int, mask: np.ndarray | None, allowed: int
    ) -> np.ndarray:
        """Slots of the best `k` allowed vectors: by the HNSW graph (`ef_search` widened by
        the inverse selectivity) or, given the flat storage, by exact single-thread scan."""
        hnsw = self.graph and index is self._index
        params: Any = faiss_any.SearchParametersHNSW() if hnsw else faiss_any.SearchParameters()
        bitmap = None
        if mask is not None:
            bitmap = np.packbits(mask, bitorder="little")
            params.sel = faiss_any.IDSelectorBitmap(self._size, faiss_any.swig_ptr(bitmap))
        if hnsw:
            params.efSearch = self.settings.ef(self.alive_count, k, allowed / self._size)
        _, ids = index.search(query.reshape(1, -1), k, params=params)
        found: np.ndarray = np.asarray(ids[0])
        return found[found >= 0]

    # --- snapshot ------------------------------------------------------------------------

    def save(self, root: Path, generation: int) -> None:
        """Write a snapshot reflecting `generation`, then drop the older ones."""
        index_path = root / f"vectors-{generation}.faiss"
        slots_path = root / f"vectors-{generation}.npy"
        faiss.write_index(self._index, str(index_path))
        slot_rid = np.where(self._alive[: self._size], self._slot_rid[: self._size], -1)
        np.save(slots_path, slot_rid)
        _fsync(index_path)
        _fsync(slots_path)
        write_json_atomically(
            root / _MANIFEST,
            {
                "generation": generation,
                "index": index_path.name,
                "slots": slots_path.name,
                "index_blake2b": file_digest(index_path),
                "slots_blake2b": file_digest(slots_path),
            },
        )
        self.generation = generation
        # Keep the previous snapshot too: another process may be loading it right now.
        older = [
            (int(m.group(1)), path)
            for path in root.glob("vectors-*")
            if (m := re.fullmatch(r"vectors-(\d+)\.(?:faiss|npy)", path.name))
            and int(m.group(1)) != generation
        ]
        previous = max((gen for gen, _ in older), default=None)
        for gen, path in older:
            if gen != previous:
                path.unlink(missing_ok=True)

    @staticmethod
    def saved_generation(root: Path) -> int:
        """The generation of the snapshot in `root` (-1: none, or unreadable)."""
        try:
            return int(json.loads((root / _MANIFEST).read_text())["generation"])
        except (OSError, ValueError, KeyError, TypeError):
            return -1

    @staticmethod
    def check(root: Path) -> str | None:
        """Why the snapshot in `root` cannot be used, or None when it matches its checksums
        (or there is none, which is not damage: it is rebuilt from the rows)."""
        manifest_path = root / _MANIFEST
        if not manifest_path.exists():
            return None
        try:
            verify_snapshot(root, json.loads(manifest_path.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    def mark_all_dead(self) -> None:
        """Every slot dead but still known by row id, as after `load`: `revive` brings back
        the rows that remain, `drop_unrevived` forgets the others."""
        self._alive[: self._size] = False
        self.dead = self._size

    @classmethod
    def load(cls, root: Path, dim: int, settings: AnnSettings) -> VectorIndex | None:
        """The last snapshot with every slot dead (the rows revive them), or None."""
        manifest_path = root / _MANIFEST
        if not manifest_path.exists():
            return None
        manifest = json.loads(manifest_path.read_text())
        verify_snapshot(root, manifest)
        index = faiss.read_index(str(root / manifest["index"]))
        slot_rid = np.load(root / manifest["slots"])
        if index.d != dim or index.ntotal != len(slot_rid):
            return None
        self = cls(dim, settings)
        self._index = index  # read_index returns the concrete type (and owns it)
        self._size = int(index.ntotal)
        max_rid = int(slot_rid.max()) if len(slot_rid) else 0
        self._reserve(self._size, max_rid)
        self._slot_rid[: self._size] = slot_rid
        self.dead = self._size
        live = np.flatnonzero(slot_rid >= 0)
        self._rid_slot[slot_rid[live]] = live
        self.generation = int(manifest["generation"])
        return self

    def revive(self, rids: Sequence[int], metas: Sequence[MetaRow]) -> np.ndarray:
        """Mark the slots of `rids` live with fresh metadata; False where a rid has none."""
        slots = self.slots_of(rids)
        found = slots >= 0
        live = slots[found]
        self.dead -= int(np.count_nonzero(~self._alive[live]))
        self._alive[live] = True
        self.set_meta(live, [m for m, ok in zip(metas, found, strict=True) if ok])
        return found

    def drop_unrevived(self) -> None:
        """After `revive`: forget the row ids of slots nobody revived."""
        self._kill(np.flatnonzero(~self._alive[: self._size]))
