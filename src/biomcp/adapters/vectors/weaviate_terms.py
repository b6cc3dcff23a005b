"""Keyword terms derived again, in place, for a Weaviate collection indexed before them.

An older bio-mcp stored each chunk's `text` without its `terms` (or with an older analyzer's).
`derive_terms` walks the collection and patches `terms` from the stored text. Nothing is
re-embedded, and no object is re-inserted: a chunk deleted during the walk stays deleted.
A chunk whose terms are already today's is skipped, so a walk cut short resumes cheaply.
"""

from __future__ import annotations

import asyncio
from typing import Any

from weaviate.exceptions import UnexpectedStatusCodeError

from biomcp.adapters.vectors.lexical_analysis import index_terms
from biomcp.adapters.vectors.weaviate_objects import TERMS

__all__ = ["derive_terms"]

#: Chunks patched concurrently. Weaviate's CPU, not the round trips, bounds the walk.
_PATCHES = 16
#: Objects per page of the walk.
_PAGE = 5_000


async def derive_terms(handle: Any) -> int:
    """Patch the `terms` of every chunk in the collection `handle` whose stored terms differ
    from its text's; return how many were patched (a chunk deleted meanwhile is not)."""

    async def patch(uuid: Any, terms: str) -> int:
        try:
            await handle.data.update(uuid=uuid, properties={TERMS: terms})
        except UnexpectedStatusCodeError as exc:
            if exc.status_code != 404:
                raise
            return 0  # deleted since its page was read
        return 1

    async def patch_all(pending: list[tuple[Any, str]]) -> int:
        return sum(await asyncio.gather(*(patch(uuid, terms) for uuid, terms in pending)))

    patched = 0
    pending: list[tuple[Any, str]] = []
    async for obj in handle.iterator(return_properties=["text", TERMS], cache_size=_PAGE):
        terms = " ".join(index_terms(str(obj.properties.get("text") or "")))
        if obj.properties.get(TERMS) != terms:
            pending.append((obj.uuid, terms))
        if len(pending) >= _PATCHES:
            patched += await patch_all(pending)
            pending = []
    return patched + await patch_all(pending)
