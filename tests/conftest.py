"""Shared fixtures. Reference data lives in ../shared/data (never copied into the repo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("BIOMCP_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


def skip_without_shared(missing: Path) -> None:
    """Skip the calling test because `missing` (under ../shared) is absent; with the CI
    variable set, fail instead: CI runs with ../shared beside the checkout, and a silent skip
    there would hide every test that reads the real NCBI answers."""
    if os.environ.get("CI"):
        pytest.fail(f"reference data not present but CI is set: {missing}")
    pytest.skip(
        f"{missing} is absent: this test reads reference material kept outside the repository "
        "(real NCBI answers and public data sets such as SciFact and PubMedQA in "
        "../shared/data, the source specs in ../shared/spec). To run it, put the shared "
        "folder beside the checkout (or set BIOMCP_SHARED_DATA to its data folder); "
        "data/README.md there names each file's public source."
    )


def shared_data_path(*parts: str) -> Path:
    """Path inside ../shared/data, or skip the calling test when it is absent (fail under CI)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        skip_without_shared(path)
    return path


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI, a missing ../shared/data stops the run at once: tests parametrized from it
    would otherwise collect no case and pass unnoticed."""
    if os.environ.get("CI") and not SHARED_DATA.is_dir():
        raise pytest.UsageError(
            f"CI is set but the reference data folder {SHARED_DATA} is missing: CI runs with "
            "../shared beside the checkout (or BIOMCP_SHARED_DATA pointing at its data folder)"
        )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_path()
