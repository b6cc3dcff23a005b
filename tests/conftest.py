"""Shared fixtures. Reference data lives in ../shared/data (never copied into the repo).

`make test` runs the suite on two pytest-xdist workers with `--dist loadfile`. Each test file
stays whole on one worker, so its module fixtures start once. The files of one `SAME_WORKER`
group run on one worker too, one after the other.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


#: Test files that must not run at the same time as each other, by group. Each group is one
#: work unit of `--dist loadfile`. The `xdist_group` mark would say the same in each file, but
#: pytest-xdist 3.8 ignores it under pytest 9.2 (pytest-xdist's tracker, number 1386).
SAME_WORKER: dict[str, tuple[str, ...]] = {
    # Each starts a three-node Weaviate cluster: two at once would take six nodes' memory and
    # CPU, and one could pick the ports of the other's node while that node is down.
    "weaviate-cluster": (
        "tests/cluster/test_scaled_out.py",
        "tests/integration/test_weaviate_cluster.py",
    ),
    # Each Weaviate rig drops every project collection before and after its test: two files
    # at once would drop each other's.
    "weaviate-projects": (
        "tests/integration/test_project_collections.py",
        "tests/integration/test_project_long_items.py",
        "tests/integration/test_project_sentences.py",
    ),
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadfile`, a work unit is one test file or one `SAME_WORKER` group."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]

    group_of = {file: name for name, files in SAME_WORKER.items() for file in files}
    missing = [file for file in group_of if not (config.rootpath / file).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py SAME_WORKER names missing files: {missing}")

    class FileOrGroupScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return f"group:{group_of[file]}" if file in group_of else file

    return FileOrGroupScheduling(config, log)
