"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.sync_harness import BACKEND_PARAMS, BackendSpec, backend_spec


@pytest.fixture(params=BACKEND_PARAMS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BackendSpec]:
    """The stores of one backend pair (SQLite + embedded; PostgreSQL + Weaviate, which skips
    outside CI without the services): a module may define its own `backend` instead."""
    with backend_spec(request.param, tmp_path) as spec:
        yield spec
