"""`rag.get` payloads publish the study design, its rule and what the quality score read."""

from __future__ import annotations

from dataclasses import replace

import pytest
from jsonschema import Draft202012Validator

from biomcp.domain.design import StudyDesign
from biomcp.domain.records import SampleSizeReading
from biomcp.entrypoints.mcp.contract import V11_OUTPUTS, contract_payload
from biomcp.usecases.payloads import document_payload
from tests.support.builders import make_record, stored_document

pytestmark = pytest.mark.unit


def test_rag_get_shows_the_design_its_rule_and_what_was_read() -> None:
    text = (
        "We retrospectively studied one hundred and forty-one patients. A total of 232,878 "
        "examinations were reviewed."
    )
    payload = document_payload(stored_document(make_record(text=text)))
    Draft202012Validator(V11_OUTPUTS["rag.get"]).validate(payload)
    assert (payload["study_design"], payload["design_rule"]) == (
        "observational",
        "observational.text",
    )
    assert payload["evidence_type"] == "clinical"
    assert payload["evidence_rule"] == "clinical.observational.text"
    breakdown = payload["quality_breakdown"]
    assert breakdown["study_design"] == "observational"
    assert breakdown["design"] == 2
    assert breakdown["sample_size_n"] == 141
    assert breakdown["sample_size_text"] == "one hundred and forty-one patients"
    assert breakdown["sample_size_refused"] == ["total of 232,878 examinations were reviewed"]


def test_a_stale_stored_n_hides_the_phrase_rather_than_misexplain_it() -> None:
    doc = stored_document(make_record(text="We studied 412 patients."))
    stale = replace(doc, quality=replace(doc.quality, sample_size_n=9))
    assert document_payload(stale)["quality_breakdown"]["sample_size_text"] is None


def test_what_was_read_is_taken_from_the_score_and_read_again_only_for_an_older_score() -> None:
    doc = stored_document(make_record(text="We studied 412 patients. 90 samples were lost."))
    kept = doc.quality.sample_size_reading
    assert kept == SampleSizeReading(412, "412 patients", ())  # scored with its reading

    # The reading kept with the score is what is shown (the abstract is not read again).
    marked = replace(kept, phrase="412 patients (as kept)", refused=("kept refusal",))
    shown = document_payload(replace(doc, quality=replace(doc.quality, sample_size_reading=marked)))
    assert shown["quality_breakdown"]["sample_size_text"] == "412 patients (as kept)"
    assert shown["quality_breakdown"]["sample_size_refused"] == ["kept refusal"]

    # A score stored before readings were kept: the abstract is read again.
    older = replace(doc, quality=replace(doc.quality, sample_size_reading=None))
    assert document_payload(older)["quality_breakdown"]["sample_size_text"] == "412 patients"


def test_the_schema_lists_every_design() -> None:
    enum = V11_OUTPUTS["rag.get"]["properties"]["study_design"]["enum"]
    assert enum == [d.value for d in StudyDesign]


def test_the_v1_0_contract_cuts_the_design_fields() -> None:
    payload = document_payload(stored_document(make_record(publication_types=("Case Reports",))))
    cut = contract_payload("rag.get", payload, "1.0")
    assert "study_design" not in cut
    assert "design_rule" not in cut
