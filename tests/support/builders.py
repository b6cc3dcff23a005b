"""A tiny builder of `PubMedRecord`s for tests: sensible defaults, any field overridable."""

from __future__ import annotations

from typing import Any

from biomcp.domain.records import AbstractSection, Journal, MeshHeading, PubDate, PubMedRecord

__all__ = ["abstract", "make_record", "mesh"]


def abstract(*texts: str) -> tuple[AbstractSection, ...]:
    """Unlabelled abstract sections, one per text."""
    return tuple(AbstractSection(text=t) for t in texts)


def mesh(*descriptors: str) -> tuple[MeshHeading, ...]:
    """MeSH headings from descriptor names."""
    return tuple(MeshHeading(descriptor=d) for d in descriptors)


def make_record(**overrides: Any) -> PubMedRecord:
    """A neutral record (a "Journal Article" with an unremarkable title, no abstract, no MeSH,
    published 2020 in a non-tier-1 journal); `overrides` replace any field. Convenience keys:
    `text=` (one unlabelled abstract section), `mesh_terms=` (descriptor names)."""
    fields: dict[str, Any] = {
        "pmid": "12345678",
        "title": "A study of something",
        "journal": Journal(title="Journal of examples", issn="1234-5679"),
        "publication_types": ("Journal Article",),
        "pdat": PubDate(2020),
    }
    if "text" in overrides:
        overrides["abstract"] = abstract(overrides.pop("text"))
    if "mesh_terms" in overrides:
        overrides["mesh"] = mesh(*overrides.pop("mesh_terms"))
    fields.update(overrides)
    return PubMedRecord(**fields)
