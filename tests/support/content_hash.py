"""Content hashes as the first v1 implementation computed them, to pin the fast version."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from biomcp.domain.records import PubMedRecord
from biomcp.domain.versioning import HASH_SCHEME

__all__ = ["reference_hash"]


def reference_hash(record: PubMedRecord) -> str:
    """The v1 scheme as first written (`dataclasses.asdict`), kept to pin the fast version."""

    def canonical(value: Any) -> Any:
        if isinstance(value, datetime):
            return value.isoformat()
        if isinstance(value, dict):
            return {k: canonical(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [canonical(v) for v in value]
        return value

    content = asdict(record)
    del content["edat"], content["lr"]
    if not content["grants"]:
        del content["grants"]
    if content["pmid_version"] == 1:  # additive, like grants: unversioned PMIDs keep their hash
        del content["pmid_version"]
    if not content["trial_ids"]:  # additive too: records without trial ids keep their hash
        del content["trial_ids"]
    payload = json.dumps(canonical(content), sort_keys=True, ensure_ascii=False)
    # The digest is the first v1 implementation's; only the prefix moved on (HASH_SCHEME).
    return f"{HASH_SCHEME}:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()
