"""Published `pattern`s are checked as JSON Schema (ECMA-262) reads them: `$` is the end of
the text, never the place before a final newline; `\\d` is an ASCII digit."""

from __future__ import annotations

import anyio
import pytest

from biomcp.entrypoints.errors import ToolCallError
from biomcp.entrypoints.mcp.arguments import ArgumentValidator, checked_arguments, ecma_regex
from biomcp.entrypoints.mcp.contract import SPEC_INPUTS

pytestmark = pytest.mark.unit

RAG_GET = SPEC_INPUTS["rag.get"]


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^pmid:[0-9]+$", "pmid:30000001", True),
        ("^pmid:[0-9]+$", "pmid:30000001\n", False),
        (r"^\d+$", "30000001", True),
        (r"^\d+$", "30000001\n", False),
        (r"^\d+$", "٣٠٠", False),  # Arabic-Indic digits: \d is ASCII in JSON Schema
        ("^([Pp][Mm][Cc])?[0-9]{1,12}$", "PMC123\n", False),
        ("^a[$]$", "a$", True),  # a `$` in a class is a dollar sign
        (r"^a\$$", "a$", True),  # so is an escaped one
        (r"^a\$$", "a$\n", False),
        ("^a$|^b$", "b\n", False),
        ("ab", "xxabxx", True),  # unanchored: found anywhere, as in JSON Schema
    ],
)
def test_patterns_match_as_json_schema_reads_them(pattern: str, text: str, matches: bool) -> None:
    assert (ecma_regex(pattern).search(text) is not None) is matches


def test_a_doc_id_with_a_trailing_newline_fails_validation() -> None:
    validator = ArgumentValidator(RAG_GET)
    ok = anyio.run(checked_arguments, "rag_get", RAG_GET, validator, {"doc_id": "pmid:1"})
    assert ok == {"doc_id": "pmid:1"}
    with pytest.raises(ToolCallError) as caught:
        anyio.run(checked_arguments, "rag_get", RAG_GET, validator, {"doc_id": "pmid:1\n"})
    assert caught.value.code == "VALIDATION"
    assert caught.value.details == [
        {"field": "doc_id", "problem": "must match the pattern ^pmid:[0-9]+$, got 'pmid:1\\n'"}
    ]
