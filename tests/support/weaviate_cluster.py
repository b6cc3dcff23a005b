"""The loopback Weaviate cluster of `biomcp.testing.weaviate_cluster`, skipped (or failed,
under CI) when the server binary is not built."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from biomcp.testing.weaviate_cluster import Node, WeaviateCluster, find_weaviate_binary

__all__ = ["Node", "WeaviateCluster", "cluster_of", "weaviate_binary"]


def weaviate_binary() -> Path:
    """The built `weaviate-server`; the test is skipped without it (failed, under CI)."""
    binary = find_weaviate_binary()
    if not binary.is_file():
        hint = "build it with `scripts/services.sh start weaviate`"
        if os.environ.get("CI"):
            pytest.fail(f"no weaviate-server at {binary} but CI is set: {hint}")
        pytest.skip(f"no weaviate-server at {binary}: {hint}")
    return binary


def cluster_of(root: Path, size: int = 3) -> WeaviateCluster:
    """A cluster of `size` nodes under `root` (not started: use it as a context manager)."""
    return WeaviateCluster(root, size, binary=weaviate_binary())
