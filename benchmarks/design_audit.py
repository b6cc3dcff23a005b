"""Study design and evidence tier against designs decided by hand, with and without indexing.

`design_audit.tsv` holds 327 records read by hand: 100 PubMedQA abstracts, 200 records of the
2021 update file (four draws of 50 at random among those with an abstract) and the 27 PubMed
records of the real E-utilities responses. Each row names the designs a careful reader could
give the record (`a|b` when two readings stand). The records themselves are read from
`../shared/data` (each set is skipped when its files are absent).

Each record is classified twice: as indexed (publication types and MeSH as the source gives
them) and as text only (both emptied, as a fresh record is before MEDLINE indexing). A label
agrees when it is one of the hand designs. The tier agrees when it is the tier of one of the
hand designs (`tier_of`); a hand `other` accepts both the basic tier (research) and the other
tier (non-research), as the hand label does not tell them apart.

This is a development audit kept in the project. The project's own hand-labelled sets for
study design are kept apart from it and checked after landing.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.design_text import read_records
from benchmarks.machine import describe, goal, loadavg
from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.design import DesignClassification, StudyDesign, classify_design
from biomcp.domain.evidence import tier_of
from biomcp.domain.records import EvidenceType, PubMedRecord
from biomcp.eval.distribution import load_pubmedqa

LABELS = Path(__file__).with_name("design_audit.tsv")
SHARED = Path(__file__).resolve().parents[1].parent / "shared/data"
UPDATE_FILE = "ncbi_files/pubmed21n1298.xml.gz"
PUBMEDQA_FILE = "pubmedqa/ori_pqal.json"
EUTILS_FOLDER = "eutils"
GOAL = 0.85


def read_labels(path: Path = LABELS) -> dict[str, dict[str, frozenset[str]]]:
    """The hand designs, by set and PMID. Lines starting with `#` are comments."""
    rows = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    labels: dict[str, dict[str, frozenset[str]]] = defaultdict(dict)
    for row in csv.DictReader(rows, delimiter="\t"):
        designs = frozenset(row["designs"].split("|"))
        unknown = designs - {d.value for d in StudyDesign}
        if unknown:
            raise ValueError(f"{row['pmid']}: not a study design: {sorted(unknown)}")
        labels[row["set"]][row["pmid"]] = designs
    return dict(labels)


def _pubmedqa(data: Path, wanted: set[str]) -> dict[str, PubMedRecord]:
    path = data / PUBMEDQA_FILE
    if not path.is_file():
        return {}
    return {r.pmid: r for r in load_pubmedqa(path) if r.pmid in wanted}


def _update_file(data: Path, wanted: set[str]) -> dict[str, PubMedRecord]:
    path = data / UPDATE_FILE
    if not path.is_file():
        return {}
    return {r.pmid: r for r in read_records(path) if r.pmid in wanted}


def _eutils(data: Path, wanted: set[str]) -> dict[str, PubMedRecord]:
    found: dict[str, PubMedRecord] = {}
    for path in sorted((data / EUTILS_FOLDER).rglob("*.xml")):
        body = path.read_bytes()
        if b"<PubmedArticle>" not in body:
            continue
        for record in parse_pubmed_articles(body).records:
            if record.pmid in wanted:
                found.setdefault(record.pmid, record)
    return found


_READERS = {"pubmedqa": _pubmedqa, "update_2021": _update_file, "eutils": _eutils}


def hand_tiers(record: PubMedRecord, designs: frozenset[str]) -> set[EvidenceType]:
    """The tiers the hand designs put `record` in (module docstring)."""
    tiers = {tier_of(record, DesignClassification(StudyDesign(d), f"{d}.hand")) for d in designs}
    if "other" in designs:
        tiers.add(EvidenceType.OTHER)
    return tiers


def measure_set(
    records: dict[str, PubMedRecord], labels: dict[str, frozenset[str]]
) -> dict[str, Any]:
    """Agreement of design and tier, as indexed and text only, and every disagreement."""
    counts: dict[str, int] = defaultdict(int)
    disagreements = []
    for pmid, designs in sorted(labels.items()):
        record = records.get(pmid)
        if record is None:
            counts["missing"] += 1
            continue
        row: dict[str, Any] = {"pmid": pmid, "hand": "|".join(sorted(designs))}
        agrees = True
        for view, copy in (
            ("indexed", record),
            ("text_only", replace(record, publication_types=(), mesh=())),
        ):
            found = classify_design(copy)
            design_ok = found.design.value in designs
            tier_ok = tier_of(copy, found) in hand_tiers(copy, designs)
            counts[f"{view}_design"] += design_ok
            counts[f"{view}_tier"] += tier_ok
            row[view] = found.rule
            agrees = agrees and design_ok
        counts["measured"] += 1
        if not agrees:
            disagreements.append(row)
    measured = counts["measured"]
    return {
        "records": len(labels),
        "measured": measured,
        "missing": counts["missing"],
        "agreement": {
            key: round(counts[key] / measured, 3) if measured else None
            for key in ("indexed_design", "text_only_design", "indexed_tier", "text_only_tier")
        },
        "disagreements": disagreements,
    }


def run(quick: bool, argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks design_audit",
        description="Study design and tier against designs decided by hand.",
    )
    parser.add_argument("--data", type=Path, default=SHARED, help="the shared data folder")
    parser.add_argument("--labels", type=Path, default=LABELS, help="the hand labels (TSV)")
    args = parser.parse_args(argv)
    before = loadavg()
    sets: dict[str, Any] = {}
    for name, labels in read_labels(args.labels).items():
        records = _READERS[name](args.data, set(labels))
        if not records:
            sets[name] = {"skipped": "records absent (the shared data folder is not here)"}
            continue
        sets[name] = measure_set(records, labels)
    return {
        "benchmark": "design_audit",
        "machine": describe(),
        "config": {"quick": quick, "loadavg_before_after": [before, loadavg()]},
        "goals": _goals(sets),
        "sets": sets,
    }


def _goals(sets: dict[str, Any]) -> dict[str, Any]:
    """The bar the project set for its hand-labelled design checks, here: design >= 85%."""
    goals = {}
    for name, figures in sets.items():
        agreement = figures.get("agreement")
        if not agreement:
            continue
        for view in ("indexed", "text_only"):
            value = agreement[f"{view}_design"]
            met = value is not None and value >= GOAL
            goals[f"{name}_{view}_design_agreement"] = goal(">= 0.85", value, met)
    return goals
