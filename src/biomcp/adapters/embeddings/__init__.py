"""Adapters of the `Embedder` port (`biomcp.ports.embeddings`).

* `DeterministicEmbedder` (`.deterministic`): word-hashing test double, no model.
* `CachingEmbedder` (`.cache`): a SQLite cache in front of any embedder.
* `HfEmbedder` (`.hf`): a local sentence-transformers model (extra `hf`).
* `OpenAIEmbedder` (`.openai`): the OpenAI embeddings API.

Only the first two are imported here; the others load their heavy or optional dependencies
(torch, openai) when their module is imported.
"""

from biomcp.adapters.embeddings.cache import CachingEmbedder
from biomcp.adapters.embeddings.deterministic import DeterministicEmbedder

__all__ = ["CachingEmbedder", "DeterministicEmbedder"]
