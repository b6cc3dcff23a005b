"""Clean databases for the metadata-store tests: a fresh PostgreSQL schema per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, make_url

__all__ = ["migrated_postgres_schema", "postgres_schema", "with_search_path"]


def with_search_path(url: str, schema: str) -> str:
    """`url` with every connection's search_path set to `schema` (so tables land there)."""
    parsed = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
    return parsed.render_as_string(hide_password=False)


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """A URL whose connections work in a new, empty schema; the schema is dropped after."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
        yield with_search_path(url, schema)
    finally:
        with engine.begin() as connection:
            connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        engine.dispose()


@contextmanager
def migrated_postgres_schema(url: str) -> Iterator[str]:
    """`postgres_schema`, migrated to the packaged head before it is handed over."""
    from biomcp.adapters.sql.engine import make_engine
    from biomcp.adapters.sql.migrate import upgrade_engine

    with postgres_schema(url) as schema_url:
        engine = make_engine(schema_url)
        try:
            upgrade_engine(engine, "heads")
        finally:
            engine.dispose()
        yield schema_url
