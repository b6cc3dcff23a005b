"""Shared fixtures. Reference data lives in ../shared/data (never copied into the repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("BIOMCP_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


def shared_data_path(*parts: str) -> Path:
    """Path inside ../shared/data, or skip the calling test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not present: {path} (the shared folder is optional)")
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_path()
