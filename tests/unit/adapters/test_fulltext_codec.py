"""The stored form of a full-text article: exact round trips of nested values, references
left out, and bytes that cannot be read taken as no article."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, replace
from typing import Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biomcp.adapters.sql.fulltext_codec import (
    FORMAT,
    decode_article,
    encode_article,
    from_plain,
    to_plain,
)
from biomcp.domain.fulltext import Caption, FullTextArticle, License, Section
from tests.support.fulltext_articles import synthetic_article

_text = st.text(max_size=40)
_maybe_text = st.none() | _text
_sections = st.recursive(
    st.builds(Section, _text, _maybe_text, _text, st.just(())),
    lambda children: st.builds(
        Section, _text, _maybe_text, _text, st.lists(children, max_size=3).map(tuple)
    ),
    max_leaves=12,
)
_captions = st.builds(
    Caption,
    st.sampled_from(["figure", "table", "supplement"]),
    _maybe_text,
    _text,
    footnotes=st.lists(_text, max_size=3).map(tuple),
    files=st.lists(_text, max_size=2).map(tuple),
    header=st.lists(_text, max_size=3).map(tuple),
    rows=st.lists(st.lists(_text, max_size=3).map(tuple), max_size=3).map(tuple),
)
_articles = st.builds(
    FullTextArticle,
    pmcid=st.from_regex(r"PMC[0-9]{1,8}", fullmatch=True),
    pmid=st.none() | st.from_regex(r"[1-9][0-9]{0,8}", fullmatch=True),
    title=_maybe_text,
    abstract=_text,
    sections=st.lists(_sections, max_size=4).map(tuple),
    figures=st.lists(_captions, max_size=3).map(tuple),
    tables=st.lists(_captions, max_size=3).map(tuple),
    supplements=st.lists(_captions, max_size=2).map(tuple),
    license=st.none() | st.builds(License, _maybe_text, _maybe_text, _maybe_text),
    access=st.sampled_from(["open_access", "author_manuscript", "free_to_read", "restricted"]),
    withdrawn=st.booleans(),
    has_body=st.booleans(),
)


def _stored(body: object) -> bytes:
    return zlib.compress(json.dumps(body).encode("utf-8"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_articles)
def test_any_article_round_trips_exactly(article: FullTextArticle) -> None:
    assert decode_article(encode_article(article)) == article


def test_nested_sections_captions_and_licence_round_trip_and_references_do_not() -> None:
    article = synthetic_article()
    assert article.sections[1].children[1].children  # three levels deep
    assert article.references

    decoded = decode_article(encode_article(article))

    assert decoded == replace(article, references=())
    assert decoded is not None
    assert decoded.sections[1].children[1].children[0].title == "Age ≥ 65"
    assert decoded.tables[0].rows[1] == ("Vomiting", "", "2 (1)")


def test_the_stored_json_names_its_format_and_carries_no_references() -> None:
    stored = json.loads(zlib.decompress(encode_article(synthetic_article())))

    assert stored["format"] == FORMAT
    assert "references" not in stored["article"]


@dataclass(frozen=True, slots=True)
class _GridCaption:
    """A caption that grew a table's header and rows: new fields need no codec change."""

    kind: Literal["figure", "table"]
    label: str | None
    caption: str
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


def test_fields_added_to_a_value_round_trip_without_a_codec_change() -> None:
    grid = _GridCaption("table", "Table 1", "Doses.", ("Arm", "n"), (("A", "10"), ("B", "12")))

    assert from_plain(_GridCaption, json.loads(json.dumps(to_plain(grid)))) == grid
    # A value stored before a field existed reads with the field's default.
    assert from_plain(_GridCaption, {"kind": "figure", "label": None, "caption": "x"}) == (
        _GridCaption("figure", None, "x")
    )


def test_damaged_or_unknown_bytes_read_as_no_article() -> None:
    good = to_plain(synthetic_article(references=()))
    del good["references"]
    wrong_type = dict(good, withdrawn="no")
    wrong_kind = dict(good, tables=[{"kind": "chart", "label": None, "caption": "c"}])
    missing = {k: v for k, v in good.items() if k != "pmcid"}

    assert decode_article(_stored({"format": FORMAT, "article": good})) is not None
    for damaged in (
        b"",
        b"not zlib at all",
        zlib.compress(b"\xff\xfe not utf-8"),
        zlib.compress(b"{not json"),
        _stored([1, 2]),
        _stored({"format": FORMAT + 1, "article": good}),
        _stored({"article": good}),
        _stored({"format": FORMAT}),
        _stored({"format": FORMAT, "article": wrong_type}),
        _stored({"format": FORMAT, "article": wrong_kind}),
        _stored({"format": FORMAT, "article": missing}),
    ):
        assert decode_article(damaged) is None, damaged
