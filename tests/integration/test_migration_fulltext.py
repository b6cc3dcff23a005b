"""Migration 0011 on a database at 0010 holding documents and saved queries: the documents
stay as they were, every saved query keeps abstracts only, no record has a full-text state,
and full text can be stored at once; a downgrade to 0010 keeps the documents."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from biomcp.adapters.sql import SqlMetadataStore, current_revision, upgrade
from biomcp.adapters.sql.migrate import alembic_config
from biomcp.adapters.sql.rows import DOCS, document_values
from biomcp.domain.records import utc
from biomcp.ports.documents import StoredDocument
from biomcp.ports.fulltext import FullTextState, FullTextWrite
from biomcp.ports.saved_queries import Checkpoint
from tests.support.fulltext_articles import state_of, synthetic_article
from tests.support.services import postgres_url
from tests.support.sql_databases import postgres_schema
from tests.support.sql_records import full_record, upsert_of

pytestmark = pytest.mark.integration

PMIDS = ("31000001", "31000002")


@pytest.fixture(params=["sqlite", "postgresql"])
def url_at_0010(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each backend at revision 0010, with two documents and a saved query."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
        _fill_0010(url)
        yield url
        return
    with postgres_schema(postgres_url()) as url:
        _fill_0010(url)
        yield url


def _fill_0010(url: str) -> None:
    command.upgrade(alembic_config(url), "0010")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            for pmid in PMIDS:
                values = document_values(upsert_of(full_record(pmid)), 1, utc(2025, 8, 1))
                connection.execute(DOCS.insert().values(values))
            connection.execute(
                text(
                    "INSERT INTO checkpoints (query_key, last_edat, last_scan_at, term) "
                    "VALUES ('old', '2025-08-01 12:00:00+00:00', '2025-08-02 06:00:00+00:00',"
                    " 'obesity')"
                )
            )
    finally:
        engine.dispose()


def _columns(url: str, table: str) -> set[str]:
    engine = create_engine(url)
    try:
        return {column["name"] for column in inspect(engine).get_columns(table)}
    finally:
        engine.dispose()


async def _read(
    url: str,
) -> tuple[dict[str, StoredDocument], list[Checkpoint], dict[str, FullTextState], dict[str, int]]:
    store = SqlMetadataStore(url)
    try:
        docs = await store.get_documents(PMIDS)
        checkpoints = await store.list_checkpoints()
        states = await store.fulltext_states(PMIDS)
        return docs, checkpoints, states, await store.fulltext_status_counts()
    finally:
        await store.aclose()


def test_upgrading_a_database_at_0010_keeps_its_documents_and_starts_without_full_text(
    url_at_0010: str,
) -> None:
    upgrade(url_at_0010)

    docs, checkpoints, states, counts = asyncio.run(_read(url_at_0010))

    assert {pmid: doc.record for pmid, doc in docs.items()} == {
        pmid: full_record(pmid) for pmid in PMIDS
    }
    assert checkpoints == [
        Checkpoint("old", utc(2025, 8, 1, 12), utc(2025, 8, 2, 6), None, "obesity", True, False)
    ]
    assert (states, counts) == ({}, {})


def test_an_upgraded_database_stores_full_text_and_the_choice_at_once(url_at_0010: str) -> None:
    upgrade(url_at_0010)
    article = synthetic_article(references=())

    async def scenario() -> tuple[object, ...]:
        store = SqlMetadataStore(url_at_0010)
        try:
            await store.set_fulltext("old", True)
            await store.record_fulltext(
                [FullTextWrite(state_of(PMIDS[0], utc(2025, 9, 1)), article)]
            )
            return (
                (await store.get_checkpoint("old")).fulltext,
                await store.fulltext_articles(PMIDS),
                await store.fulltext_status_counts(),
            )
        finally:
            await store.aclose()

    assert asyncio.run(scenario()) == (True, {PMIDS[0]: article}, {"available": 1})


def test_a_downgrade_to_0010_removes_the_full_text_and_keeps_the_documents(
    url_at_0010: str,
) -> None:
    upgrade(url_at_0010)

    command.downgrade(alembic_config(url_at_0010), "0010")

    assert current_revision(url_at_0010) == "0010"
    assert "fulltext" not in _columns(url_at_0010, "checkpoints")
    engine = create_engine(url_at_0010)
    try:
        assert "fulltext" not in inspect(engine).get_table_names()
        with engine.connect() as connection:
            count = connection.execute(text("SELECT count(*) FROM pubmed_docs")).scalar_one()
        assert count == len(PMIDS)
    finally:
        engine.dispose()
