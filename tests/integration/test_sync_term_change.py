"""A query key synced with another term than before: continuing from the checkpoint the old
term reached would never fetch the new term's older records, so the sync reads the key's
history again for the new term (from `Checkpoint.covers_from`), says so in a warning, and
records the new term. The same term spelt with other spacing is the same query.

The fake E-utilities over HTTP, both store pairs (SQLite + embedded; PostgreSQL + Weaviate in
CI), the deterministic embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pytest

from biomcp.ports.entrez import EntrezUnavailableError
from biomcp.testing.eutils import FakeEutilsServer
from biomcp.usecases.sync import WindowBasis
from tests.support.sync_harness import (
    BackendSpec,
    SteppingClock,
    embedder,
    entrez_client,
    make_corpus,
    make_sync,
    matching,
    run,
)

pytestmark = pytest.mark.integration

START, END = date(2025, 1, 1), date(2025, 3, 31)
NOW = datetime(2025, 4, 1, 12, tzinfo=UTC)
KEY = "refined"
FIRST, SECOND = "Hypertension[mh]", "Humans[mh]"


@pytest.fixture
def fake() -> Iterator[FakeEutilsServer]:
    with FakeEutilsServer(make_corpus(40, START, END, seed=7), warm=True) as server:
        yield server


@pytest.mark.parametrize("initial_days", [None, 45])
def test_a_changed_term_reads_the_keys_history_again_for_the_new_term(
    backend: BackendSpec, fake: FakeEutilsServer, initial_days: int | None
) -> None:
    scope_day = (NOW - timedelta(days=initial_days)).date() if initial_days else date.min
    first_set = set(matching(fake.corpus, "Hypertension", lo=scope_day))
    second_set = set(matching(fake.corpus, "Humans", lo=scope_day))
    assert second_set - first_set, "the new term must have records the old one lacks"

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(
                entrez, metadata, vectors, embedder(), clock, backend.collection,
                initial_days=initial_days,
            )  # fmt: skip
            first = await sync.run(KEY, FIRST)
            assert first.inserted == len(first_set)
            before = await metadata.get_checkpoint(KEY)
            assert before.term == FIRST

            clock.advance(timedelta(days=20))
            second = await sync.run(KEY, SECOND)
            assert second.window_basis == WindowBasis.TERM_CHANGED
            assert second.previous_term == FIRST
            assert second.window_start == before.covers_from
            [warning] = [w for w in second.warnings if "another term" in w]
            assert repr(FIRST) in warning
            assert repr(SECOND) in warning
            assert second.pmids_found == len(second_set)  # the new term's whole history
            assert second.inserted == len(second_set - first_set)
            stored = await metadata.get_documents(sorted(first_set | second_set))
            assert set(stored) == first_set | second_set
            assert all(d.indexed_version == d.version for d in stored.values())
            after = await metadata.get_checkpoint(KEY)
            assert after.term == SECOND
            assert after.covers_from == before.covers_from
            assert after.last_edat is not None
            assert before.last_edat is not None
            assert after.last_edat >= before.last_edat  # never moves back

            # The same query spelt with other spacing continues from the checkpoint.
            clock.advance(timedelta(days=1))
            third = await sync.run(KEY, f"  {SECOND} ")
            assert third.window_basis == WindowBasis.CHECKPOINT
            assert third.previous_term is None
            assert not [w for w in third.warnings if "another term" in w]
            assert (third.inserted, third.updated) == (0, 0)
            assert third.pmids_found < len(second_set)  # the overlap only
            await entrez.aclose()

    run(scenario())


def test_a_changed_term_whose_sync_fails_is_read_again_by_the_next_sync(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    """The checkpoint keeps the old term until a sync of the new one completes, so a sync cut
    short does not leave the new term continuing from a checkpoint it never reached."""
    second_set = set(matching(fake.corpus, "Humans"))

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            await sync.run(KEY, FIRST)
            clock.advance(timedelta(days=20))
            retries = entrez.settings.max_retries
            fake.faults.sequence(["500"] * (retries + 1), endpoint="efetch")
            with pytest.raises(EntrezUnavailableError):
                await sync.run(KEY, SECOND)
            fake.faults.clear()
            assert (await metadata.get_checkpoint(KEY)).term == FIRST

            again = await sync.run(KEY, SECOND)
            assert again.window_basis == WindowBasis.TERM_CHANGED
            stored = await metadata.get_documents(sorted(second_set))
            assert set(stored) == second_set
            assert (await metadata.get_checkpoint(KEY)).term == SECOND
            await entrez.aclose()

    run(scenario())


def test_pmids_pending_for_the_earlier_term_are_dropped_unless_the_new_one_finds_them(
    backend: BackendSpec, fake: FakeEutilsServer
) -> None:
    mice, humans = set(matching(fake.corpus, "Mice")), set(matching(fake.corpus, "Humans"))
    only_mice = sorted(mice - humans)
    assert only_mice, "the seed should give a mouse study without Humans"
    lost = only_mice[0]

    async def scenario() -> None:
        clock = SteppingClock(NOW)
        async with backend.stores(clock) as (metadata, vectors):
            entrez = entrez_client(fake.base_url)
            sync = make_sync(entrez, metadata, vectors, embedder(), clock, backend.collection)
            fake.withhold([lost])
            try:
                first = await sync.run(KEY, "Mice[mh]")
            finally:
                fake.withhold([])
            assert first.pending == (lost,)

            clock.advance(timedelta(days=1))
            changed = await sync.run(KEY, SECOND)
            assert changed.window_basis == WindowBasis.TERM_CHANGED
            [warning] = [w for w in changed.warnings if "pending for the earlier term" in w]
            assert lost in warning
            assert await metadata.pending_pmids(KEY) == []
            assert changed.pending == ()
            assert await metadata.get_document(lost) is None  # not fetched for the new term
            stored = await metadata.get_documents(sorted(humans))
            assert set(stored) == humans
            await entrez.aclose()

    run(scenario())
