"""Migration 0012 on a database at 0011 holding retracted and unretracted documents: each
retracted record takes its `last_seen_at` as its retraction moment, every other record has
none (a record that only mentions a retraction included), and a downgrade to 0011 keeps the
documents."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from biomcp.adapters.sql import SqlMetadataStore, current_revision, upgrade
from biomcp.adapters.sql.migrate import alembic_config
from biomcp.adapters.sql.rows import DOCS, document_values
from biomcp.domain.records import Notice, NoticeKind, PubMedRecord, utc
from tests.support.services import postgres_url
from tests.support.sql_databases import postgres_schema
from tests.support.sql_records import FakeClock, full_record, upsert_of

pytestmark = pytest.mark.integration

BY_NOTICE, BY_TYPE, NOTICE_ITSELF, PLAIN = "32000001", "32000002", "32000003", "32000004"
PMIDS = (BY_NOTICE, BY_TYPE, NOTICE_ITSELF, PLAIN)
#: When the store last saw each record before the upgrade.
SEEN = {pmid: utc(2025, 8, day, 6) for day, pmid in enumerate(PMIDS, start=1)}
#: When a sync after the upgrade stores them.
LATER = utc(2025, 9, 1, 6)


def _records() -> list[PubMedRecord]:
    retraction = Notice(NoticeKind.RETRACTION_IN, pmid="32000003", source="J Med. 2025;1:1")
    return [
        full_record(BY_NOTICE, notices=(retraction,)),
        full_record(BY_TYPE, publication_types=("Journal Article", "Retracted Publication")),
        # The retraction notice itself: it names a retraction and is not retracted.
        full_record(
            NOTICE_ITSELF,
            title="Retracted Publication: semaglutide and weight loss",
            publication_types=("Retraction of Publication",),
            notices=(Notice(NoticeKind.RETRACTION_OF, pmid=BY_NOTICE),),
        ),
        full_record(PLAIN),
    ]


@pytest.fixture(params=["sqlite", "postgresql"])
def url_at_0011(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each backend at revision 0011 holding the four records of `_records`."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
        _fill_0011(url)
        yield url
        return
    with postgres_schema(postgres_url()) as url:
        _fill_0011(url)
        yield url


def _fill_0011(url: str) -> None:
    command.upgrade(alembic_config(url), "0011")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            for record in _records():
                values = document_values(upsert_of(record), 1, SEEN[record.pmid])
                connection.execute(DOCS.insert().values(values))
    finally:
        engine.dispose()


async def _moments(url: str) -> dict[str, datetime | None]:
    store = SqlMetadataStore(url)
    try:
        docs = await store.get_documents(PMIDS)
        return {pmid: doc.retracted_at for pmid, doc in docs.items()}
    finally:
        await store.aclose()


def test_upgrading_gives_each_retracted_record_its_last_seen_time_and_no_other_one_a_moment(
    url_at_0011: str,
) -> None:
    upgrade(url_at_0011)

    assert asyncio.run(_moments(url_at_0011)) == {
        BY_NOTICE: SEEN[BY_NOTICE],
        BY_TYPE: SEEN[BY_TYPE],
        NOTICE_ITSELF: None,
        PLAIN: None,
    }


def test_an_upgraded_record_seen_again_keeps_its_moment_and_a_new_retraction_gets_its_own(
    url_at_0011: str,
) -> None:
    upgrade(url_at_0011)
    records = {record.pmid: record for record in _records()}
    retraction = Notice(NoticeKind.RETRACTION_IN, pmid="32000009")
    newly = replace(records[PLAIN], notices=(retraction,))

    async def scenario() -> tuple[dict[str, datetime | None], set[str]]:
        store = SqlMetadataStore(url_at_0011, clock=FakeClock(LATER))
        try:
            await store.upsert_documents([upsert_of(records[BY_NOTICE]), upsert_of(newly)])
            since = await store.retracted_since(PMIDS, SEEN[BY_TYPE])
        finally:
            await store.aclose()
        return await _moments(url_at_0011), since

    moments, since = asyncio.run(scenario())

    assert (moments[BY_NOTICE], moments[PLAIN]) == (SEEN[BY_NOTICE], LATER)
    assert since == {BY_TYPE, PLAIN}


def test_a_downgrade_to_0011_drops_the_moments_and_keeps_the_documents(url_at_0011: str) -> None:
    upgrade(url_at_0011)

    command.downgrade(alembic_config(url_at_0011), "0011")

    assert current_revision(url_at_0011) == "0011"
    engine = create_engine(url_at_0011)
    try:
        assert "retracted_at" not in {c["name"] for c in inspect(engine).get_columns("pubmed_docs")}
        with engine.connect() as connection:
            count = connection.execute(text("SELECT count(*) FROM pubmed_docs")).scalar_one()
        assert count == len(PMIDS)
    finally:
        engine.dispose()
