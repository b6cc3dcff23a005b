"""A tool as the server sees it: its names, words, schemas and handler (`ToolSpec`), and the
argument checks every call goes through.

Tool families (`corpus_tools`, `live_tools`) return their `ToolSpec`s; `server` collects them.
Schemas are declared (JSON Schema 2020-12), not derived from Python signatures.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from mcp.server.mcpserver.context import Context
from mcp_types import ToolAnnotations

from biomcp.entrypoints.errors import ToolCallError
from biomcp.entrypoints.mcp.schemas import SPEC_INPUTS, V11_OUTPUTS

__all__ = ["Handler", "ToolSpec", "validation_failure", "with_defaults"]

Handler = Callable[[dict[str, Any], "Context[Any, Any] | None"], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    spec_name: str
    portable_name: str
    title: str
    description: str
    handler: Handler
    writes: bool
    annotations: ToolAnnotations
    #: Schemas of tools outside spec 01 (`SPEC_INPUTS` / `V11_OUTPUTS` are used otherwise).
    input_override: dict[str, Any] | None = None
    output_override: dict[str, Any] | None = None

    @property
    def input_schema(self) -> dict[str, Any]:
        if self.input_override is not None:
            return self.input_override
        return SPEC_INPUTS[self.spec_name]

    @property
    def output_schema(self) -> dict[str, Any]:
        if self.output_override is not None:
            return self.output_override
        return V11_OUTPUTS[self.spec_name]


def with_defaults(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    filled = dict(arguments)
    for name, prop in schema.get("properties", {}).items():
        if name not in filled and "default" in prop:
            filled[name] = prop["default"]
    return filled


def validation_failure(name: str, validator: Draft202012Validator, arguments: Any) -> ToolCallError:
    problems = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "arguments"
        problems.append({"field": where, "problem": error.message})
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return ToolCallError(
        "VALIDATION",
        f"invalid arguments for {name}: {summary}. The input schema in tools/list says what "
        "is accepted.",
        problems,
    )
