"""The argument checks every tool call goes through, before its handler runs.

Every call's arguments go through `checked_arguments`, in this order:

1. Size (`measure`), before anything else looks at them: no string longer than
   `MAX_STRING_CHARS` (200,000 characters, twice the longest string any schema accepts:
   `store_chunks`' `items[].text`, maxLength 100,000), and no call larger than its tool's
   budget (`argument_budget`: what the schema's own maxLength / maxItems allow, at least
   `MIN_CALL_CHARS` = 1 MiB and at most `MAX_CALL_CHARS` = 32 MiB, the budget of
   `store_chunks`' 500 chunks). Sizes are counted in characters of the decoded JSON values.
2. Lenient conversions (`lenient_arguments`), guided by the schema: a non-negative integer
   where a string is expected becomes its decimal string (`sourcePmid: 30000001`, `pmids:
   [30000001]`), and an integral float where an integer is expected becomes that integer
   (`top_k: 1.0`); `1.5` stays and fails validation.
3. JSON Schema validation (`ArgumentValidator`), with messages built from the failing keyword
   and the schema, never from the value (a value is echoed as a short prefix at most,
   `preview`). A `pattern` is read as JSON Schema (ECMA-262) reads it, not as Python's `re`
   does: `$` is the end of the text only (never before a final newline), `\\d` an ASCII digit.

Arguments above `INLINE_CHARS` are converted and validated in a worker thread, so a large call
never holds the event loop (and `/health` keeps answering).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

from biomcp.entrypoints.errors import ToolCallError

__all__ = [
    "INLINE_CHARS",
    "MAX_CALL_CHARS",
    "MAX_STRING_CHARS",
    "MIN_CALL_CHARS",
    "ArgumentValidator",
    "argument_budget",
    "checked_arguments",
    "ecma_regex",
    "lenient_arguments",
    "measure",
    "preview",
    "validation_failure",
    "with_defaults",
]

#: The longest string any argument may be (twice the longest any schema accepts).
MAX_STRING_CHARS: Final = 200_000
#: A call's size budget is at least this (small tools) ...
MIN_CALL_CHARS: Final = 1 << 20
#: ... and at most this (`store_chunks`: 500 chunks with their texts, vectors and metadata).
MAX_CALL_CHARS: Final = 32 << 20
#: Arguments larger than this are converted and validated in a worker thread.
INLINE_CHARS: Final = 64 << 10
#: What a string without maxLength, an array without maxItems and a free-form object count for
#: in a budget (the per-string bound still applies to each string).
_OPEN_ARRAY_ITEMS: Final = 4096
_FREE_OBJECT_CHARS: Final = 64 << 10
_SCALAR_CHARS: Final = 24
#: The most validation problems reported (the first ones found).
_MAX_PROBLEMS: Final = 10
#: A value is echoed in messages and logs as at most this many characters.
PREVIEW_CHARS: Final = 40


def with_defaults(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` with the schema's default of every property left out."""
    filled = dict(arguments)
    for name, prop in schema.get("properties", {}).items():
        if name not in filled and "default" in prop:
            filled[name] = prop["default"]
    return filled


# --- size -------------------------------------------------------------------------------------


def argument_budget(schema: Mapping[str, Any]) -> int:
    """The most characters a call of a tool with this input schema may carry, from the
    schema's own maxLength and maxItems (see the module docstring), within
    [`MIN_CALL_CHARS`, `MAX_CALL_CHARS`]."""
    return max(MIN_CALL_CHARS, min(MAX_CALL_CHARS, _estimate(schema)))


def _estimate(schema: Any) -> int:
    if not isinstance(schema, Mapping):
        return _FREE_OBJECT_CHARS
    alternatives = [*schema.get("anyOf", ()), *schema.get("oneOf", ())]
    if alternatives:
        return max(_estimate(alternative) for alternative in alternatives)
    kinds = schema.get("type")
    if isinstance(kinds, list):
        return max(_estimate({**schema, "type": kind}) for kind in kinds)
    if "enum" in schema:
        return max((len(str(v)) + 2 for v in schema["enum"]), default=_SCALAR_CHARS)
    if kinds == "string":
        return int(schema.get("maxLength", MAX_STRING_CHARS)) + 2
    if kinds == "array":
        items = int(schema.get("maxItems", _OPEN_ARRAY_ITEMS))
        return 2 + items * (_estimate(schema.get("items", {})) + 1)
    if kinds == "object":
        properties = schema.get("properties", {})
        total = 2 + sum(len(name) + 4 + _estimate(sub) for name, sub in properties.items())
        if not properties or schema.get("additionalProperties", True) is not False:
            total += _FREE_OBJECT_CHARS
        return total
    if kinds in ("integer", "number", "boolean", "null"):
        return _SCALAR_CHARS
    return _FREE_OBJECT_CHARS


@dataclass(frozen=True, slots=True)
class Size:
    """What `measure` found: the characters counted (up to where it stopped), and the first
    limit broken (None: within both bounds)."""

    chars: int
    problem: dict[str, Any] | None = None


def measure(arguments: Any, *, budget: int, stop_at: int | None = None) -> Size:
    """Count `arguments` (as decoded JSON) until done, a string breaks `MAX_STRING_CHARS` or the
    total breaks `budget`. With `stop_at`, stop quietly once that many characters are counted
    (the caller then measures again, off the event loop). Each string costs O(1): its length."""
    total = 0
    pending: list[tuple[str, Any]] = [("", arguments)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, str):
            if len(value) > MAX_STRING_CHARS:
                return Size(total + len(value), _too_long(where, len(value)))
            total += len(value) + 2
        elif isinstance(value, Mapping):
            total += 2
            for key, item in value.items():
                key = str(key)
                if len(key) > MAX_STRING_CHARS:
                    return Size(total + len(key), _too_long(where or "arguments", len(key)))
                total += len(key) + 4
                pending.append((_join(where, key), item))
        elif isinstance(value, list | tuple):
            total += 2 + len(value)
            pending.extend((_join(where, str(i)), item) for i, item in enumerate(value))
        else:
            total += _SCALAR_CHARS
        if total > budget:
            return Size(total, _too_big(budget))
        if stop_at is not None and total > stop_at:
            return Size(total)
    return Size(total)


def _join(where: str, key: str) -> str:
    return f"{where}.{preview(key, quoted=False)}" if where else preview(key, quoted=False)


def _too_long(where: str, length: int) -> dict[str, Any]:
    return {
        "field": where or "arguments",
        "problem": f"a string of {length:,} characters; no argument string may be longer than "
        f"{MAX_STRING_CHARS:,} characters (the input schema gives each field's own maxLength)",
    }


def _too_big(budget: int) -> dict[str, Any]:
    return {
        "field": "arguments",
        "problem": f"the arguments exceed {budget:,} characters, the most this tool accepts in "
        "one call; send less (for store_chunks: fewer items per call)",
    }


# --- lenient inputs -----------------------------------------------------------------------------


def lenient_arguments(schema: Mapping[str, Any], arguments: Any) -> Any:
    """`arguments` with the schema-guided conversions of the module docstring (a new value;
    the input is not changed). Anything that cannot be converted is left for validation."""
    return _convert(schema, arguments)


def _convert(schema: Any, value: Any) -> Any:
    if not isinstance(schema, Mapping):
        return value
    kinds = _types(schema)
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _convert_number(kinds, value)
    if isinstance(value, list) and "array" in kinds:
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [_convert(items, item) for item in value]
        return value
    if isinstance(value, dict) and "object" in kinds:
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        converted = {}
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, Mapping) else None)
            converted[key] = _convert(sub, item) if sub is not None else item
        return converted
    return value


def _convert_number(kinds: frozenset[str], value: float) -> Any:
    integral = isinstance(value, int) or value.is_integer()
    if "integer" in kinds or "number" in kinds:
        if "integer" in kinds and isinstance(value, float) and integral:
            return int(value)
        return value
    if "string" in kinds and integral and value >= 0:
        return str(int(value))
    return value


def _types(schema: Mapping[str, Any]) -> frozenset[str]:
    """The JSON types `schema` admits (its `type`, or its `anyOf` / `oneOf` alternatives')."""
    kinds = schema.get("type")
    found = set(kinds if isinstance(kinds, list) else [kinds] if kinds else [])
    for alternative in [*schema.get("anyOf", ()), *schema.get("oneOf", ())]:
        if isinstance(alternative, Mapping):
            found |= _types(alternative)
    if not found and "properties" in schema:
        found.add("object")
    return frozenset(found)


# --- validation -------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def ecma_regex(pattern: str) -> re.Pattern[str]:
    r"""`pattern` (a JSON Schema `pattern`) compiled to match as ECMA-262 does: each `$`
    anchor becomes `\Z` (Python's `$` also matches before a final newline), and `\d`, `\w`
    and `\b` are ASCII."""
    out: list[str] = []
    escaped = in_class = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        out.append(char)
    return re.compile("".join(out), re.ASCII)


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{preview(instance)} does not match {pattern!r}")


#: Draft 2020-12 with `pattern` read as ECMA-262 reads it (`ecma_regex`).
ArgumentValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"pattern": _pattern}
)


async def checked_arguments(
    name: str, schema: Mapping[str, Any], validator: Validator, arguments: Any
) -> dict[str, Any]:
    """`arguments` of tool `name` sized, converted and validated (the module docstring).

    Raises:
        ToolCallError: `VALIDATION`, with one problem per field (at most ten).
    """
    budget = argument_budget(schema)
    size = measure(arguments, budget=budget, stop_at=INLINE_CHARS)
    if size.problem is not None:
        raise _failure(name, [size.problem])
    if size.chars <= INLINE_CHARS:
        return _convert_and_validate(name, schema, validator, arguments, budget)
    return await anyio.to_thread.run_sync(
        _convert_and_validate, name, schema, validator, arguments, budget
    )


def _convert_and_validate(
    name: str,
    schema: Mapping[str, Any],
    validator: Validator,
    arguments: Any,
    budget: int,
) -> dict[str, Any]:
    size = measure(arguments, budget=budget)
    if size.problem is not None:
        raise _failure(name, [size.problem])
    converted = lenient_arguments(schema, arguments)
    if not isinstance(converted, dict) or not validator.is_valid(converted):
        raise validation_failure(name, validator, converted)
    return converted


def validation_failure(name: str, validator: Validator, arguments: Any) -> ToolCallError:
    """`VALIDATION` for `arguments`, which `validator` refuses: the first problems found, each
    with its field and what the schema wants (values echoed as short prefixes only)."""
    found: Iterator[ValidationError] = validator.iter_errors(arguments)
    errors = sorted(itertools.islice(found, _MAX_PROBLEMS), key=lambda e: [str(p) for p in e.path])
    problems = [{"field": _where(error), "problem": _problem(error)} for error in errors] or [
        {"field": "arguments", "problem": "must be a JSON object"}
    ]
    return _failure(name, problems)


def _failure(name: str, problems: list[dict[str, Any]]) -> ToolCallError:
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])
    return ToolCallError(
        "VALIDATION",
        f"invalid arguments for {name}: {summary}. The input schema in tools/list says what "
        "is accepted.",
        problems,
    )


def _where(error: ValidationError) -> str:
    return ".".join(preview(str(p), quoted=False) for p in error.absolute_path) or "arguments"


def preview(value: Any, *, quoted: bool = True, limit: int = PREVIEW_CHARS) -> str:
    """A short, single-line rendering of `value`: strings cut to `limit` characters (with the
    full length), containers as their kind and size. Never costs more than `limit` chars."""
    if isinstance(value, str):
        shown = value[:limit]
        text = repr(shown) if quoted else shown.encode("unicode_escape").decode("ascii")
        return f"{text}... ({len(value):,} characters)" if len(value) > limit else text
    if isinstance(value, Mapping):
        return f"an object of {len(value):,} keys"
    if isinstance(value, list | tuple):
        return f"an array of {len(value):,} items"
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, int) and abs(value) >= 10**limit:
        return f"an integer of over {limit} digits"
    return repr(value)[:limit]


_JSON_TYPES = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}


def _problem(error: ValidationError) -> str:
    """What the schema wants at the failing place, from the keyword and the schema."""
    keyword, value = error.validator, error.instance
    wanted: Any = error.validator_value
    schema: Any = error.schema
    if keyword == "type":
        got = _JSON_TYPES.get(type(value), type(value).__name__)
        kinds = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return f"must be of type {kinds}, got {got} {preview(value)}"
    if keyword == "required":
        missing = [k for k in wanted if isinstance(value, Mapping) and k not in value]
        return f"missing required field(s): {', '.join(missing)}"
    if keyword == "additionalProperties":
        known = set(schema.get("properties", {}))
        extra = [k for k in value if k not in known] if isinstance(value, Mapping) else []
        shown = ", ".join(preview(str(k)) for k in extra[:5])
        return f"unknown field(s) {shown}; allowed: {', '.join(sorted(known)) or 'none'}"
    if keyword in ("maxLength", "minLength"):
        bound = "at most" if keyword == "maxLength" else "at least"
        size = len(value) if isinstance(value, str) else 0
        return f"must be {bound} {wanted} characters, got {size:,}: {preview(value)}"
    if keyword in ("maxItems", "minItems"):
        bound = "at most" if keyword == "maxItems" else "at least"
        size = len(value) if isinstance(value, list) else 0
        return f"must have {bound} {wanted} items, got {size:,}"
    if keyword == "pattern":
        return f"must match the pattern {wanted}, got {preview(value)}"
    if keyword in ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"):
        words = {
            "maximum": "<=",
            "minimum": ">=",
            "exclusiveMaximum": "<",
            "exclusiveMinimum": ">",
        }
        return f"must be {words[keyword]} {wanted}, got {preview(value)}"
    if keyword == "enum":
        return f"must be one of {', '.join(map(str, wanted))}; got {preview(value)}"
    if keyword == "const":
        return f"must be {wanted!r}, got {preview(value)}"
    return f"fails the schema's {keyword!r} rule: {preview(value)}"
