"""What one process holds of a collection's vectors: the HNSW graph plus a buffer of fresh rows.

Inserting into an HNSW graph walks it (milliseconds per vector at 50k vectors), so a reader
that replayed every row another process wrote into its own graph paid that walk on its query
path. Instead, rows this process *follows* (written by others) go to `fresh`: a flat index,
searched exactly beside the graph, where an insert is a copy. The buffer empties three ways:

* a writer saved a newer snapshot (writers save one every few thousand changes): the reader
  adopts it, which costs a file read instead of a graph walk per row;
* the buffer outgrew its bound with no newer snapshot in sight: it is folded into the graph;
* this process saves a snapshot itself (the snapshot is of the graph, so it folds first).

Rows this process writes go straight into the graph (the writer builds what it snapshots).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from biomcp.adapters.vectors.embedded_ann import AnnSettings, MetaRow, VectorIndex
from biomcp.ports.vectors import SearchFilters

__all__ = ["VectorView"]


class VectorView:
    """Not thread-safe: the collection serializes calls."""

    def __init__(self, graph: VectorIndex) -> None:
        self.graph = graph
        self.fresh = VectorIndex(graph.dim, graph.settings, graph=False)

    @classmethod
    def empty(cls, dim: int, settings: AnnSettings) -> VectorView:
        return cls(VectorIndex(dim, settings))

    @classmethod
    def load(cls, root: Path, dim: int, settings: AnnSettings) -> VectorView | None:
        """The last snapshot (every slot dead until the rows revive it), or None."""
        graph = VectorIndex.load(root, dim, settings)
        return None if graph is None else cls(graph)

    @property
    def dim(self) -> int:
        return self.graph.dim

    @property
    def generation(self) -> int:
        """The rows' generation of the snapshot the graph was loaded from or saved as."""
        return self.graph.generation

    @property
    def alive_count(self) -> int:
        return self.graph.alive_count + self.fresh.alive_count

    @property
    def fresh_count(self) -> int:
        return self.fresh.alive_count

    # --- writes --------------------------------------------------------------------------

    def upsert(self, rids: Sequence[int], vectors: np.ndarray, metas: Sequence[MetaRow]) -> None:
        """Into the graph (this process's own writes, and folds)."""
        self.fresh.remove(rids)
        self.graph.upsert(rids, vectors, metas)

    def stage(self, rids: Sequence[int], vectors: np.ndarray, metas: Sequence[MetaRow]) -> None:
        """Into the fresh buffer (rows other processes wrote); a row the graph holds with the
        same vector stays there."""
        if not len(rids):
            return
        moved = self.graph.keep_unchanged(rids, vectors, metas)
        self.fresh.remove([rids[i] for i in np.setdiff1d(np.arange(len(rids)), moved)])
        self.fresh.upsert([rids[i] for i in moved], vectors[moved], [metas[i] for i in moved])

    def remove(self, rids: Sequence[int]) -> None:
        self.graph.remove(rids)
        self.fresh.remove(rids)

    def fold(self) -> int:
        """Move the fresh rows into the graph; how many moved."""
        rids, vectors, metas = self.fresh.export_live()
        self.fresh = VectorIndex(self.dim, self.graph.settings, graph=False)
        self.graph.upsert(rids, vectors, metas)
        return len(rids)

    def compact_if_needed(self) -> bool:
        """Rebuild the graph (or the buffer) when dead slots pile up; True if the graph was."""
        if self.fresh.needs_compaction():
            self.fresh.compact()
        if self.graph.needs_compaction():
            self.graph.compact()
            return True
        return False

    def save(self, root: Path, generation: int) -> None:
        """Snapshot the graph, the fresh rows folded in first."""
        self.fold()
        self.graph.save(root, generation)

    # --- the snapshot's revival (after `load`) ---------------------------------------------

    def revive(self, rids: Sequence[int], metas: Sequence[MetaRow]) -> np.ndarray:
        return self.graph.revive(rids, metas)

    def drop_unrevived(self) -> None:
        self.graph.drop_unrevived()

    def mark_all_dead(self) -> None:
        """Every graph slot dead but known by row id (`revive` brings back the rows that
        remain); the fresh rows are forgotten (they are read again from the rows)."""
        self.graph.mark_all_dead()
        self.fresh = VectorIndex(self.dim, self.graph.settings, graph=False)

    # --- reads ---------------------------------------------------------------------------

    def search(
        self,
        query: np.ndarray,
        k: int,
        filters: SearchFilters | None,
        rids: frozenset[int] | None = None,
        skip: frozenset[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(rid, cosine similarity) of the best `k` allowed rows of both parts (among `rids`
        when given, none of `skip`), best first."""
        hits = self.graph.search(query, k, filters, rids, skip)
        if self.fresh.alive_count:
            hits += self.fresh.search(query, k, filters, rids, skip)
            hits.sort(key=lambda hit: -hit[1])
        return hits[:k]

    def similarities(self, rids: Sequence[int], query: np.ndarray) -> dict[int, float]:
        """Exact cosines of the rows of `rids` held here (rows held nowhere are left out)."""
        out: dict[int, float] = {}
        for part in (self.graph, self.fresh):
            slots = part.slots_of(rids)
            known = slots >= 0
            sims = part.similarities(slots[known], query)
            found = [rid for rid, ok in zip(rids, known, strict=True) if ok]
            out.update(zip(found, sims.tolist(), strict=True))
        return out
