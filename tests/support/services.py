"""Where the real services of the tests are: PostgreSQL and Weaviate.

`scripts/services.sh start` runs them and prints the variables to export. Without a variable
a test that needs the service is skipped, with the reason; when the `CI` variable is set it
fails instead, because CI starts every service and must skip none.

Under pytest-xdist each worker gets a PostgreSQL database of its own beside the configured one.
Advisory locks and `pg_stat_activity` are per database, not per schema. In one shared database,
a worker's sync would find another worker's query-key lock held.
"""

from __future__ import annotations

import os
from functools import cache

import pytest
from sqlalchemy import create_engine, make_url
from sqlalchemy.exc import ProgrammingError

__all__ = [
    "POSTGRES_URL_ENV",
    "WEAVIATE_URL_ENV",
    "postgres_url",
    "require_env",
    "weaviate_url",
    "worker_database",
]

POSTGRES_URL_ENV = "BIOMCP_TEST_POSTGRES_URL"
WEAVIATE_URL_ENV = "BIOMCP_TEST_WEAVIATE_URL"


def require_env(name: str, service: str) -> str:
    """The value of `name`; skip the calling test when it is unset (fail when CI is set)."""
    value = os.environ.get(name, "").strip()
    if value:
        return value
    hint = f'start {service} with `eval "$(scripts/services.sh start {service})"`'
    if os.environ.get("CI"):
        pytest.fail(f"{name} is not set but CI is: CI must run the {service} tests ({hint})")
    pytest.skip(f"{name} is not set: {hint} to run the {service} tests")


def postgres_url() -> str:
    """The SQLAlchemy URL of the test PostgreSQL database (`BIOMCP_TEST_POSTGRES_URL`); under
    pytest-xdist, the worker's own database on that server (module docstring)."""
    url = require_env(POSTGRES_URL_ENV, "postgres")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return worker_database(url, worker) if worker else url


@cache
def worker_database(url: str, worker: str) -> str:
    """`url` naming the database `<its database>_<worker>`, created on first use and kept.

    Each test still works in a schema of its own inside it (`tests/support/sql_databases.py`).
    """
    base = make_url(url)
    name = f"{base.database}_{worker}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            found = connection.exec_driver_sql(
                "SELECT 1 FROM pg_database WHERE datname = %(name)s", {"name": name}
            ).first()
            if found is None:
                try:
                    connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
                except ProgrammingError as exc:  # another session created it meanwhile
                    if "already exists" not in str(exc):
                        raise
    finally:
        admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


def weaviate_url() -> str:
    """The HTTP URL of the test Weaviate (`BIOMCP_TEST_WEAVIATE_URL`)."""
    return require_env(WEAVIATE_URL_ENV, "weaviate")
