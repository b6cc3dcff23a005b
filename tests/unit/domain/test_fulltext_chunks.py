"""Full-text chunks (domain/fulltext_chunks.py) of SYNTHETIC articles written here."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from biomcp.domain.chunking import ChunkingConfig, chunk_uuid, split_text
from biomcp.domain.fulltext import Caption, FullTextArticle, License, Reference, Section
from biomcp.domain.fulltext_chunks import (
    MAX_ARTICLE_CHUNKS,
    article_content_hash,
    article_text_chars,
    chunk_article,
    chunk_article_counted,
    table_text,
)
from biomcp.domain.numeric import claim_spans

pytestmark = pytest.mark.unit

TIGHT = ChunkingConfig(target_tokens=40, max_tokens=60, overlap_tokens=10)
FILLER = (
    "Investigators enrolled adults from several centres across the region. "
    "Eligibility was broad and follow-up was complete for most participants. "
)
TABLE = Caption(
    "table",
    "Table 1.",
    "Baseline characteristics.",
    footnotes=("a Mean (SD).",),
    header=("Characteristic", "Placebo", "Drug"),
    rows=(
        ("Age, years", "54 (12)", "55 (11)"),
        ("Smoking", "Smoking", "Smoking"),
        ("Current", "10", "12"),
        ("", "n/a", "3"),
    ),
)


def _article(**changes: object) -> FullTextArticle:
    """A SYNTHETIC article with every kind of part."""
    article = FullTextArticle(
        pmcid="PMC1",
        title="Own title",
        sections=(
            Section("", None, "Leading text."),
            Section(
                "Methods",
                "methods",
                "Methods text.",
                (Section("Participants", None, "Adults aged 18 to 65 years."),),
            ),
            Section("Results", "results", "", (Section("Primary outcome", None, "It fell."),)),
            Section("Acknowledgements", "ack", "We thank the nurses."),
            Section("Funding", None, "Grant 12."),
            Section("Conflicts of interest", None, "None declared."),
            Section("Authors' contributions", None, "All wrote it.", (Section("More", None, "x"),)),
            Section("Abbreviations", "abbreviations", "CI, confidence interval."),
            Section("Appendix A", "app", "Extra analyses."),
        ),
        tables=(TABLE,),
        figures=(
            Caption("figure", "Figure 1", "Flow of participants."),
            Caption("figure", None, ""),
            Caption("figure", None, "Kaplan-Meier curves."),
        ),
        supplements=(Caption("supplement", "S1 Table", "Sensitivity analyses."),),
        references=(Reference(label="1", text="Doe J. Prior. 2001."),),
        license=License(url="https://creativecommons.org/licenses/by/4.0/"),
    )
    return replace(article, **changes)  # type: ignore[arg-type]


def test_every_part_gets_its_id_path_section_and_anchor_in_document_order() -> None:
    chunks = chunk_article("9", _article(), ChunkingConfig(), title="Record title")
    shown = [(c.chunk_id, c.section_path, c.section, c.anchor) for c in chunks]
    assert shown == [
        ("f0_0", "Main text", None, "p1"),
        ("f1_0", "Methods", "Methods", "p1"),
        ("f2_0", "Methods > Participants", "Methods", "p1"),
        ("f4_0", "Results > Primary outcome", "Results", "p1"),
        ("f11_0", "Appendix A", "Appendix A", "p1"),
        ("t0_0", "Table 1", "Results", "r1-r4"),
        ("g0", "Figure 1", "Figure 1", "caption"),
        ("g2", "Figure 3", "Figure 3", "caption"),
        ("x0", "S1 Table", "S1 Table", "caption"),
    ]
    assert [c.section_index for c in chunks] == [0, 1, 2, 4, 11, 12, 13, 15, 16]
    assert {c.source for c in chunks} == {"fulltext"}
    assert all(c.uuid == chunk_uuid("9", c.chunk_id) for c in chunks)
    assert not any(re.fullmatch(r"s\d+_\d+|w\d+", c.chunk_id) for c in chunks)
    assert chunks[2].text == "Record title\nMethods > Participants: Adults aged 18 to 65 years."


def test_left_out_back_matter_and_references_never_reach_a_chunk() -> None:
    text = "\n".join(c.text for c in chunk_article("9", _article(), ChunkingConfig()))
    for words in ("nurses", "Grant 12", "None declared", "All wrote", "confidence interval",
                  "Doe J"):  # fmt: skip
        assert words not in text


def test_the_title_follows_the_config_and_falls_back_to_the_articles_own() -> None:
    every = chunk_article("9", _article(), ChunkingConfig())
    assert all(c.text.startswith("Own title\n") for c in every)
    none = chunk_article("9", _article(), ChunkingConfig(title_every_chunk=False))
    assert none[0].text == "Main text: Leading text."
    assert not any("Own title" in c.text for c in none)


def test_a_table_renders_each_value_beside_its_column_name_with_groups_and_footnotes() -> None:
    [table] = [c for c in chunk_article("9", _article(), ChunkingConfig()) if c.anchor == "r1-r4"]
    assert table.text == (
        "Own title\nTable 1: Baseline characteristics.\n"
        "Age, years — Placebo: 54 (12); Drug: 55 (11)\n"
        "Smoking > Current — Placebo: 10; Drug: 12\n"
        "Smoking > Current — Placebo: n/a; Drug: 3\n"
        "a Mean (SD)."
    )
    assert table_text(TABLE)[table.start : table.end] == table.text.split("\n", 2)[2]


def test_a_long_table_repeats_its_caption_in_every_chunk_and_ends_with_its_footnotes() -> None:
    rows = tuple((f"Site {n}", f"{n}.5 (0.{n})", f"{n + 1}.25") for n in range(40))
    table = replace(TABLE, rows=rows, footnotes=("b Adjusted for age.",) * 3)
    chunks = chunk_article("9", _article(sections=(), figures=(), supplements=(),
                                         tables=(table,)), TIGHT)  # fmt: skip
    assert len(chunks) > 3
    assert all(c.text.startswith("Own title\nTable 1: Baseline characteristics.\n") for c in chunks)
    assert all(c.token_count <= TIGHT.max_tokens for c in chunks)
    assert [c.chunk_id for c in chunks] == [f"t0_{j}" for j in range(len(chunks))]
    anchored = [c.anchor for c in chunks if c.anchor != "notes"]
    numbers = [int(n) for a in anchored for n in re.findall(r"\d+", a or "")]
    assert (numbers[0], numbers[-1]) == (1, 40)
    assert numbers == sorted(numbers)
    text = table_text(table)
    for chunk in chunks:
        lines = chunk.text.split("\n")[2:]
        assert text[chunk.start : chunk.end] == "\n".join(lines)
    assert "b Adjusted for age." in chunks[-1].text
    assert "Placebo: 39.5 (0.39); Drug: 40.25" in "\n".join(c.text for c in chunks)


def test_a_table_without_rows_is_one_chunk_of_its_caption_then_its_notes() -> None:
    image = Caption("table", None, "Scanned table.")
    noted = Caption("table", "Table 2", "Doses.", footnotes=("Given daily.",))
    chunks = chunk_article("9", _article(sections=(), figures=(), supplements=(),
                                         tables=(image, noted)), ChunkingConfig())  # fmt: skip
    assert [(c.chunk_id, c.section_path, c.anchor) for c in chunks] == [
        ("t0_0", "Table 1", "caption"),
        ("t1_0", "Table 2", "notes"),
    ]
    assert chunks[0].text == "Own title\nTable 1: Scanned table."
    assert chunks[1].text == "Own title\nTable 2: Doses.\nGiven daily."


def test_paragraph_starts_are_preferred_cut_points_and_anchors_count_paragraphs() -> None:
    paragraphs = [FILLER * 2, FILLER * 2, FILLER * 2]
    text = "\n\n".join(p.strip() for p in paragraphs)
    article = _article(sections=(Section("Discussion", "discussion", text),), tables=(),
                       figures=(), supplements=())  # fmt: skip
    chunks = chunk_article("9", article, TIGHT)
    starts = {0, *(m.end() for m in re.finditer(r"\n\n", text))}
    assert len(chunks) >= 3
    assert {c.start + c.overlap for c in chunks} >= starts
    assert [c.anchor for c in chunks if c.start + c.overlap in starts] == ["p1", "p2", "p3"]
    rebuilt = "".join(text[c.start + c.overlap : c.end] for c in chunks)
    assert rebuilt == text


def test_a_split_section_never_cuts_a_numeric_claim_nor_leaves_a_comparator_behind() -> None:
    claim = "the hazard ratio was 0.72 (95% CI 0.61 to 0.88; p < 0.001)"
    comparator = "In the placebo group, 31 of 120 patients had an event."
    text = " ".join([FILLER.strip(), f"After one year {claim}.", comparator, FILLER.strip()] * 4)
    article = _article(sections=(Section("Results", "results", text),), tables=(), figures=(),
                       supplements=())  # fmt: skip
    chunks = chunk_article("9", article, TIGHT)
    assert len(chunks) > 2
    spans = claim_spans(text)
    for chunk in chunks:
        for cut in (chunk.start + chunk.overlap, chunk.end):
            assert not any(a < cut < b for a, b in spans)
        assert not text[: chunk.end].rstrip().endswith(f"{claim}.")  # comparator kept with it
        assert chunk.token_count <= TIGHT.max_tokens


def test_a_long_figure_caption_is_split_with_later_parts_numbered() -> None:
    figure = Caption("figure", "Figure 1", (FILLER * 4).strip())
    chunks = chunk_article("9", _article(sections=(), tables=(), supplements=(),
                                         figures=(figure,)), TIGHT)  # fmt: skip
    ids = [c.chunk_id for c in chunks]
    assert ids[0] == "g0"
    assert ids[1:] == [f"g0_{j}" for j in range(1, len(ids))]
    assert len(ids) > 1
    assert {c.anchor for c in chunks} == {"caption"}


def test_chunks_beyond_the_bound_are_dropped_and_counted() -> None:
    many = tuple(Section(f"Part {n}", None, f"Text {n}.") for n in range(MAX_ARTICLE_CHUNKS + 25))
    article = _article(sections=many)
    counted = chunk_article_counted("9", article, ChunkingConfig())
    assert len(counted.chunks) == MAX_ARTICLE_CHUNKS
    assert counted.dropped == 25 + 1 + 2 + 1  # the table, two figures, one supplement
    assert counted.chunks[-1].chunk_id == f"f{MAX_ARTICLE_CHUNKS - 1}_0"
    assert chunk_article("9", article, ChunkingConfig()) == counted.chunks


def test_chunking_is_deterministic_and_ids_are_unique() -> None:
    first = chunk_article("9", _article(), TIGHT)
    assert first == chunk_article("9", _article(), TIGHT)
    assert len({c.chunk_id for c in first}) == len(first)


def test_the_content_hash_is_the_same_in_another_process() -> None:
    here = article_content_hash(_article())
    code = (
        "from tests.unit.domain.test_fulltext_chunks import _article;"
        "from biomcp.domain.fulltext_chunks import article_content_hash;"
        "print(article_content_hash(_article()))"
    )
    there = subprocess.run(  # noqa: S603 - our own interpreter and snippet
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
        cwd=Path(__file__).parents[3],
    ).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{64}", here)
    assert there == here


@pytest.mark.parametrize(
    "changes",
    [
        {"sections": (Section("", None, "Leading text!"),)},
        {"title": "Other title"},
        {"tables": (replace(TABLE, rows=TABLE.rows[:-1]),)},
        {"tables": (replace(TABLE, header=("Characteristic", "Placebo", "Active")),)},
        {"tables": (replace(TABLE, footnotes=()),)},
        {"figures": ()},
        {"supplements": (Caption("supplement", "S1 Table", "Other."),)},
    ],
)
def test_the_content_hash_changes_with_anything_chunked(changes: dict[str, object]) -> None:
    assert article_content_hash(_article(**changes)) != article_content_hash(_article())


def test_the_content_hash_ignores_references_licence_and_ids() -> None:
    other = _article(references=(), license=None, pmcid="PMC2", doi="10.1/y", pmid="7")
    assert article_content_hash(other) == article_content_hash(_article())


def test_text_chars_count_what_is_chunked_and_not_what_is_left_out() -> None:
    plain = _article()
    bigger = _article(sections=(*plain.sections, Section("Discussion", None, "x" * 500)))
    padded = _article(sections=(*plain.sections, Section("Funding", None, "x" * 500)))
    assert article_text_chars(bigger) == article_text_chars(plain) + 500
    assert article_text_chars(padded) == article_text_chars(plain)
    cells = sum(len(cell) for row in TABLE.rows for cell in row)
    assert article_text_chars(_article(tables=())) == article_text_chars(plain) - cells - sum(
        len(x) for x in (*TABLE.header, *TABLE.footnotes, TABLE.caption, TABLE.label or "")
    )


def test_split_text_prefers_a_break_over_the_packers_own_end() -> None:
    text = " ".join(f"Site {chr(65 + n)} enrolled adults." for n in range(24))
    plain = split_text(text, (60, 60), TIGHT)
    wanted = text.index("Site F")
    preferred = split_text(text, (60, 60), TIGHT, breaks=frozenset({wanted}))
    assert wanted not in {end for _, end, _ in plain}
    assert preferred[0][1] == wanted
    assert all(b[0] + b[2] == a[1] for a, b in pairwise(preferred))
    assert preferred[-1][1] == len(text)


_SENTENCES = st.sampled_from(
    [
        "Mortality fell to 12% (95% CI 8 to 16).",
        "In the control group, it was 20%.",
        "Adults were enrolled at five sites.",
        "The odds ratio was 0.64 (0.51-0.80; p < 0.001).",
        "Adverse events were rare.",
    ]
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_SENTENCES, min_size=1, max_size=8), min_size=1, max_size=5))
def test_any_section_is_rebuilt_from_its_chunks_and_no_cut_splits_a_claim(
    paragraphs: list[list[str]],
) -> None:
    text = "\n\n".join(" ".join(p) for p in paragraphs)
    article = FullTextArticle(pmcid="PMC1", sections=(Section("Results", None, text),))
    chunks = chunk_article("9", article, TIGHT)
    assert "".join(text[c.start + c.overlap : c.end] for c in chunks) == text
    spans = claim_spans(text)
    for chunk in chunks:
        assert not any(a < chunk.end < b for a, b in spans)
        assert chunk.token_count <= TIGHT.max_tokens
