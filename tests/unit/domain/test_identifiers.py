"""Recognising PMIDs, PMCIDs (with version) and DOIs in the forms people write them."""

from __future__ import annotations

import pytest

from biomcp.domain.identifiers import (
    ArticleId,
    doi_key,
    group_by_kind,
    parse_article_id,
    parse_article_ids,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "kind", "value", "version"),
    [
        ("23193287", "pmid", "23193287", None),
        (" PMID: 23193287 ", "pmid", "23193287", None),
        ("pmid 23193287", "pmid", "23193287", None),
        ("PMC3531190", "pmcid", "PMC3531190", None),
        ("pmc3531190", "pmcid", "PMC3531190", None),
        ("PMC3531190.2", "pmcid", "PMC3531190", 2),
        ("PMCID: PMC3531190", "pmcid", "PMC3531190", None),
        ("10.1093/nar/gks1195", "doi", "10.1093/nar/gks1195", None),
        ("doi:10.1093/NAR/gks1195", "doi", "10.1093/NAR/gks1195", None),
        ("https://doi.org/10.1093/nar/gks1195", "doi", "10.1093/nar/gks1195", None),
        ("http://dx.doi.org/10.1093/nar/gks1195", "doi", "10.1093/nar/gks1195", None),
    ],
)
def test_each_form_is_recognised_and_normalised(
    text: str, kind: str, value: str, version: int | None
) -> None:
    parsed = parse_article_id(text)
    assert parsed is not None
    assert (parsed.kind, parsed.value, parsed.version) == (kind, value, version)
    assert parsed.given == text.strip()


@pytest.mark.parametrize(
    "text",
    ["", "   ", "0123", "12345678901", "PMC", "PMC12a", "PMC0", "11.1000/x", "10.1/x",
     "10.1093/", "abc", "doi:", "PMC123.", "x" * 400],
)  # fmt: skip
def test_what_is_not_an_identifier_is_refused(text: str) -> None:
    assert parse_article_id(text) is None


def test_a_versioned_pmcid_keeps_its_version_apart() -> None:
    parsed = parse_article_id("PMC3531190.12")
    assert parsed is not None
    assert parsed.value == "PMC3531190"
    assert parsed.versioned == "PMC3531190.12"
    assert parse_article_id("PMC3531190") == ArticleId("PMC3531190", "pmcid", "PMC3531190")


def test_dois_compare_case_insensitively_without_their_prefix() -> None:
    assert doi_key("https://doi.org/10.1093/NAR/GKS1195") == doi_key("10.1093/nar/gks1195")
    one, two = parse_article_id("10.1093/NAR/gks1195"), parse_article_id("doi:10.1093/nar/GKS1195")
    assert one is not None
    assert two is not None
    assert one.key == two.key


def test_a_mix_is_split_into_ids_and_invalid_texts_keeping_order_and_dropping_repeats() -> None:
    ids, invalid = parse_article_ids(
        ["PMC1", "123", "nonsense", "pmc1", "10.1/x", "10.1000/A", "10.1000/a", "PMC1.2", "456"]
    )
    assert [(i.kind, i.value, i.version) for i in ids] == [
        ("pmcid", "PMC1", None),
        ("pmid", "123", None),
        ("doi", "10.1000/A", None),
        ("pmcid", "PMC1", 2),
        ("pmid", "456", None),
    ]
    assert invalid == ["nonsense", "10.1/x"]


def test_groups_follow_the_kind_order_one_kind_per_request() -> None:
    ids, _ = parse_article_ids(["10.1000/a", "PMC1", "5", "6", "PMC2"])
    groups = group_by_kind(ids)
    assert list(groups) == ["pmid", "pmcid", "doi"]
    assert [i.value for i in groups["pmid"]] == ["5", "6"]
    assert [i.value for i in groups["pmcid"]] == ["PMC1", "PMC2"]
    assert group_by_kind([]) == {}
