"""What the two local-model embedders (`onnx`, `hf`) share: the port's `embed` over their
synchronous `embed_sync`, run in a worker thread so the event loop keeps serving."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

__all__ = ["embed_in_worker"]


async def embed_in_worker(
    embed_sync: Callable[[Sequence[str]], list[list[float]]], texts: Sequence[str]
) -> list[list[float]]:
    """`embed_sync(texts)` in a worker thread; a bare str is refused (it is a sequence of
    characters, not of texts), and an empty input answers at once."""
    if isinstance(texts, str):
        raise TypeError("embed takes a sequence of texts, not a single str")
    if not texts:
        return []
    return await asyncio.to_thread(embed_sync, list(texts))
