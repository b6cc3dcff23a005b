"""VectorStore adapters: the embedded default (SQLite + tantivy + faiss, no server)."""

from biomcp.adapters.vectors.embedded import EmbeddedVectorStore, StoreSettings

__all__ = ["EmbeddedVectorStore", "StoreSettings"]
