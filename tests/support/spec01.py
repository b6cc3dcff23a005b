"""Spec 01's own text, read by the tests that hold the corpus tools to it.

`spec_schemas` parses the JSON Schemas printed in ../shared/spec/01-contracts.md (the calling
test is skipped when that folder is absent); `PORTABLE` maps spec 01's tool names to the
portable ones; `respelled` writes a schema's `type` arrays as the portable `anyOf` branches.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.conftest import REPO_ROOT, skip_without_shared

__all__ = ["PORTABLE", "SPEC_01", "respelled", "spec_schemas"]

SPEC_01 = REPO_ROOT.parent / "shared" / "spec" / "01-contracts.md"
PORTABLE = {
    "pubmed.sync_delta": "pubmed_sync_delta",
    "rag.search": "rag_search",
    "rag.get": "rag_get",
    "corpus.checkpoint.get": "corpus_checkpoint_get",
    "corpus.checkpoint.set": "corpus_checkpoint_set",
}


def _json_after(text: str, start: int) -> tuple[dict[str, Any], int]:
    opening = text.index("{", start)
    value, end = json.JSONDecoder().raw_decode(text, opening)
    return value, end


def spec_schemas() -> dict[str, dict[str, dict[str, Any]]]:
    """{tool: {"request": schema, "response": schema}} parsed from spec 01's text."""
    if not SPEC_01.exists():
        skip_without_shared(SPEC_01)
    text = SPEC_01.read_text(encoding="utf-8")
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for name in ("pubmed.sync_delta", "rag.search", "rag.get"):
        at = text.index(f"## Tool: {name}")
        request, end = _json_after(text, text.index("Request", at))
        response, _ = _json_after(text, text.index("Response", end))
        found[name] = {"request": request, "response": response}
    at = text.index("## Tools: corpus.checkpoint.get / corpus.checkpoint.set")
    for verb in ("get", "set"):
        request, end = _json_after(text, text.index(f"{verb.capitalize()} Request", at))
        response, _ = _json_after(text, text.index(f"{verb.capitalize()} Response", end))
        found[f"corpus.checkpoint.{verb}"] = {"request": request, "response": response}
    envelope, _ = _json_after(text, text.index("## Error Envelope"))
    found["error"] = {"request": {}, "response": envelope}
    return found


def respelled(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with every `type` array written as `anyOf` branches of one type each."""
    node = copy.deepcopy(schema)

    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            value = {key: fix(child) for key, child in value.items()}
            if isinstance(value.get("type"), list):
                kinds = value.pop("type")
                value = {"anyOf": [{"type": kind} for kind in kinds], **value}
            return value
        if isinstance(value, list):
            return [fix(child) for child in value]
        return value

    fixed: dict[str, Any] = fix(node)
    return fixed
