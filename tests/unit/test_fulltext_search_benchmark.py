"""The full-text search benchmark's corpus: which chunks are full text, and what they carry."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from benchmarks.fulltext_search import PER_PAPER, SECTIONS, MixedCorpus, source_filters

from biomcp.ports.vectors import SearchFilters

pytestmark = pytest.mark.unit


def test_the_asked_share_of_chunks_is_full_text_with_the_source_facet_and_a_section_path() -> None:
    corpus = MixedCorpus(0.3)
    plain = MixedCorpus(0.0).records(0, 300)
    records = corpus.records(0, 300)
    fulltext = [r for r in records if r.facets]
    assert len(records) == 300
    assert len(fulltext) == 90
    for record, twin in zip(records, plain, strict=True):
        if record.facets:
            assert record.facets == {"source": ("fulltext",)}
            assert record.text.split(": ", 1)[0] in SECTIONS
            assert len(record.text) > len(twin.text)
        else:
            # abstract chunks are unchanged and carry no source facet, as old chunks
            assert replace(record, vector=()) == replace(twin, vector=())
    papers = Counter(r.doc_id for r in fulltext)
    assert set(papers.values()) == {PER_PAPER}
    assert not set(papers) & {r.doc_id for r in records if not r.facets}


def test_the_three_source_filters_are_none_abstract_only_and_full_text_only() -> None:
    only = (("source", frozenset({"fulltext"})),)
    assert source_filters() == {
        "no_source_filter": None,
        "abstract_only": SearchFilters(exclude_facets=only),
        "fulltext_only": SearchFilters(facets=only),
    }
