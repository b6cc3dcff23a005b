"""NCBI's budget shared through PostgreSQL: start logs that stand for replicas, each with its own
connection, never record more than the rule allows together, by the table's own timestamps."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from biomcp.adapters.entrez.budget import fallback_share
from biomcp.adapters.entrez.budget_sql import SqlBudget, SqlStartLog, libpq_url
from biomcp.adapters.entrez.ratelimit import RateLimiter
from biomcp.adapters.sql.engine import make_engine
from biomcp.adapters.sql.migrate import upgrade_engine
from tests.support.budget_audit import SQL_ROUNDING_S, audited_starts, install_budget_audit
from tests.support.services import postgres_url
from tests.support.sql_databases import postgres_schema
from tests.support.virtual_time import most_in_span

pytestmark = pytest.mark.integration


def migrated(url: str) -> None:
    engine = make_engine(url)
    try:
        upgrade_engine(engine, "heads")
    finally:
        engine.dispose()


@pytest.fixture
def database() -> Iterator[str]:
    """A migrated, empty schema of the test PostgreSQL, with the audit trigger."""
    with postgres_schema(postgres_url()) as url:
        migrated(url)
        install_budget_audit(url)
        yield url


def sql(url: str, query: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


def test_replicas_in_threads_never_record_more_than_the_limit_in_any_span(database: str) -> None:
    span, each = 0.4, 3
    logs = [SqlStartLog(SqlBudget(database, "shared")) for _ in range(4)]
    ready = threading.Barrier(len(logs))

    def replica(log: SqlStartLog) -> int:
        ready.wait()
        recorded = 0
        while recorded < each:
            wait = log.take(3, span, 0.0)
            if wait == 0.0:
                recorded += 1
            else:
                time.sleep(wait)
        return recorded

    threads = [threading.Thread(target=replica, args=(log,)) for log in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    kept = logs[0].starts()
    for log in logs:
        log.close()

    starts = audited_starts(database, "shared")
    assert len(starts) == len(logs) * each
    assert all(log.usable for log in logs)
    assert most_in_span(starts, span - SQL_ROUNDING_S) == 3
    assert len(kept) < len(starts)  # pruned: only the starts of the last span or so remain


def test_starts_older_than_the_span_are_pruned_for_that_identity_only(database: str) -> None:
    for identity in ("mine", "mine", "other"):
        sql(
            database,
            "INSERT INTO ncbi_budget_starts (identity, started_at)"
            " VALUES (%s, clock_timestamp() - interval '10 seconds')",
            identity,
        )
    log = SqlStartLog(SqlBudget(database, "mine"))

    assert log.take(3, 1.25, 0.0) == 0.0

    assert len(log.starts()) == 1
    log.close()
    assert sql(database, "SELECT count(*) FROM ncbi_budget_starts WHERE identity = 'other'") == [
        (1,)
    ]


def test_a_full_window_says_how_long_to_wait_and_records_nothing(database: str) -> None:
    log = SqlStartLog(SqlBudget(database, "full"))

    assert [log.take(3, 30.0, 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = log.take(3, 30.0, 0.0)

    first = log.starts()[0]
    (now,) = sql(database, "SELECT extract(epoch FROM clock_timestamp())::float8")[0]
    assert 0 < wait <= 30.0
    assert wait == pytest.approx(first + 30.0 - float(now), abs=5.0)  # type: ignore[arg-type]
    assert len(log.starts()) == 3
    log.close()


def test_starts_recorded_in_the_future_count_as_now(database: str) -> None:
    sql(
        database,
        "INSERT INTO ncbi_budget_starts (identity, started_at)"
        " SELECT 'ahead', clock_timestamp() + interval '1 hour' FROM generate_series(1, 3)",
    )
    log = SqlStartLog(SqlBudget(database, "ahead"))

    wait = log.take(3, 1.25, 0.0)

    assert 0 < wait <= 1.25  # not an hour
    (late,) = sql(
        database,
        "SELECT count(*) FROM ncbi_budget_starts WHERE started_at > clock_timestamp()",
    )[0]
    assert late == 0
    log.close()


def test_a_dropped_connection_is_opened_again_and_the_log_stays_usable(database: str) -> None:
    log = SqlStartLog(SqlBudget(database, "again"))
    assert log.take(3, 1.25, 0.0) == 0.0
    sql(
        database,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE pid <> pg_backend_pid() AND datname = current_database()"
        " AND query LIKE %s",
        "%ncbi_budget_starts%",
    )

    assert log.take(3, 1.25, 0.0) == 0.0

    assert log.usable
    assert len(log.starts()) == 2
    log.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("where", ["no table", "no server"])
def test_an_unusable_database_warns_once_and_leaves_the_process_its_own_share(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    with postgres_schema(postgres_url()) as unmigrated:
        url = unmigrated
        if where == "no server":
            url = f"postgresql+psycopg://bio:s3cret@127.0.0.1:{free_port()}/nothing"
        limiter = RateLimiter(10, shared=SqlStartLog(SqlBudget(url, "down")))

        async def scenario() -> None:
            await asyncio.gather(*(limiter.acquire() for _ in range(3)))

        with caplog.at_level(logging.WARNING, logger="biomcp.entrez"):
            asyncio.run(scenario())
            fourth = limiter.try_start()

    warnings = [r.getMessage() for r in caplog.records if "NCBI budget" in r.getMessage()]
    assert len(warnings) == 1
    assert "s3cret" not in caplog.text
    assert limiter.limit == fallback_share(10)
    assert len(limiter.history()) == 3
    assert fourth > 0
