"""A stored full-text article as bytes: zlib-compressed JSON, and back.

The JSON is `{"format": FORMAT, "article": {...}}`. Dataclasses become objects keyed by field
name and tuples become lists, walking `dataclasses.fields`, so a field added to a value
round-trips without a change here. Decoding follows the fields' type hints. References are
left out: a decoded article has none. Bytes that do not decode (damage, another format) read
as no article.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import types
import typing
import zlib
from typing import Any, Literal, TypeVar, Union

from biomcp.domain.fulltext import FullTextArticle

__all__ = ["FORMAT", "decode_article", "encode_article", "from_plain", "to_plain"]

_log = logging.getLogger("biomcp.sql")
T = TypeVar("T")

#: The layout's version; a stored article of another version reads as absent.
FORMAT = 1
#: Fields of an article that are not stored.
_LEFT_OUT = frozenset({"references"})
_SCALARS = (str, int, float, bool)


def to_plain(value: Any) -> Any:
    """`value` (dataclasses, tuples, scalars) as JSON-ready objects, lists and scalars.

    Raises:
        TypeError: `value` holds a type this layout has no form for.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [to_plain(item) for item in value]
    if value is None or isinstance(value, _SCALARS):
        return value
    raise TypeError(f"a full-text article cannot store a {type(value).__name__}")


def encode_article(article: FullTextArticle) -> bytes:
    """`article` (its references left out) as compressed JSON.

    Raises:
        TypeError: a field holds a type this layout has no form for.
    """
    body = to_plain(article)
    for name in _LEFT_OUT:
        body.pop(name, None)
    text = json.dumps({"format": FORMAT, "article": body}, ensure_ascii=False)
    return zlib.compress(text.encode("utf-8"))


@functools.cache
def _hints(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _union(args: tuple[Any, ...], value: Any) -> Any:
    if value is None and type(None) in args:
        return None
    for option in args:
        if option is type(None):
            continue
        try:
            return _value(option, value)
        except (TypeError, ValueError):
            continue
    raise ValueError(f"{value!r} fits none of {args}")


def _sequence(args: tuple[Any, ...], value: Any) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_value(args[0], item) for item in value)
    if len(args) != len(value):
        raise ValueError(f"expected {len(args)} items, got {len(value)}")
    return tuple(_value(kind, item) for kind, item in zip(args, value, strict=True))


def from_plain(cls: type[T], value: Any) -> T:
    """The dataclass `cls` that `to_plain` turned into `value`, read by its type hints; a
    field absent from `value` takes its default.

    Raises:
        TypeError, ValueError: `value` does not fit `cls`.
    """
    if not isinstance(value, dict):
        raise TypeError(f"expected an object for {cls.__name__}")
    kind: Any = cls  # a dataclass: `_value` calls this only for those
    hints = _hints(kind)
    given = {
        f.name: _value(hints[f.name], value[f.name])
        for f in dataclasses.fields(kind)
        if f.name in value
    }
    return cls(**given)  # a missing required field raises TypeError


def _value(kind: Any, value: Any) -> Any:
    """`value` read from JSON as the type `kind`."""
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        return _union(typing.get_args(kind), value)
    if origin is tuple:
        return _sequence(typing.get_args(kind), value)
    if origin is Literal:
        if value not in typing.get_args(kind):
            raise ValueError(f"{value!r} is not one of {typing.get_args(kind)}")
        return value
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return from_plain(kind, value)
    if kind is type(None):
        if value is not None:
            raise TypeError("expected null")
        return None
    if kind in _SCALARS:
        if type(value) is not kind and not (kind is float and type(value) is int):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value
    raise TypeError(f"no stored form for {kind!r}")


def decode_article(data: bytes) -> FullTextArticle | None:
    """The article `encode_article` wrote in `data`; None when `data` is damaged or of
    another format."""
    try:
        stored = json.loads(zlib.decompress(data).decode("utf-8"))
        if not isinstance(stored, dict):
            raise TypeError("not a stored article")
        if stored.get("format") != FORMAT:
            raise ValueError(f"format {stored.get('format')!r}, this bio-mcp reads {FORMAT}")
        article = from_plain(FullTextArticle, stored["article"])
    except (zlib.error, UnicodeDecodeError, KeyError, TypeError, ValueError, RecursionError) as exc:
        _log.warning("a stored full-text article could not be read: %s", exc)
        return None
    return article
