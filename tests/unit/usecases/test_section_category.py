"""Corpus chunks store their section's NLM category, for the section boost and numbers first."""

from __future__ import annotations

import pytest

from biomcp.domain import chunk_record
from biomcp.domain.records import AbstractSection
from biomcp.usecases.indexing import SECTION_CATEGORY, chunk_record_of
from tests.support.builders import make_record, stored_document

pytestmark = pytest.mark.unit


def test_a_chunk_stores_pubmeds_category_else_the_one_its_label_maps_to() -> None:
    record = make_record(
        abstract=(
            AbstractSection("Weight fell by 12% (95% CI 9 to 15).", "EFFICACY", "RESULTS"),
            AbstractSection("Semaglutide works in adults.", "INTERPRETATION", None),
            AbstractSection("Funded by a grant.", "FUNDING", "UNASSIGNED"),
        )
    )
    doc = stored_document(record)
    stored = [chunk_record_of(doc, c, [0.0]).metadata for c in chunk_record(record)]
    assert [m.get(SECTION_CATEGORY) for m in stored] == ["RESULTS", "CONCLUSIONS", None]
    plain = make_record(text="Unstructured text with 12% fewer events.")
    (chunk,) = chunk_record(plain)
    assert SECTION_CATEGORY not in chunk_record_of(stored_document(plain), chunk, [0.0]).metadata
