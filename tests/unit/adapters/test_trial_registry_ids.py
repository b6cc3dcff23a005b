"""Trial registry ids from PubMed XML to every surface: the parser, the stored form, `rag_get`,
`biomcp get`, the exports, the chunk facets and the search filter; and a labelled empty
`AbstractText` kept with its label.

The XML here is synthetic (written for these tests); the real-data tests read records of the
2021 update file from ../shared/data by PMID and skip when it is absent.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterable

import pytest
import rispy
from bibtexparser.entrypoint import parse_string
from lxml import etree

from biomcp.adapters.entrez import parse_pubmed_articles
from biomcp.adapters.sql.serialize import record_from_json, record_to_json
from biomcp.domain.chunking import chunk_record
from biomcp.domain.design import classify_design
from biomcp.domain.export import ExportedRecord, bibtex_entry, csv_header, csv_row, ris_entry
from biomcp.domain.records import PubMedRecord
from biomcp.entrypoints.cli.commands.corpus import _document_view
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.indexing import REGISTRY_FACET, TRIAL_ID_FACET, chunk_record_of
from biomcp.usecases.payloads import document_payload
from biomcp.usecases.search_filters import with_trial_id
from tests.conftest import shared_data_path
from tests.support.builders import make_record, stored_document

pytestmark = pytest.mark.unit


def _article(pmid: str, *, abstract: str = "", databanks: str = "") -> bytes:
    return (
        f"<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID Version='1'>{pmid}</PMID>"
        f"<Article><ArticleTitle>A synthetic trial.</ArticleTitle>"
        f"<Abstract>{abstract}</Abstract><Language>eng</Language>{databanks}"
        f"</Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"
    ).encode()


def _banks(*banks: tuple[str, Iterable[str]]) -> str:
    parts = [
        f"<DataBank><DataBankName>{name}</DataBankName><AccessionNumberList>"
        + "".join(f"<AccessionNumber>{a}</AccessionNumber>" for a in accessions)
        + "</AccessionNumberList></DataBank>"
        for name, accessions in banks
    ]
    return f"<DataBankList CompleteYN='Y'>{''.join(parts)}</DataBankList>"


def _parse(xml: bytes) -> PubMedRecord:
    (record,) = parse_pubmed_articles(xml).records
    return record


def test_databank_and_abstract_ids_are_read_merged_and_ordered() -> None:
    xml = _article(
        "90000001",
        abstract="<AbstractText>Registered as ISRCTN 12345678 and NCT01234567.</AbstractText>",
        databanks=_banks(
            ("ClinicalTrials.gov", ["NCT01234567", "NCT07654321"]),
            ("GENBANK", ["DQ486141"]),
            ("EudraCT", ["2013-001234-56"]),
        ),
    )
    assert _parse(xml).trial_ids == (
        "NCT01234567",
        "NCT07654321",
        "ISRCTN12345678",
        "2013-001234-56",
    )


def test_a_record_naming_no_trial_has_no_ids() -> None:
    xml = _article("90000002", abstract="<AbstractText>We studied 40 mice.</AbstractText>")
    assert _parse(xml).trial_ids == ()


def test_an_empty_labelled_abstract_text_keeps_its_label() -> None:
    xml = _article(
        "90000003",
        abstract=(
            "<AbstractText Label='METHODS' NlmCategory='METHODS'>A chart review.</AbstractText>"
            "<AbstractText Label='LEVEL OF EVIDENCE: 4'/>"
            "<AbstractText/>"
        ),
    )
    record = _parse(xml)
    assert [(s.label, s.text) for s in record.abstract] == [
        ("METHODS", "A chart review."),
        ("LEVEL OF EVIDENCE: 4", ""),
    ]
    assert record.abstract_text == "METHODS: A chart review.\nLEVEL OF EVIDENCE: 4"
    assert record_from_json(record_to_json(record)) == record


def test_the_stored_form_keeps_the_ids_and_an_older_row_reads_as_none() -> None:
    record = make_record(trial_ids=("NCT01234567", "ChiCTR-TRC-12001234"))
    stored = record_to_json(record)
    assert record_from_json(stored) == record
    older = {k: v for k, v in record_to_json(make_record()).items() if k != "trial_ids"}
    assert record_from_json(older).trial_ids == ()


def _shown(record: PubMedRecord) -> ExportedRecord:
    doc = stored_document(record)
    design = doc.evidence.design or classify_design(record)
    return ExportedRecord(record, doc.evidence, doc.quality, str(design.design))


def test_rag_get_and_biomcp_get_show_the_ids() -> None:
    record = make_record(trial_ids=("NCT01234567", "2013-001234-56"))
    payload = document_payload(stored_document(record))
    assert payload["trial_ids"] == ["NCT01234567", "2013-001234-56"]
    page = _document_view(payload, [])
    assert "Trials:      NCT01234567, 2013-001234-56" in page.splitlines()
    without = _document_view(document_payload(stored_document(make_record())), [])
    assert "Trials:" not in without


def test_exports_carry_the_ids_in_a_note_and_a_column() -> None:
    item = _shown(make_record(trial_ids=("NCT01234567", "ISRCTN12345678")))
    (ris,) = rispy.loads(ris_entry(item))
    assert ris["notes"][1] == "Trial registry: NCT01234567, ISRCTN12345678"
    (entry,) = parse_string(bibtex_entry(item)).entries
    annote = {f.key: f.value for f in entry.fields}["annote"]
    assert annote.endswith(". Trial registry: NCT01234567, ISRCTN12345678")
    (row,) = csv.DictReader(io.StringIO(csv_header() + csv_row(item)))
    assert row["trial_ids"] == "NCT01234567; ISRCTN12345678"

    plain = _shown(make_record())
    assert len(rispy.loads(ris_entry(plain))[0]["notes"]) == 1
    (plain_row,) = csv.DictReader(io.StringIO(csv_header() + csv_row(plain)))
    assert plain_row["trial_ids"] == ""


def test_chunks_carry_the_ids_and_their_registries_as_facets() -> None:
    record = make_record(trial_ids=("NCT01234567", "NCT07654321", "ChiCTR2000012345"))
    doc = stored_document(record)
    (chunk,) = chunk_record(make_record(trial_ids=record.trial_ids, text="Some text."))
    facets = chunk_record_of(doc, chunk, [0.0]).facets
    assert facets[TRIAL_ID_FACET] == record.trial_ids
    assert facets[REGISTRY_FACET] == ("ClinicalTrials.gov", "ChiCTR")
    assert (
        TRIAL_ID_FACET not in chunk_record_of(stored_document(make_record()), chunk, [0.0]).facets
    )


def test_the_search_filter_takes_any_spelling_of_an_id_or_any() -> None:
    base = SearchFilters(year_min=2000, facets=(("design", frozenset({"rct"})),))
    one = with_trial_id(base, " nct 01234567 ")
    assert one is not None
    assert one.year_min == 2000
    assert dict(one.facets or ()) == {
        "design": frozenset({"rct"}),
        TRIAL_ID_FACET: frozenset({"NCT01234567"}),
    }
    anything = with_trial_id(None, "ANY")
    assert anything is not None
    assert dict(anything.facets or ())[REGISTRY_FACET] == frozenset(
        {"ClinicalTrials.gov", "ISRCTN", "EudraCT", "ChiCTR"}
    )
    assert with_trial_id(base, None) is base
    assert with_trial_id(base, "  ") is base
    with pytest.raises(InvalidRequestError, match="not a trial registry id"):
        with_trial_id(None, "NCT0123")


# --- real records (the 2021 update file) ------------------------------------------------------

#: PMID -> the ids its DataBankList and abstract name, read by hand from the file.
_REAL = {
    "31719001": ("NCT03935542",),  # DataBankList and abstract, the same id
    "32830383": ("NCT01892358",),  # DataBankList only
    "31193683": ("ISRCTN10548241",),  # abstract only
    "34091420": ("NCT01909453", "2013-001176-38"),  # a DataBank NCT and an abstract EudraCT
    "34093015": ("2005-000826-22", "2015-001639-19"),  # two EudraCT numbers, upper case
    "34096787": ("ChiCTR-OCB-15007326",),  # ChiCTR's coded form
    "34088270": ("ChiCTR2000030145",),  # ChiCTR's later form
    "34096500": (),  # an ISRCTN DataBank accession with nine digits: no id
    "16384580": (),  # PDB accessions only
}
_LABEL_ONLY = "31617889"  # ends with an empty `LEVEL OF EVIDENCE: 4` section


@pytest.fixture(scope="module")
def real_records() -> dict[str, PubMedRecord]:
    path = shared_data_path("ncbi_files", "pubmed21n1298.xml.gz")
    wanted = {*_REAL, _LABEL_ONLY}
    copies: list[bytes] = []
    with gzip.open(path) as stream:
        for _, node in etree.iterparse(stream, tag="PubmedArticle"):
            if node.findtext("MedlineCitation/PMID") in wanted:
                copies.append(etree.tostring(node))
            node.clear()
    parsed = parse_pubmed_articles(
        b"<PubmedArticleSet>" + b"".join(copies) + b"</PubmedArticleSet>"
    )
    return {r.pmid: r for r in parsed.records}


@pytest.mark.parametrize("pmid", sorted(_REAL))
def test_real_records_give_the_ids_they_name(
    real_records: dict[str, PubMedRecord], pmid: str
) -> None:
    assert real_records[pmid].trial_ids == _REAL[pmid]


def test_a_real_empty_level_of_evidence_section_keeps_its_label(
    real_records: dict[str, PubMedRecord],
) -> None:
    last = real_records[_LABEL_ONLY].abstract[-1]
    assert (last.label, last.text) == ("LEVEL OF EVIDENCE: 4", "")
    assert real_records[_LABEL_ONLY].abstract_text.endswith("\nLEVEL OF EVIDENCE: 4")
