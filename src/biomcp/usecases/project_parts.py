"""Long project items stored as several vectors of one item.

An item longer than the embedder's window is split (`domain.item_parts`) into parts. Part k
of n is a chunk of its own: chunk id `k/n`, the item's id, payload and facets, and a uuid
derived from the item's; part 0 keeps the uuid of an unsplit item. A search names each item
once, by its best part; `full_text` joins the parts back into the item's text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from biomcp.domain.item_parts import part_spans
from biomcp.ports.vectors import ChunkRecord, VectorHit, VectorStore
from biomcp.usecases.project_items import item_uuid

__all__ = [
    "PlannedItem",
    "best_per_item",
    "drop_stale_parts",
    "part_count",
    "part_uuids",
    "plan_items",
    "split_item",
    "split_warning",
    "stored_part_counts",
    "whole_texts",
]

#: How many split item ids a warning names.
_NAMED = 5


def part_count(chunk_id: str) -> int:
    """How many parts the item of a stored chunk has (`k/n` gives n; an unsplit item, 1)."""
    _, _, total = chunk_id.partition("/")
    return int(total) if total.isdigit() else 1


def part_uuids(project_id: str, item_id: str, count: int) -> list[str]:
    """The uuids of an item's `count` parts, part 0 first."""
    return [item_uuid(project_id, item_id, k) for k in range(count)]


@dataclass(frozen=True, slots=True)
class PlannedItem:
    """An item's parts (one when it fits), and the embedding it came with, if any."""

    parts: list[ChunkRecord]
    given: list[float] | None

    @property
    def vector(self) -> list[float] | None:
        """The given embedding, used only for an item stored whole: it saw the whole text."""
        return self.given if len(self.parts) == 1 else None


def split_item(record: ChunkRecord, project_id: str, budget: int | None) -> list[ChunkRecord]:
    """The parts of an item (the item itself when it fits `budget` estimated tokens)."""
    spans = part_spans(record.text, budget)
    if len(spans) == 1:
        return [record]
    uuids = part_uuids(project_id, record.doc_id, len(spans))
    return [
        replace(record, uuid=uuids[k], chunk_id=f"{k}/{len(spans)}", text=record.text[a:b])
        for k, (a, b) in enumerate(spans)
    ]


def plan_items(
    records: Sequence[tuple[ChunkRecord, list[float] | None]], project_id: str, budget: int | None
) -> list[PlannedItem]:
    """Each checked item with its parts."""
    return [PlannedItem(split_item(r, project_id, budget), given) for r, given in records]


def split_warning(planned: Sequence[PlannedItem], window: int | None) -> list[str]:
    """The store's note on items stored as parts, and on given embeddings left unused."""
    split = [p.parts[0].doc_id for p in planned if len(p.parts) > 1]
    if not split:
        return []
    named = ", ".join(repr(i) for i in split[:_NAMED]) + (", ..." if len(split) > _NAMED else "")
    note = (
        f"{len(split)} item(s) longer than the embedder's {window}-token window were stored "
        f"as several searchable parts: {named}"
    )
    unused = sum(1 for p in planned if p.given is not None and len(p.parts) > 1)
    if unused:
        note += f"; the server embedded their parts, not the given embedding of {unused}"
    return [note]


async def drop_stale_parts(
    store: VectorStore,
    collection: str,
    planned: Sequence[PlannedItem],
    stored: Mapping[str, int],
) -> None:
    """Delete the parts an item had before and has no more (it is now shorter)."""
    for item in planned:
        doc_id = item.parts[0].doc_id
        if stored.get(doc_id, 0) > len(item.parts):
            keep = {part.chunk_id for part in item.parts}
            await store.delete_chunks(collection, doc_id, keep=keep)


async def stored_part_counts(
    store: VectorStore, collection: str, firsts: Iterable[ChunkRecord]
) -> dict[str, int]:
    """How many parts each item already stored has, read from its part 0 (absent: new)."""
    wanted = {record.uuid for record in firsts}
    return {hit.doc_id: part_count(hit.chunk_id) for hit in await store.hits(collection, wanted)}


def best_per_item(hits: Sequence[VectorHit]) -> list[VectorHit]:
    """Each item's first hit, in the order of `hits` (best first): an item is named once."""
    seen: set[str] = set()
    best: list[VectorHit] = []
    for hit in hits:
        if hit.doc_id not in seen:
            seen.add(hit.doc_id)
            best.append(hit)
    return best


async def whole_texts(
    store: VectorStore, collection: str, project_id: str, hits: Collection[VectorHit]
) -> dict[str, str]:
    """The whole text of each split item among `hits`, its parts joined in order."""
    split = {h.doc_id: part_count(h.chunk_id) for h in hits if part_count(h.chunk_id) > 1}
    if not split:
        return {}
    order = {
        uuid: (doc_id, k)
        for doc_id, count in split.items()
        for k, uuid in enumerate(part_uuids(project_id, doc_id, count))
    }
    parts = sorted(
        (order[hit.uuid], hit.text or "")
        for hit in await store.hits(collection, list(order))
        if hit.uuid in order
    )
    found: dict[str, list[str]] = {}
    for (doc_id, _), text in parts:
        found.setdefault(doc_id, []).append(text)
    # An item missing a part (a write under way) shows the part that matched instead.
    return {d: "".join(texts) for d, texts in found.items() if len(texts) == split[d]}
