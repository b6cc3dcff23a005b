"""The JATS reader (adapters/entrez/jats.py): NCBI's own EFetch db=pmc answer, and SYNTHETIC
articles written here for what that answer lacks (nested sections, captions, references,
MathML, back matter, the access and withdrawal marks, hostile and broken documents)."""

from __future__ import annotations

import pytest

from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.domain.fulltext import MAX_SECTION_DEPTH, article_status, flatten
from biomcp.ports.entrez import EntrezRequestError, EntrezResponseError
from tests.conftest import shared_data_path

_NS = 'xmlns:mml="http://www.w3.org/1998/Math/MathML" xmlns:xlink="http://www.w3.org/1999/xlink"'


def _set(*articles: str) -> bytes:
    return f"<?xml version='1.0'?><pmc-articleset>{''.join(articles)}</pmc-articleset>".encode()


def _article(body: str = "", *, pi: str = "open_access", pmc: str = "123", extra: str = "") -> str:
    """A SYNTHETIC JATS article."""
    properties = f"<?properties {pi}?>" if pi else ""
    return (
        f'<article {_NS} article-type="research-article">{properties}<front>'
        "<journal-meta><journal-title-group><journal-title>J Synth</journal-title>"
        "</journal-title-group></journal-meta><article-meta>"
        f'<article-id pub-id-type="pmid">555</article-id>'
        f'<article-id pub-id-type="pmc">{pmc}</article-id>'
        "<title-group><article-title>A <italic>synthetic</italic> trial</article-title>"
        "</title-group>"
        '<pub-date pub-type="collection"><year>2019</year></pub-date>'
        '<pub-date pub-type="epub"><year>2020</year></pub-date>'
        '<permissions><license license-type="open-access" '
        'xlink:href="https://creativecommons.org/licenses/by/4.0/">'
        "<license-p>CC BY 4.0.</license-p></license></permissions>"
        '<abstract abstract-type="graphical"><p>Graphical.</p></abstract>'
        "<abstract><sec><title>Background</title><p>Why.</p></sec>"
        "<sec><title>Results</title><p>What.</p></sec></abstract>"
        f"{extra}</article-meta></front>{body}</article>"
    )


_BODY = (
    "<body><p>Leading text.</p>"
    '<sec sec-type="intro"><label>1</label><title>Introduction</title><p>Intro text.</p></sec>'
    '<sec sec-type="methods"><title>Methods</title><p>Methods text with '
    '<mml:math alttext="x^2"><mml:mi>x</mml:mi></mml:math> and a '
    '<xref ref-type="bibr" rid="r1">1</xref> citation.</p>'
    '<fig id="f1"><label>Figure 1</label><caption><title>Flow.</title><p>CONSORT flow.</p>'
    "</caption></fig>"
    "<sec><title>Participants</title><p>Adults.</p>"
    '<table-wrap id="t1"><label>Table 1</label><caption><p>Baseline.</p></caption>'
    "<table><tr><td>cell text never shown</td></tr></table></table-wrap></sec></sec>"
    "</body>"
    "<back><ack><p>Thanks.</p></ack>"
    "<app-group><app><title>Appendix A</title><p>More.</p></app></app-group>"
    "<ref-list><ref id='r1'><label>1</label><element-citation><person-group><name>"
    "<surname>Doe</surname><given-names>J</given-names></name></person-group>"
    "<article-title>Prior work</article-title><source>J Prior</source><year>2001</year>"
    '<pub-id pub-id-type="pmid">111</pub-id><pub-id pub-id-type="doi">10.1/x</pub-id>'
    "</element-citation></ref>"
    "<ref id='r2'><mixed-citation>Roe R. Other. 2002.</mixed-citation></ref></ref-list></back>"
)


def test_ncbis_real_efetch_pmc_answer_is_read_field_by_field() -> None:
    xml = shared_data_path("eutils", "biopython", "efetch_pmc.xml").read_bytes()
    answer = parse_pmc_articles(xml)
    assert answer.problems == {}
    [article] = answer.articles
    assert (article.pmcid, article.pmid, article.doi) == (
        "PMC8435807",
        "34527728",
        "10.1183/23120541.50193-2021",
    )
    assert article.title is not None
    assert article.title.startswith("“Lung diffusing capacity")
    assert article.title.endswith("ERJ Open Res 2021; 7: 00193-2021.")
    assert (article.journal, article.year, article.article_type) == (
        "ERJ Open Research",
        "2021",
        "correction",
    )
    assert article.access == "open_access"
    assert article_status(article) == "available"
    assert article.license is not None
    assert article.license.url == "https://creativecommons.org/licenses/by-nc/4.0/"
    assert article.license.type == "ccbynclicense"
    assert article.license.text is not None
    assert "Non-Commercial" in article.license.text
    [section] = article.sections  # the correction's body is one untitled paragraph
    assert section.title == ""
    assert section.text.startswith("This article was originally published with an error")
    assert "corrected to −15.1%" in section.text
    assert (article.abstract, article.figures, article.tables, article.references) == (
        "",
        (),
        (),
        (),
    )


def test_sections_nest_and_keep_their_own_text_only() -> None:
    [article] = parse_pmc_articles(_set(_article(_BODY))).articles
    shown = [(path, s.title, s.kind) for path, _, s in flatten(article.sections)]
    assert shown == [
        ("1", "", None),
        ("2", "1 Introduction", "intro"),
        ("3", "Methods", "methods"),
        ("3.1", "Participants", None),
        ("4", "Acknowledgements", "ack"),
        ("5", "Appendix A", "app"),
    ]
    methods = article.sections[2]
    assert methods.text == "Methods text with x^2 and a 1 citation."
    assert "CONSORT" not in methods.text  # the figure is a caption, not section text
    assert methods.children[0].text == "Adults."
    assert "cell text" not in methods.children[0].text
    assert article.sections[0].text == "Leading text."
    assert article.abstract == "Background: Why.\n\nResults: What."  # the graphical one skipped
    assert (article.title, article.journal, article.year) == ("A synthetic trial", "J Synth",
                                                             "2020")  # fmt: skip


def test_captions_references_and_licence() -> None:
    [article] = parse_pmc_articles(_set(_article(_BODY))).articles
    assert [(c.kind, c.label, c.caption) for c in article.figures] == [
        ("figure", "Figure 1", "Flow. CONSORT flow.")
    ]
    assert [(c.kind, c.label, c.caption) for c in article.tables] == [
        ("table", "Table 1", "Baseline.")
    ]
    first, second = article.references
    assert (first.label, first.pmid, first.doi) == ("1", "111", "10.1/x")
    assert first.text == "Doe J. Prior work. J Prior. 2001."
    assert (second.label, second.text, second.pmid) == (None, "Roe R. Other. 2002.", None)
    assert article.license is not None
    assert (article.license.url, article.license.type, article.license.text) == (
        "https://creativecommons.org/licenses/by/4.0/",
        "open-access",
        "CC BY 4.0.",
    )


@pytest.mark.parametrize(
    ("pi", "body", "extra", "access", "status"),
    [
        ("open_access", _BODY, "", "open_access", "available"),
        ("manuscript", _BODY, "", "author_manuscript", "available"),
        ("", _BODY, "", "free_to_read", "available"),
        ("", "", "", "restricted", "not_open_access"),
        ("open_access", "", "", "open_access", "available"),
        ("withdrawn open_access", _BODY, "", "open_access", "withdrawn"),
        ("open_access", _BODY, '<notes notes-type="withdrawal"><p>Gone.</p></notes>',
         "open_access", "withdrawn"),
    ],
)  # fmt: skip
def test_access_and_status_follow_the_documented_rule(
    pi: str, body: str, extra: str, access: str, status: str
) -> None:
    [article] = parse_pmc_articles(_set(_article(body, pi=pi, extra=extra))).articles
    assert article.access == access
    assert article_status(article) == status


def test_a_pmcid_written_as_pmcid_is_accepted_and_an_article_without_one_is_a_problem() -> None:
    good = _article(_BODY, pmc="x").replace(
        '<article-id pub-id-type="pmc">x</article-id>',
        '<article-id pub-id-type="pmcid">PMC777</article-id>',
    )
    nameless = _article(_BODY, pmc="none").replace(
        '<article-id pub-id-type="pmc">none</article-id>', ""
    )
    answer = parse_pmc_articles(_set(nameless, good))
    assert [a.pmcid for a in answer.articles] == ["PMC777"]
    assert list(answer.problems) == ["#1"]


def test_deep_sections_are_folded_at_the_depth_limit() -> None:
    depth = MAX_SECTION_DEPTH + 4
    nested = "".join(f"<sec><title>L{n}</title><p>t{n}</p>" for n in range(1, depth + 1))
    body = f"<body>{nested}{'</sec>' * depth}</body>"
    [article] = parse_pmc_articles(_set(_article(body))).articles
    levels = [(level, s.title) for _, level, s in flatten(article.sections)]
    assert levels[-1] == (MAX_SECTION_DEPTH, f"L{MAX_SECTION_DEPTH}")
    deepest = next(s for _, level, s in flatten(article.sections) if level == MAX_SECTION_DEPTH)
    assert f"t{depth}" in deepest.text
    assert deepest.children == ()


@pytest.mark.parametrize(
    "xml",
    [
        _set(_article(_BODY))[:-40],  # truncated
        b"<html><head><title>Down</title></head><body>502</body></html>",
        b"<?xml version='1.0'?><eFetchResult><Other/></eFetchResult>",
        b'<?xml version="1.0"?><!DOCTYPE pmc-articleset [<!ENTITY x "boom">]>'
        b"<pmc-articleset>&x;</pmc-articleset>",
        b"",
    ],
)
def test_unreadable_answers_are_response_errors(xml: bytes) -> None:
    with pytest.raises(EntrezResponseError):
        parse_pmc_articles(xml)


def test_an_ncbi_error_payload_is_a_request_error() -> None:
    with pytest.raises(EntrezRequestError, match="Invalid uid"):
        parse_pmc_articles(b"<?xml version='1.0'?><ERROR>Invalid uid 0</ERROR>")
