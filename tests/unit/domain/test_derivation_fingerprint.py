"""A change to what the domain derives from a record must come with a new `HASH_SCHEME`.

Stored documents keep the tier, design and score of the day they were stored: only a record
whose content hash changes is derived again (by the next sync that sees it, or `biomcp index
rebuild --rederive`), and spec 01 lets the version move only then. The hash scheme's prefix is
how a rule change reaches stored corpora: bumping it makes every stored hash differ. So a rule
that changes without a bump leaves every existing corpus on the old answers, for good.

These tests derive fixed sets of records (synthetic; the real NCBI records and PubMedQA
abstracts of ../shared/data; those abstracts again without their types and MeSH; the first
records of the two bulk PubMed files without their types and MeSH) and compare a digest of the
answers with the one recorded for the current scheme. When one fails:

* a derivation rule changed: bump `HASH_SCHEME` (biomcp/domain/versioning.py, with a line
  saying why), then record the new digests under the new scheme;
* only the test's inputs changed (the synthetic generator): record the new digest under the
  same scheme.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

import pytest
from benchmarks.design_text import read_records

from biomcp.adapters.entrez.pubmed_xml import parse_pubmed_articles
from biomcp.domain.design import classify_design
from biomcp.domain.evidence import classify_evidence
from biomcp.domain.quality import score_quality
from biomcp.domain.records import PubMedRecord
from biomcp.domain.versioning import HASH_SCHEME
from biomcp.testing.eutils import generate_articles
from tests.conftest import shared_data_path
from tests.support.pubmedqa import load_pubmedqa

pytestmark = pytest.mark.unit

#: Records read from the start of each bulk file: enough to meet most text rules, in seconds.
BULK_RECORDS = 3000

#: A fixed "today": recency moves with the calendar, not with the rules.
TODAY = date(2026, 1, 1)

#: scheme -> input set -> sha256 of the derived answers (see the module docstring).
FINGERPRINTS: dict[str, dict[str, str]] = {
    "v4": {
        "synthetic": "083841c0f2a7f63b2b6fc4ebefa3fd042c65ea6a8257ba24d59ca6d2d86ea431",
        "real": "1f68a59d35db3b7b8f0b2bc907da435b22b6a13aafb6ebdfa22d3f4489cb3308",
    },
    "v5": {
        "synthetic": "083841c0f2a7f63b2b6fc4ebefa3fd042c65ea6a8257ba24d59ca6d2d86ea431",
        "real": "b0fabd2718f589a732735561de7a2c9fbd8f76b180dab5fb6f271c513e35677d",
    },
    "v6": {
        "synthetic": "083841c0f2a7f63b2b6fc4ebefa3fd042c65ea6a8257ba24d59ca6d2d86ea431",
        "real": "be02bbd59877a7f7b3bdf1fad3663fc283845b7fcd0240ba23fdd55afc00128b",
    },
    "v7": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "6fceb3ee865ef6c28a77d060bf6509f33aa72c608ee3177e5244d99d649416eb",
    },
    "v8": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "6fceb3ee865ef6c28a77d060bf6509f33aa72c608ee3177e5244d99d649416eb",
        "real, text only": "90a0e1f7128d5c9850247c050a342520b8be719a6550c31a440f7155d372c603",
    },
    "v9": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "6fceb3ee865ef6c28a77d060bf6509f33aa72c608ee3177e5244d99d649416eb",
        "real, text only": "90a0e1f7128d5c9850247c050a342520b8be719a6550c31a440f7155d372c603",
        "1979 file, text only": "09c2238395eb3707ef11c30cf7d1da139518c074309f6b56061fd7272fcbecb4",
        "2021 file, text only": "a6b4f47d606fc481017b240cbbf5132def6c02746004acc70a92a19ae3b77f35",
    },
    "v10": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "6fceb3ee865ef6c28a77d060bf6509f33aa72c608ee3177e5244d99d649416eb",
        "real, text only": "90a0e1f7128d5c9850247c050a342520b8be719a6550c31a440f7155d372c603",
        "1979 file, text only": "0ef5b32387bc92081ab717d8313dcae8fe5fe56d354408078cac0f455467a38b",
        "2021 file, text only": "dc94fde8adcefde42cec7aedcfba4aeca1ada32ad433616fa2c6b2beea83a278",
    },
    "v11": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "6fceb3ee865ef6c28a77d060bf6509f33aa72c608ee3177e5244d99d649416eb",
        "real, text only": "90a0e1f7128d5c9850247c050a342520b8be719a6550c31a440f7155d372c603",
        "1979 file, text only": "9170a795cf9813c3b0e45d8c0d2551ececb4047d3f4a7eeb52806ea2d39e1658",
        "2021 file, text only": "6bf6d49fc6930c56bc1318deadcccacbac61b95ba7a483a502b6ab87d8c15540",
    },
    "v12": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "407a9eca899738c121cb8eec9d592e138a043f7f2dccb1a227b5c976d9c97e77",
        "real, text only": "d807707f5636b751157d45c9a99d464de20361ee33ddc519675564e0a8d58ba9",
        "1979 file, text only": "ae6ece4125a18ae6295ab98eb19abca4685688a3ee35e16d1085e34422942dd9",
        "2021 file, text only": "13bb30c4baee3fd07ee56d57a5807446e17a61c2a01294366d379ad0bf39bfc4",
    },
    "v13": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "961fbe9bcd2f971029948740782ae9f2410c076341e9441967d97e62c1ff11f8",
        "real, text only": "76eda293c17ee912b2a2bf16fcb1258fa16722d84448a49361d57485b05d122e",
        "1979 file, text only": "2d04dee504a3cd0daee2f9e1030ab0080159c3110968bda5098a5cdb675a99bf",
        "2021 file, text only": "56c96772c1784a083787f8fb49c27e33738a1d95468e6f93ab17cee61f3b7128",
    },
    "v14": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "34592dcc3e95f893cb117ac07ab1e5d77c509a8dc87a0ecc6a0c9f0cbeb59a0c",
        "real, text only": "0af65ac36cda5e5416923fe84c8763a59ca575c733a8d270f4653162f965bad9",
        "1979 file, text only": "2d04dee504a3cd0daee2f9e1030ab0080159c3110968bda5098a5cdb675a99bf",
        "2021 file, text only": "7625371973f0f0562085c6752371863efb92bf7e2e4a6302c87e9c10da5dcb0f",
    },
    "v15": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "4bc8c871832c0b0ef480dca4a80a41e169d888ebc12ee8172809de941dfaa941",
        "real, text only": "f4122809137f9f8b73f08165c7ea373973d4fbb498b13f0dd6d76f33b2fc92cb",
        "1979 file, text only": "2d04dee504a3cd0daee2f9e1030ab0080159c3110968bda5098a5cdb675a99bf",
        "2021 file, text only": "7d487311f42c5ce957259c971f7912ff20096cfee3162320964bd594a464f681",
    },
    "v16": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "4bc8c871832c0b0ef480dca4a80a41e169d888ebc12ee8172809de941dfaa941",
        "real, text only": "3d13f8ce3f37ee3b3374f6e8c8495bc658c317bc19d1db6eb298af398c9253af",
        "1979 file, text only": "1b7dac6edaac056adcee6caa1841734b61c31256609b7ec16fd62ff221be38d3",
        "2021 file, text only": "c0693ae918b28c903c92189647d55900643973b7b546ebdaeb1026fcf5335128",
    },
    "v17": {
        "synthetic": "d49293e08cb7ad40329d320d2ec31ada2d84afc9fc2cc045874e6952a4be514a",
        "real": "c2363541dcf3628fd64cf467920e943216b993865e279b21a1c92655b08c1eab",
        "real, text only": "d633e7917ad8d05303b5cc832cac38f948f1ef2fa6a95ff09564dc8ac1603992",
        "1979 file, text only": "1b7dac6edaac056adcee6caa1841734b61c31256609b7ec16fd62ff221be38d3",
        "2021 file, text only": "a8fad6ece0311ffd5df02cc3e25f9d19e19315bf62cfce8a7fbcb73042e7e68c",
    },
}


def _fingerprint(records: Sequence[PubMedRecord]) -> str:
    rows = []
    for record in sorted(records, key=lambda r: r.pmid):
        design = classify_design(record)
        evidence = classify_evidence(record, design)
        quality = score_quality(record, TODAY, evidence=evidence, design=design)
        rows.append(
            [
                record.pmid,
                evidence.evidence_type.value,
                evidence.rule,
                design.design.value,
                evidence.has_numbers,
                evidence.has_biomarker,
                quality.as_dict(),
            ]
        )
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _check(name: str, records: Sequence[PubMedRecord]) -> None:
    assert records, f"no {name} records"
    found = _fingerprint(records)
    recorded = FINGERPRINTS.get(HASH_SCHEME, {}).get(name)
    assert recorded is not None, (
        f"no {name!r} fingerprint recorded for HASH_SCHEME {HASH_SCHEME!r}: record {found}"
    )
    assert found == recorded, (
        f"what the domain derives from the {name} records changed ({found}) under the same "
        f"HASH_SCHEME {HASH_SCHEME!r}: bump HASH_SCHEME if a rule changed (stored corpora "
        "are derived again only then), and record the new digest (module docstring)"
    )


def test_synthetic_records_derive_as_recorded_for_this_scheme() -> None:
    body = generate_articles(3000, start=date(2015, 1, 1), end=date(2025, 12, 31), seed=17)
    _check("synthetic", parse_pubmed_articles(body).records)


def test_real_records_derive_as_recorded_for_this_scheme() -> None:
    records: list[PubMedRecord] = []
    for path in sorted(shared_data_path("eutils").rglob("*.xml")):
        body = path.read_bytes()
        if b"PubmedArticleSet" in body[:600]:
            records.extend(parse_pubmed_articles(body).records)
    records += load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    unique = {record.pmid: record for record in records}  # one answer per PMID
    _check("real", list(unique.values()))


def test_real_records_read_from_text_alone_derive_as_recorded_for_this_scheme() -> None:
    # Fresh records carry no MeSH and few types: the text rules decide, so this set sees them.
    records = load_pubmedqa(shared_data_path("pubmedqa", "ori_pqal.json"))
    _check("real, text only", [replace(r, publication_types=(), mesh=()) for r in records])


@pytest.mark.parametrize(("name", "year"), [("pubmed20n0014", 1979), ("pubmed21n1298", 2021)])
def test_bulk_records_read_from_text_alone_derive_as_recorded_for_this_scheme(
    name: str, year: int
) -> None:
    # A 1979 baseline file and a 2021 update file: old abstracts without "random", case
    # reports by their title, fresh records without MeSH. PubMedQA alone misses many of these.
    path = shared_data_path("ncbi_files", f"{name}.xml.gz")
    records = [replace(r, publication_types=(), mesh=()) for r in read_records(path, BULK_RECORDS)]
    assert len(records) == BULK_RECORDS
    _check(f"{year} file, text only", records)
