"""Argument preparation (`mcp.tools`): size bounds before validation, lenient conversions
guided by the schema, and validation messages that never repeat a value at length."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator

from biomcp.entrypoints.errors import ToolCallError
from biomcp.entrypoints.mcp.arguments import (
    MAX_CALL_CHARS,
    MAX_STRING_CHARS,
    MIN_CALL_CHARS,
    argument_budget,
    checked_arguments,
    lenient_arguments,
    measure,
    preview,
)
from biomcp.entrypoints.mcp.contract import SPEC_INPUTS
from biomcp.entrypoints.mcp.tools.live.schemas import LIVE_INPUTS
from biomcp.entrypoints.mcp.tools.projects import project_inputs

pytestmark = pytest.mark.unit

RAG_GET = SPEC_INPUTS["rag.get"]
RAG_SEARCH = SPEC_INPUTS["rag.search"]
FETCH = LIVE_INPUTS["fetchArticleDetails"]
RELATIONSHIPS = LIVE_INPUTS["getArticleRelationships"]


def check(schema: dict[str, Any], arguments: Any, name: str = "tool") -> dict[str, Any]:
    validator = Draft202012Validator(schema)
    return anyio.run(checked_arguments, name, schema, validator, arguments)


def refusal(schema: dict[str, Any], arguments: Any) -> ToolCallError:
    with pytest.raises(ToolCallError) as caught:
        check(schema, arguments)
    assert caught.value.code == "VALIDATION"
    return caught.value


# --- size --------------------------------------------------------------------------------------


def test_the_per_string_bound_is_well_above_every_schema_max_length() -> None:
    def max_lengths(schema: Any) -> list[int]:
        if isinstance(schema, dict):
            own = [schema["maxLength"]] if "maxLength" in schema else []
            return own + [n for value in schema.values() for n in max_lengths(value)]
        if isinstance(schema, list):
            return [n for value in schema for n in max_lengths(value)]
        return []

    schemas = [*SPEC_INPUTS.values(), *LIVE_INPUTS.values(), *project_inputs(20).values()]
    longest = max(n for schema in schemas for n in max_lengths(schema))
    assert longest == 100_000  # store_chunks' items[].text
    assert longest * 2 <= MAX_STRING_CHARS


def test_budgets_follow_the_schemas_within_their_bounds() -> None:
    assert argument_budget(RAG_GET) == MIN_CALL_CHARS
    assert argument_budget(FETCH) == MIN_CALL_CHARS
    assert argument_budget(project_inputs(20)["store_chunks"]) == MAX_CALL_CHARS


def test_a_huge_string_is_refused_by_its_length_alone() -> None:
    size = measure({"doc_id": "(" * 4_000_000}, budget=MIN_CALL_CHARS)
    assert size.problem is not None
    assert size.problem["field"] == "doc_id"
    assert "4,000,000 characters" in size.problem["problem"]


def test_a_call_above_its_budget_is_refused_though_each_string_is_short() -> None:
    arguments = {"pmids": ["1" * 1000] * 2000}
    size = measure(arguments, budget=MIN_CALL_CHARS)
    assert size.problem is not None
    assert size.problem["field"] == "arguments"


def test_a_4_mb_argument_is_validation_fast_and_never_echoed() -> None:
    began = time.perf_counter()
    error = refusal(RAG_GET, {"doc_id": "(" * 4 * 1024 * 1024})
    assert time.perf_counter() - began < 1.0  # the issue's bound
    assert "((((" not in error.message
    assert len(error.message) < 500
    assert error.details == [
        {
            "field": "doc_id",
            "problem": f"a string of 4,194,304 characters; no argument string may be longer "
            f"than {MAX_STRING_CHARS:,} characters (the input schema gives each field's own "
            "maxLength)",
        }
    ]


def test_a_long_string_below_the_bound_is_refused_with_a_short_prefix_only() -> None:
    error = refusal(RAG_GET, {"doc_id": "(" * 150_000})
    assert len(error.message) < 600
    problems = error.details
    assert isinstance(problems, list)
    assert problems[0]["field"] == "doc_id"
    assert "150,000 characters" in problems[0]["problem"]
    assert "(" * 41 not in error.message


def test_many_bad_items_report_the_first_ten_problems() -> None:
    error = refusal(FETCH, {"pmids": ["x" * 50] * 190})
    assert isinstance(error.details, list)
    assert len(error.details) == 10
    assert all(p["field"].startswith("pmids.") for p in error.details)


def test_large_arguments_are_validated_off_the_event_loop() -> None:
    store = project_inputs(20)["store_chunks"]
    items = [{"id": f"c{i}", "text": "word " * 400} for i in range(400)]  # ~800 KB

    async def main() -> tuple[dict[str, Any], int]:
        ticks = 0
        done = anyio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await anyio.sleep(0)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(ticker)
            result = await checked_arguments(
                "store_chunks",
                store,
                Draft202012Validator(store),
                {"project": "p", "items": items},
            )
            done.set()
        return result, ticks

    result, ticks = anyio.run(main)
    assert len(result["items"]) == 400
    assert ticks > 1  # the loop ran other tasks while the worker thread validated


# --- lenient inputs ----------------------------------------------------------------------------


def test_number_pmids_become_their_digits() -> None:
    assert check(RELATIONSHIPS, {"sourcePmid": 30000001})["sourcePmid"] == "30000001"
    assert check(FETCH, {"pmids": [30000001, "30000002", 3.0e7]})["pmids"] == [
        "30000001",
        "30000002",
        "30000000",
    ]


def test_negative_or_fractional_numbers_stay_numbers_and_fail() -> None:
    refusal(RELATIONSHIPS, {"sourcePmid": -5})
    refusal(RELATIONSHIPS, {"sourcePmid": 1.5})
    refusal(RELATIONSHIPS, {"sourcePmid": True})


def test_integral_floats_become_integers_and_others_are_refused() -> None:
    converted = check(RAG_SEARCH, {"query": "statins", "top_k": 1.0})
    assert converted["top_k"] == 1
    assert isinstance(converted["top_k"], int)
    error = refusal(RAG_SEARCH, {"query": "statins", "top_k": 1.5})
    assert error.details == [
        {"field": "top_k", "problem": "must be of type integer, got number 1.5"}
    ]


def test_conversion_leaves_the_input_unchanged() -> None:
    arguments = {"pmids": [1, 2]}
    assert lenient_arguments(FETCH, arguments) == {"pmids": ["1", "2"]}
    assert arguments == {"pmids": [1, 2]}


def test_nullable_and_untyped_values_are_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "b": {},
            "c": {"type": "number"},
        },
    }
    assert lenient_arguments(schema, {"a": 7, "b": 7, "c": 2.0}) == {"a": "7", "b": 7, "c": 2.0}


# --- messages ------------------------------------------------------------------------------------


def test_unknown_fields_with_huge_names_are_cut() -> None:
    error = refusal(RAG_GET, {"doc_id": "pmid:1", "x" * 10_000: 1})
    assert len(error.message) < 600
    assert "10,000 characters" in error.message


def test_preview_is_short_and_single_line() -> None:
    assert preview("a\nb") == "'a\\nb'"
    assert preview("a\nb", quoted=False) == "a\\nb"
    assert preview("z" * 1000).endswith("... (1,000 characters)")
    assert len(preview("z" * 1000)) < 80
    assert preview([1, 2]) == "an array of 2 items"
    assert preview(10**100) == "an integer of over 40 digits"
