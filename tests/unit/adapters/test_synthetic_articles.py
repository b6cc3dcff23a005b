"""The synthetic PubMed articles: the same seed gives the same bytes, and each article's parts
follow NCBI's shape."""

from __future__ import annotations

from datetime import date

import pytest
from lxml import etree

from biomcp.testing.eutils.synthetic import generate_articles

pytestmark = pytest.mark.unit


def _articles(seed: int = 3) -> list[etree._Element]:
    data = generate_articles(60, start=date(2020, 1, 1), end=date(2020, 12, 31), seed=seed)
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    return root.findall("PubmedArticle")


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_ones() -> None:
    def make(seed: int) -> bytes:
        return generate_articles(20, start=date(2021, 1, 1), end=date(2021, 2, 1), seed=seed)

    assert make(5) == make(5)
    assert make(5) != make(6)


def test_mesh_headings_are_in_descriptor_order_and_animals_come_with_mice() -> None:
    for article in _articles():
        names = [d.text or "" for d in article.iter("DescriptorName")]
        assert names == sorted(names)
        assert ("Humans" in names) != ("Animals" in names)
        assert ("Mice" in names) == ("Animals" in names)
        assert sum(d.get("MajorTopicYN") == "Y" for d in article.iter("DescriptorName")) == 1


def test_each_journal_has_one_issn_the_print_one_when_there_is_one() -> None:
    for article in _articles():
        issns = article.findall(".//Journal/ISSN")
        assert len(issns) == 1
        if issns[0].get("IssnType") == "Electronic":
            assert article.findtext(".//MedlineTA") in {
                "PLoS One",
                "Sci Rep",
                "Nutrients",
                "Front Immunol",
            }


def test_the_history_has_the_entrez_and_pubmed_dates_at_one_time() -> None:
    for article in _articles():
        dates = article.findall(".//History/PubMedPubDate")
        assert [d.get("PubStatus") for d in dates] == ["entrez", "pubmed"]
        entrez, pubmed = ([c.text for c in d] for d in dates)
        assert entrez == pubmed
