"""The ESummary `db=mesh` parser (adapters/entrez/mesh_xml.py).

There is no real MeSH answer in ../shared/data/eutils: the documents here are SYNTHETIC, written
to the shape of NCBI's `eSummary_mesh` DTD (DS_MeshTerms/string, DS_IdxLinks/LinksType/TreeNum,
DS_Subheading/string...), in the layouts NCBI uses (tab-indented, empty elements present).
"""

from __future__ import annotations

import pytest

from biomcp.adapters.entrez.mesh_xml import MAX_LIST_ITEMS, MAX_TEXT_CHARS, parse_mesh_summaries
from biomcp.domain.mesh import MeshDescriptor, MeshQualifier
from biomcp.ports.entrez import EntrezRequestError, EntrezResponseError, EntrezUnavailableError
from biomcp.testing.eutils.mesh import VOCABULARY, mesh_esummary

HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" ?>\n'
    b'<!DOCTYPE eSummaryResult PUBLIC "-//NLM//DTD eSummaryResult//EN" '
    b'"http://www.ncbi.nlm.nih.gov/entrez/query/DTD/eSummaryDTD/eSummary_mesh.dtd">\n'
)

# Synthetic: a descriptor in the current layout (with DS_MeshUI, spelled as in some answers).
DESCRIPTOR = (
    HEAD
    + b"""<eSummaryResult>
<DocumentSummarySet status="OK">
<DbBuild>Build-synthetic</DbBuild>
<DocumentSummary uid="68009203">
\t<DS_YearIntroduced>1966</DS_YearIntroduced>
\t<DS_ScopeNote>NECROSIS of the MYOCARDIUM (synthetic note).
\t</DS_ScopeNote>
\t<DS_RegistryNumber>0</DS_RegistryNumber>
\t<DS_HeadingMappedTo></DS_HeadingMappedTo>
\t<DS_MeshTerms>
\t\t<string>Myocardial Infarction</string>
\t\t<string>Heart Attack</string>
\t\t<string>heart attack</string>
\t\t<string>Myocardial Infarction</string>
\t\t<string>Infarction, Myocardial</string>
\t</DS_MeshTerms>
\t<DS_Subheading>
\t\t<string>drug therapy</string>
\t\t<string>DI</string>
\t\t<string>something new</string>
\t\t<string>drug therapy</string>
\t</DS_Subheading>
\t<DS_IdxLinks>
\t\t<LinksType>
\t\t\t<Parent>68009202</Parent>
\t\t\t<TreeNum>C14.280.647.500</TreeNum>
\t\t\t<Children>
\t\t\t\t<int>68056988</int>
\t\t\t</Children>
\t\t</LinksType>
\t\t<LinksType>
\t\t\t<Parent>68007238</Parent>
\t\t\t<TreeNum>C23.550.513.355.750</TreeNum>
\t\t\t<Children>
\t\t\t</Children>
\t\t</LinksType>
\t</DS_IdxLinks>
\t<DS_MeSHUI>D009203</DS_MeSHUI>
\t<DS_RecordType>descriptor</DS_RecordType>
</DocumentSummary>
<DocumentSummary uid="68999999"><error>cannot get document summary</error></DocumentSummary>
</DocumentSummarySet>
</eSummaryResult>
"""
)

# Synthetic: a supplementary concept record in the DTD's older layout, without a UI element
# (the UI comes from the uid) and with DS_HeadingMappedTo as plain text.
SUPPLEMENTARY = (
    HEAD
    + b"""<eSummaryResult>
<DocumentSummarySet status="OK">
<DocumentSummary uid="67000591245">
\t<DS_YearIntroduced></DS_YearIntroduced>
\t<DS_ScopeNote></DS_ScopeNote>
\t<DS_HeadingMappedTo>*Glucagon-Like Peptides</DS_HeadingMappedTo>
\t<DS_MeshTerms>
\t\t<string>semaglutide</string>
\t\t<string>Ozempic</string>
\t</DS_MeshTerms>
\t<DS_Subheading>
\t</DS_Subheading>
\t<DS_IdxLinks>
\t</DS_IdxLinks>
</DocumentSummary>
</DocumentSummarySet>
</eSummaryResult>
"""
)


def test_a_descriptor_is_read_whole_and_an_unknown_uid_is_left_out() -> None:
    [record] = parse_mesh_summaries(DESCRIPTOR)
    assert record == MeshDescriptor(
        uid="68009203",
        ui="D009203",
        name="Myocardial Infarction",
        tree_numbers=("C14.280.647.500", "C23.550.513.355.750"),
        entry_terms=("Heart Attack", "Infarction, Myocardial"),
        scope_note="NECROSIS of the MYOCARDIUM (synthetic note).",
        qualifiers=(
            MeshQualifier("drug therapy", "DT"),
            MeshQualifier("diagnosis", "DI"),
            MeshQualifier("something new", None),
        ),
        year_introduced="1966",
        mapped_to=(),
    )
    assert record.record_type == "descriptor"


def test_an_older_supplementary_record_gets_its_ui_from_the_uid() -> None:
    [record] = parse_mesh_summaries(SUPPLEMENTARY)
    assert record.ui == "C000591245"
    assert record.record_type == "supplementary"
    assert record.name == "semaglutide"
    assert record.entry_terms == ("Ozempic",)
    assert record.tree_numbers == ()
    assert record.qualifiers == ()
    assert record.scope_note is None
    assert record.year_introduced is None
    assert record.mapped_to == ("Glucagon-Like Peptides",)


def test_element_names_are_matched_whatever_their_case() -> None:
    lower = DESCRIPTOR.replace(b"DS_MeSHUI", b"ds_meshui").replace(b"DS_MeshTerms", b"DS_MESHTERMS")
    [record] = parse_mesh_summaries(lower)
    assert record.ui == "D009203"
    assert record.name == "Myocardial Infarction"


def test_an_empty_set_is_no_records_and_a_summary_without_terms_is_skipped() -> None:
    empty = HEAD + b'<eSummaryResult><DocumentSummarySet status="OK"></DocumentSummarySet>'
    assert parse_mesh_summaries(empty + b"</eSummaryResult>") == ()
    nameless = (
        HEAD + b'<eSummaryResult><DocumentSummarySet status="OK">'
        b'<DocumentSummary uid="68000001"><DS_MeshTerms></DS_MeshTerms></DocumentSummary>'
        b"<DocumentSummary><DS_MeshTerms><string>No uid</string></DS_MeshTerms>"
        b"</DocumentSummary></DocumentSummarySet></eSummaryResult>"
    )
    assert parse_mesh_summaries(nameless) == ()


def test_ncbi_errors_and_documents_that_are_not_the_answer_raise_the_ports_errors() -> None:
    invalid = (
        HEAD + b"<eSummaryResult><ERROR>Invalid uid 6800x for db mesh</ERROR></eSummaryResult>"
    )
    with pytest.raises(EntrezRequestError, match="Invalid uid"):
        parse_mesh_summaries(invalid)
    busy = (
        HEAD + b"<eSummaryResult><ERROR>Search Backend failed: try again</ERROR></eSummaryResult>"
    )
    with pytest.raises(EntrezUnavailableError):
        parse_mesh_summaries(busy)
    with pytest.raises(EntrezResponseError, match="HTML"):
        parse_mesh_summaries(b"<html><head><title>Down</title></head></html>")
    with pytest.raises(EntrezResponseError, match="not well-formed"):
        parse_mesh_summaries(DESCRIPTOR[: len(DESCRIPTOR) // 2])
    with pytest.raises(EntrezResponseError, match="expected"):
        parse_mesh_summaries(b"<eSearchResult><Count>0</Count></eSearchResult>")


def test_a_document_declaring_entities_is_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE eSummaryResult [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><eSummaryResult>'
        b'<DocumentSummarySet status="OK"><DocumentSummary uid="68000001"><DS_MeshTerms>'
        b"<string>&b;</string></DS_MeshTerms></DocumentSummary></DocumentSummarySet>"
        b"</eSummaryResult>"
    )
    with pytest.raises(EntrezResponseError, match="entities"):
        parse_mesh_summaries(bomb)


def test_lists_and_texts_from_outside_are_bounded() -> None:
    terms = b"".join(b"<string>Term %d</string>" % i for i in range(MAX_LIST_ITEMS + 100))
    long_note = b"x" * (MAX_TEXT_CHARS + 500)
    big = (
        HEAD + b'<eSummaryResult><DocumentSummarySet status="OK"><DocumentSummary uid="68000001">'
        b"<DS_ScopeNote>" + long_note + b"</DS_ScopeNote>"
        b"<DS_MeshTerms>" + terms + b"</DS_MeshTerms>"
        b"</DocumentSummary></DocumentSummarySet></eSummaryResult>"
    )
    [record] = parse_mesh_summaries(big)
    assert len(record.entry_terms) == MAX_LIST_ITEMS - 1  # the first string is the name
    assert record.scope_note is not None
    assert len(record.scope_note) == MAX_TEXT_CHARS


def test_the_fakes_answers_read_back_as_its_vocabulary() -> None:
    records = parse_mesh_summaries(mesh_esummary([entry.uid for entry in VOCABULARY]))
    assert [r.ui for r in records] == [entry.ui for entry in VOCABULARY]
    for record, entry in zip(records, VOCABULARY, strict=True):
        assert record.name == entry.name
        assert record.entry_terms == entry.entry_terms
        assert record.tree_numbers == entry.tree_numbers
        assert [q.name for q in record.qualifiers] == list(entry.qualifiers)
        assert record.scope_note is not None
        assert record.scope_note.startswith("(synthetic)")
