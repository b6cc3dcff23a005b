"""Trial registry ids: ClinicalTrials.gov (NCT), ISRCTN, EudraCT and ChiCTR numbers.

A record names its trials in `DataBankList` (a bank name and its accession numbers) and in the
abstract's text. Both are read into one canonical spelling per id, so the same trial matches
whichever way an author wrote it:

* `NCT01234567`: NCT and eight digits; `NCT 01234567` and `nct-01234567` read the same.
* `ISRCTN12345678`: ISRCTN and eight digits, spaces and hyphens dropped.
* `2004-001234-56`: EudraCT, year, six digits and a check pair; any dash becomes a hyphen.
* `ChiCTR2000012345` (since 2016) and `ChiCTR-TRC-12001234` (the older coded form).

Pure functions over strings; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "REGISTRIES",
    "TRIAL_ID_HELP",
    "normalise_trial_id",
    "registry_of",
    "registry_of_databank",
    "trial_ids",
    "trial_ids_in_text",
]

#: The registries read, in the order ids are listed.
REGISTRIES: Final = ("ClinicalTrials.gov", "ISRCTN", "EudraCT", "ChiCTR")

#: What a bad id is told to look like.
TRIAL_ID_HELP: Final = "NCT01234567, ISRCTN12345678, 2004-001234-56 (EudraCT) or ChiCTR2000012345"

#: PubMed's DataBankName values (case-folded) and the registry each one is.
_DATABANKS: Final = {
    "clinicaltrials.gov": "ClinicalTrials.gov",
    "isrctn": "ISRCTN",
    "eudract": "EudraCT",
    "chictr": "ChiCTR",
}

_DASH = r"[-‐‑‒–—]"
_GAP = rf"(?:\s*{_DASH}\s*|\s+)?"
# Each pattern keeps the parts of the id in groups; `_canonical` joins them.
_PATTERNS: Final = (
    ("ClinicalTrials.gov", re.compile(rf"\bNCT{_GAP}(\d{{8}})(?!\d)", re.IGNORECASE)),
    ("ISRCTN", re.compile(rf"\bISRCTN{_GAP}(\d{{8}})(?!\d)", re.IGNORECASE)),
    (
        "EudraCT",
        # Not the first three parts of a newer EU CT number (2022-500001-23-00).
        re.compile(rf"(?<![\d-])(20\d\d){_DASH}(\d{{6}}){_DASH}(\d\d)(?!\d|{_DASH}\d)"),
    ),
    (
        "ChiCTR",
        # A coded id has eight digits (ChiCTR-TRC-12001234), the later form ten.
        re.compile(rf"\b(?i:ChiCTR){_GAP}(?:([A-Z]{{2,5}}){_GAP}(\d{{8}})|(\d{{10}}))(?!\d)"),
    ),
)
_ORDER: Final = {name: i for i, name in enumerate(REGISTRIES)}


def _canonical(registry: str, parts: tuple[str | None, ...]) -> str | None:
    if registry == "ClinicalTrials.gov":
        return f"NCT{parts[0]}"
    if registry == "ISRCTN":
        return f"ISRCTN{parts[0]}"
    if registry == "EudraCT":  # EudraCT opened in 2004
        return "-".join(p for p in parts if p) if int(parts[0] or 0) >= 2004 else None
    code, coded, digits = parts
    return f"ChiCTR-{code}-{coded}" if code else f"ChiCTR{digits}"


def _found(text: str) -> list[str]:
    found: list[str] = []
    for registry, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            canonical = _canonical(registry, match.groups())
            if canonical is not None:
                found.append(canonical)
    return found


def _sorted(ids: Iterable[str]) -> tuple[str, ...]:
    """Distinct ids, by registry (`REGISTRIES`' order) then by id."""
    distinct = set(ids)
    return tuple(sorted(distinct, key=lambda i: (_ORDER[registry_of(i) or ""], i)))


def trial_ids_in_text(text: str) -> tuple[str, ...]:
    """The registry ids written in `text`, canonical, distinct, in `REGISTRIES`' order."""
    return _sorted(_found(text))


def registry_of_databank(name: str | None) -> str | None:
    """The registry a PubMed `DataBankName` names (`ClinicalTrials.gov`...), else None."""
    return _DATABANKS.get((name or "").strip().casefold())


def trial_ids(
    databanks: Iterable[tuple[str | None, Iterable[str]]], texts: Iterable[str] = ()
) -> tuple[str, ...]:
    """The ids of a record: those its registry `databanks` (name, accession numbers) list and
    those its `texts` name. Other banks (GenBank, Dryad...) are ignored, and so is an
    accession its bank's pattern does not read."""
    found: list[str] = []
    for name, accessions in databanks:
        registry = registry_of_databank(name)
        if registry is None:
            continue
        found += [i for a in accessions for i in _found(a) if registry_of(i) == registry]
    for text in texts:
        found += _found(text)
    return _sorted(found)


def normalise_trial_id(value: str) -> str | None:
    """`value`, typed in any case, as one canonical registry id (`nct 01234567` ->
    `NCT01234567`), else None."""
    typed = value.strip().upper()
    found = _found(typed) if len(typed) <= 40 else []
    return found[0] if len(found) == 1 else None


def registry_of(trial_id: str) -> str | None:
    """The registry of a canonical id, else None."""
    if trial_id.startswith("NCT"):
        return "ClinicalTrials.gov"
    if trial_id.startswith("ISRCTN"):
        return "ISRCTN"
    if trial_id.startswith("ChiCTR"):
        return "ChiCTR"
    if re.fullmatch(r"\d{4}-\d{6}-\d{2}", trial_id):
        return "EudraCT"
    return None
