"""Identifiers and dates the domain checks are matched whole: a trailing newline is not part
of a PMID or an NCBI date (Python's `$` would let it through)."""

from __future__ import annotations

import pytest

from biomcp.domain.errors import InvalidQueryError, InvalidRecordError
from biomcp.domain.records import PubMedRecord
from biomcp.domain.sanitize import DateWindow

pytestmark = pytest.mark.unit


def test_a_record_pmid_with_a_trailing_newline_is_invalid() -> None:
    assert PubMedRecord(pmid="30000001").pmid == "30000001"
    with pytest.raises(InvalidRecordError):
        PubMedRecord(pmid="30000001\n")


@pytest.mark.parametrize("bound", ["2020\n", "2020/01\n", "٢٠٢٠"])
def test_a_date_bound_is_the_ncbi_form_exactly(bound: str) -> None:
    assert DateWindow(min_date="2020/01").clause() == "2020/01:3000[pdat]"
    with pytest.raises(InvalidQueryError, match="minDate must be YYYY"):
        DateWindow(min_date=bound)
