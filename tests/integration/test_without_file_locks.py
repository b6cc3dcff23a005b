"""On a system without POSIX file locks (Windows: no `fcntl`), bio-mcp still imports, and the
embedded stores say why they cannot run instead of the process dying with an ImportError.
Run in child processes where importing `fcntl` fails, as it does there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from biomcp.adapters.filelocks import NO_FILE_LOCKS

pytestmark = pytest.mark.integration

WITHOUT_FCNTL = "import sys; sys.modules['fcntl'] = None  # `import fcntl` raises ImportError\n"


def _run(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BIOMCP_", "NCBI_"))}
    return subprocess.run(  # noqa: S603 - this interpreter, our own snippet
        [sys.executable, "-c", WITHOUT_FCNTL + code],
        env={**clean, "BIOMCP_DATA_DIR": str(tmp_path / "data"), **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_sync_on_the_embedded_stores_says_what_the_system_lacks(tmp_path: Path) -> None:
    done = _run(
        "from biomcp.entrypoints.cli.main import main\n"
        "sys.argv = ['biomcp', 'sync', '-k', 'k1', '-t', 'asthma']\n"
        "main()\n",
        tmp_path,
        BIOMCP_EMBEDDINGS="deterministic",
        NCBI_EUTILS_BASE_URL="http://127.0.0.1:9",
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(NO_FILE_LOCKS)
    assert "error [STORE]" in done.stderr


def test_the_embedded_vector_store_writer_lock_is_unavailable_not_an_import_error(
    tmp_path: Path,
) -> None:
    done = _run(
        "from pathlib import Path\n"
        "from biomcp.adapters.vectors.embedded_lock import WriterLock\n"
        "lock = WriterLock(Path('LOCK'), 'C', wait_s=0)\n"
        "try:\n"
        "    lock.try_acquire()\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc, sep='|')\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"VectorStoreUnavailableError|{NO_FILE_LOCKS}"
