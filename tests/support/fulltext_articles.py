"""Synthetic full-text articles for the store tests: nested sections, figure and table
captions with footnotes, a table's header and rows, a supplement, a licence, references and
non-ASCII text."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from biomcp.domain.fulltext import Caption, FullTextArticle, License, Reference, Section
from biomcp.ports.fulltext import FullTextState

__all__ = ["state_of", "synthetic_article"]


def synthetic_article(pmcid: str = "PMC7000001", **overrides: Any) -> FullTextArticle:
    """An article using every nested value the store keeps (references included, which it
    does not keep)."""
    results = Section(
        "Results",
        "results",
        "Weight fell by 12.4% (95% CI 11.0 to 13.8) with µg dosing.",
        (
            Section("Primary outcome", None, "HbA1c −1.2 ± 0.3%.", ()),
            Section(
                "Subgroups",
                "subgroup",
                "",
                (Section("Age ≥ 65", None, "Similar effect (n = 212).", ()),),
            ),
        ),
    )
    fields: dict[str, Any] = {
        "pmcid": pmcid,
        "pmid": "40000001",
        "doi": "10.1000/synthetic.1",
        "title": "A synthetic trial of weight loss",
        "journal": "Synthetic Journal",
        "year": "2024",
        "article_type": "research-article",
        "abstract": "Background. Säure and obesity.",
        "sections": (Section("Methods", "methods", "Adults were randomised 2:1."), results),
        "figures": (Caption("figure", "Figure 1", "Flow of participants."),),
        "tables": (
            Caption(
                "table",
                "Table 2",
                "Adverse events.",
                footnotes=("a: grade ≥ 3",),
                header=("Event", "Drug n (%)", "Placebo n (%)"),
                rows=(("Nausea", "44 (22)", "9 (4.5)"), ("Vomiting", "", "2 (1)")),
            ),
            Caption("table", None, "Unlabelled table.", footnotes=("b", "c")),
        ),
        "references": (Reference("1", "Doe J. A study. J Synth. 2020;1:1-2.", pmid="1"),),
        "supplements": (Caption("supplement", "S1", "Protocol.", files=("s1.pdf", "s1.docx")),),
        "license": License("https://creativecommons.org/licenses/by/4.0/", "open-access", "CC BY"),
        "access": "open_access",
        "withdrawn": False,
        "has_body": True,
    }
    fields.update(overrides)
    return FullTextArticle(**fields)


def state_of(pmid: str, at: datetime, **overrides: Any) -> FullTextState:
    """An `available` state of `pmid` checked `at`, with `overrides`."""
    state = FullTextState(
        pmid, "available", at, pmcid="PMC7000001", content_hash="h1", chars=1200, chunks=4
    )
    return replace(state, **overrides)
