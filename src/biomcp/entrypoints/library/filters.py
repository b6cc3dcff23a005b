"""The corpus filters of `search` and `export`, and the arguments they were once named by.

The library names its filters as the `rag_search` tool does (`evidence_type`, `study_design`).
`renamed` keeps the old names working: a call with one warns and passes the value on.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Collection
from typing import Any, TypeVar, cast

from biomcp.ports.vectors import SearchFilters

__all__ = ["RENAMED_FILTERS", "names", "renamed", "search_filters"]

F = TypeVar("F", bound=Callable[..., Any])

#: The filter arguments the library once had, and the tool's name each one now has.
RENAMED_FILTERS = {"evidence_types": "evidence_type", "study_designs": "study_design"}


def renamed(renames: dict[str, str]) -> Callable[[F], F]:
    """Accept each old keyword of `renames` as its new one, with a `DeprecationWarning`.

    The wrapped function keeps its signature, which shows the new names only. Giving both an
    old name and its new one is a `TypeError`.
    """

    def decorate(func: F) -> F:
        def translate(kwargs: dict[str, Any]) -> None:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{func.__name__}() got both {old!r} and {new!r}: give {new!r} only"
                    )
                warnings.warn(
                    f"{func.__name__}(): the argument {old!r} is deprecated, use {new!r}",
                    DeprecationWarning,
                    stacklevel=3,  # translate, the wrapper, then the caller
                )
                kwargs[new] = kwargs.pop(old)

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def awaited(*args: Any, **kwargs: Any) -> Any:
                translate(kwargs)
                return await func(*args, **kwargs)

            return cast("F", awaited)

        @functools.wraps(func)
        def blocking(*args: Any, **kwargs: Any) -> Any:
            translate(kwargs)
            return func(*args, **kwargs)

        return cast("F", blocking)

    return decorate


def names(value: Collection[str] | str | None) -> frozenset[str] | None:
    """A filter's values as a set: one string or many, blanks dropped, None for none."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    return frozenset(item.strip() for item in items if item.strip()) or None


def search_filters(
    evidence_type: Collection[str] | str | None,
    year_min: int | None,
    year_max: int | None,
    min_quality: float | None,
    journals: Collection[str] | str | None,
    doc_ids: Collection[str] | None,
) -> SearchFilters | None:
    """The vector store's filters of the library's arguments; None when nothing narrows."""
    types = names(evidence_type)
    filters = SearchFilters(
        evidence_types=frozenset(t.casefold() for t in types) if types else None,
        year_min=year_min,
        year_max=year_max,
        min_quality=min_quality,
        journals=names(journals),
        doc_ids=names(doc_ids),
    )
    return None if filters == SearchFilters() else filters
