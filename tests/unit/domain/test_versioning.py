"""Record versions and content hashes (spec 01 Metadata Store invariants;
`biomcp.domain.versioning`)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.records import (
    AbstractSection,
    Author,
    Journal,
    MeshHeading,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
    utc,
)
from biomcp.domain.versioning import (
    HASH_SCHEME,
    StoredVersion,
    UpsertAction,
    VersionDecision,
    content_hash,
    decide_version,
)
from tests.support.builders import make_record
from tests.support.content_hash import reference_hash
from tests.support.sql_records import full_record as every_field_record

pytestmark = pytest.mark.unit

LR = utc(2024, 3, 1)
HASH = "v1:" + "a" * 64
OTHER_HASH = "v1:" + "b" * 64


def full_record(**overrides: object) -> PubMedRecord:
    fields: dict[str, object] = {
        "pmid": "31562422",
        "title": "Semaglutide and weight loss",
        "abstract": (
            AbstractSection("Obesity is common.", "BACKGROUND", "BACKGROUND"),
            AbstractSection("Weight fell by 14.9%.", "RESULTS", "RESULTS"),
        ),
        "journal": Journal(title="The New England journal of medicine", issn="0028-4793"),
        "publication_types": ("Journal Article", "Randomized Controlled Trial"),
        "mesh": (MeshHeading("Humans", "D006801"), MeshHeading("Obesity", "D009765", True)),
        "keywords": ("GLP-1",),
        "pdat": PubDate(2021, 3, 18),
        "edat": utc(2021, 2, 10, 6, 0),
        "lr": utc(2023, 5, 2),
        "doi": "10.1056/NEJMoa2032183",
        "authors": (Author(last_name="Wilding", fore_name="John", initials="JPH"),),
        "languages": ("eng",),
    }
    fields.update(overrides)
    return make_record(**fields)


# --- decide_version ------------------------------------------------------------------------


def test_new_pmid_is_inserted_at_version_one() -> None:
    assert decide_version(None, HASH, LR) == VersionDecision(UpsertAction.INSERT, 1, "new record")


def test_new_pmid_without_lr_is_inserted_at_version_one() -> None:
    decision = decide_version(None, HASH, None)
    assert (decision.action, decision.version) == (UpsertAction.INSERT, 1)


def test_changed_hash_updates_with_version_plus_one() -> None:
    decision = decide_version(StoredVersion(3, HASH, LR), OTHER_HASH, LR)
    assert decision == VersionDecision(UpsertAction.UPDATE, 4, "content changed")


def test_an_older_copy_is_skipped_even_when_its_content_differs() -> None:
    # PubMed's LR only moves forward: a copy with an earlier LR is stale (a mirror, a cache),
    # and the stored, newer content must not be replaced by it.
    decision = decide_version(StoredVersion(3, HASH, LR), OTHER_HASH, LR - timedelta(days=30))
    assert decision == VersionDecision(UpsertAction.SKIP, 3, "older copy")


def test_changed_hash_without_an_lr_still_updates() -> None:
    decision = decide_version(StoredVersion(3, HASH, LR), OTHER_HASH, None)
    assert (decision.action, decision.version) == (UpsertAction.UPDATE, 4)


def test_lr_advance_with_same_hash_updates_with_version_plus_one() -> None:
    decision = decide_version(StoredVersion(2, HASH, LR), HASH, LR + timedelta(days=1))
    assert decision == VersionDecision(UpsertAction.UPDATE, 3, "LR advanced")


def test_lr_advance_by_one_second_counts() -> None:
    decision = decide_version(StoredVersion(2, HASH, LR), HASH, LR + timedelta(seconds=1))
    assert (decision.action, decision.version) == (UpsertAction.UPDATE, 3)


def test_first_lr_on_a_record_stored_without_one_counts_as_an_advance() -> None:
    decision = decide_version(StoredVersion(1, HASH, None), HASH, LR)
    assert (decision.action, decision.version) == (UpsertAction.UPDATE, 2)


def test_unchanged_replay_is_skipped_at_the_stored_version() -> None:
    assert decide_version(StoredVersion(5, HASH, LR), HASH, LR) == VersionDecision(
        UpsertAction.SKIP, 5, "unchanged"
    )


def test_lr_moving_backward_with_same_hash_does_not_bump() -> None:
    decision = decide_version(StoredVersion(5, HASH, LR), HASH, LR - timedelta(days=1))
    assert (decision.action, decision.version) == (UpsertAction.SKIP, 5)


def test_missing_new_lr_with_same_hash_does_not_bump() -> None:
    decision = decide_version(StoredVersion(5, HASH, LR), HASH, None)
    assert (decision.action, decision.version) == (UpsertAction.SKIP, 5)


def test_missing_lr_on_both_sides_with_same_hash_is_skipped() -> None:
    decision = decide_version(StoredVersion(1, HASH, None), HASH, None)
    assert (decision.action, decision.version) == (UpsertAction.SKIP, 1)


def test_equal_lr_in_another_timezone_does_not_bump() -> None:
    same_instant = LR.astimezone(timezone(timedelta(hours=2)))
    decision = decide_version(StoredVersion(5, HASH, LR), HASH, same_instant)
    assert decision.action is UpsertAction.SKIP


# --- content_hash --------------------------------------------------------------------------


def test_content_hash_is_scheme_prefixed_sha256_hex() -> None:
    digest = content_hash(full_record())
    assert HASH_SCHEME == "v17"
    assert re.fullmatch(r"v17:[0-9a-f]{64}", digest)


def test_content_hash_is_stable_for_equal_records() -> None:
    assert content_hash(full_record()) == content_hash(full_record())


def test_content_hash_is_stable_across_calls_on_one_record() -> None:
    record = full_record()
    assert content_hash(record) == content_hash(record)


def test_content_hash_differs_between_minimal_and_full_records() -> None:
    assert content_hash(make_record()) != content_hash(full_record())


CHANGES: dict[str, dict[str, object]] = {
    "title": {"title": "Semaglutide and weight regain"},
    "abstract-section-text": {
        "abstract": (
            AbstractSection("Obesity is common.", "BACKGROUND", "BACKGROUND"),
            AbstractSection("Weight fell by 15.0%.", "RESULTS", "RESULTS"),
        )
    },
    "abstract-section-label": {
        "abstract": (
            AbstractSection("Obesity is common.", "INTRODUCTION", "BACKGROUND"),
            AbstractSection("Weight fell by 14.9%.", "RESULTS", "RESULTS"),
        )
    },
    "mesh-term": {"mesh": (MeshHeading("Humans", "D006801"), MeshHeading("Overweight"))},
    "mesh-major-flag": {
        "mesh": (MeshHeading("Humans", "D006801"), MeshHeading("Obesity", "D009765", False))
    },
    "publication-types": {"publication_types": ("Journal Article", "Clinical Trial")},
    "doi": {"doi": "10.1056/NEJMoa2032184"},
    "doi-removed": {"doi": None},
    "journal": {"journal": Journal(title="Lancet", issn="0140-6736")},
    "keywords": {"keywords": ("GLP-1", "obesity")},
    "pdat": {"pdat": PubDate(2021, 3, 19)},
    "pmcid": {"pmcid": "PMC8000000"},
    "authors": {"authors": ()},
    "languages": {"languages": ("eng", "fre")},
    "notices": {"notices": (Notice(NoticeKind.ERRATUM_IN, "34000000"),)},
    "pmid": {"pmid": "31562423"},
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_content_hash_changes_when_a_visible_field_changes(change: dict[str, object]) -> None:
    assert content_hash(full_record(**change)) != content_hash(full_record())


def test_content_hash_depends_on_abstract_section_order() -> None:
    record = full_record()
    swapped = replace(record, abstract=tuple(reversed(record.abstract)))
    assert content_hash(swapped) != content_hash(record)


@pytest.mark.parametrize(
    "change",
    [
        {"edat": utc(2022, 1, 1)},
        {"edat": None},
        {"lr": utc(2025, 1, 1)},
        {"lr": None},
        {"edat": utc(2022, 1, 1), "lr": utc(2025, 1, 1)},
    ],
    ids=["edat", "edat-none", "lr", "lr-none", "both"],
)
def test_content_hash_ignores_edat_and_lr(change: dict[str, datetime | None]) -> None:
    assert content_hash(full_record(**change)) == content_hash(full_record())


# --- properties ----------------------------------------------------------------------------

HASHES = st.sampled_from([HASH, OTHER_HASH, "v1:" + "c" * 64, "v0:legacy"])
LRS = st.one_of(
    st.none(),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1)).map(
        lambda d: utc(d.year, d.month, d.day, d.hour, d.minute)
    ),
)
STORED = st.builds(StoredVersion, st.integers(1, 10_000), HASHES, LRS)


def lr_advanced(stored: StoredVersion, new_lr: datetime | None) -> bool:
    return new_lr is not None and (stored.lr is None or new_lr > stored.lr)


def older_copy(stored: StoredVersion, new_lr: datetime | None) -> bool:
    return new_lr is not None and stored.lr is not None and new_lr < stored.lr


@given(stored=STORED, new_hash=HASHES, new_lr=LRS)
def test_a_changed_hash_is_skipped_only_for_an_older_copy(
    stored: StoredVersion, new_hash: str, new_lr: datetime | None
) -> None:
    decision = decide_version(stored, new_hash, new_lr)
    if older_copy(stored, new_lr):
        assert decision == VersionDecision(UpsertAction.SKIP, stored.version, "older copy")
    elif new_hash != stored.content_hash:
        assert decision.action is UpsertAction.UPDATE


@given(stored=STORED, new_lr=LRS)
def test_an_unchanged_record_is_never_bumped(
    stored: StoredVersion, new_lr: datetime | None
) -> None:
    decision = decide_version(stored, stored.content_hash, new_lr)
    if not lr_advanced(stored, new_lr):
        assert decision.action is UpsertAction.SKIP
        assert decision.version == stored.version
    else:
        assert decision.action is UpsertAction.UPDATE


@given(stored=st.one_of(st.none(), STORED), new_hash=HASHES, new_lr=LRS)
def test_version_is_one_on_insert_and_stored_plus_one_on_update(
    stored: StoredVersion | None, new_hash: str, new_lr: datetime | None
) -> None:
    decision = decide_version(stored, new_hash, new_lr)
    if stored is None:
        assert (decision.action, decision.version) == (UpsertAction.INSERT, 1)
    elif decision.action is UpsertAction.UPDATE:
        assert decision.version == stored.version + 1
    else:
        assert decision.action is UpsertAction.SKIP
        assert decision.version == stored.version


@given(
    title=st.text(max_size=40),
    other_title=st.text(max_size=40),
    lr=LRS,
    other_lr=LRS,
)
def test_content_hash_tracks_title_and_ignores_lr(
    title: str, other_title: str, lr: datetime | None, other_lr: datetime | None
) -> None:
    first = content_hash(make_record(title=title, lr=lr))
    second = content_hash(make_record(title=other_title, lr=other_lr))
    assert (first == second) == (title == other_title)


def test_the_hash_is_unchanged_from_the_first_v1_implementation() -> None:
    records = [every_field_record(), every_field_record(grants=()), full_record(), make_record()]
    for record in records:
        assert content_hash(record) == reference_hash(record), record.pmid


def test_a_record_stored_under_the_previous_scheme_is_updated_and_re_derived() -> None:
    # Stored tiers and quality came from older rules; the scheme bump makes the
    # next sync that sees the record update it (and so derive and index it again).
    record = full_record()
    digest = content_hash(record)
    old = "v1:" + digest.split(":", 1)[1]
    stored = StoredVersion(version=3, content_hash=old, lr=record.lr)
    decision = decide_version(stored, digest, record.lr)
    assert (decision.action, decision.version) == (UpsertAction.UPDATE, 4)
    same = StoredVersion(version=4, content_hash=digest, lr=record.lr)
    assert decide_version(same, digest, record.lr).action is UpsertAction.SKIP
