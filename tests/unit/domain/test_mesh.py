"""The MeSH value types and the suggested query (domain/mesh.py)."""

from __future__ import annotations

import pytest

from biomcp.domain.mesh import (
    MESH_QUALIFIERS,
    MeshDescriptor,
    MeshQualifier,
    parse_mesh_ui,
    qualifier,
    record_type,
    suggested_query,
    tiab_phrase,
    ui_to_uid,
    uid_to_ui,
    unique_terms,
)
from biomcp.domain.queries import TopicTerms, tier_a_query


def descriptor(ui: str, name: str, *entry_terms: str) -> MeshDescriptor:
    return MeshDescriptor(uid=ui_to_uid(ui), ui=ui, name=name, entry_terms=entry_terms)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("D009203", "D009203"),
        (" d009203 ", "D009203"),
        ("C000591245", "C000591245"),
        ("Q000188", "Q000188"),
        ("D0092", None),  # too few digits
        ("D0092031234", None),  # too many
        ("X009203", None),
        ("heart attack", None),
        ("D009203 D009765", None),
        ("", None),
    ],
)
def test_a_mesh_ui_is_a_letter_d_c_or_q_and_six_to_nine_digits(
    text: str, expected: str | None
) -> None:
    assert parse_mesh_ui(text) == expected


def test_ui_and_ncbi_uid_convert_both_ways_by_the_letters_ascii_code() -> None:
    assert ui_to_uid("D009203") == "68009203"
    assert ui_to_uid("c000591245") == "67000591245"
    assert ui_to_uid("Q000188") == "81000188"
    for ui in ("D009203", "C000591245", "Q000188", "D000067757"):
        assert uid_to_ui(ui_to_uid(ui)) == ui
    assert uid_to_ui("12345678") is None
    assert uid_to_ui("68") is None
    with pytest.raises(ValueError, match="not a MeSH UI"):
        ui_to_uid("heart attack")


def test_the_record_type_follows_the_ui_letter() -> None:
    assert record_type("D009203") == "descriptor"
    assert record_type("C000591245") == "supplementary"
    assert record_type("Q000188") == "qualifier"
    assert record_type("nonsense") is None
    assert descriptor("C000591245", "semaglutide").record_type == "supplementary"


def test_qualifiers_are_read_from_a_name_or_an_abbreviation() -> None:
    assert qualifier("drug therapy") == MeshQualifier("drug therapy", "DT")
    assert qualifier("  Drug   Therapy ") == MeshQualifier("drug therapy", "DT")
    assert qualifier("DT") == MeshQualifier("drug therapy", "DT")
    assert qualifier("prevention & control") == MeshQualifier("prevention & control", "PC")
    assert qualifier("something new") == MeshQualifier("something new", None)
    assert len(MESH_QUALIFIERS) == len(set(MESH_QUALIFIERS.values()))  # abbreviations unique
    assert all(len(a) == 2 and a.isupper() for a in MESH_QUALIFIERS.values())


def test_the_suggested_query_is_the_indication_group_of_spec_03s_tier_templates() -> None:
    # The same rendering as the tier builders: the Tier A query for the heading as indication
    # opens with exactly the group suggested for it.
    for name in ("Obesity", "Myocardial Infarction", "Proto-Oncogene Proteins p21(ras)"):
        record = descriptor("D009765", name)
        first_line = tier_a_query(TopicTerms.of(name)).splitlines()[0]
        assert suggested_query(record) == first_line
    assert suggested_query(descriptor("D009765", "Obesity")) == "(Obesity[mh] OR Obesity[tiab])"
    assert suggested_query(descriptor("D009203", "Myocardial Infarction")) == (
        '("Myocardial Infarction"[mh] OR "Myocardial Infarction"[tiab])'
    )


def test_an_inverted_heading_is_searched_in_natural_word_order_in_titles() -> None:
    record = descriptor(
        "D002289",
        "Carcinoma, Non-Small-Cell Lung",
        "Carcinoma, Non Small Cell Lung",
        "Non-Small-Cell Lung Carcinoma",
        "NSCLC",
    )
    assert tiab_phrase(record) == "Non-Small-Cell Lung Carcinoma"
    assert suggested_query(record) == (
        '("Carcinoma, Non-Small-Cell Lung"[mh] OR "Non-Small-Cell Lung Carcinoma"[tiab])'
    )
    # no natural form among the entry terms: the heading itself
    lonely = descriptor("D002289", "Carcinoma, Non-Small-Cell Lung", "Lung Carcinoma, NSC")
    assert tiab_phrase(lonely) == "Carcinoma, Non-Small-Cell Lung"


def test_supplementary_records_and_qualifiers_take_their_own_field_tags() -> None:
    assert suggested_query(descriptor("C000591245", "semaglutide", "Ozempic")) == (
        "(semaglutide[nm] OR semaglutide[tiab])"
    )
    assert suggested_query(descriptor("Q000188", "drug therapy")) == (
        '("drug therapy"[sh] OR "drug therapy"[tiab])'
    )


def test_what_pubmed_cannot_take_inside_a_phrase_is_removed_and_operators_are_quoted() -> None:
    odd = descriptor("D000001", 'Odd "quoted" [bracket]\x07 name')
    assert (
        suggested_query(odd) == '("Odd quoted bracket name"[mh] OR "Odd quoted bracket name"[tiab])'
    )
    assert suggested_query(descriptor("D000002", "NOT")) == '("NOT"[mh] OR "NOT"[tiab])'


def test_matches_compares_the_name_and_entry_terms_ignoring_case_and_spacing() -> None:
    record = descriptor("D009203", "Myocardial Infarction", "Heart Attack")
    assert record.matches("heart   ATTACK")
    assert record.matches("myocardial infarction")
    assert not record.matches("heart")


def test_unique_terms_drops_blanks_duplicates_and_the_excluded_name() -> None:
    assert unique_terms(
        ["Obesity", " obesities ", "Obesities", "", "  ", "OBESITY"], exclude="obesity"
    ) == ("obesities",)
