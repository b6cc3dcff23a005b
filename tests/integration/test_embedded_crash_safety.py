"""The embedded vector store survives SIGKILL at any point of a write.

A child process opens a store holding the "old" version of every chunk, then upserts the "new"
versions (plus chunks that did not exist) in batches, deletes some documents and closes; it
prints a line before each step and the parent kills it with SIGKILL a few milliseconds after
one of them. Reopening must give, for every uuid, the old or the new chunk (text and vector of
the same version, never a mix), working searches, and the same count in the rows and in both
indexes.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from biomcp.adapters.vectors import EmbeddedVectorStore
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.ranking import hybrid_search
from tests.support.crash_chunks import DELETED_DOCS, DIM, NEW, OLD, chunks

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from tests.support.crash_chunks import BATCH, DELETED_DOCS, NEW, chunks, doc_of
from biomcp.adapters.vectors import EmbeddedVectorStore

async def main() -> None:
    store = EmbeddedVectorStore(Path(sys.argv[1]))
    await store.count("Chunks")  # open (and repair) before the clock starts
    new = chunks("new", NEW)
    for start in range(0, NEW, BATCH):
        print(f"BATCH {start // BATCH}", flush=True)
        await store.upsert_chunks("Chunks", new[start : start + BATCH])
    print("DELETE", flush=True)
    for i in range(DELETED_DOCS):
        await store.delete_chunks("Chunks", doc_of(i))
    print("CLOSE", flush=True)
    await store.aclose()
    print("DONE", flush=True)

asyncio.run(main())
"""


def _rows(path: Path) -> dict[str, tuple[str, np.ndarray]]:
    db = sqlite3.connect(path / "Chunks" / "rows.sqlite")
    try:
        return {
            u: (text, np.frombuffer(blob, dtype="<f4"))
            for u, text, blob in db.execute("SELECT uuid, text, vector FROM chunks")
        }
    finally:
        db.close()


@pytest.mark.parametrize(
    ("line", "delay_ms"),
    [
        ("BATCH 0", 0),
        ("BATCH 0", 15),
        ("BATCH 1", 40),
        ("BATCH 2", 90),
        ("BATCH 3", 5),
        ("DELETE", 3),
        ("CLOSE", 2),
        ("CLOSE", 30),
    ],
)
def test_a_killed_writer_leaves_every_chunk_old_or_new(
    tmp_path: Path, line: str, delay_ms: int
) -> None:
    async def prepare() -> None:
        store = EmbeddedVectorStore(tmp_path)
        await store.ensure_schema("Chunks", dim=DIM, model_id="crash-model")
        assert (await store.upsert_chunks("Chunks", chunks("old", OLD))).errors == ()
        await store.aclose()

    asyncio.run(prepare())
    with subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", CHILD, str(tmp_path), str(REPO)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    ) as child:
        assert child.stdout is not None
        seen = []
        for out in child.stdout:
            seen.append(out.strip())
            if out.strip() == line:
                time.sleep(delay_ms / 1000)
                os.kill(child.pid, signal.SIGKILL)
                break
        _, errors = child.communicate(timeout=120)
    assert line in seen, (seen, errors)
    assert child.returncode in (-signal.SIGKILL, 0), errors

    rows = _rows(tmp_path)
    old = {c.uuid: c for c in chunks("old", OLD)}
    new = {c.uuid: c for c in chunks("new", NEW)}
    deleted_uuids = {c.uuid for c in new.values() if int(c.doc_id[5:]) < DELETED_DOCS // 2}
    # Every stored chunk is exactly the old or the new version: text and vector agree.
    for key, (text, vector) in rows.items():
        version = "new" if "newword" in text else "old"
        record = (new if version == "new" else old)[key]
        assert text == record.text
        assert np.array_equal(vector, np.asarray(record.vector, dtype=np.float32))
    # Nothing lost: an old chunk disappears only through the deletions.
    assert set(old) - set(rows) <= deleted_uuids
    if child.returncode == 0:
        assert set(rows) == set(new) - deleted_uuids

    async def verify() -> None:
        store = EmbeddedVectorStore(tmp_path)
        try:
            counts = await store.index_counts("Chunks")
            assert counts["rows"] == counts["lexical"] == counts["vectors"] == len(rows)
            assert await store.count("Chunks") == len(rows)
            for word in ("oldword", "newword"):
                hits = await hybrid_search(store, "Chunks", word, None, limit=NEW)
                expected = {k for k, (text, _) in rows.items() if word in text}
                assert {h.uuid for h in hits} == expected, word
            for key in sorted(rows)[:: max(1, len(rows) // 60)]:
                text, vector = rows[key]
                only = SearchFilters(doc_ids=frozenset({new[key].doc_id}))
                hits = await hybrid_search(
                    store, "Chunks", text, vector.tolist(), alpha=0.5, limit=2, filters=only
                )
                assert hits[0].uuid == key
                assert hits[0].text == text
                assert math.isclose(hits[0].sim or 0.0, 1.0, abs_tol=1e-5)
            # And the store takes writes again.
            report = await store.upsert_chunks("Chunks", chunks("new", NEW)[:10])
            assert report.errors == ()
        finally:
            await store.aclose()

    asyncio.run(verify())
