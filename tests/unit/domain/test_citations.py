"""Citation strings against the rules of each style."""

from __future__ import annotations

import re

import pytest

from biomcp.domain.citations import (
    CitationStyle,
    abbreviate_pages,
    all_citations,
    expand_pages,
    format_citation,
)
from biomcp.domain.records import Author, Journal, PubDate, PubMedRecord

pytestmark = pytest.mark.unit


def _person(last: str, fore: str, initials: str) -> Author:
    return Author(last_name=last, fore_name=fore, initials=initials)


def _record(n_authors: int = 3, **overrides: object) -> PubMedRecord:
    authors = tuple(_person(f"Author{i}", f"Anna Maria{i}", "AM") for i in range(1, n_authors + 1))
    values: dict[str, object] = {
        "pmid": "29768149",
        "title": "Effect of drug X on outcome Y: a randomized trial.",
        "journal": Journal(
            title="The New England journal of medicine",
            iso_abbreviation="N Engl J Med",
            issn="0028-4793",
            volume="378",
            issue="20",
        ),
        "pages": "1865-1876",
        "pdat": PubDate(2018, 5, 17),
        "doi": "10.1056/NEJMoa1715474",
        "authors": authors,
    }
    values.update(overrides)
    return PubMedRecord(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "expanded", "abbreviated"),
    [
        ("100-10", "100-110", "100-10"),
        ("1865-76", "1865-1876", "1865-76"),
        ("1865-1876", "1865-1876", "1865-76"),
        ("e123-e130", "e123-e130", "e123-30"),
        ("99-101", "99-101", "99-101"),
        ("412", "412", "412"),
        ("S1-S7", "S1-S7", "S1-7"),
    ],
)
def test_page_ranges_expand_and_abbreviate(given: str, expanded: str, abbreviated: str) -> None:
    assert expand_pages(given) == expanded
    assert abbreviate_pages(given) == abbreviated


def test_apa_lists_up_to_20_authors_with_an_ampersand() -> None:
    text = format_citation(_record(3), "apa")
    assert text.startswith("Author1, A. M., Author2, A. M., & Author3, A. M. (2018).")
    assert "Effect of drug X on outcome Y: a randomized trial." in text
    assert "*The New England journal of medicine*, *378*(20), 1865–1876." in text
    assert text.endswith("https://doi.org/10.1056/NEJMoa1715474")
    twenty = format_citation(_record(20), "apa")
    assert twenty.count("A. M.") == 20
    assert ", & Author20, A. M." in twenty


def test_apa_truncates_21_or_more_authors_to_19_an_ellipsis_and_the_last() -> None:
    text = format_citation(_record(25), "apa")
    assert "Author19, A. M., . . . Author25, A. M. (2018)." in text
    assert "Author20" not in text
    assert "&" not in text


def test_mla_uses_et_al_from_three_authors() -> None:
    one = format_citation(_record(1), "mla")
    assert one.startswith("Author1, Anna Maria1. “Effect of drug X")
    two = format_citation(_record(2), "mla")
    assert two.startswith("Author1, Anna Maria1, and Anna Maria2 Author2.")
    three = format_citation(_record(3), "mla")
    assert three.startswith("Author1, Anna Maria1, et al. “Effect")
    assert "Author2" not in three
    assert "*The New England journal of medicine*, vol. 378, no. 20, 17 May 2018" in three
    assert "pp. 1865–1876" in three
    assert three.endswith("https://doi.org/10.1056/NEJMoa1715474.")


def test_vancouver_lists_six_authors_then_et_al_and_abbreviates_pages() -> None:
    text = format_citation(_record(7), "vancouver")
    assert text.startswith(
        "Author1 AM, Author2 AM, Author3 AM, Author4 AM, Author5 AM, Author6 AM, et al."
    )
    assert "Author7" not in text
    assert "N Engl J Med. 2018 May 17;378(20):1865-76." in text
    assert text.endswith("doi: 10.1056/NEJMoa1715474. PMID: 29768149.")
    six = format_citation(_record(6), "vancouver")
    assert "et al" not in six


def test_bibtex_joins_authors_with_and_and_uses_double_dash_pages() -> None:
    text = format_citation(_record(2), "bibtex")
    assert text.startswith("@article{Author2018_29768149,")
    assert "author = {Author1, Anna Maria1 and Author2, Anna Maria2}" in text
    assert "pages = {1865--1876}" in text
    assert "doi = {10.1056/NEJMoa1715474}" in text
    assert text.count("{") == text.count("}")


def test_ris_has_one_tag_per_line_and_ends_with_er() -> None:
    lines = format_citation(_record(2), CitationStyle.RIS).splitlines()
    assert lines[0] == "TY  - JOUR"
    assert lines[-1] == "ER  - "
    assert all(re.match(r"^[A-Z][A-Z0-9]  - ", line) for line in lines)
    assert "AU  - Author1, Anna Maria1" in lines
    assert "SP  - 1865" in lines
    assert "EP  - 1876" in lines
    assert "DO  - 10.1056/NEJMoa1715474" in lines
    assert "PY  - 2018" in lines


def test_a_collective_author_is_kept_whole_in_every_style() -> None:
    record = _record(
        1, authors=(Author(collective_name="SYGMA 1 Investigators"), _person("Doe", "Jane", "J"))
    )
    cites = all_citations(record)
    assert cites["apa"].startswith("SYGMA 1 Investigators, & Doe, J. (2018).")
    assert cites["vancouver"].startswith("SYGMA 1 Investigators, Doe J.")
    assert "{SYGMA 1 Investigators} and Doe, Jane" in cites["bibtex"]
    assert "AU  - SYGMA 1 Investigators" in cites["ris"]
    assert cites["mla"].startswith("SYGMA 1 Investigators, and Jane Doe.")


def test_missing_parts_are_left_out_not_printed_empty() -> None:
    record = PubMedRecord(pmid="1", title="A title")
    cites = all_citations(record)
    assert cites["apa"] == "(n.d.). A title."
    assert cites["vancouver"] == "A title. PMID: 1."
    assert "None" not in "".join(cites.values())
    with pytest.raises(ValueError, match="chicago"):
        format_citation(record, "chicago")
