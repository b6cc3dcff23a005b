"""Adapters of the `Embedder` port (`biomcp.ports.embeddings`).

* `HashingEmbedder` (`.hashing`): word hashing, no model (tests, demos, offline use).
* `CachingEmbedder` (`.cache`): a SQLite cache in front of any embedder.
* `OnnxEmbedder` (`.onnx`): the default local model, all-MiniLM-L6-v2 on ONNX Runtime.
* `HfEmbedder` (`.hf`): a local sentence-transformers model on PyTorch (extra `torch`).
* `OpenAIEmbedder` (`.openai`): the OpenAI embeddings API.

Only the first two are imported here; the others load their heavy or optional dependencies
(onnxruntime, torch, openai) when their module is imported.
"""

from biomcp.adapters.embeddings.cache import CachingEmbedder
from biomcp.adapters.embeddings.hashing import HashingEmbedder

__all__ = ["CachingEmbedder", "HashingEmbedder"]
