"""`renamed`: an old keyword still reaches the function, with a warning at the caller's line."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from biomcp.entrypoints.library.filters import renamed

pytestmark = pytest.mark.unit


@renamed({"colours": "colour"})
def paint(wall: str, *, colour: str = "white") -> str:
    return f"{wall} {colour}"


@renamed({"colours": "colour"})
async def paint_later(wall: str, *, colour: str = "white") -> str:
    return f"{wall} {colour}"


def test_the_old_name_warns_at_the_callers_line_and_passes_the_value_on() -> None:
    old: Any = paint
    with pytest.warns(DeprecationWarning, match="'colours' is deprecated, use 'colour'") as seen:
        assert old("door", colours="red") == "door red"
    assert seen[0].filename == __file__


def test_an_awaited_function_warns_at_the_awaiting_line() -> None:
    old: Any = paint_later

    async def caller() -> str:
        return str(await old("door", colours="blue"))

    with pytest.warns(DeprecationWarning, match="'colours' is deprecated") as seen:
        assert asyncio.run(caller()) == "door blue"
    assert seen[0].filename == __file__
    assert inspect.iscoroutinefunction(paint_later)


def test_the_new_name_is_silent_and_the_signature_shows_it_only() -> None:
    assert paint("door", colour="green") == "door green"  # filterwarnings=error: no warning
    assert list(inspect.signature(paint).parameters) == ["wall", "colour"]


def test_both_names_at_once_are_refused() -> None:
    old: Any = paint
    with pytest.raises(TypeError, match="got both 'colours' and 'colour'"):
        old("door", colour="red", colours="blue")
