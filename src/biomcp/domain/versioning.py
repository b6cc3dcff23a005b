"""Record versions (spec 01, Metadata Store invariants).

A record is stored once per PMID with a version that starts at 1 and grows by one whenever its
content hash changes or PubMed's LastRevised (LR) date advances; a replay of an unchanged
record is skipped. The content hash covers what a reader of the record would see, not when it
was fetched: title, abstract (labels and text), journal, publication types, MeSH, keywords,
dates, identifiers, authors, languages, notices and grants. EDAT is excluded (it never changes for a
PMID) and LR is excluded (it is compared on its own, and a revision that changes nothing
visible still bumps the version because the spec says so).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields, is_dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from biomcp.domain.records import PubMedRecord

__all__ = ["StoredVersion", "UpsertAction", "VersionDecision", "content_hash", "decide_version"]

#: Bumped when the hashed fields change, so stored hashes from an older scheme are recognized,
#: and when the values derived from a record (evidence tier, study design, quality score)
#: change their rules: a stored hash with an older prefix differs from every new hash, so the
#: next sync that sees a stored record updates it (version + 1), derives its tier and quality
#: again and re-indexes its chunks (their `evidence_type` and `quality_total` too).
#: v2 (tiers from the study design, sample sizes in words): the digest is v1's.
#: v3 (the study design stored with the tier and on every chunk, filterable).
#: v4: a trial, case report or observational study whose MeSH says animals only is an animal
#: study (preclinical), not a human one.
#: v5: study design reads the abstract first (species before randomization, the
#: usual RCT wordings, Mendelian randomization, guideline titles, commentaries); dates keep
#: only the month a record states; the PMID's version is part of the record.
#: v6: more RCT, case report and review wordings; sample sizes sum their groups and
#: read spaced thousands; human points follow the design; a retracted record's quality counts
#: no design, human or sample-size points; trial registry ids and labels without text kept.
#: v7: letters, comments and replies named by their title are commentaries; an abstract that
#: calls the record a guideline makes one; "we studied" names an observational study only
#: before people or a number; counted animal material is what a study used; observational
#: design words count without their hyphen.
#: v8: a trial the abstract only mentions (its evidence or design, a trial another study draws
#: on, trials in the plural) makes no trial; "this comprehensive review" names a review.
#: v9: a title naming "a case of" anywhere, or opening on "Case of", makes a case report; so
#: does "we herein report a case" or "this article presents a case".
#: v10: a review in its own words ("the present review", "our review", "we provide an
#: overview", "we highlight recent advances") is a narrative review; amphibians, birds, fish
#: and invertebrates of the laboratory (toads, pigeons, carp, crabs, Tetrahymena...) are species.
#: v11: chick embryos, Macaca, bulls, fowl, cockerels, roosters and fruit flies are species;
#: an abstract opening on "OPINION STATEMENT:" is a narrative review; so is one that calls
#: itself a narrative or non-systematic review, whatever databases it searched, or a
#: mini-review, or says it reviews or discusses the current or recent advances of a field.
#: v12: a placebo this study gave ("X or placebo", "the placebo group") makes a trial; an
#: abstract that reports one family ("A family is presented in which...") is a case report.
#: v13: a quasi-experimental design that is not a natural experiment makes a trial; a section
#: headed "CASE PRESENTATION:" (or "CASE DESCRIPTION:"...) makes a case report, and so does a
#: section that opens on one patient after its label ("DESCRIPTION: A 10-year-old boy...");
#: fish as food ("fish consumption", "fish oil") names no species studied; "simulated" makes
#: computational work only when it names data ("simulated datasets"), not a condition.
#: v14: a section is background by its label when NLM has not categorized it yet
#: ("Importance", UNASSIGNED); a background section keeps its sentences about this study ("This
#: randomized study compared...", "Methods: ..."); a trial the study compares its results with,
#: prepares, recommends or says is underway makes no trial; a review headed "AREAS COVERED:" is
#: a narrative review; results named by their label alone stay whole as chunks; a title naming
#: a correction, erratum, retraction or expression of concern makes a notice (`other.notice`),
#: "A commentary on" or "Some concerns about" a comment; data split at random with counts
#: ("training (n = 51) and test (n = 23) sets") is no allocation.
#: v15: "knockout" and "transgenic" name no species; songbirds of the laboratory do; an
#: ecological niche or risk is no ecological study; a microsimulation, a software paper's
#: heading ("AVAILABILITY AND IMPLEMENTATION:") and a title naming a simulation or modelling
#: study make computational work; a title naming bench work beside docking, and an IC50 or
#: enzyme assay without people, make laboratory work; regression models fitted to data about
#: people, and "a sample of volunteers", make a study of people.
#: v16: cells named by the species they came from ("mouse pituitary AtT-20 cells") and meat or
#: bones as food ("chicken bone ingestion") name no species studied; synthetic data, virtual
#: patients and software written in a named language make computational work.
#: v17: buffaloes, camels, donkeys, yaks and ruminants are species; carriers, relatives,
#: siblings, twins and healthy controls are people; a "nonrandomized cohort study" is
#: observational; an assay named beside computational work, without people, makes laboratory
#: work.
#: tests/unit/domain/test_derivation_fingerprint.py fails when a rule changes without a bump.
HASH_SCHEME = "v17"


def _canonical(value: Any) -> Any:
    """`value` as JSON-ready data: what `dataclasses.asdict` then a tuple/datetime conversion
    would give, built in one pass without `asdict`'s deep copies (several times faster on
    records; figures: benchmarks/README.md, "Decisions and their figures")."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in fields(value)}
    return value


def content_hash(record: PubMedRecord) -> str:
    """`v8:` + SHA-256 of the canonical JSON of the record's content (module docstring;
    `HASH_SCHEME` says when the prefix changes)."""
    content = _canonical(record)
    content.pop("edat")
    content.pop("lr")
    if not content["grants"]:  # added later: records without grants keep their v1 hash
        content.pop("grants")
    if content["pmid_version"] == 1:  # added later: unversioned PMIDs keep their hash
        content.pop("pmid_version")
    if not content["trial_ids"]:  # added later: records without trial ids keep their hash
        content.pop("trial_ids")
    payload = json.dumps(content, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    return f"{HASH_SCHEME}:{digest}"


class UpsertAction(StrEnum):
    INSERT = "insert"
    UPDATE = "update"
    SKIP = "skip"


@dataclass(frozen=True, slots=True)
class StoredVersion:
    """What the store holds for a PMID: its version, content hash and LR."""

    version: int
    content_hash: str
    lr: datetime | None


@dataclass(frozen=True, slots=True)
class VersionDecision:
    action: UpsertAction
    version: int
    reason: str


def decide_version(
    stored: StoredVersion | None, new_hash: str, new_lr: datetime | None
) -> VersionDecision:
    """Insert a new PMID at version 1; update (version + 1) when the hash differs or LR moved
    forward; skip otherwise. An LR that moves backward (an older copy replayed, e.g. from a
    stale mirror or an older window) never bumps, whatever its content: the stored copy is the
    newer one."""
    if stored is None:
        return VersionDecision(UpsertAction.INSERT, 1, "new record")
    if new_lr is not None and stored.lr is not None and new_lr < stored.lr:
        return VersionDecision(UpsertAction.SKIP, stored.version, "older copy")
    if new_hash != stored.content_hash:
        return VersionDecision(UpsertAction.UPDATE, stored.version + 1, "content changed")
    if new_lr is not None and (stored.lr is None or new_lr > stored.lr):
        return VersionDecision(UpsertAction.UPDATE, stored.version + 1, "LR advanced")
    return VersionDecision(UpsertAction.SKIP, stored.version, "unchanged")
