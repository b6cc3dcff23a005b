"""The tuning of the embedded vector store."""

from __future__ import annotations

from biomcp.adapters.vectors.embedded_ann import AnnSettings

__all__ = ["StoreSettings"]


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
