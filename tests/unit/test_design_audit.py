"""The hand labels of `python -m benchmarks design_audit` are well formed, and a hand `other`
accepts both tiers a record without a design can take (nothing is timed or classified here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmarks import design_audit

from biomcp.domain.records import EvidenceType
from tests.support.builders import make_record

pytestmark = pytest.mark.unit


def test_every_hand_label_names_designs_of_a_known_set() -> None:
    labels = design_audit.read_labels()
    assert set(labels) == set(design_audit._READERS)
    assert {name: len(rows) for name, rows in labels.items()} == {
        "pubmedqa": 100,
        "update_2021": 200,
        "eutils": 27,
    }
    for rows in labels.values():
        assert all(rows.values())


def test_a_label_that_is_no_design_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.tsv"
    path.write_text("set\tpmid\tdesigns\npubmedqa\t1\tobservational|cohort\n")
    with pytest.raises(ValueError, match="cohort"):
        design_audit.read_labels(path)


def test_a_hand_other_accepts_the_basic_and_the_other_tier() -> None:
    tiers = design_audit.hand_tiers(make_record(), frozenset({"other"}))
    assert tiers == {EvidenceType.BASIC, EvidenceType.OTHER}


def test_hand_designs_give_their_own_tiers() -> None:
    tiers = design_audit.hand_tiers(make_record(), frozenset({"rct", "animal"}))
    assert tiers == {EvidenceType.CLINICAL, EvidenceType.PRECLINICAL}
