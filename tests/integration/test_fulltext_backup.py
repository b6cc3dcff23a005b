"""A metadata backup carries the full text: a restored SQLite copy reads every state and
article back, and a snapshot's counts name the full-text states on both backends."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from biomcp.adapters.sql import SqlMetadataStore
from biomcp.adapters.sql.backup import copy_sqlite, read_snapshot, restore_sqlite
from biomcp.domain.fulltext import FullTextArticle
from biomcp.domain.records import utc
from biomcp.ports.fulltext import FullTextState, FullTextWrite
from tests.support.fulltext_articles import state_of, synthetic_article
from tests.support.services import postgres_url
from tests.support.sql_databases import migrated_postgres_schema
from tests.support.sql_records import full_record, upsert_of

pytestmark = pytest.mark.integration

ARTICLE = synthetic_article(references=())


async def _store_fulltext(url: str) -> None:
    store = SqlMetadataStore(url)
    try:
        await store.upsert_documents([upsert_of(full_record(p)) for p in ("5", "6")])
        await store.set_fulltext("kept", True)
        await store.record_fulltext(
            [
                FullTextWrite(state_of("5", utc(2025, 9, 1)), ARTICLE),
                FullTextWrite(state_of("6", utc(2025, 9, 1), status="not_in_pmc")),
            ]
        )
    finally:
        await store.aclose()


async def _read(url: str) -> tuple[dict[str, FullTextState], dict[str, FullTextArticle], bool]:
    store = SqlMetadataStore(url)
    try:
        states = await store.fulltext_states(["5", "6"])
        articles = await store.fulltext_articles(["5", "6"])
        return states, articles, (await store.get_checkpoint("kept")).fulltext
    finally:
        await store.aclose()


def test_a_restored_sqlite_copy_holds_the_full_text_and_the_choice(tmp_path: Path) -> None:
    source, copy, target = (tmp_path / n for n in ("live.sqlite3", "copy.sqlite3", "new.sqlite3"))
    asyncio.run(_store_fulltext(f"sqlite:///{source}"))
    before = asyncio.run(_read(f"sqlite:///{source}"))

    copy_sqlite(source, copy)
    restore_sqlite(copy, target)

    assert asyncio.run(_read(f"sqlite:///{target}")) == before
    assert before[1] == {"5": ARTICLE}
    assert read_snapshot(f"sqlite:///{copy}").counts["fulltext_states"] == 2


def test_a_postgres_snapshot_counts_the_full_text_states() -> None:
    with migrated_postgres_schema(postgres_url()) as url:
        asyncio.run(_store_fulltext(url))

        assert read_snapshot(url).counts["fulltext_states"] == 2
