"""The corpus's full-text rules: which articles may be indexed, and when a record is due."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from biomcp.domain.fulltext import FullTextArticle, License
from biomcp.domain.fulltext_policy import classify_article, is_due, reuse_allowed

NOW = datetime(2026, 6, 1, tzinfo=UTC)
MONTH = timedelta(days=30)
OPEN = FullTextArticle("PMC1", access="open_access", has_body=True)


@dataclass(frozen=True)
class _State:
    status: str
    pmcid: str | None
    checked_at: datetime


@pytest.mark.parametrize(
    ("article", "allowed"),
    [
        (OPEN, True),
        (replace(OPEN, access="author_manuscript"), True),
        (replace(OPEN, access="free_to_read"), False),
        (replace(OPEN, access="free_to_read", license=License(text="All rights reserved")), False),
        (
            replace(
                OPEN,
                access="free_to_read",
                license=License(url="https://creativecommons.org/licenses/by/4.0/"),
            ),
            True,
        ),
        (replace(OPEN, access="free_to_read", license=License(type="CC BY-NC 4.0")), True),
        (replace(OPEN, access="restricted"), False),
    ],
)
def test_reuse_is_allowed_for_open_access_manuscripts_and_creative_commons_only(
    article: FullTextArticle, allowed: bool
) -> None:
    assert reuse_allowed(article) is allowed


def test_an_article_is_classified_withdrawn_before_anything_else() -> None:
    article = replace(OPEN, withdrawn=True, access="restricted")
    assert classify_article(article, chars=10, max_chars=5)[0] == "withdrawn"


def test_front_matter_only_is_not_open_access_and_says_why() -> None:
    status, reason = classify_article(
        replace(OPEN, access="restricted", has_body=False), chars=0, max_chars=100
    )
    assert status == "not_open_access"
    assert reason
    assert "download" in reason


def test_a_licence_without_reuse_is_not_open_access() -> None:
    status, reason = classify_article(replace(OPEN, access="free_to_read"), chars=1, max_chars=9)
    assert (status, "licence" in (reason or "")) == ("not_open_access", True)


def test_an_article_over_the_bound_is_too_large_and_names_both_sizes() -> None:
    status, reason = classify_article(OPEN, chars=1001, max_chars=1000)
    assert status == "too_large"
    assert "1001" in (reason or "")
    assert "1000" in (reason or "")


def test_an_article_at_the_bound_is_available() -> None:
    assert classify_article(OPEN, chars=1000, max_chars=1000) == ("available", None)


def test_a_record_never_checked_or_failed_is_due_at_once() -> None:
    assert is_due(None, "PMC1", NOW, MONTH)
    failed = _State("failed", "PMC1", NOW)
    assert is_due(failed, "PMC1", NOW, MONTH)


def test_a_checked_record_waits_for_the_recheck_interval() -> None:
    state = _State("not_open_access", "PMC1", NOW - MONTH + timedelta(seconds=1))
    assert not is_due(state, "PMC1", NOW, MONTH)
    assert is_due(replace(state, checked_at=NOW - MONTH), "PMC1", NOW, MONTH)


def test_a_record_whose_pmc_id_changed_is_due_whatever_its_last_check() -> None:
    state = _State("not_in_pmc", None, NOW)
    assert is_due(state, "PMC9", NOW, MONTH)
    assert is_due(_State("available", "PMC1", NOW), "PMC2", NOW, MONTH)


def test_a_record_without_a_pmc_id_is_never_due_again_until_it_names_one() -> None:
    state = _State("not_in_pmc", None, NOW - 10 * MONTH)
    assert not is_due(state, None, NOW, MONTH)
