"""ESearch, ESummary, ELink and EInfo parsers against real NCBI answers and synthetic cases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from biomcp.adapters.entrez import parse_einfo, parse_elink, parse_esearch, parse_esummary
from biomcp.ports.entrez import (
    DocSummary,
    EntrezRequestError,
    EntrezResponseError,
    EntrezUnavailableError,
    EntrezWarning,
    FieldInfo,
    Link,
    LinkInfo,
    LinkSet,
)
from tests.conftest import shared_data_path

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eutils"


def _shared(relative: str) -> bytes:
    return shared_data_path("eutils", *relative.split("/")).read_bytes()


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


# --------------------------------------------------------------------------- ESearch


@pytest.mark.parametrize(
    ("relative", "count", "retstart", "retmax", "ids", "first", "last", "translation"),
    [
        (
            "biopython/esearch1.xml",
            63,
            0,
            20,
            20,
            "41282813",
            "37810457",
            '"biopython"[All Fields]',
        ),
        (
            "biopython/esearch3.xml",
            2651,
            6,
            6,
            6,
            "11121077",
            "11121072",
            '"proc natl acad sci u s a"[Journal] AND "97"[Volume]',
        ),
        (
            "biopython/esearch5.xml",
            5,
            0,
            5,
            5,
            "6540636",
            "3443459",
            '("stem cells"[MeSH Terms] OR ("stem"[All Fields] AND "cells"[All Fields]) OR '
            '"stem cells"[All Fields]) AND hasabstract[All Fields]',
        ),
        (
            "biopython/esearch6.xml",
            1018,
            0,
            20,
            20,
            "3069587804",
            "2274792553",
            "biomol trna[prop]",
        ),
        (
            "biopython/esearch7.xml",
            330,
            0,
            20,
            20,
            "3108048616",
            "2174081062",
            "000200020[molecular weight]",
        ),
    ],
)
def test_real_esearch_answers_give_counts_ids_and_translation(
    relative: str,
    count: int,
    retstart: int,
    retmax: int,
    ids: int,
    first: str,
    last: str,
    translation: str,
) -> None:
    result = parse_esearch(_shared(relative))

    assert (result.count, result.retstart, result.retmax) == (count, retstart, retmax)
    assert len(result.pmids) == ids
    assert (result.pmids[0], result.pmids[-1]) == (first, last)
    assert result.query_translation == translation
    assert (result.webenv, result.query_key) == (None, None)
    assert result.warnings == ()


def test_esearch_with_the_history_server_keeps_webenv_and_query_key() -> None:
    result = parse_esearch(_shared("biopython/esearch2.xml"))

    assert (result.count, result.retstart, result.retmax) == (42249, 0, 100)
    assert len(result.pmids) == 100
    assert len(set(result.pmids)) == 100
    assert (result.pmids[0], result.pmids[-1]) == ("41297076", "41296368")
    assert result.webenv == "MCID_6927d6e7fee3e90f880ec190"
    assert result.query_key == "1"
    assert result.query_translation is not None
    assert result.query_translation.endswith("AND 2025/09/27:2025/11/26[Date - Entry]")


def test_esearch_without_hits_reports_error_list_and_warning_list_entries() -> None:
    result = parse_esearch(_shared("biopython/esearch8.xml"))

    assert (result.count, result.retstart, result.retmax, result.pmids) == (0, 0, 0, ())
    assert result.query_translation == "(abcXYZ[All Fields])"
    assert result.warnings == (
        EntrezWarning("PhraseNotFound", "abcXYZ", source="ErrorList"),
        EntrezWarning("OutputMessage", "No items found.", source="WarningList"),
    )


def test_older_esearch_with_history_parses_like_the_new_one() -> None:
    result = parse_esearch(_shared("klortho/esearch.pubmed.xml"))

    assert (result.count, result.retstart, result.retmax) == (15169, 0, 100)
    assert len(result.pmids) == 100
    assert (result.pmids[0], result.pmids[-1]) == ("23175848", "23174999")
    assert result.webenv == "NCID_1_18991374_130.14.18.48_5555_1353814292_87026138"
    assert result.query_key == "1"
    assert result.query_translation == (
        '("neoplasms"[MeSH Terms] OR "neoplasms"[All Fields] OR "cancer"[All Fields]) '
        "AND 2012/09/25[EDAT] : 2012/11/24[EDAT]"
    )


def test_phrase_not_found_is_a_warning_while_the_rest_of_the_term_still_matched() -> None:
    result = parse_esearch(_shared("klortho/esearch.error.xml"))

    assert result.count == 5163
    assert len(result.pmids) == 20
    assert result.query_translation == '"obstetrics"[MeSH Terms]'
    assert result.warnings == (
        EntrezWarning("PhraseNotFound", "fleegle[MeSH Terms]", source="ErrorList"),
    )
    assert result.warnings[0].dropped == "fleegle"


def test_a_warning_names_the_part_of_the_term_pubmed_dropped() -> None:
    quoted = EntrezWarning("QuotedPhraseNotFound", ' "Retracted  Publication"[pt] ')
    assert quoted.dropped == "retracted publication"
    assert EntrezWarning("QuotedPhraseNotFound", '"Randomised Trial"').dropped == "randomised trial"
    assert EntrezWarning("PhraseNotFound", "abcXYZ", source="ErrorList").dropped == "abcxyz"
    assert EntrezWarning("OutputMessage", "No items found.").dropped is None
    assert EntrezWarning("FieldNotFound", "xyz", source="ErrorList").dropped is None


def test_esearch_count_only_answer_defaults_retstart_and_retmax_to_zero() -> None:
    result = parse_esearch(b"<eSearchResult><Count>39730388</Count></eSearchResult>")

    assert (result.count, result.retstart, result.retmax, result.pmids) == (39730388, 0, 0, ())


def test_esearch_error_beside_a_count_becomes_an_error_list_warning() -> None:
    xml = (
        b"<eSearchResult><Count>0</Count><RetMax>0</RetMax><RetStart>0</RetStart><IdList/>"
        b"<ERROR>Some partial complaint</ERROR></eSearchResult>"
    )

    result = parse_esearch(xml)

    assert result.warnings == (
        EntrezWarning("ERROR", "Some partial complaint", source="ErrorList"),
    )


def test_esearch_backend_failure_is_an_unavailable_error() -> None:
    xml = b"<eSearchResult><ERROR>Search Backend failed: timeout</ERROR></eSearchResult>"

    with pytest.raises(EntrezUnavailableError, match="Search Backend failed"):
        parse_esearch(xml)


def test_esearch_past_the_retstart_cap_is_a_request_error_despite_naming_the_backend() -> None:
    xml = (
        b"<eSearchResult><ERROR>Search Backend failed: Exception:\n'retstart' cannot be larger "
        b"than 9998. For PubMed, ESearch can only retrieve the first 9,999 records matching the "
        b"query.</ERROR></eSearchResult>"
    )

    with pytest.raises(EntrezRequestError, match="cannot be larger than 9998"):
        parse_esearch(xml)


@pytest.mark.parametrize(
    "xml",
    [
        b"<eSearchResult><RetMax>0</RetMax><IdList><Id>1</Id></IdList></eSearchResult>",
        b"<eSearchResult><Count>many</Count></eSearchResult>",
        b"<eSearchResult><Count>1_000</Count></eSearchResult>",
    ],
    ids=["no-count", "word", "underscore"],
)
def test_esearch_without_a_usable_count_is_a_response_error(xml: bytes) -> None:
    with pytest.raises(EntrezResponseError, match="Count"):
        parse_esearch(xml)


def test_esearch_parser_refuses_another_eutilities_document() -> None:
    with pytest.raises(EntrezResponseError, match="expected an ESearch <eSearchResult>"):
        parse_esearch(_shared("biopython/einfo2.xml"))


# --------------------------------------------------------------------------- NCBI errors


@pytest.mark.parametrize(
    ("parse", "relative", "message"),
    [
        (parse_esearch, "klortho/esearch.baderror.xml", "Invalid db name specified: fleegle"),
        (parse_einfo, "klortho/einfo.error.xml", "Can not retrieve DbInfo for db=fleegle"),
        (parse_esummary, "klortho/esummary.error.xml", "Invalid db name specified: fleegle"),
        (parse_esummary, "biopython/esummary8.xml", "Neither query_key nor id specified"),
    ],
    ids=["esearch", "einfo", "esummary", "esummary-v1"],
)
def test_real_ncbi_error_payloads_are_request_errors_with_ncbi_text(
    parse: object, relative: str, message: str
) -> None:
    assert callable(parse)

    with pytest.raises(EntrezRequestError) as caught:
        parse(_shared(relative))

    assert str(caught.value) == f"NCBI error: {message}"


# --------------------------------------------------------------------------- ESummary


def test_esummary_v2_gives_one_summary_per_document_with_every_field() -> None:
    summaries = parse_esummary(_shared("klortho/esummary.pubmed.xml"))

    assert [s.pmid for s in summaries] == ["5683731", "22144687"]
    assert summaries[0] == DocSummary(
        pmid="5683731",
        title="An assistive device for smoking.",
        journal="Paraplegia",
        source="Paraplegia",
        pub_types=("Journal Article",),
        pdat="1968 Aug",
        epubdate=None,
        edat="1968/08/01 00:00",
        authors=("Goldberg MJ", "Davis LJ"),
        volume="6",
        issue="2",
        pages="103-5",
        languages=("eng",),
        doi="10.1038/sc.1968.18",
        pmcid=None,
        issn="0031-1758",
        eissn=None,
        error=None,
    )


def test_esummary_v2_second_document_keeps_pmc_epub_date_and_both_issns() -> None:
    second = parse_esummary(_shared("klortho/esummary.pubmed.xml"))[1]

    assert second.title == "GenBank."
    assert second.journal == "Nucleic acids research"
    assert second.source == "Nucleic Acids Res"
    assert second.epubdate == "2011 Dec 5"
    assert second.edat == "2011/12/07 06:00"
    assert second.authors == (
        "Benson DA",
        "Karsch-Mizrachi I",
        "Clark K",
        "Lipman DJ",
        "Ostell J",
        "Sayers EW",
    )
    assert second.issue == "Database issue"
    assert second.doi == "10.1093/nar/gkr1202"
    assert second.pmcid == "PMC3245039"
    assert (second.issn, second.eissn) == ("0305-1048", "1362-4962")


def test_esummary_v1_is_read_as_a_fallback() -> None:
    summaries = parse_esummary(_shared("biopython/esummary1.xml"))

    assert summaries == (
        DocSummary(
            pmid="11850928",
            title="Zirconium granuloma following treatment of rhus dermatitis.",
            journal="Archives of dermatology",
            source="Arch Dermatol",
            pub_types=("Journal Article",),
            pdat="1965 Aug",
            edat="1965/08/01 00:00",
            authors=("LoPresti PJ", "Hambrick GW Jr"),
            volume="92",
            issue="2",
            pages="188-91",
            languages=("English",),
            issn="0003-987X",
        ),
        DocSummary(
            pmid="11482001",
            title="Adverse and beneficial effects of plant extracts on skin and skin disorders.",
            journal="Adverse drug reactions and toxicological reviews",
            source="Adverse Drug React Toxicol Rev",
            pub_types=("Journal Article", "Review"),
            pdat="2001 Jun",
            edat="2001/08/03 10:00",
            authors=("Mantle D", "Gok MA", "Lennard TW"),
            volume="20",
            issue="2",
            pages="89-103",
            languages=("English",),
            issn="0964-198X",
        ),
    )


def test_esummary_v1_of_another_database_keeps_what_it_shares_with_pubmed() -> None:
    summaries = parse_esummary(_shared("biopython/esummary3.xml"))

    assert summaries == (
        DocSummary("28800982", title="hemochromatosis, partial [Homo sapiens]"),
        DocSummary("28628843", title="erythroid associated factor [Homo sapiens]"),
    )


def test_synthetic_esummary_v2_reads_history_entrez_date_and_per_document_errors() -> None:
    complete, failed, sparse = parse_esummary(_fixture("synthetic_esummary_v2.xml"))

    assert complete == DocSummary(
        pmid="39000001",
        title="A synthetic title over two lines.",
        journal="Synthetic journal of testing",
        source="Synth J",
        pub_types=("Journal Article", "Randomized Controlled Trial"),
        pdat="2024 Jul 15",
        epubdate="2024 Jun 30",
        edat="2024/07/01 06:41",
        authors=("Doe J", "Synthetic Trials Group"),
        volume="12",
        issue="3",
        pages="101-109",
        languages=("eng", "fre"),
        doi="10.1000/synth.2024.001",
        pmcid="PMC11223",
        issn="1234-5678",
        eissn="8765-4321",
    )
    assert failed == DocSummary("99999999", error="cannot get document summary")
    assert sparse == DocSummary(
        pmid="39000003",
        title="Third summary.",
        source="Synth Rep",
        pdat="2023",
        languages=("eng",),
        pmcid="PMC445566",
        eissn="2222-3333",
    )


def test_esummary_with_no_documents_and_no_error_is_empty() -> None:
    xml = b'<eSummaryResult><DocumentSummarySet status="OK"/></eSummaryResult>'

    assert parse_esummary(xml) == ()


def test_esummary_error_beside_documents_keeps_the_documents() -> None:
    xml = (
        b"<eSummaryResult><ERROR>Invalid uid abc at position=1</ERROR>"
        b'<DocumentSummarySet status="OK"><DocumentSummary uid="7"><Title>T.</Title>'
        b"</DocumentSummary></DocumentSummarySet></eSummaryResult>"
    )

    assert parse_esummary(xml) == (DocSummary("7", title="T."),)


def test_esummary_error_inside_an_empty_summary_set_is_raised() -> None:
    xml = (
        b'<eSummaryResult><DocumentSummarySet status="OK"><DbBuild>Build-1</DbBuild>'
        b"<ERROR>Invalid uid abc at position=0</ERROR></DocumentSummarySet></eSummaryResult>"
    )

    with pytest.raises(EntrezRequestError, match="Invalid uid abc"):
        parse_esummary(xml)


# --------------------------------------------------------------------------- ELink


_ELINK_NAMES = (
    "pubmed_pubmed",
    "pubmed_pubmed_citedin",
    "pubmed_pubmed_combined",
    "pubmed_pubmed_five",
    "pubmed_pubmed_reviews",
    "pubmed_pubmed_reviews_five",
)


@pytest.mark.parametrize(
    ("relative", "sources", "names", "sizes"),
    [
        (
            "biopython/elink1.xml",
            ("9298984",),
            (*_ELINK_NAMES[:4], "pubmed_pubmed_refs", *_ELINK_NAMES[4:]),
            (101, 39, 5, 5, 56, 1, 5),
        ),
        ("biopython/elink2.xml", ("48819", "7140345"), ("nuccore_protein",), (1,)),
        ("biopython/elink3.xml", ("11812492", "11774222"), _ELINK_NAMES, (284, 3, 10, 10, 282, 10)),
        ("biopython/elink4.xml", ("12242737",), _ELINK_NAMES, (156, 6, 5, 5, 1, 5)),
        (
            "metapub/sample_related_pmids_result.xml",
            ("14873513",),
            _ELINK_NAMES,
            (76, 6, 6, 6, 11, 6),
        ),
    ],
)
def test_real_elink_answers_give_link_names_in_order_with_every_link(
    relative: str, sources: tuple[str, ...], names: tuple[str, ...], sizes: tuple[int, ...]
) -> None:
    (link_set,) = parse_elink(_shared(relative))

    assert link_set.source_pmids == sources
    assert tuple(link_set.links) == names
    assert tuple(len(links) for links in link_set.links.values()) == sizes
    for links in link_set.links.values():
        assert all(link.score is None for link in links)  # none of these asked for scores


def test_elink_keeps_link_ids_exactly_and_in_document_order() -> None:
    (link_set,) = parse_elink(_shared("biopython/elink1.xml"))

    assert link_set.links["pubmed_pubmed"][:3] == (
        Link("9298984"),
        Link("8794856"),
        Link("9700164"),
    )
    assert link_set.links["pubmed_pubmed_reviews"] == (Link("9298984"),)
    assert link_set.links["pubmed_pubmed_refs"][:3] == (
        Link("14732139"),
        Link("8909532"),
        Link("8898221"),
    )

    (related,) = parse_elink(_shared("metapub/sample_related_pmids_result.xml"))
    assert related.links["pubmed_pubmed_citedin"][:3] == (
        Link("22356836"),
        Link("19791082"),
        Link("15798120"),
    )


def test_elink_nuccore_answer_is_read_like_a_pubmed_one() -> None:
    assert parse_elink(_shared("biopython/elink2.xml")) == (
        LinkSet(("48819", "7140345"), {"nuccore_protein": (Link("48820"),)}),
    )


@pytest.mark.parametrize(
    ("relative", "sources"),
    [
        ("biopython/elink5.xml", ("10611131",)),
        ("biopython/elink6.xml", ("12085856", "12085853")),
        ("biopython/elink7.xml", ("12169658", "11748140")),
        ("biopython/elink8.xml", ("12068369",)),
    ],
    ids=["llinks", "llinks-two", "acheck", "ncheck"],
)
def test_llinks_and_check_answers_give_link_sets_without_links(
    relative: str, sources: tuple[str, ...]
) -> None:
    assert parse_elink(_shared(relative)) == (LinkSet(sources, {}),)


def test_elink_answer_without_any_link_gives_an_empty_link_set() -> None:
    assert parse_elink(_shared("metapub/medgen_elink_pubmed_0_entries.xml")) == (
        LinkSet(("0",), {}),
    )


def test_elink_scores_are_kept_and_a_failed_link_set_beside_good_ones_is_skipped() -> None:
    assert parse_elink(_fixture("synthetic_elink_scores.xml")) == (
        LinkSet(
            ("100",),
            {
                "pubmed_pubmed": (
                    Link("100", 2147483647),
                    Link("200", 45012345),
                    Link("300", 9876),
                ),
                "pubmed_pubmed_citedin": (Link("400"),),
            },
        ),
        LinkSet(("500",), {}),
    )


def test_elink_where_every_link_set_failed_raises_ncbi_error() -> None:
    xml = (
        b"<eLinkResult><LinkSet><DbFrom>pubmed</DbFrom><IdList><Id>0</Id></IdList>"
        b"<ERROR>Invalid uid 0 at position=0</ERROR></LinkSet></eLinkResult>"
    )

    with pytest.raises(EntrezRequestError, match=re.escape("NCBI error: Invalid uid 0")):
        parse_elink(xml)


def test_elink_error_payload_without_link_sets_raises_ncbi_error() -> None:
    xml = b"<eLinkResult><ERROR>Unable to obtain query #1</ERROR></eLinkResult>"

    with pytest.raises(EntrezUnavailableError, match="Unable to obtain query"):
        parse_elink(xml)


def test_elink_score_that_is_not_an_integer_is_a_response_error() -> None:
    xml = (
        b"<eLinkResult><LinkSet><IdList><Id>1</Id></IdList><LinkSetDb>"
        b"<LinkName>pubmed_pubmed</LinkName><Link><Id>2</Id><Score>high</Score></Link>"
        b"</LinkSetDb></LinkSet></eLinkResult>"
    )

    with pytest.raises(EntrezResponseError, match="Score"):
        parse_elink(xml)


# --------------------------------------------------------------------------- EInfo


def test_einfo_for_pubmed_gives_counts_fields_and_links() -> None:
    info = parse_einfo(_shared("biopython/einfo2.xml"))

    assert info.db_name == "pubmed"
    assert info.menu_name == "PubMed"
    assert info.description == "PubMed bibliographic record"
    assert info.build == "Build-2025.11.27.06.33"
    assert info.count == 39730388
    assert info.last_update == "2025/11/27 06:33"
    assert len(info.fields) == 50
    assert len(info.links) == 57
    assert info.fields[1] == FieldInfo(
        name="UID",
        full_name="UID",
        description="Unique number assigned to publication",
        term_count=None,
        is_date=False,
        is_numerical=True,
    )
    by_name = {f.name: f for f in info.fields}
    assert by_name["EDAT"] == FieldInfo(
        name="EDAT",
        full_name="Date - Entry",
        description="Date publication first accessible through Entrez",
        is_date=True,
    )
    assert by_name["AFFL"].description == "Author's institutional affiliation and address"
    assert info.links[0] == LinkInfo(
        name="pubmed_assembly", menu="Assembly", description="Assembly", db_to="assembly"
    )
    assert info.links[-1] == LinkInfo(
        name="pubmed_taxonomy_entrez",
        menu="Taxonomy via GenBank",
        description="Related Taxonomy entry computed using other Entrez links",
        db_to="taxonomy",
    )
    names = {link.name for link in info.links}
    assert {"pubmed_pubmed", "pubmed_pubmed_refs"} <= names
    # EInfo does not advertise every link ELink serves: citedin answers (elink1) but is unlisted.
    assert "pubmed_pubmed_citedin" not in names


def test_einfo_term_counts_are_read_when_present() -> None:
    xml = (
        b"<eInfoResult><DbInfo><DbName>pubmed</DbName><Count></Count><FieldList><Field>"
        b"<Name>TITL</Name><TermCount>12345</TermCount><IsDate>N</IsDate>"
        b"<IsNumerical>N</IsNumerical></Field></FieldList></DbInfo></eInfoResult>"
    )

    info = parse_einfo(xml)

    assert info.count is None
    assert info.fields == (FieldInfo("TITL", term_count=12345),)


def test_einfo_without_db_lists_databases_and_is_refused() -> None:
    with pytest.raises(EntrezResponseError, match="expected DbInfo"):
        parse_einfo(_shared("biopython/einfo1.xml"))


def test_truncated_einfo_is_a_response_error() -> None:
    with pytest.raises(EntrezResponseError, match="not well-formed"):
        parse_einfo(_shared("biopython/einfo4.xml"))
