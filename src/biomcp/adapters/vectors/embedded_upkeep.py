"""How an embedded collection's derived indexes are brought to its rows: the shared lexical
index replayed or rebuilt, this process's vector index revived from a snapshot and the rows.
Each function works on the parts it is given; the collection decides when (under its mutex,
and for the lexical index under the writer's turn)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from biomcp.adapters.vectors.embedded_ann import MetaRow
from biomcp.adapters.vectors.embedded_lexical import LexicalDoc, LexicalIndex
from biomcp.adapters.vectors.embedded_rows import RowStore
from biomcp.adapters.vectors.embedded_view import VectorView

__all__ = [
    "LEXICAL_COLUMNS",
    "META_COLUMNS",
    "add_vectors",
    "fresh_limit",
    "meta",
    "rebuild_lexical",
    "repair_lexical",
    "revive_from_rows",
]

META_COLUMNS = "doc_id, year, evidence_type, quality_total, journal"
LEXICAL_COLUMNS = f"rid, text, {META_COLUMNS}"


def meta(row: Sequence[Any]) -> MetaRow:
    return (row[0], row[1], row[2], row[3], row[4])


def fresh_limit(fresh_max: int, vectors: VectorView) -> int:
    """How many followed rows the fresh buffer holds before they are folded into the graph."""
    return max(fresh_max, vectors.graph.alive_count // 10)


def repair_lexical(
    rows: RowStore, lexical: LexicalIndex, reset: int, note: Callable[[str], None]
) -> None:
    """Under the writer's turn: bring the shared lexical index to the rows' generation
    (replay what it misses, or rebuild it when it cannot be replayed into); `reset` is the
    rows' reset generation, `note` says each repair."""
    lexical.refresh()
    gen = rows.generation()
    if not lexical.usable:
        if lexical.unreadable is not None:
            note(
                f"the lexical index (lexical/) cannot be opened ({lexical.unreadable}); "
                "rebuilt it from the rows"
            )
        elif rows.count():
            note("the lexical index (lexical/) is missing; rebuilt it from the rows")
        rebuild_lexical(rows, lexical, gen)
        return
    if not reset <= lexical.generation <= gen:
        note(
            f"the lexical index (lexical.json) records generation {lexical.generation}, "
            f"outside the rows' {reset} to {gen}; rebuilt it from the rows"
        )
        rebuild_lexical(rows, lexical, gen)
        return
    if lexical.generation < gen:
        if rows.pruned_through() > lexical.generation:
            note(
                f"the lexical index reflects generation {lexical.generation}, too far "
                f"behind the rows' {gen} to catch up; rebuilt it from the rows"
            )
            rebuild_lexical(rows, lexical, gen)
            return
        note(
            f"the lexical index reflects generation {lexical.generation}, the rows {gen} "
            "(a writer stopped in between); replayed the rows' changes into it"
        )
        for batch in rows.iter_rows(LEXICAL_COLUMNS, since=lexical.generation):
            lexical.delete([r[0] for r in batch])
            lexical.add(LexicalDoc(r[0], r[1], *meta(r[2:])) for r in batch)
        lexical.delete(rows.deleted_since(lexical.generation))
        lexical.commit(gen)
    if (held := lexical.num_docs()) != (count := rows.count()):
        note(f"the lexical index held {held} of {count} rows; rebuilt it from the rows")
        rebuild_lexical(rows, lexical, gen)


def rebuild_lexical(rows: RowStore, lexical: LexicalIndex, gen: int) -> None:
    """Under the writer's turn: the lexical index made anew from the rows."""
    lexical.wipe()
    for batch in rows.iter_rows(LEXICAL_COLUMNS):
        lexical.add(LexicalDoc(r[0], r[1], *meta(r[2:])) for r in batch)
    lexical.commit(gen)


def revive_from_rows(rows: RowStore, vectors: VectorView, snapshot: int, fresh_max: int) -> int:
    """Bring `vectors` (a snapshot at generation `snapshot`, or empty) to the rows: every
    row of the snapshot is revived, newer rows are added (to the fresh buffer when they
    are few, else to the graph), rows that are gone are dropped. Returns how many vectors
    the graph gained."""
    stale: list[int] = []
    if snapshot >= 0:
        for batch in rows.iter_rows(f"rid, gen, {META_COLUMNS}"):
            old = [row for row in batch if row[1] <= snapshot]
            stale.extend(row[0] for row in batch if row[1] > snapshot)
            found = vectors.revive([r[0] for r in old], [meta(r[2:]) for r in old])
            stale.extend(r[0] for r, ok in zip(old, found, strict=True) if not ok)
        stage = len(stale) <= fresh_limit(fresh_max, vectors)
        for start in range(0, len(stale), 10_000):
            part = rows.rows_by_rid(stale[start : start + 10_000], f"rid, vector, {META_COLUMNS}")
            add_vectors(vectors, part, stage=stage)  # an unchanged vector keeps its slot
        vectors.drop_unrevived()
        return 0 if stage else len(stale)
    for batch in rows.iter_rows(f"rid, vector, {META_COLUMNS}"):
        add_vectors(vectors, batch, stage=False)
        stale.extend(r[0] for r in batch)
    vectors.drop_unrevived()
    return len(stale)


def add_vectors(vectors: VectorView, rows: Sequence[Sequence[Any]], *, stage: bool) -> None:
    """Rows (rid, vector bytes, metadata columns) into `vectors`: staged as fresh, or into the
    graph."""
    if not rows:
        return
    dim = vectors.dim
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(-1, dim)
    add = vectors.stage if stage else vectors.upsert
    add([r[0] for r in rows], matrix, [meta(r[2:]) for r in rows])
