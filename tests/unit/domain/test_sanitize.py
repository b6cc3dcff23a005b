"""Query sanitization keeps PubMed syntax, refuses what cannot be sent; PMIDs are checked."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from biomcp.domain.errors import DomainError, InvalidQueryError, InvalidRecordError
from biomcp.domain.sanitize import (
    MAX_QUERY_LENGTH,
    DateWindow,
    effective_term,
    parse_pmid,
    parse_pmids,
    publication_type_clause,
    sanitize_query,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "query",
    [
        "asthma[mh]",
        '"heart attack"[tiab] AND aspirin',
        "(GLP-1[tiab] OR semaglutide[nm]) NOT review[pt]",
        "child* AND smith j[au]",
        "2020:2023[dp] AND cancer",
        '"stem cells"[MeSH Terms] OR ("stem"[All Fields] AND "cells"[All Fields])',
        '"a phrase (with an unclosed paren" AND (asthma)',
        "μ-XRF AND β2-agonist",
    ],
)
def test_pubmed_syntax_passes_unchanged(query: str) -> None:
    assert sanitize_query(query) == query


def test_whitespace_controls_collapse_to_single_spaces() -> None:
    assert sanitize_query("  asthma\tAND\n\r  children  ") == "asthma AND children"


@pytest.mark.parametrize(
    "char", ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\u202e", "\u2066", "\ud800"]
)
def test_control_and_bidi_override_characters_are_refused(char: str) -> None:
    with pytest.raises(InvalidQueryError, match="control character"):
        sanitize_query(f"asthma{char} children")


def test_the_length_limit_counts_after_collapsing() -> None:
    longest = "a" * MAX_QUERY_LENGTH
    assert sanitize_query(longest) == longest
    assert sanitize_query(f"  {longest}\n") == longest
    with pytest.raises(InvalidQueryError, match="4001 characters"):
        sanitize_query(longest + "b")


@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ('"heart attack[tiab]', "double quote"),
        ("(asthma OR copd", "unclosed"),
        ("asthma) OR (copd", "without its '\\('"),
        ("asthma[mh", "without its ']'"),
        ("asthma]", "without its '\\['"),
        ("asthma[m[h]]", "nests"),
        ("   ", "empty"),
    ],
)
def test_unbalanced_or_empty_queries_are_refused(query: str, problem: str) -> None:
    with pytest.raises(InvalidQueryError, match=problem):
        sanitize_query(query)


def test_non_strings_are_refused() -> None:
    with pytest.raises(InvalidQueryError):
        sanitize_query(42)  # type: ignore[arg-type]


def test_the_effective_term_matches_the_spec_example() -> None:
    term = effective_term(
        "precision oncology",
        window=DateWindow("2023", "2023", "pdat"),
        publication_types=["Review"],
    )
    assert term == 'precision oncology AND (2023[pdat]) AND ("Review"[Publication Type])'


def test_publication_types_are_ored_and_deduplicated() -> None:
    clause = publication_type_clause(["Review", " Clinical  Trial ", "review"])
    assert clause == '"Review"[Publication Type] OR "Clinical Trial"[Publication Type]'
    assert publication_type_clause([]) is None
    term = effective_term("aspirin", publication_types=["Review", "Clinical Trial"])
    assert term == (
        'aspirin AND ("Review"[Publication Type] OR "Clinical Trial"[Publication Type])'
    )


@pytest.mark.parametrize("bad", ['Review"', "Review[pt]", "", "x" * 201, "Rev\x00iew"])
def test_publication_types_must_be_plain_names(bad: str) -> None:
    with pytest.raises(InvalidQueryError):
        publication_type_clause([bad])


@pytest.mark.parametrize(
    ("window", "clause"),
    [
        (DateWindow("2020/01", "2023", "pdat"), "2020/01:2023[pdat]"),
        (DateWindow("2020", None, "edat"), "2020:3000[edat]"),
        (DateWindow(None, "2021/06/30", "mdat"), "1000:2021/06/30[mdat]"),
        (DateWindow("2019/02/28", "2019/02/28"), "2019/02/28[pdat]"),
        (DateWindow(None, None), None),
    ],
)
def test_date_windows_become_pubmed_ranges(window: DateWindow, clause: str | None) -> None:
    assert window.clause() == clause


@pytest.mark.parametrize(
    ("low", "high", "date_type"),
    [
        ("2023/13", None, "pdat"),
        ("2023/02/30", None, "pdat"),
        ("20230101", None, "pdat"),
        ("2023-01-01", None, "pdat"),
        ("2024", "2023/12/31", "pdat"),
        ("2023", None, "crdt"),
    ],
)
def test_bad_date_windows_are_refused(low: str, high: str | None, date_type: str) -> None:
    with pytest.raises(InvalidQueryError):
        DateWindow(low, high, date_type)  # type: ignore[arg-type]


def test_a_window_within_one_year_is_valid_both_ways() -> None:
    assert DateWindow("2023", "2023/01").clause() == "2023:2023/01[pdat]"
    assert DateWindow("2023/12", "2023").clause() == "2023/12:2023[pdat]"


def test_pmids_are_digits_without_leading_zero() -> None:
    assert parse_pmid(" 29768149 ") == "29768149"
    for bad in ("", "abc", "123a", "0", "0123", "12345678901", "-5", "1.5", "١٢٣"):
        with pytest.raises(InvalidRecordError):
            parse_pmid(bad)


def test_pmid_lists_are_deduplicated_and_bounded() -> None:
    assert parse_pmids(["2", "1", "2"]) == ("2", "1")
    with pytest.raises(InvalidRecordError, match="no PMID"):
        parse_pmids([])
    with pytest.raises(InvalidRecordError, match="at most 200"):
        parse_pmids([str(n) for n in range(1, 202)])
    with pytest.raises(InvalidRecordError, match="'x1'"):
        parse_pmids(["1", "x1"])


def test_every_refusal_is_a_domain_error_so_the_server_says_validation() -> None:
    assert issubclass(InvalidQueryError, DomainError)
    assert issubclass(InvalidRecordError, DomainError)


@given(st.text(max_size=300))
def test_sanitized_queries_are_clean_and_stable(text: str) -> None:
    try:
        cleaned = sanitize_query(text)
    except InvalidQueryError:
        return
    assert cleaned == cleaned.strip()
    assert "  " not in cleaned
    assert not any(unicodedata.category(c) in ("Cc", "Cs") for c in cleaned)
    assert sanitize_query(cleaned) == cleaned
    assert cleaned.split() == text.split()
