"""What narrows a corpus search: study designs, the source of a chunk, a trial registry id, and
checks on the other filters.

Each `with_*` function returns the filters narrowed by one argument of a search, or unchanged
when it is empty. Each refuses a value no chunk could match, with an `InvalidRequestError`
naming the field.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from biomcp.domain.design import STUDY_DESIGN_VALUES
from biomcp.domain.records import EvidenceType
from biomcp.domain.registries import REGISTRIES, TRIAL_ID_HELP, normalise_trial_id
from biomcp.ports.vectors import SearchFilters
from biomcp.usecases.errors import InvalidRequestError
from biomcp.usecases.indexing import DESIGN_FACET, REGISTRY_FACET, SOURCE_FACET, TRIAL_ID_FACET

__all__ = [
    "SOURCES",
    "check_designs",
    "check_filters",
    "with_designs",
    "with_source",
    "with_trial_id",
]

#: What `with_source` accepts: chunks of abstracts, or of PMC full text.
SOURCES = ("abstract", "fulltext")


def check_designs(study_designs: Collection[str]) -> None:
    """Refuse a value that is not a study design.

    Raises:
        InvalidRequestError: naming the unknown values and the allowed ones.
    """
    unknown = sorted(set(study_designs) - set(STUDY_DESIGN_VALUES))
    if unknown:
        raise InvalidRequestError(
            f"unknown study design {', '.join(map(repr, unknown))}: "
            f"use {', '.join(STUDY_DESIGN_VALUES)}",
            details={"field": "study_design", "allowed": list(STUDY_DESIGN_VALUES)},
        )


def with_designs(
    filters: SearchFilters | None, study_designs: Collection[str] | None
) -> SearchFilters | None:
    """`filters` narrowed to chunks of `study_designs` (None or empty: unchanged). Chunks
    indexed before designs were stored carry none and pass no design filter until the corpus
    is rebuilt (`biomcp index rebuild --rederive`).

    Raises:
        InvalidRequestError: a value that is not a study design.
    """
    if not study_designs:
        return filters
    check_designs(study_designs)
    facet = (DESIGN_FACET, frozenset(study_designs))
    base = filters or SearchFilters()
    others = tuple(f for f in base.facets or () if f[0] != DESIGN_FACET)
    return replace(base, facets=(*others, facet))


def with_source(filters: SearchFilters | None, source: str | None) -> SearchFilters | None:
    """`filters` narrowed to chunks of one source (None or blank: unchanged). Only full-text
    chunks carry the source facet, so "abstract" excludes full text rather than requiring the
    facet: chunks indexed before full text existed stay abstracts.

    Raises:
        InvalidRequestError: a source other than `SOURCES`.
    """
    wanted = (source or "").strip()
    if not wanted:
        return filters
    if wanted not in SOURCES:
        raise InvalidRequestError(
            f"source must be one of {', '.join(SOURCES)}, got {source!r}",
            details={"field": "source", "allowed": list(SOURCES)},
        )
    base = filters or SearchFilters()
    full = (SOURCE_FACET, frozenset({"fulltext"}))
    if wanted == "fulltext":
        others = tuple(f for f in base.facets or () if f[0] != SOURCE_FACET)
        return replace(base, facets=(*others, full))
    kept = tuple(f for f in base.exclude_facets or () if f[0] != SOURCE_FACET)
    return replace(base, exclude_facets=(*kept, full))


def with_trial_id(filters: SearchFilters | None, trial_id: str | None) -> SearchFilters | None:
    """`filters` narrowed to chunks whose record names `trial_id` (any spelling of it), or any
    registry id when it is `any` (None or blank: unchanged). Chunks indexed before registry
    ids were kept carry none until the corpus is re-indexed (`biomcp index rebuild`).

    Raises:
        InvalidRequestError: `trial_id` is neither `any` nor a registry id.
    """
    wanted = (trial_id or "").strip()
    if not wanted:
        return filters
    if wanted.casefold() == "any":
        facet = (REGISTRY_FACET, frozenset(REGISTRIES))
    else:
        canonical = normalise_trial_id(wanted)
        if canonical is None:
            raise InvalidRequestError(
                f"trial_id {trial_id!r} is not a trial registry id: use 'any' or one like "
                f"{TRIAL_ID_HELP}",
                details={"field": "trial_id", "value": trial_id},
            )
        facet = (TRIAL_ID_FACET, frozenset({canonical}))
    base = filters or SearchFilters()
    others = tuple(f for f in base.facets or () if f[0] != facet[0])
    return replace(base, facets=(*others, facet))


def check_filters(filters: SearchFilters) -> None:
    """Refuse filters no record could pass by mistake: an evidence type that is none of the
    tiers, a year range that ends before it starts.

    Raises:
        InvalidRequestError: naming the field.
    """
    tiers = [t.value for t in EvidenceType]
    unknown = sorted(set(filters.evidence_types or ()) - set(tiers))
    if unknown:
        raise InvalidRequestError(
            f"unknown evidence type {', '.join(unknown)}: use {', '.join(tiers)}",
            details={"field": "evidence_type", "allowed": tiers},
        )
    first, last = filters.year_min, filters.year_max
    if first is not None and last is not None and first > last:
        raise InvalidRequestError(
            f"year_min {first} is after year_max {last}", details={"field": "year_min"}
        )
