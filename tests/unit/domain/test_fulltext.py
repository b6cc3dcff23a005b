"""The full-text budget, section filter and outline (domain/fulltext.py), on SYNTHETIC
articles built here."""

from __future__ import annotations

from biomcp.domain.fulltext import (
    MAX_SECTIONS,
    MAX_SHOWN_REFERENCES,
    Caption,
    FullTextArticle,
    Reference,
    Section,
    article_status,
    cut,
    flatten,
    matches_filter,
    render_article,
)


def _article(size: int = 100, **changes: object) -> FullTextArticle:
    """A SYNTHETIC article: Introduction, Methods (Participants, Analysis), Results; each
    section `size` characters."""
    text = ("word " * size)[:size]
    methods = Section(
        "Methods",
        "methods",
        text,
        (Section("Participants", "subjects", text), Section("Analysis", None, text)),
    )
    values: dict[str, object] = {
        "pmcid": "PMC1",
        "abstract": "Abstract text.",
        "sections": (
            Section("Introduction", "intro", text),
            methods,
            Section("Results", "results", text),
        ),
        "figures": (Caption("figure", "Figure 1", "A curve."),),
        "tables": (Caption("table", "Table 1", "A table."),),
        "references": (Reference("1", "Doe J. Prior. 2001.", "111"),),
        "access": "open_access",
        "has_body": True,
    }
    values.update(changes)
    return FullTextArticle(**values)  # type: ignore[arg-type]


def test_cut_keeps_short_text_and_cuts_long_text_at_a_word_within_the_limit() -> None:
    assert cut("short", 10) == ("short", False)
    text, truncated = cut("alpha beta gamma delta epsilon", 20)
    assert truncated
    assert len(text) <= 20
    assert text == "alpha beta gamma …"


def test_flatten_numbers_sections_depth_first() -> None:
    paths = [(path, level, s.title) for path, level, s in flatten(_article().sections)]
    assert paths == [
        ("1", 1, "Introduction"),
        ("2", 1, "Methods"),
        ("2.1", 2, "Participants"),
        ("2.2", 2, "Analysis"),
        ("3", 1, "Results"),
    ]


def test_the_filter_matches_title_words_or_exact_types() -> None:
    section = Section("Materials and Methods", "methods")
    assert matches_filter(section, ["methods"])
    assert matches_filter(section, ["material"])
    assert matches_filter(Section("Outcomes", "results"), ["results"])
    assert not matches_filter(Section("Outcomes", "results"), ["result"])  # types match whole


def test_an_article_within_the_budget_comes_whole() -> None:
    rendered = render_article(_article(), remaining=10_000, max_section_chars=1_000)
    assert rendered.mode == "full"
    assert rendered.reason is None
    assert [s.path for s in rendered.sections] == ["1", "2", "2.1", "2.2", "3"]
    assert all(s.text is not None and len(s.text) == 100 for s in rendered.sections)
    assert [c.label for c in rendered.figures + rendered.tables] == ["Figure 1", "Table 1"]
    assert rendered.references == ()  # only when asked
    assert rendered.used == len("Abstract text.") + 5 * 100 + len("Figure 1A curve.") + len(
        "Table 1A table."
    )


def test_references_count_against_the_budget_when_asked_for() -> None:
    without = render_article(_article(), remaining=10_000, max_section_chars=1_000)
    with_refs = render_article(
        _article(), remaining=10_000, max_section_chars=1_000, include_references=True
    )
    assert with_refs.used == without.used + len("Doe J. Prior. 2001.")


def test_each_section_is_cut_to_the_per_section_budget() -> None:
    rendered = render_article(_article(size=500), remaining=10_000, max_section_chars=200)
    assert rendered.mode == "full"
    assert all(s.truncated and s.chars == 500 for s in rendered.sections)
    assert all(s.text is not None and len(s.text) <= 200 for s in rendered.sections)


def test_over_the_budget_gives_an_outline_with_every_sections_size() -> None:
    rendered = render_article(_article(size=3_000), remaining=5_000, max_section_chars=6_000)
    assert (rendered.mode, rendered.reason) == ("outline", "budget")
    assert [(s.path, s.chars, s.text) for s in rendered.sections] == [
        (path, 3_000, None) for path in ("1", "2", "2.1", "2.2", "3")
    ]
    assert rendered.abstract == "Abstract text."
    assert rendered.used == len("Abstract text.")
    assert (rendered.figures, rendered.tables, rendered.references) == ((), (), ())


def test_the_outline_leaves_the_abstract_out_when_even_that_does_not_fit() -> None:
    rendered = render_article(_article(), remaining=5, max_section_chars=1_000)
    assert rendered.mode == "outline"
    assert rendered.abstract is None
    assert rendered.used == 0


def test_an_outline_can_be_asked_for() -> None:
    rendered = render_article(_article(), remaining=10_000, max_section_chars=1_000, outline=True)
    assert (rendered.mode, rendered.reason) == ("outline", "requested")


def test_the_filter_keeps_matching_sections_with_their_subsections_and_no_captions() -> None:
    rendered = render_article(
        _article(), remaining=10_000, max_section_chars=1_000, section_filter=["METHODS"]
    )
    assert rendered.mode == "full"
    assert [s.path for s in rendered.sections] == ["2", "2.1", "2.2"]
    assert rendered.figures == rendered.tables == ()
    results = render_article(
        _article(), remaining=10_000, max_section_chars=1_000, section_filter=["results", "intro"]
    )
    assert [s.path for s in results.sections] == ["1", "3"]


def test_a_filter_matching_nothing_gives_the_whole_outline() -> None:
    rendered = render_article(
        _article(), remaining=10_000, max_section_chars=1_000, section_filter=["supplement"]
    )
    assert (rendered.mode, rendered.reason, rendered.matched) == (
        "outline",
        "no_section_matched",
        0,
    )
    assert [s.path for s in rendered.sections] == ["1", "2", "2.1", "2.2", "3"]


def test_an_article_with_thousands_of_sections_lists_a_bounded_number() -> None:
    many = tuple(Section(f"S{n}", None, "x") for n in range(MAX_SECTIONS + 50))
    rendered = render_article(_article(sections=many), remaining=10, max_section_chars=1_000)
    assert len(rendered.sections) == MAX_SECTIONS


def test_status_rule() -> None:
    assert article_status(_article()) == "available"
    assert article_status(_article(access="restricted", has_body=False)) == "not_open_access"
    assert article_status(_article(withdrawn=True)) == "withdrawn"
    assert article_status(_article(access="free_to_read")) == "available"


def test_references_fill_what_is_left_and_count_those_left_out() -> None:
    many = tuple(Reference(str(n), "x" * 100) for n in range(50))
    base = render_article(_article(), remaining=100_000, max_section_chars=1_000)
    rendered = render_article(
        _article(references=many),
        remaining=base.used + 1_050,
        max_section_chars=1_000,
        include_references=True,
    )
    assert rendered.mode == "full"  # references never push an article to an outline
    assert [r.label for r in rendered.references] == [str(n) for n in range(10)]
    assert rendered.references_omitted == 40
    assert rendered.used == base.used + 1_000


def test_at_most_the_shown_reference_cap_is_listed() -> None:
    many = tuple(Reference(str(n), "x") for n in range(MAX_SHOWN_REFERENCES + 7))
    rendered = render_article(
        _article(references=many),
        remaining=100_000,
        max_section_chars=1_000,
        include_references=True,
    )
    assert len(rendered.references) == MAX_SHOWN_REFERENCES
    assert rendered.references_omitted == 7


def test_supplements_and_table_footnotes_are_shown_and_paid_for() -> None:
    table = Caption("table", "Table 1", "A table.", footnotes=("a Adjusted.",))
    supplement = Caption("supplement", "Table S1", "Genes.", files=("s1.doc",))
    article = _article(tables=(table,), supplements=(supplement,))
    base = render_article(_article(), remaining=10_000, max_section_chars=1_000)
    rendered = render_article(article, remaining=10_000, max_section_chars=1_000)
    assert (rendered.tables, rendered.supplements) == ((table,), (supplement,))
    extra = len("a Adjusted.") + len("Table S1Genes.s1.doc")
    assert rendered.used == base.used + extra
    filtered = render_article(
        article, remaining=10_000, max_section_chars=1_000, section_filter=["methods"]
    )
    assert (filtered.tables, filtered.supplements) == ((), ())
