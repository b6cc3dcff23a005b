"""Table grids in the JATS reader (adapters/entrez/jats_tables.py): SYNTHETIC tables written
here for each layout, and the tables of the 8 real PMC articles of
../shared/data/ncbi_files/pmc (skipped when absent), counted independently from their XML."""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from biomcp.adapters.entrez.jats import parse_pmc_articles
from biomcp.adapters.entrez.jats_tables import MAX_COLUMNS, MAX_ROWS
from biomcp.domain.fulltext import Caption
from tests.conftest import shared_data_path
from tests.unit.adapters.test_jats_references import REAL_ARTICLES

pytestmark = pytest.mark.unit


def _tables(wraps: str) -> tuple[Caption, ...]:
    """The tables of a SYNTHETIC article whose body holds `wraps`."""
    xml = (
        "<pmc-articleset><article><front><article-meta>"
        '<article-id pub-id-type="pmc">42</article-id></article-meta></front>'
        f"<body><sec><title>Results</title><p>Text.</p>{wraps}</sec></body>"
        "</article></pmc-articleset>"
    )
    [article] = parse_pmc_articles(xml.encode()).articles
    return article.tables


def _wrap(table: str, label: str = "Table 1", foot: str = "") -> str:
    return (
        f"<table-wrap><label>{label}</label><caption><p>Baseline.</p></caption>"
        f"<table>{table}</table>{foot}</table-wrap>"
    )


def test_header_and_body_rows_are_read_with_inline_markup_flattened() -> None:
    [table] = _tables(
        _wrap(
            "<thead><tr><th>Characteristic</th><th>Placebo</th><th>Drug</th></tr></thead>"
            "<tbody><tr><td>Age, <italic>years</italic></td><td>54 (12)</td><td>55 (11)</td>"
            "</tr><tr><td>Women, n (%)</td><td>30 (50)</td><td>29 (48)</td></tr></tbody>"
        )
    )
    assert table.header == ("Characteristic", "Placebo", "Drug")
    assert table.rows == (
        ("Age, years", "54 (12)", "55 (11)"),
        ("Women, n (%)", "30 (50)", "29 (48)"),
    )
    assert (table.label, table.caption) == ("Table 1", "Baseline.")


def test_two_header_rows_with_a_colspan_join_per_column() -> None:
    [table] = _tables(
        _wrap(
            "<thead><tr><th rowspan='2'>Outcome</th><th colspan='2'>Placebo</th>"
            "<th colspan='2'>Drug</th></tr>"
            "<tr><th>n</th><th>%</th><th>n</th><th>%</th></tr></thead>"
            "<tbody><tr><td>Death</td><td>4</td><td>8</td><td>2</td><td>4</td></tr></tbody>"
        )
    )
    assert table.header == ("Outcome", "Placebo / n", "Placebo / %", "Drug / n", "Drug / %")
    assert table.rows == (("Death", "4", "8", "2", "4"),)


def test_a_rowspan_fills_its_column_in_the_rows_below_so_later_cells_line_up() -> None:
    [table] = _tables(
        _wrap(
            "<thead><tr><th/><th>OR</th><th>P</th><th>N</th></tr></thead><tbody>"
            "<tr><td>Men</td><td>Reference</td><td rowspan='2'>0.003</td><td>10</td></tr>"
            "<tr><td>Women</td><td>0.93</td><td>12</td></tr>"
            "<tr><td>All</td><td colspan='2'>n/a</td><td>22</td></tr></tbody>"
        )
    )
    assert table.header == ("", "OR", "P", "N")
    assert table.rows == (
        ("Men", "Reference", "0.003", "10"),
        ("Women", "0.93", "0.003", "12"),
        ("All", "n/a", "n/a", "22"),
    )


def test_without_thead_leading_all_th_rows_are_the_header_and_empty_rows_are_left_out() -> None:
    [table] = _tables(
        _wrap(
            "<tr><th>Gene</th><th>Fold</th></tr>"
            "<tr><td>IL6</td><td>2.1</td></tr><tr><td/><td> </td></tr>"
            "<tr><th>TNF</th><td>1.4</td></tr><tr><td>short</td></tr>"
        )
    )
    assert table.header == ("Gene", "Fold")
    assert table.rows == (("IL6", "2.1"), ("TNF", "1.4"), ("short", ""))


def test_a_table_given_only_as_an_image_keeps_its_caption_and_no_rows() -> None:
    [table] = _tables(
        "<table-wrap><label>Table 2</label><caption><p>Scanned.</p></caption><graphic/>"
        "<table-wrap-foot><fn><p>a, adjusted.</p></fn></table-wrap-foot></table-wrap>"
    )
    assert (table.label, table.caption, table.header, table.rows) == (
        "Table 2", "Scanned.", (), ()
    )  # fmt: skip
    assert table.footnotes == ("a, adjusted.",)


def test_hostile_sizes_are_bounded() -> None:
    body = "".join(f"<tr><td>r{n}</td><td>{n}</td></tr>" for n in range(MAX_ROWS + 50))
    wide = (
        "<tr><td colspan='1000000'>x</td><td rowspan='99999999'>y</td><td colspan='-3'>z</td></tr>"
    )
    [big, odd] = _tables(_wrap(f"<tbody>{body}</tbody>") + _wrap(wide, "Table 2"))
    assert len(big.rows) == MAX_ROWS
    assert big.rows[-1] == (f"r{MAX_ROWS - 1}", str(MAX_ROWS - 1))
    assert len(odd.rows) == 1
    assert len(odd.rows[0]) == MAX_COLUMNS


def test_figures_and_supplements_carry_no_rows() -> None:
    xml = (
        "<pmc-articleset><article><front><article-meta>"
        '<article-id pub-id-type="pmc">42</article-id></article-meta></front><body>'
        "<fig><label>Figure 1</label><caption><p>Flow.</p></caption></fig></body>"
        "</article></pmc-articleset>"
    )
    [article] = parse_pmc_articles(xml.encode()).articles
    assert [(f.header, f.rows) for f in article.figures] == [((), ())]


# --- the real articles ---------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL_ARTICLES)
def test_every_real_table_has_its_body_rows_lined_up_with_its_header(name: str) -> None:
    path = shared_data_path("ncbi_files", "pmc", name)
    root = etree.parse(str(path), etree.XMLParser(load_dtd=False, no_network=True)).getroot()
    [article] = parse_pmc_articles(
        b"<pmc-articleset>" + etree.tostring(root) + b"</pmc-articleset>"
    ).articles
    wraps = list(root.iter("table-wrap"))
    assert len(article.tables) == len(wraps)
    for wrap, table in zip(wraps, article.tables, strict=True):
        [grid] = list(wrap.iter("table"))
        body_rows = [
            tr for tr in grid.iter("tr") if tr.getparent() is not None
            and tr.getparent().tag != "thead"
            and "".join(tr.itertext()).strip()
        ]  # fmt: skip
        assert len(table.rows) == len(body_rows), table.label
        widths = {len(row) for row in table.rows}
        assert widths == {len(table.header)}, table.label
        head_texts = {_words(cell) for cell in grid.iterfind("thead/tr/*")} - {""}
        assert head_texts, table.label
        assert all(any(text in h for h in table.header) for text in head_texts), table.label


def _words(node: etree._Element) -> str:
    return " ".join("".join(cast("list[str]", node.xpath(".//text()"))).split())


_CELL = st.tuples(st.sampled_from(["a", "b1", "2.5", "n/a"]), st.integers(1, 3), st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_CELL, min_size=1, max_size=5), min_size=1, max_size=6))
def test_any_span_layout_gives_rectangular_rows_keeping_each_rows_cells_in_order(
    layout: list[list[tuple[str, int, int]]],
) -> None:
    rows = "".join(
        "<tr>"
        + "".join(f"<td colspan='{c}' rowspan='{r}'>{text}</td>" for text, c, r in row)
        + "</tr>"
        for row in layout
    )
    [table] = _tables(_wrap(f"<thead><tr><th>H</th></tr></thead><tbody>{rows}</tbody>"))
    assert len({len(row) for row in table.rows} | {len(table.header)}) == 1
    assert len(table.rows) == len(layout)
    for given_row, read in zip(layout, table.rows, strict=True):
        cells = iter(read)  # each given cell is found after the one before it
        assert all(any(cell == text for cell in cells) for text, _, _ in given_row)
        assert len(read) >= sum(c for _, c, _ in given_row)
