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
    mla_pages,
)
from biomcp.domain.journals import MLA_MINOR_WORDS, journal_name, title_case
from biomcp.domain.records import AbstractSection, Author, Journal, PubDate, PubMedRecord

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
    assert "*The New England Journal of Medicine*, *378*(20), 1865–1876." in text
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
    assert one.startswith("Author1, Anna Maria1. “Effect of Drug X on Outcome Y: A Randomized")
    two = format_citation(_record(2), "mla")
    assert two.startswith("Author1, Anna Maria1, and Anna Maria2 Author2.")
    three = format_citation(_record(3), "mla")
    assert three.startswith("Author1, Anna Maria1, et al. “Effect")
    assert "Author2" not in three
    assert "*The New England Journal of Medicine*, vol. 378, no. 20, 17 May 2018" in three
    assert "pp. 1865–76" in three
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
    assert cites["apa"] == "A title. (n.d.)."
    assert cites["vancouver"] == "A title. PMID: 1."
    assert "None" not in "".join(cites.values())
    with pytest.raises(ValueError, match="chicago"):
        format_citation(record, "chicago")


@pytest.mark.parametrize(
    ("given", "mla"),
    [
        ("96-101", "96–101"),
        ("103-4", "103–04"),
        ("395-401", "395–401"),
        ("923-1003", "923–1003"),
        ("1003-5", "1003–05"),
        ("1608-774", "1608–774"),
        ("113-25", "113–25"),
        ("311-9", "311–19"),
        ("e123-e130", "e123–e130"),
        ("412", "412"),
    ],
)
def test_mla_page_ranges_follow_mla_9_number_ranges(given: str, mla: str) -> None:
    # MLA Handbook 9th ed., 2.137: 96–101, 103–04, 395–401, 923–1003, 1003–05, 1608–774.
    assert mla_pages(given) == mla


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Social justice (San Francisco, Calif.)", "Social Justice"),
        ("The American psychologist", "The American Psychologist"),
        ("Science (New York, N.Y.)", "Science"),
        (
            "Journal of magnetic resonance (San Diego, Calif. : 1997)",
            "Journal of Magnetic Resonance",
        ),
        (
            "Biochimica et biophysica acta. Molecular cell research",
            "Biochimica et Biophysica Acta. Molecular Cell Research",
        ),
        ("PLoS medicine", "PLoS Medicine"),
        ("JAMA oncology", "JAMA Oncology"),
        ("The lancet. Diabetes & endocrinology", "The Lancet. Diabetes & Endocrinology"),
    ],
)
def test_journal_name_drops_nlm_qualifiers_and_title_cases(title: str, name: str) -> None:
    assert journal_name(title, "Abbr") == name


def test_journal_name_falls_back_to_the_iso_abbreviation_only_without_a_title() -> None:
    assert journal_name(None, "Soc Justice") == "Soc Justice"
    assert journal_name("", None) == ""


def test_mla_title_case_lowers_every_preposition_and_keeps_written_capitals() -> None:
    assert title_case(
        "the role of p53 and miRNA in HIV-1: a review of studies between 2000 and 2010",
        MLA_MINOR_WORDS,
    ) == ("The Role of p53 and miRNA in HIV-1: A Review of Studies between 2000 and 2010")
    # APA keeps long prepositions capitalized, and the last word is always capitalized
    assert title_case("a look between the lines of") == "A Look Between the Lines Of"


def test_apa_article_numbers_and_page_ranges() -> None:
    article = _record(1, pages="e0021622", doi="10.1128/aac.00216-22")
    assert "*378*(20), Article e0021622. https://doi.org/" in format_citation(article, "apa")
    by_doi = _record(1, pages="1034", doi="10.3389/fphys.2018.01034")
    assert "Article 1034." in format_citation(by_doi, "apa")
    page = _record(1, pages="1034", doi="10.1000/xyz.555")
    assert "*378*(20), 1034." in format_citation(page, "apa")


def test_initials_keep_their_script_and_hyphens() -> None:
    record = _record(
        1,
        authors=(
            _person("Bruserud", "Øyvind", "Ø"),
            _person("Ling", "King-Hwa", "KH"),
            Author(last_name="Pascual", initials="Á"),
        ),
    )
    cites = all_citations(record)
    assert cites["apa"].startswith("Bruserud, Ø., Ling, K.-H., & Pascual, Á. (2018).")
    assert cites["vancouver"].startswith("Bruserud Ø, Ling KH, Pascual Á.")
    assert "Pascual, Á." in cites["bibtex"]


# --- the residue of the evidence rules, third pass -------------------------------------


@pytest.mark.parametrize(
    ("catalogue", "printed"),
    [
        ("The American psychologist", "American Psychologist"),
        ("The Journal of biological chemistry", "Journal of Biological Chemistry"),
        ("The New England journal of medicine", "The New England Journal of Medicine"),
        ("The Journal of neuroscience : the official journal", "The Journal of Neuroscience"),
        ("Theranostics", "Theranostics"),
    ],
)
def test_apa_and_mla_drop_the_leading_the_nlm_adds_unless_the_journal_keeps_it(
    catalogue: str, printed: str
) -> None:
    record = _record(1, journal=Journal(title=catalogue, iso_abbreviation="X", volume="7"))
    assert f"*{printed}*, *7*" in format_citation(record, "apa")
    assert f"*{printed}*, vol. 7" in format_citation(record, "mla")


@pytest.mark.parametrize(
    ("iso", "nlm"),
    [
        ("Biochim. Biophys. Acta", "Biochim Biophys Acta"),
        ("Proc. Natl. Acad. Sci. U.S.A.", "Proc Natl Acad Sci U S A"),
        ("Genome Res.", "Genome Res"),
        ("N Engl J Med", "N Engl J Med"),
        ("J Med Imaging (Bellingham)", "J Med Imaging (Bellingham)"),
    ],
)
def test_vancouver_prints_nlm_abbreviations_without_iso_periods(iso: str, nlm: str) -> None:
    record = _record(1, journal=Journal(title="T", iso_abbreviation=iso, volume="7"))
    assert f". {nlm}. 2018 May 17;7:" in format_citation(record, "vancouver")


@pytest.mark.parametrize(
    ("title", "abstract", "expected"),
    [
        (
            "OXA-48-Like β-lactamases: a global view.",
            "",
            "“OXA-48-Like β-Lactamases: A Global View.”",
        ),
        (
            "Spread of KPC- and OXA-48-like-producing strains.",
            "",
            "“Spread of KPC- and OXA-48-like-Producing Strains.”",
        ),
        (
            "Motility of spermatozoa of Diplodus puntazzo (Cetti).",
            "",
            "“Motility of Spermatozoa of Diplodus puntazzo (Cetti).”",
        ),
        (
            "Growth of Sparus aurata and Diplodus puntazzo in cages.",
            "Both D. puntazzo and S. aurata grew.",
            "“Growth of Sparus aurata and Diplodus puntazzo in Cages.”",
        ),
        (
            "Cancer care in Africa today.",
            "Cancer in Africa today.",
            "“Cancer Care in Africa Today.”",
        ),
    ],
    ids=["gene-like", "gene-like-compound", "authority", "abbreviated-genus", "place-name"],
)
def test_mla_title_case_keeps_gene_names_and_species_epithets_as_written(
    title: str, abstract: str, expected: str
) -> None:
    sections = (AbstractSection(abstract),) if abstract else ()
    record = _record(1, title=title, abstract=sections)
    assert expected in format_citation(record, "mla")
