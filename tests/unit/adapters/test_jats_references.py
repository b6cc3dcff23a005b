"""References, table footnotes and supplementary material in the JATS reader
(adapters/entrez/jats.py, jats_references.py): the 8 real PMC articles of
../shared/data/ncbi_files/pmc (skipped when absent), checked against an independent count of
their XML, and SYNTHETIC twins written here for each citation form."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from lxml import etree

from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.domain.fulltext import FullTextArticle
from tests.conftest import shared_data_path

REAL_ARTICLES = (
    "1471-2180-11-174.nxml",
    "1472-6831-8-11.nxml",
    "6605965a.nxml",
    "ehp-116-1694.nxml",
    "mds526.nxml",
    "pntd.0002065.nxml",
    "pone.0000217.nxml",
    "pone.0046493.nxml",
)
_LOOSE_SPACING = (" ,", " .", " ;", " :", "( ", " )")
_XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"'


def _nodes(node: etree._Element, path: str) -> list[etree._Element]:
    return cast("list[etree._Element]", node.xpath(path))


def _words(node: etree._Element) -> str:
    return " ".join("".join(cast("list[str]", node.xpath(".//text()"))).split())


def _ids(citation: etree._Element, kind: str) -> list[str]:
    return [_words(p) for p in citation.iter("pub-id") if p.get("pub-id-type") == kind]


def _real(name: str) -> tuple[etree._Element, FullTextArticle]:
    """A real article as an lxml tree (for counting) and as the reader reads it."""
    path: Path = shared_data_path("ncbi_files", "pmc", name)
    root = etree.parse(str(path), etree.XMLParser(load_dtd=False, no_network=True)).getroot()
    answer = parse_pmc_articles(b"<pmc-articleset>" + etree.tostring(root) + b"</pmc-articleset>")
    assert answer.problems == {}
    [article] = answer.articles
    return root, article


def _synthetic(back: str = "", body: str = "") -> FullTextArticle:
    """A SYNTHETIC article with the given body and back matter."""
    xml = (
        f"<pmc-articleset><article {_XLINK}><front><article-meta>"
        '<article-id pub-id-type="pmc">42</article-id></article-meta></front>'
        f"<body>{body}</body><back>{back}</back></article></pmc-articleset>"
    )
    [article] = parse_pmc_articles(xml.encode()).articles
    return article


def _refs(*citations: str) -> FullTextArticle:
    items = "".join(f"<ref id='r{n}'><label>{n}</label>{c}</ref>" for n, c in enumerate(citations))
    return _synthetic(f"<ref-list>{items}</ref-list>")


# --- the real articles -------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_every_real_reference_keeps_its_pmid_and_doi_in_their_own_fields(name: str) -> None:
    root, article = _real(name)
    citations = [next(c for c in r if c.tag != "label") for r in _nodes(root, "back//ref")]
    assert len(citations) == len(article.references)
    for citation, reference in zip(citations, article.references, strict=True):
        pmids = _ids(citation, "pmid")
        if pmids:
            assert reference.pmid == pmids[0]
            assert pmids[0] not in reference.text
        dois = _ids(citation, "doi")
        if dois:
            assert reference.doi == dois[0]
            assert dois[0] not in reference.text


@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_real_citation_lines_have_no_space_before_punctuation(name: str) -> None:
    _, article = _real(name)
    for reference in article.references:
        assert reference.text
        assert not any(bad in reference.text for bad in _LOOSE_SPACING), reference.text
        assert reference.text == " ".join(reference.text.split())


@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_real_references_footnotes_and_supplements_match_an_independent_count(name: str) -> None:
    root, article = _real(name)
    assert len(article.references) == len(_nodes(root, "back//ref"))
    for table, caption in zip(root.iter("table-wrap"), article.tables, strict=True):
        expected = len(_nodes(table, "table-wrap-foot//fn | table-wrap-foot/p"))
        assert len(caption.footnotes) == expected
    assert len(article.tables) == len(_nodes(root, "//table-wrap"))
    assert len(article.supplements) == len(_nodes(root, "//supplementary-material"))


@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_real_structured_references_name_their_authors_and_source(name: str) -> None:
    root, article = _real(name)
    for ref, reference in zip(_nodes(root, "back//ref"), article.references, strict=True):
        citation = next(c for c in ref if c.tag != "label")
        surnames = _nodes(citation, ".//surname")
        if citation.find("article-title") is not None and surnames:
            surname = _words(surnames[0])
            assert reference.authors[0].startswith(surname)
            assert reference.text.startswith(surname)
            assert reference.title is not None
            assert reference.title.rstrip(".?!") in reference.text


def test_the_plos_reference_of_the_issue_reads_as_a_citation() -> None:
    _, article = _real("pone.0046493.nxml")
    garton = next(r for r in article.references if r.authors[:1] == ("Garton NJ",))
    assert garton.text == (
        "Garton NJ, Christensen H, Minnikin DE, Adegbola RA, Barer MR. Intracellular lipophilic "
        "inclusions of mycobacteria in vitro and in sputum. Microbiology-Sgm. 2002;148:2951-8."
    )
    assert (garton.year, garton.volume, garton.pages) == ("2002", "148", "2951-2958")


# --- SYNTHETIC twins ---------------------------------------------------------------------


def test_an_element_citation_becomes_a_vancouver_line_with_its_ids_apart() -> None:
    [ref] = _refs(
        '<element-citation publication-type="journal"><person-group person-group-type="author">'
        "<name><surname>Doe</surname><given-names>Jane Ann</given-names></name>"
        "<name><surname>Roe</surname><given-names>R</given-names><suffix>Jr</suffix></name>"
        "</person-group><article-title>A trial of things</article-title>"
        "<source>J Synth</source><year>2001</year><volume>12</volume><issue>3</issue>"
        "<fpage>100</fpage><lpage>110</lpage>"
        '<pub-id pub-id-type="pmid">111</pub-id><pub-id pub-id-type="doi">10.1/x</pub-id>'
        "</element-citation>"
    ).references
    assert ref.text == "Doe JA, Roe R Jr. A trial of things. J Synth. 2001;12(3):100-10."
    assert (ref.label, ref.pmid, ref.doi, ref.authors) == ("0", "111", "10.1/x",
                                                           ("Doe JA", "Roe R Jr"))  # fmt: skip
    assert (ref.journal, ref.year, ref.volume, ref.issue, ref.pages) == (
        "J Synth", "2001", "12", "3", "100-110"
    )  # fmt: skip


def test_a_mixed_citation_drops_its_punctuation_tails_and_glued_ids() -> None:
    [ref] = _refs(
        '<mixed-citation publication-type="journal"><name><surname>Doe</surname>'
        "<given-names>J</given-names></name>, <name><surname>Roe</surname>"
        "<given-names>R</given-names></name> (<year>2002</year>) <article-title>Lipids "
        "<italic>in vitro</italic></article-title>. <source>J Synth</source>"
        "<volume>148</volume>: <fpage>2951</fpage>–<lpage>2958</lpage>"
        '<pub-id pub-id-type="pmid">222</pub-id></mixed-citation>'
    ).references
    assert ref.text == "Doe J, Roe R. Lipids in vitro. J Synth. 2002;148:2951-8."
    assert ref.pmid == "222"


def test_free_text_mixed_citations_keep_their_words_without_their_ids() -> None:
    [ref] = _refs(
        '<mixed-citation publication-type="other">Roe R ,  Doe J ( 1999 ) Veterinary '
        'Virology . USA: Elsevier. <pub-id pub-id-type="pmid">333</pub-id></mixed-citation>'
    ).references
    assert ref.text == "Roe R, Doe J (1999) Veterinary Virology. USA: Elsevier."
    assert (ref.pmid, ref.authors, ref.title) == ("333", (), None)


def test_collaborations_are_authors_and_etal_adds_et_al() -> None:
    collab, etal, many = _refs(
        '<mixed-citation publication-type="journal"><collab>WHO</collab> (<year>2007</year>) '
        "<article-title>Outbreaks</article-title>. <source>Wkly Epid Rec</source>"
        "<volume>20</volume>: <fpage>169</fpage>–<lpage>178</lpage></mixed-citation>",
        '<element-citation publication-type="journal"><person-group person-group-type="author">'
        "<name><surname>Doe</surname><given-names>J</given-names></name><etal/></person-group>"
        "<article-title>Short</article-title><source>J Synth</source><year>2009</year>"
        "<volume>1</volume><elocation-id>e12</elocation-id></element-citation>",
        '<element-citation publication-type="journal"><person-group person-group-type="author">'
        + "".join(f"<name><surname>A{n}</surname><given-names>B</given-names></name>"
                  for n in range(8))
        + "</person-group><article-title>Crowd</article-title><source>J</source>"
        "<year>2010</year></element-citation>",
    ).references  # fmt: skip
    assert collab.text == "WHO. Outbreaks. Wkly Epid Rec. 2007;20:169-78."
    assert collab.authors == ("WHO",)
    assert etal.text == "Doe J, et al. Short. J Synth. 2009;1:e12."
    assert (etal.et_al, etal.pages) == (True, "e12")
    assert many.text == "A0 B, A1 B, A2 B, A3 B, A4 B, A5 B, et al. Crowd. J. 2010."
    assert len(many.authors) == 8
    assert not many.et_al


def test_a_book_chapter_names_its_book_editors_and_publisher() -> None:
    chapter, book = _refs(
        '<element-citation publication-type="book"><person-group person-group-type="author">'
        "<name><surname>Swan</surname><given-names>R</given-names></name></person-group>"
        "<chapter-title>Rift Valley fever</chapter-title>"
        '<person-group person-group-type="editor"><name><surname>Coetzer</surname>'
        "<given-names>JAW</given-names></name><name><surname>Tustin</surname>"
        "<given-names>RC</given-names></name></person-group>"
        "<source>Infectious diseases of livestock</source><publisher-loc>Cape Town"
        "</publisher-loc><publisher-name>Oxford University Press</publisher-name>"
        "<year>2004</year><fpage>1037</fpage><lpage>1070</lpage></element-citation>",
        '<citation citation-type="book"><person-group person-group-type="author"><collab>'
        "World Health Organization</collab></person-group><source>A manual</source>"
        "<year>1980</year><publisher-name>Geneva: WHO</publisher-name></citation>",
    ).references
    assert chapter.text == (
        "Swan R. Rift Valley fever. In: Coetzer JAW, Tustin RC, editors. Infectious diseases "
        "of livestock. Cape Town: Oxford University Press; 2004. p. 1037-70."
    )
    assert (chapter.title, chapter.journal, chapter.editors) == (
        "Rift Valley fever", "Infectious diseases of livestock", ("Coetzer JAW", "Tustin RC")
    )  # fmt: skip
    assert book.text == "World Health Organization. A manual. Geneva: WHO; 1980."
    assert (book.title, book.journal) == ("A manual", None)


def test_dois_and_pubmed_links_in_ext_links_are_ids_and_other_links_a_url() -> None:
    [ref] = _refs(
        '<element-citation publication-type="webpage"><collab>NCBI</collab><year>2008</year>'
        "<source>GenBank Overview</source><comment>doi:<ext-link xlink:href="
        '"http://dx.doi.org/10.5555/gb">10.5555/gb</ext-link> <ext-link xlink:href='
        '"https://www.ncbi.nlm.nih.gov/pubmed/444">PubMed</ext-link> Available: <ext-link '
        'xlink:href="http://example.org/gb">http://example.org/gb</ext-link></comment>'
        "</element-citation>"
    ).references
    assert (ref.doi, ref.pmid, ref.url) == ("10.5555/gb", "444", "http://example.org/gb")
    assert ref.text == "NCBI. GenBank Overview. 2008. Available from: http://example.org/gb"


def test_table_footnotes_stay_with_their_table() -> None:
    article = _synthetic(
        body=(
            '<table-wrap id="t1"><label>Table 1</label><caption><p>Baseline.</p></caption>'
            "<table><tr><td>x</td></tr></table><table-wrap-foot>"
            "<fn><label>a</label><p>Among users only.</p></fn>"
            "<fn><label/><p>CI, confidence interval.</p></fn>"
            "<p><sup>b</sup>Adjusted for age.</p><p>NS = not significant</p>"
            "</table-wrap-foot></table-wrap>"
            '<table-wrap id="t2"><label>Table 2</label><table/></table-wrap>'
        )
    )
    first, second = article.tables
    assert first.footnotes == (
        "a Among users only.",
        "CI, confidence interval.",
        "b Adjusted for age.",
        "NS = not significant",
    )
    assert (second.label, second.footnotes) == ("Table 2", ())


def test_supplementary_material_keeps_label_caption_and_file_names_only() -> None:
    article = _synthetic(
        body=(
            '<sec><title>Supporting Information</title><supplementary-material id="s1">'
            "<label>Table S1</label><caption><p>Genes.</p><p>(DOC)</p></caption>"
            '<media xlink:href="https://example.org/files/pone.s001.doc?dl=1">'
            "<caption><p>Click here.</p></caption></media></supplementary-material></sec>"
        ),
        back="<supplementary-material><caption><title>Data</title></caption><media xlink:href="
        '"a.html"/><media xlink:href="b.doc"/><media xlink:href="a.html"/>'
        "</supplementary-material>",
    )
    table, data = article.supplements
    assert (table.kind, table.label, table.caption, table.files) == (
        "supplement", "Table S1", "Genes. (DOC)", ("pone.s001.doc",)
    )  # fmt: skip
    assert (data.label, data.caption, data.files) == (None, "Data", ("a.html", "b.doc"))
    assert "Genes" not in article.sections[0].text  # a caption, not section text


def test_a_reference_given_as_citation_alternatives_is_read_from_the_first() -> None:
    [ref] = _refs(
        '<citation-alternatives><element-citation publication-type="journal"><person-group>'
        "<name><surname>Doe</surname><given-names>J</given-names></name></person-group>"
        "<article-title>Twice</article-title><source>J</source><year>2011</year>"
        "</element-citation><mixed-citation>Doe J. Twice. J 2011.</mixed-citation>"
        "</citation-alternatives>"
    ).references
    assert ref.text == "Doe J. Twice. J. 2011."
