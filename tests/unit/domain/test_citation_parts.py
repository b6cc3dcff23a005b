"""The parts the citation styles share: page bounds, article numbers and cited names."""

from __future__ import annotations

import pytest

from biomcp.domain.citations.names import cited_names
from biomcp.domain.citations.pages import is_article_number, page_bounds
from biomcp.domain.citations.text import clean_record, title_of
from biomcp.domain.records import Author, PubMedRecord

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("pages", "bounds"),
    [
        ("100-10", ("100", "110")),
        ("e123-30", ("e123", "e130")),
        ("100-10, 120", ("100", "110")),
        ("S1", ("S1", None)),
        (None, (None, None)),
    ],
)
def test_page_bounds_are_the_full_first_and_last_page_of_the_first_range(
    pages: str | None, bounds: tuple[str | None, str | None]
) -> None:
    assert page_bounds(pages) == bounds


@pytest.mark.parametrize(
    ("pages", "doi", "expected"),
    [
        ("e0021622", None, True),
        ("026002", None, True),
        ("119767", None, True),
        ("1034", "10.3389/fphys.2018.01034", True),
        ("1034", "10.1000/other", False),
        ("100-110", None, False),
        (None, None, False),
    ],
)
def test_an_article_number_is_a_single_locator_that_cannot_be_a_printed_page(
    pages: str | None, doi: str | None, expected: bool
) -> None:
    assert is_article_number(PubMedRecord(pmid="1", pages=pages, doi=doi)) is expected


def test_cited_names_skip_authors_without_a_name_and_keep_groups() -> None:
    record = PubMedRecord(
        pmid="1",
        authors=(
            Author(last_name="Smith", fore_name="J Michael"),
            Author(fore_name="Nameless"),
            Author(collective_name="COVID Study Group"),
        ),
    )
    names = cited_names(record)
    assert [n.inverted() for n in names] == ["Smith, J. Michael", "COVID Study Group"]


def test_a_cleaned_record_holds_every_string_on_one_line() -> None:
    record = PubMedRecord(
        pmid="1", title="[A\ntranslated\u2028title].", authors=(Author(last_name="Ro\tss"),)
    )
    cleaned = clean_record(record)
    assert title_of(cleaned) == "A translated title"
    assert cleaned.authors[0].last_name == "Ro ss"
