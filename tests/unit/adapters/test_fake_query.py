"""The fake E-utilities' query language, on a small hand-made corpus."""

from __future__ import annotations

from xml.sax.saxutils import escape

import pytest

from biomcp.testing.eutils.corpus import FakeCorpus
from biomcp.testing.eutils.index import SearchIndex
from biomcp.testing.eutils.query import (
    BinOp,
    QuerySyntaxError,
    Term,
    parse_query,
    translate,
)

pytestmark = pytest.mark.unit


def _article(
    pmid: int,
    title: str,
    *,
    abstract: str = "",
    mesh: tuple[str, ...] = (),
    major: tuple[str, ...] = (),
    types: tuple[str, ...] = ("Journal Article",),
    authors: tuple[tuple[str, str], ...] = (("Doe", "J"),),
    journal: tuple[str, str] = ("Journal of examples", "J Ex"),
    year: int = 2020,
    edat: tuple[int, int, int] = (2020, 1, 1),
    keywords: tuple[str, ...] = (),
    language: str = "eng",
) -> str:
    heads = "".join(
        f'<MeshHeading><DescriptorName MajorTopicYN="{"Y" if d in major else "N"}">'
        f"{escape(d)}</DescriptorName></MeshHeading>"
        for d in mesh
    )
    people = "".join(
        f"<Author><LastName>{escape(last)}</LastName><Initials>{initials}</Initials></Author>"
        for last, initials in authors
    )
    pts = "".join(f"<PublicationType>{escape(t)}</PublicationType>" for t in types)
    words = "".join(f"<Keyword>{escape(k)}</Keyword>" for k in keywords)
    y, m, d = edat
    return (
        f"<PubmedArticle><MedlineCitation><PMID>{pmid}</PMID><Article><Journal>"
        f"<ISSN>1234-5678</ISSN><JournalIssue><PubDate><Year>{year}</Year><Month>Jun</Month>"
        f"</PubDate></JournalIssue><Title>{escape(journal[0])}</Title>"
        f"<ISOAbbreviation>{escape(journal[1])}</ISOAbbreviation></Journal>"
        f"<ArticleTitle>{escape(title)}</ArticleTitle>"
        f"<Abstract><AbstractText>{escape(abstract)}</AbstractText></Abstract>"
        f"<AuthorList>{people}</AuthorList><Language>{language}</Language>"
        f"<PublicationTypeList>{pts}</PublicationTypeList></Article>"
        f"<MeshHeadingList>{heads}</MeshHeadingList><KeywordList>{words}</KeywordList>"
        f'</MedlineCitation><PubmedData><History><PubMedPubDate PubStatus="entrez">'
        f"<Year>{y}</Year><Month>{m}</Month><Day>{d}</Day></PubMedPubDate></History>"
        f"</PubmedData></PubmedArticle>"
    )


ARTICLES = [
    _article(
        101,
        "Asthma in children: a cohort",
        abstract="Wheeze and asthma were followed in cardiology clinics.",
        mesh=("Asthma", "Child", "Humans"),
        major=("Asthma",),
        types=("Journal Article", "Observational Study"),
        authors=(("Smith", "JA"), ("Müller", "K")),
        journal=("The Lancet", "Lancet"),
        year=2019,
        edat=(2019, 3, 1),
        keywords=("wheezing", "paediatrics"),
    ),
    _article(
        102,
        "Heart failure and obesity",
        abstract="Obesity increases the risk of heart failure.",
        mesh=("Heart Failure", "Obesity", "Humans"),
        major=("Heart Failure",),
        types=("Journal Article", "Randomized Controlled Trial"),
        authors=(("Smith", "B"),),
        journal=("BMJ (Clinical research ed.)", "BMJ"),
        year=2020,
        edat=(2020, 6, 15),
    ),
    _article(
        103,
        "Obesity in mice",
        abstract="The failure of the heart was rare in obese mice. Cardiovascular outcomes.",
        mesh=("Obesity", "Mice", "Animals"),
        types=("Journal Article",),
        authors=(("Garcia", "M"),),
        year=2021,
        edat=(2021, 1, 10),
        language="ger",
    ),
    _article(
        104,
        "COVID-19 and asthma outcomes",
        abstract="A randomized trial of inhaled steroids.",
        mesh=("COVID-19", "Asthma", "Humans"),
        types=("Journal Article", "Randomized Controlled Trial", "Multicenter Study"),
        authors=(("Smithson", "A"),),
        journal=("The Lancet", "Lancet"),
        year=2021,
        edat=(2021, 7, 1),
    ),
]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    document = ("<PubmedArticleSet>" + "".join(ARTICLES) + "</PubmedArticleSet>").encode()
    corpus = FakeCorpus.from_xml_bytes(document)
    assert len(corpus) == 4, corpus.problems
    return SearchIndex(corpus.entries())


def search(index: SearchIndex, query: str) -> set[str]:
    return {index.entries[d].pmid for d in index.evaluate(parse_query(query)).docs}


# --------------------------------------------------------------------------- operators


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("asthma", {"101", "104"}),
        ("obesity AND mice", {"103"}),
        ("asthma OR mice", {"101", "103", "104"}),
        ("obesity NOT mice", {"102"}),
        ("obesity mice", {"103"}),  # implicit AND
    ],
)
def test_boolean_operators(index: SearchIndex, query: str, expected: set[str]) -> None:
    assert search(index, query) == expected


def test_lower_case_operators_are_words(index: SearchIndex) -> None:
    assert search(index, "mice OR covid") == {"103", "104"}
    # "or" is an ordinary word here; found nowhere, it is dropped (as NCBI does) and the
    # remaining terms are ANDed: no article is about both mice and covid.
    result = index.evaluate(parse_query("mice or covid"))
    assert [t.text for t in result.not_found] == ["or"]
    assert result.docs == set()


def test_operators_are_evaluated_left_to_right(index: SearchIndex) -> None:
    # PubMed: "Boolean operators are processed left to right" - no AND-before-OR precedence.
    # children (101) OR mice (103), then AND obesity: only 103 survives.
    assert search(index, "children OR mice AND obesity") == {"103"}
    # With AND binding tighter it would have been 101 | (103 & obesity) = {101, 103}:
    assert search(index, "children OR (mice AND obesity)") == {"101", "103"}
    # and the other way round, (asthma AND covid) OR mice:
    assert search(index, "asthma AND covid OR mice") == {"103", "104"}
    assert search(index, "asthma AND (covid OR mice)") == {"104"}
    # NOT takes whatever is on its left so far.
    assert search(index, "asthma OR obesity NOT humans") == {"103"}


def test_left_to_right_tree_shape() -> None:
    node = parse_query("a OR b AND c NOT d")
    assert isinstance(node, BinOp)
    assert node.op == "NOT"
    assert isinstance(node.left, BinOp)
    assert node.left.op == "AND"
    assert isinstance(node.left.left, BinOp)
    assert node.left.left.op == "OR"


def test_parentheses_nest(index: SearchIndex) -> None:
    assert search(index, "((asthma OR obesity) NOT (mice OR covid))") == {"101", "102"}


# --------------------------------------------------------------------------- phrases and tokens


def test_quoted_phrase_matches_consecutive_tokens_only(index: SearchIndex) -> None:
    assert search(index, '"heart failure"') == {"102"}  # 103 has "failure of the heart"
    assert search(index, "heart failure") == {"102", "103"}


def test_matching_ignores_case_punctuation_and_accents(index: SearchIndex) -> None:
    assert search(index, "ASTHMA") == {"101", "104"}
    assert search(index, "covid-19") == {"104"}
    assert search(index, '"COVID 19"') == {"104"}
    assert search(index, "muller[au]") == {"101"}


def test_trailing_wildcard(index: SearchIndex) -> None:
    assert search(index, "cardio*") == {"101", "103"}  # cardiology, cardiovascular
    assert search(index, "obes*[tiab]") == {"102", "103"}
    assert search(index, "randomized controlled*[pt]") == {"102", "104"}


# --------------------------------------------------------------------------- field tags


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("asthma[ti]", {"101", "104"}),
        ("wheeze[ti]", set()),
        ("wheeze[ab]", {"101"}),
        ("wheeze[tiab]", {"101"}),
        ("paediatrics[tiab]", {"101"}),  # author keywords are part of [tiab]
        ("paediatrics[ot]", {"101"}),
        ('"heart failure"[tiab]', {"102"}),
        ("heart failure[tiab]", {"102"}),  # a tagged run of words is a phrase
        ("asthma[mh]", {"101", "104"}),
        ("asthma[mesh]", {"101", "104"}),
        ("Asthma[MeSH Terms]", {"101", "104"}),
        ("heart[mh]", set()),  # MeSH matches whole descriptors
        ("asthma[majr]", {"101"}),
        ("randomized controlled trial[pt]", {"102", "104"}),
        ('"Randomized Controlled Trial"[Publication Type]', {"102", "104"}),
        ("mice[all]", {"103"}),
        ("lancet[All Fields]", {"101", "104"}),  # journal names are in All Fields
        ("smith[all]", {"101", "102"}),  # so are authors
        ("lancet[ta]", {"101", "104"}),
        ('"the lancet"[journal]', {"101", "104"}),
        ("1234-5678[ta]", {"101", "102", "103", "104"}),  # an ISSN names the journal too
        ("smith[au]", {"101", "102"}),  # every Smith, not Smithson
        ("smith j[au]", {"101"}),  # initials truncate: J matches JA
        ("smith ja[au]", {"101"}),
        ("smith jb[au]", set()),
        ("ger[la]", {"103"}),
        ("103[uid]", {"103"}),
        ("104[pmid]", {"104"}),
        ("102:103[uid]", {"102", "103"}),  # a PMID range
        ("102[uid] : 104[uid]", {"102", "103", "104"}),
        ("(asthma OR obesity) AND 100:102[uid]", {"101", "102"}),
    ],
)
def test_field_tags(index: SearchIndex, query: str, expected: set[str]) -> None:
    assert search(index, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("2021[dp]", {"103", "104"}),
        ("2019/01/01:2020/12/31[dp]", {"101", "102"}),
        ("2020/06[dp]", {"102"}),
        ('"2019/01/01"[Date - Publication] : "2020/12/31"[Date - Publication]', {"101", "102"}),
        ("2020/06/15[edat]", {"102"}),
        ("2021/01/01:2021/06/30[edat]", {"103"}),
        ("obesity AND 2021[dp]", {"103"}),
    ],
)
def test_dates(index: SearchIndex, query: str, expected: set[str]) -> None:
    assert search(index, query) == expected


def test_unknown_field_tag_searches_all_fields_and_says_so(index: SearchIndex) -> None:
    result = index.evaluate(parse_query("asthma[xyz]"))
    assert result.unknown_fields == ["xyz"]
    assert {index.entries[d].pmid for d in result.docs} == {"101", "104"}


def test_terms_found_nowhere_are_reported_and_dropped(index: SearchIndex) -> None:
    result = index.evaluate(parse_query("fleegle"))
    assert result.docs == set()
    assert result.node is None
    assert [t.label() for t in result.not_found] == ["fleegle"]
    result = index.evaluate(parse_query("fleegle[mh] AND asthma"))
    assert [t.label() for t in result.not_found] == ["fleegle[MeSH Terms]"]
    assert {index.entries[d].pmid for d in result.docs} == {"101", "104"}
    assert result.node is not None
    assert translate(result.node) == '"asthma"[All Fields]'


def test_translation_is_normalized(index: SearchIndex) -> None:
    node = parse_query("Asthma[mh] OR  obes*  AND ( mice[ti] OR children )")
    assert translate(node) == (
        '("asthma"[MeSH Terms] OR obes*[All Fields]) AND ("mice"[Title] OR "children"[All Fields])'
    )
    assert translate(parse_query("asthma AND 5:9[pmid]")) == '"asthma"[All Fields] AND 5:9[UID]'
    assert translate(parse_query("2020[dp]")) == (
        '"2020/01/01"[Date - Publication] : "2020/12/31"[Date - Publication]'
    )


def test_terms_keep_what_was_typed() -> None:
    node = parse_query('"Heart Failure"[tiab]')
    assert node == Term("Heart Failure", ("heart", "failure"), "tiab", quoted=True)


# --------------------------------------------------------------------------- syntax errors


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("(asthma OR mice", "unbalanced parentheses"),
        ("asthma OR mice)", "unbalanced parentheses"),
        ("asthma AND", "AND without a term after it"),
        ("OR asthma", "OR without a term before it"),
        ("asthma AND OR mice", "OR without a term before it"),
        ("asthma NOT ()", "empty parentheses"),
        ('"heart failure', "unbalanced quotation marks"),
        ("asthma[tiab", "unbalanced square brackets"),
        ("[tiab]", "without a term"),
        ("2020/13[dp]", "Invalid date"),
        ("20x0[dp]", "Invalid date"),
        ("1:x[uid]", "Invalid UID range"),
        ("   ", "Empty term"),
    ],
)
def test_syntax_errors(query: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_query(query)
