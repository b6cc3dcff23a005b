"""Records, quality breakdowns and datetimes to JSON and back, exactly."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from biomcp.adapters.sql.models import UTCDateTime
from biomcp.adapters.sql.serialize import (
    RECORD_FORMAT,
    datetime_from_json,
    datetime_to_json,
    quality_from_json,
    quality_to_json,
    record_from_json,
    record_to_json,
    to_utc,
)
from biomcp.domain.records import (
    AbstractSection,
    Author,
    Journal,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
    QualityBreakdown,
    SampleSizeReading,
)
from tests.support.sql_records import full_record

pytestmark = pytest.mark.unit


def through_json(value: Any) -> Any:
    """What a JSON column gives back: the value dumped to text and parsed again."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def test_a_record_with_every_field_set_round_trips_exactly() -> None:
    record = full_record()

    rebuilt = record_from_json(through_json(record_to_json(record)))

    assert rebuilt == record
    assert rebuilt.lr is not None
    assert record.lr is not None
    assert rebuilt.lr.utcoffset() == timedelta(hours=-5)
    assert rebuilt.edat is not None
    assert rebuilt.edat.microsecond == 123456
    assert rebuilt.pdat == PubDate(1998, None, None, raw="1998 Dec-1999 Jan")
    assert rebuilt.mesh[0].qualifiers[0] == MeshQualifier("drug therapy", ui="Q000188", major=True)
    assert rebuilt.authors[1] == Author(collective_name="STEP 1 Study Group")
    assert rebuilt.notices[1].kind is NoticeKind.EXPRESSION_OF_CONCERN_IN


def test_a_minimal_record_round_trips_exactly() -> None:
    record = PubMedRecord(pmid="1")
    assert record_from_json(through_json(record_to_json(record))) == record


@pytest.mark.parametrize(
    "record",
    [
        PubMedRecord(pmid="2", pdat=PubDate(2019)),
        PubMedRecord(pmid="3", pdat=PubDate(2019, 3)),
        PubMedRecord(pmid="4", pdat=PubDate(2019, 3, 5)),
        PubMedRecord(pmid="5", pdat=PubDate(2019, raw="2019 Spring")),
        PubMedRecord(pmid="6", abstract=(AbstractSection("only text"),)),
        PubMedRecord(pmid="7", journal=Journal(volume="1", issue="Suppl 2")),
        PubMedRecord(pmid="8", mesh=(MeshHeading("Mice", major=True),)),
        PubMedRecord(pmid="9", notices=tuple(Notice(kind) for kind in NoticeKind)),
        PubMedRecord(pmid="10", edat=datetime(2020, 1, 1, tzinfo=timezone(timedelta(hours=9)))),
        PubMedRecord(pmid="11", title="", pages="", keywords=("",), languages=("und",)),
        PubMedRecord(pmid="9999999999", title="Δ µ ± — “quoted” \u2028 line sep"),
    ],
    ids=lambda record: record.pmid,
)
def test_records_of_every_shape_round_trip_exactly(record: PubMedRecord) -> None:
    assert record_from_json(through_json(record_to_json(record))) == record


def _field_names(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


def test_every_field_of_every_record_type_is_written() -> None:
    data = record_to_json(full_record())

    assert set(data) - {"f"} == _field_names(PubMedRecord)
    assert set(data["abstract"][0]) == _field_names(AbstractSection)
    assert set(data["journal"]) == _field_names(Journal)
    assert set(data["mesh"][0]) == _field_names(MeshHeading)
    assert set(data["mesh"][0]["qualifiers"][0]) == _field_names(MeshQualifier)
    assert set(data["pdat"]) == _field_names(PubDate)
    assert set(data["authors"][0]) == _field_names(Author)
    assert set(data["notices"][0]) == _field_names(Notice)
    assert data["f"] == RECORD_FORMAT


def test_the_json_holds_only_plain_json_values() -> None:
    data = record_to_json(full_record())
    assert through_json(data) == data


def test_an_unknown_layout_is_refused() -> None:
    data = record_to_json(full_record())
    data["f"] = RECORD_FORMAT + 1
    with pytest.raises(ValueError, match="layout"):
        record_from_json(data)


def test_a_record_missing_a_key_is_refused_with_a_value_error() -> None:
    data = record_to_json(full_record())
    del data["authors"]
    with pytest.raises(ValueError, match="authors"):
        record_from_json(data)


@pytest.mark.parametrize("sample_size_n", [None, 0, 1961])
def test_a_quality_breakdown_round_trips_with_its_sample_size(sample_size_n: int | None) -> None:
    quality = QualityBreakdown(3, 2, 2, 1, 2, 10, sample_size_n)

    data = through_json(quality_to_json(quality))

    assert quality_from_json(data) == quality
    assert data["sample_size"] == 2
    assert data["sample_size_n"] == sample_size_n


def test_a_quality_breakdown_round_trips_with_its_year_and_what_was_read() -> None:
    reading = SampleSizeReading(1961, "1961 adults", ("total of 3,000 visits",))
    quality = QualityBreakdown(3, 2, 2, 1, 2, 10, 1961, scored_in=2026, sample_size_reading=reading)

    data = through_json(quality_to_json(quality))

    assert quality_from_json(data) == quality
    assert (data["scored_in"], data["sample_size_text"]) == (2026, "1961 adults")
    assert data["sample_size_refused"] == ["total of 3,000 visits"]
    nothing_read = replace(
        quality, sample_size_n=None, sample_size_reading=SampleSizeReading(None, None)
    )
    assert quality_from_json(through_json(quality_to_json(nothing_read))) == nothing_read


def test_a_quality_breakdown_stored_before_its_year_and_reading_were_kept_reads_as_none() -> None:
    older = {"design": 3, "recency": 2, "journal": 2, "human": 1, "sample_size": 2, "total": 10,
             "sample_size_n": 1961}  # fmt: skip

    quality = quality_from_json(older)

    assert quality.scored_in is None
    assert quality.sample_size_reading is None
    assert quality.sample_size_n == 1961


def test_a_quality_breakdown_missing_a_component_is_refused() -> None:
    with pytest.raises(ValueError, match="recency"):
        quality_from_json({"design": 1, "journal": 1, "human": 1, "sample_size": 0, "total": 3})


def test_datetimes_keep_their_offset_and_microseconds() -> None:
    value = datetime(
        2024, 2, 29, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=5, minutes=30))
    )

    text = datetime_to_json(value)

    assert text == "2024-02-29T23:59:59.999999+05:30"
    assert datetime_from_json(text) == value
    assert datetime_to_json(None) is None
    assert datetime_from_json(None) is None


def test_to_utc_converts_aware_values_and_refuses_naive_ones() -> None:
    value = datetime(2024, 1, 1, 9, tzinfo=timezone(timedelta(hours=9)))
    assert to_utc(value) == datetime(2024, 1, 1, tzinfo=UTC)
    assert to_utc(value).tzinfo is UTC
    with pytest.raises(ValueError, match="naive"):
        to_utc(datetime(2024, 1, 1))


class _Dialect:
    def __init__(self, name: str) -> None:
        self.name = name


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_the_utc_column_type_stores_utc_and_reads_back_aware_utc(dialect: str) -> None:
    column = UTCDateTime()
    value = datetime(2024, 1, 1, 9, tzinfo=timezone(timedelta(hours=9)))

    bound = column.process_bind_param(value, _Dialect(dialect))  # type: ignore[arg-type]
    read = column.process_result_value(bound, _Dialect(dialect))  # type: ignore[arg-type]

    assert bound is not None
    assert bound.tzinfo is (None if dialect == "sqlite" else UTC)
    assert read == value
    assert read is not None
    assert read.tzinfo is UTC
    with pytest.raises(ValueError, match="naive"):
        column.process_bind_param(datetime(2024, 1, 1), _Dialect(dialect))  # type: ignore[arg-type]
