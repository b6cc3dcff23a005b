"""`domain.registries`: trial registry ids read from text and DataBankList accessions.

Every text here is synthetic, written for these tests in the shapes real abstracts use.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import InvalidRecordError
from biomcp.domain.records import PubMedRecord
from biomcp.domain.registries import (
    REGISTRIES,
    normalise_trial_id,
    registry_of,
    registry_of_databank,
    trial_ids,
    trial_ids_in_text,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("registered at ClinicalTrials.gov (NCT01234567).", "NCT01234567"),
        ("Trial registration: NCT 01234567", "NCT01234567"),
        ("(nct-01234567)", "NCT01234567"),
        ("see https://clinicaltrials.gov/ct2/show/NCT01234567.", "NCT01234567"),
        ("Current Controlled Trials ISRCTN12345678.", "ISRCTN12345678"),
        ("ISRCTN 12345678", "ISRCTN12345678"),
        ("EudraCT 2013-001234-56", "2013-001234-56"),
        ("EudraCT number 2013\u2013001234\u201356", "2013-001234-56"),  # en dashes
        ("Chinese Clinical Trial Registry: ChiCTR2000012345.", "ChiCTR2000012345"),
        ("ChiCTR-2000012345", "ChiCTR2000012345"),
        ("ChiCTR-TRC-12001234", "ChiCTR-TRC-12001234"),
        ("chictr IOR-15001234", "ChiCTR-IOR-15001234"),
        ("http://www.chictr.org.cn/ChiCTR1900012345.", "ChiCTR1900012345"),
    ],
)
def test_each_registry_format_is_read_in_its_canonical_spelling(text: str, expected: str) -> None:
    assert trial_ids_in_text(text) == (expected,)


@pytest.mark.parametrize(
    "text",
    [
        "NCT012345678",  # nine digits
        "ISRCTN474042962",  # nine digits: a typo, not an ISRCTN
        "FUNCT01234567",  # not word-bounded
        "EU CT number 2022-500001-23-00",  # the newer EU CT number, not EudraCT
        "call 1999-123456-78",  # before EudraCT opened
        "ChiCTR12345678",  # eight digits without a code
        "ChiCTR ID 1900024055",  # a word between the prefix and the number
        "protocol 2013-001234",
    ],
)
def test_strings_that_only_look_like_ids_are_not_read(text: str) -> None:
    assert trial_ids_in_text(text) == ()


def test_ids_are_distinct_and_ordered_by_registry_then_id() -> None:
    text = (
        "ChiCTR2000012345; EudraCT 2015-001639-19 and 2005-000826-22; "
        "NCT09999999, ISRCTN12345678, NCT01234567 and NCT 01234567 again."
    )
    assert trial_ids_in_text(text) == (
        "NCT01234567",
        "NCT09999999",
        "ISRCTN12345678",
        "2005-000826-22",
        "2015-001639-19",
        "ChiCTR2000012345",
    )


def test_databank_names_map_to_one_registry_each_and_other_banks_are_ignored() -> None:
    assert [registry_of_databank(n) for n in ("ClinicalTrials.gov", "ISRCTN", "EudraCT")] == [
        "ClinicalTrials.gov",
        "ISRCTN",
        "EudraCT",
    ]
    assert registry_of_databank("ChiCTR") == "ChiCTR"
    assert registry_of_databank(" clinicaltrials.gov ") == "ClinicalTrials.gov"
    assert registry_of_databank("GENBANK") is None
    assert registry_of_databank(None) is None


def test_a_record_reads_its_databanks_and_its_abstract_together() -> None:
    banks = [
        ("ClinicalTrials.gov", ["NCT01234567"]),
        ("GENBANK", ["DQ486141"]),
        ("ISRCTN", ["ISRCTN474042962"]),  # unreadable: dropped
        ("ClinicalTrials.gov", ["ISRCTN12345678"]),  # another registry's id under this bank
    ]
    texts = ["Registered as NCT 01234567 and EudraCT 2013-001234-56."]
    assert trial_ids(banks, texts) == ("NCT01234567", "2013-001234-56")


def test_a_user_typed_id_normalises_or_is_refused() -> None:
    assert normalise_trial_id(" nct 01234567 ") == "NCT01234567"
    assert normalise_trial_id("chictr-trc-12001234") == "ChiCTR-TRC-12001234"
    assert normalise_trial_id("NCT0123") is None
    assert normalise_trial_id("NCT01234567 NCT07654321") is None  # one id only
    assert normalise_trial_id("") is None


def test_every_canonical_id_names_its_registry() -> None:
    ids = ("NCT01234567", "ISRCTN12345678", "2013-001234-56", "ChiCTR-TRC-12001234")
    assert tuple(registry_of(i) for i in ids) == REGISTRIES
    assert registry_of("DQ486141") is None


def test_a_record_refuses_an_id_that_is_not_canonical() -> None:
    assert PubMedRecord("1", trial_ids=("NCT01234567",)).trial_ids == ("NCT01234567",)
    with pytest.raises(InvalidRecordError, match="trial registry id"):
        PubMedRecord("1", trial_ids=("DQ486141",))


_DIGITS = st.text(alphabet="0123456789", min_size=8, max_size=8)


@given(_DIGITS, st.sampled_from(["NCT", "nct", "ISRCTN"]), st.sampled_from(["", " ", "-"]))
def test_any_spelling_of_an_id_normalises_to_the_one_the_text_reader_gives(
    digits: str, prefix: str, gap: str
) -> None:
    typed = f"{prefix}{gap}{digits}"
    canonical = normalise_trial_id(typed)
    assert canonical == f"{prefix.upper()}{digits}"
    assert trial_ids_in_text(f"Registered ({typed}).") == (canonical,)
    assert normalise_trial_id(canonical) == canonical
