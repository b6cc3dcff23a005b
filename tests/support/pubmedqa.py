"""PubMedQA PQA-L abstracts (../shared/data/pubmedqa/ori_pqal.json) as domain records."""

from __future__ import annotations

import json
from pathlib import Path

from biomcp.domain.records import AbstractSection, MeshHeading, PubDate, PubMedRecord


def load_pubmedqa(path: Path) -> list[PubMedRecord]:
    """One record per PMID: labelled sections from CONTEXTS/LABELS, MeSH from MESHES, the
    publication year from YEAR, the question as a stand-in title (PQA-L has no titles)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    records = []
    for pmid, item in data.items():
        sections = tuple(
            AbstractSection(text=text, label=label, category=label)
            for text, label in zip(item["CONTEXTS"], item["LABELS"], strict=True)
        )
        records.append(
            PubMedRecord(
                pmid=pmid,
                title=item.get("QUESTION"),
                abstract=sections,
                mesh=tuple(MeshHeading(descriptor=m) for m in item.get("MESHES", ())),
                pdat=PubDate(int(item["YEAR"])) if item.get("YEAR") else None,
            )
        )
    return records
