"""Sentence vectors of the project parts the server embeds.

Each sentence of a part (`domain.chunking.sentence_units`) is embedded apart, so that a search
can match an item by one sentence. The sentences get what is left of the store's time limit.
When that is not enough, the parts are stored without them and the answer carries a warning:
a batch that fits the limit never fails because of its sentences.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from biomcp.domain.chunking import sentence_units
from biomcp.ports.embeddings import Embedder
from biomcp.ports.vectors import ChunkRecord

__all__ = ["embed_sentences"]


async def embed_sentences(
    embedder: Embedder, parts: Sequence[ChunkRecord], seconds: float, limit_s: float
) -> tuple[dict[str, list[list[float]]], list[str]]:
    """uuid -> the vectors of the part's sentences (a part of one sentence has none), each
    distinct sentence embedded once within `seconds`. Past them: no vectors, and a warning
    naming the store's time limit `limit_s`."""
    units = {p.uuid: sentence_units(p.text) for p in parts}
    texts = list(dict.fromkeys(t for found in units.values() for t in found))
    if not texts:
        return {}, []
    try:
        if seconds <= 0:
            raise TimeoutError
        async with asyncio.timeout(seconds):
            embedded = await embedder.embed(texts)
    except TimeoutError:
        items = len({p.doc_id for p in parts if units[p.uuid]})
        return {}, [
            f"{items} item(s) were stored without sentence vectors: embedding their sentences "
            f"would pass the {limit_s:g} s limit. Search ranks them by their whole text. Store "
            "them again in smaller batches to add the sentences."
        ]
    vector = dict(zip(texts, embedded, strict=True))
    return {uuid: [vector[t] for t in found] for uuid, found in units.items() if found}, []
