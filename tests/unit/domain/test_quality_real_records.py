"""Quality points on real records, read by PMID from ../shared/data (skipped when
the folder is absent). Nothing of the records is copied here; their synthetic twins are in
test_quality_sample.py and test_quality.py. The expected values were read from each abstract."""

from __future__ import annotations

from datetime import date
from functools import cache

import pytest

from biomcp.domain.citations import format_citation
from biomcp.domain.design import StudyDesign, classify_design
from biomcp.domain.quality import read_sample_size, score_quality
from biomcp.domain.records import PubMedRecord
from tests.conftest import shared_data_path
from tests.support.ncbi_files import BASELINE_1979, UPDATE_2021, ncbi_records
from tests.support.pubmedqa import load_pubmedqa

pytestmark = pytest.mark.unit

TODAY = date(2025, 6, 1)
_WANTED = {
    BASELINE_1979: ("399299", "400712", "424994"),
    UPDATE_2021: ("33823160", "33992593", "34096332"),
}


@cache
def _pubmedqa() -> dict[str, PubMedRecord]:
    return {r.pmid: r for r in load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))}


@cache
def _file(name: str) -> dict[str, PubMedRecord]:
    return ncbi_records(name, _WANTED[name])


def _record(source: str, pmid: str) -> PubMedRecord:
    records = _pubmedqa() if source == "pubmedqa" else _file(source)
    assert pmid in records, f"PMID {pmid} not in {source}"
    return records[pmid]


@pytest.mark.parametrize(
    ("source", "pmid", "n"),
    [
        # A study group, then "The control group consisted of 461 healthy subjects".
        ("pubmedqa", "26601554", 944),
        # "A total of 12 537 participants", thousands grouped by a space.
        ("pubmedqa", "23999452", 12537),
        # Thousands grouped by a thin space.
        ("pubmedqa", "26175531", 20960),
        # "103 carotid endarterectomies" in 95 patients (59 men and 36 women).
        ("pubmedqa", "18926458", 95),
        # "Of 1 366 422 patients with AF, 11 947 patients had...": a total and a part.
        (UPDATE_2021, "34096332", 1366422),
        # "Of 889 participants enrolled, 229 participants failed...".
        (UPDATE_2021, "33823160", 889),
        # Eyes counted beside patients.
        (UPDATE_2021, "33992593", 89),
        # "683 consecutive carotid endarterectomies": no count of people.
        (BASELINE_1979, "424994", None),
    ],
)
def test_real_abstracts_give_their_study_size(source: str, pmid: str, n: int | None) -> None:
    assert read_sample_size(_record(source, pmid).abstract_text).n == n


def test_a_real_procedure_count_is_refused_not_read() -> None:
    reading = read_sample_size(_record("pubmedqa", "18926458").abstract_text)
    assert any("endarterectomies" in phrase for phrase in reading.refused)


def test_a_real_in_vitro_record_with_mesh_humans_gets_no_human_points() -> None:
    record = _record(BASELINE_1979, "399299")
    assert "humans" in record.mesh_descriptors
    assert classify_design(record).design is StudyDesign.IN_VITRO
    assert score_quality(record, TODAY).human == 0


def test_a_real_retracted_record_keeps_no_points_for_what_it_reports() -> None:
    record = _record(BASELINE_1979, "400712")
    assert record.is_retracted
    quality = score_quality(record, TODAY)
    assert (quality.design, quality.human, quality.sample_size) == (0, 0, 0)
    assert quality.total == quality.journal + quality.recency


def test_vancouver_prints_the_nlm_abbreviation_of_a_1979_record_given_with_iso_periods() -> None:
    record = _record(BASELINE_1979, "400712")
    assert record.journal.iso_abbreviation == "J. Clin. Endocrinol. Metab."
    assert ". J Clin Endocrinol Metab. 1978 Jul;" in format_citation(record, "vancouver")
