"""Tier, study-design and sample-size figures over the PubMedQA PQA-L abstracts.

`python -m biomcp.eval.distribution [--data PATH] [--sample 20] [--seed 17]` prints one
JSON document: the evidence tiers, study designs and deciding rules over every record, the
sample-size reading (how many records have a sample size, how many were read from words, how
many counts were refused as not participants), the design points, and `--sample` records drawn
with a fixed seed, each with its tier, design and rules, for reading by hand.
`without_mesh` compares each record's tier and design with those of a copy without MeSH: how
far the text alone agrees with what MeSH decides, and which labels change.

By default it reads `data/pubmedqa/ori_pqal.json` in the `shared` folder beside the
repository. PQA-L has no titles and no publication types: the question stands in for the
title, MeSH and the abstract decide.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from biomcp.domain.design import classify_design
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.quality import read_sample_size, score_quality
from biomcp.domain.records import AbstractSection, MeshHeading, PubDate, PubMedRecord

__all__ = ["distribution", "load_pubmedqa", "main", "without_mesh"]

TODAY = date(2026, 11, 22)
DEFAULT_DATA = Path(__file__).resolve().parents[3].parent / "shared/data/pubmedqa/ori_pqal.json"


def load_pubmedqa(path: Path) -> list[PubMedRecord]:
    """PQA-L records: labelled sections, MeSH, year, the question as the title."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        PubMedRecord(
            pmid=pmid,
            title=item.get("QUESTION"),
            abstract=tuple(
                AbstractSection(text, label, label)
                for text, label in zip(item["CONTEXTS"], item["LABELS"], strict=True)
            ),
            mesh=tuple(MeshHeading(m) for m in item.get("MESHES", ())),
            pdat=PubDate(int(item["YEAR"])) if item.get("YEAR") else None,
        )
        for pmid, item in data.items()
    ]


def _row(record: PubMedRecord) -> dict[str, Any]:
    design = classify_design(record)
    evidence = classify_evidence(record, design)
    quality = score_quality(record, TODAY, evidence=evidence, design=design)
    reading = read_sample_size(record.abstract_text)
    return {
        "pmid": record.pmid,
        "title": record.title,
        "evidence_type": str(evidence.evidence_type),
        "evidence_rule": evidence.rule,
        "study_design": str(design.design),
        "design_rule": design.rule,
        "quality_total": quality.total,
        "design_points": quality.design,
        "sample_size_n": reading.n,
        "sample_size_text": reading.phrase,
        "sample_size_in_words": bool(reading.phrase and not re.search(r"\d", reading.phrase)),
        "sample_size_refused": list(reading.refused),
    }


def _labels(record: PubMedRecord) -> tuple[str, str]:
    design = classify_design(record)
    return str(classify_evidence(record, design).evidence_type), str(design.design)


def without_mesh(records: list[PubMedRecord]) -> dict[str, Any]:
    """Tier and design agreement between each record and a copy without its MeSH, and the
    design changes (`"with -> without"`), commonest first."""
    tiers = designs = 0
    changed: Counter[str] = Counter()
    for record in records:
        tier, design = _labels(record)
        bare_tier, bare_design = _labels(replace(record, mesh=()))
        tiers += tier == bare_tier
        designs += design == bare_design
        if design != bare_design:
            changed[f"{design} -> {bare_design}"] += 1
    total = max(len(records), 1)
    return {
        "tier_agreement": round(tiers / total, 4),
        "design_agreement": round(designs / total, 4),
        "design_changes": dict(changed.most_common()),
    }


def distribution(records: list[PubMedRecord], sample: int, seed: int) -> dict[str, Any]:
    rows = [_row(record) for record in records]

    def count(key: str) -> dict[str, int]:
        return dict(Counter(str(row[key]) for row in rows).most_common())

    drawn = random.Random(seed).sample(rows, min(sample, len(rows)))  # noqa: S311 (a seeded draw)
    return {
        "records": len(rows),
        "tiers": count("evidence_type"),
        "designs": count("study_design"),
        "design_rules": count("design_rule"),
        "design_points": count("design_points"),
        "sample_size": {
            "found": sum(row["sample_size_n"] is not None for row in rows),
            "read_from_words": sum(row["sample_size_in_words"] for row in rows),
            "records_with_refused_counts": sum(bool(row["sample_size_refused"]) for row in rows),
            "refused_counts": sum(len(row["sample_size_refused"]) for row in rows),
            "refused_examples": [
                {"pmid": row["pmid"], "refused": row["sample_size_refused"]}
                for row in rows
                if row["sample_size_refused"]
            ][:10],
        },
        "mean_quality_total": round(sum(row["quality_total"] for row in rows) / len(rows), 3),
        "without_mesh": without_mesh(records),
        "sample": {
            "seed": seed,
            "records": [
                {k: row[k] for k in ("pmid", "title", "evidence_type", "evidence_rule",
                                     "study_design", "design_rule")}
                for row in drawn
            ],
        },
    }  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)
    print(json.dumps(distribution(load_pubmedqa(args.data), args.sample, args.seed), indent=2))


if __name__ == "__main__":
    main()
