"""CacheFile: one SQLite cache file opened on first use, falling back to no cache, bounded."""

from __future__ import annotations

import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from biomcp.adapters.cache_file import CacheFile, SizeBound, select_in

pytestmark = pytest.mark.unit

_LOG = logging.getLogger("biomcp.test.cache_file")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries ("
    " name TEXT PRIMARY KEY, size INTEGER NOT NULL, stored_at REAL NOT NULL)",
)
_COUNT = "SELECT count(*) FROM entries"


def cache_file(path: Path, bound: SizeBound | None = None) -> CacheFile:
    return CacheFile(path, _SCHEMA, what="test cache", log=_LOG, bound=bound)


def put(file: CacheFile, *rows: tuple[str, int, float], now: float = 0.0) -> list[int]:
    """Store `rows` and apply the bound; the number of rows the bound dropped."""
    dropped: list[int] = []

    def work(conn: sqlite3.Connection) -> None:
        conn.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?)", rows)
        dropped.append(file.trim(conn, now))

    file.write("write", work)
    return dropped


def names(file: CacheFile) -> set[str]:
    return file.run("read", lambda c: {r[0] for r in c.execute("SELECT name FROM entries")}, set())


def test_the_file_and_its_folders_are_created_on_first_use_with_a_wal_journal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a" / "b" / "cache.sqlite3"
    file = cache_file(path)
    assert not path.exists()
    put(file, ("x", 1, 0.0))
    assert file.count(_COUNT) == 1
    file.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute(_COUNT).fetchone()[0] == 1


def test_a_folder_that_cannot_be_made_disables_the_cache_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be")
    file = cache_file(blocker / "cache.sqlite3")
    with caplog.at_level(logging.WARNING, logger=_LOG.name):
        put(file, ("x", 1, 0.0))
        assert file.count(_COUNT) == 0
        assert file.run("read", lambda conn: "answered", "default") == "default"
        assert file.connection() is None
    assert "test cache" in caplog.text
    assert "unusable" in caplog.text


def test_a_file_that_is_not_a_database_disables_the_cache_and_is_left_as_it_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cache.sqlite3"
    garbage = b"this is not a database" * 100
    path.write_bytes(garbage)
    file = cache_file(path)
    with caplog.at_level(logging.WARNING, logger=_LOG.name):
        put(file, ("x", 1, 0.0))
        assert names(file) == set()
    assert "unusable" in caplog.text
    assert path.read_bytes() == garbage


def test_an_unusable_file_is_tried_again_on_the_next_call(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("x")
    file = cache_file(blocker / "cache.sqlite3")
    assert file.connection() is None
    blocker.unlink()
    put(file, ("x", 1, 0.0))
    assert names(file) == {"x"}


def test_a_failed_write_is_rolled_back_whole_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")

    def half(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO entries VALUES ('x', 1, 0)")
        conn.execute("INSERT INTO missing_table VALUES (1)")

    with caplog.at_level(logging.WARNING, logger=_LOG.name):
        file.write("store", half)
    assert names(file) == set()
    assert "test cache" in caplog.text
    assert "store failed" in caplog.text


def test_a_failed_read_answers_the_default_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")
    with caplog.at_level(logging.WARNING, logger=_LOG.name):
        answer: list[object] = file.run(
            "lookup", lambda c: c.execute("SELECT * FROM nothing").fetchall(), []
        )
    assert answer == []
    assert "lookup failed" in caplog.text


def test_rows_older_than_the_age_bound_are_dropped(tmp_path: Path) -> None:
    bound = SizeBound("entries", ("name",), max_bytes=1_000, max_age_s=60)
    file = cache_file(tmp_path / "cache.sqlite3", bound)
    put(file, ("old", 1, 10.0), ("edge", 1, 40.0), now=40.0)
    assert put(file, ("new", 1, 100.0), now=100.0) == [1]
    assert names(file) == {"edge", "new"}


def test_the_oldest_rows_go_first_until_the_sizes_fit_the_bound(tmp_path: Path) -> None:
    file = cache_file(tmp_path / "cache.sqlite3", SizeBound("entries", ("name",), max_bytes=25))
    put(file, ("b", 10, 1.0), ("a", 10, 1.0), ("c", 10, 2.0))
    assert names(file) == {"b", "c"}  # equal ages: the key decides
    assert put(file, ("d", 5, 3.0)) == [0]
    assert put(file, ("e", 10, 4.0)) == [1]
    assert names(file) == {"c", "d", "e"}
    assert file.count("SELECT sum(size) FROM entries") <= 25


def test_without_a_bound_nothing_is_dropped(tmp_path: Path) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")
    assert put(file, *((str(i), 1_000_000, float(i)) for i in range(5)), now=1e9) == [0]
    assert file.count(_COUNT) == 5


def test_closing_twice_is_safe_and_the_next_call_reopens_the_file(tmp_path: Path) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")
    put(file, ("x", 1, 0.0))
    file.close()
    file.close()
    assert names(file) == {"x"}
    file.close()


def test_closing_a_file_never_opened_is_safe(tmp_path: Path) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")
    file.close()
    assert not (tmp_path / "cache.sqlite3").exists()


def test_worker_threads_take_turns_on_the_one_connection(tmp_path: Path) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")

    def writer(n: int) -> None:
        for i in range(20):
            put(file, (f"{n}-{i}", 1, 0.0))

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(writer, range(8)))
    assert file.count(_COUNT) == 160


def test_select_in_reads_keys_beyond_one_chunk(tmp_path: Path) -> None:
    file = cache_file(tmp_path / "cache.sqlite3")
    put(file, *((f"k{i}", i, 0.0) for i in range(25)))
    wanted = [f"k{i}" for i in range(0, 25, 2)] + ["absent"]
    query = "SELECT name, size FROM entries WHERE size >= ? AND name IN ({marks})"
    rows: list[tuple[str, int]] = file.run(
        "read", lambda c: list(select_in(c, query, (4,), wanted, chunk=3)), []
    )
    assert sorted(size for _, size in rows) == list(range(4, 25, 2))
