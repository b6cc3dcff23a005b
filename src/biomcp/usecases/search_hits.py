"""One chunk a corpus search found (`SearchCorpus` ranks them; `paper_results` groups them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SearchHit"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    doc_id: str
    uuid: str
    chunk_id: str
    score: float
    fused: float
    sim: float | None
    bm25: float | None
    quality: float | None
    evidence_type: str | None
    section: str | None
    text: str | None
    year: int | None
    journal: str | None
    retracted: bool = False
    study_design: str | None = None
    #: `abstract`, or `fulltext` for a chunk of the PMC article (its `section` is then the
    #: path in the article, and `anchor` its paragraphs or table rows).
    source: str = "abstract"
    anchor: str | None = None

    def as_payload(self) -> dict[str, Any]:
        """One `rag.search` result: spec 01's fields, then the v1.1 ones."""
        return {
            "doc_id": self.doc_id,
            "uuid": self.uuid,
            "sim": self.sim,
            "bm25": self.bm25,
            "quality": self.quality,
            "score": self.score,
            "evidence_type": self.evidence_type,
            "section": self.section,
            "chunk_id": self.chunk_id,
            "text": self.text,
            "retracted": self.retracted,
            "study_design": self.study_design,
            "year": self.year,
            "journal": self.journal,
            "source": self.source,
            "anchor": self.anchor,
        }
