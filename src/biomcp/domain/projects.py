"""Project collections (spec 02): ids, collection names, rendered text and scores.

Agents store their own text chunks in one vector-store collection per project, and projects are
strictly isolated from each other, so:

* A project id is any printable string of 1 to `PROJECT_ID_MAX` characters without leading or
  trailing whitespace (`check_project_id`).
* Its collection is `Proj_<slug>_<hash>` (`collection_name`): the slug keeps the id readable, the
  hash (first 16 hex characters of its BLAKE2b digest) keeps distinct ids apart, `x-1` from
  `x_1` and `ABC` from `abc`. The name is a valid Weaviate class name and a safe folder name,
  and it can never be the corpus collection, `PubMedChunk`.
* `trim_text` shortens a chunk's text for `render_text` at a sentence end or a word boundary.
* `unit_score` clamps any score to [0, 1].
"""

from __future__ import annotations

import hashlib
import math
import re

__all__ = [
    "COLLECTION_PREFIX",
    "ELLIPSIS",
    "PROJECT_ID_MAX",
    "check_project_id",
    "collection_name",
    "trim_text",
    "unit_score",
]

PROJECT_ID_MAX = 128
COLLECTION_PREFIX = "Proj_"
ELLIPSIS = "…"

_SLUG_MAX = 40
_HASH_HEX = 16
_NOT_SLUG = re.compile(r"[^A-Za-z0-9]+")
_SENTENCE_END = frozenset(".?!")
# Stripped from a word-boundary cut before the ellipsis: "a, b; c: d – e" never ends "b;…".
_TRAILING_JUNK = ",;:-–—"
# A sentence cut must keep at least this share of the budget (3/5 = 60%).
_SENTENCE_MIN_NUM, _SENTENCE_MIN_DEN = 3, 5


def check_project_id(value: object) -> str:
    """Return `value` unchanged if it is a valid project id, else raise `ValueError`.

    Valid: a `str` of 1..`PROJECT_ID_MAX` characters, all printable (`str.isprintable`), with no
    leading or trailing whitespace. Inner spaces, slashes and any script are fine.
    """
    if not isinstance(value, str):
        raise ValueError(f"project id must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError("project id must not be empty")
    if len(value) > PROJECT_ID_MAX:
        raise ValueError(
            f"project id must be at most {PROJECT_ID_MAX} characters, got {len(value)}"
        )
    for position, char in enumerate(value):
        if not char.isprintable():
            raise ValueError(
                f"project id has a non-printable character U+{ord(char):04X} at position {position}"
            )
    if value != value.strip():
        raise ValueError("project id must not start or end with whitespace")
    return value


def collection_name(project_id: str) -> str:
    """Return the vector-store collection name of a project (raises `ValueError` if invalid).

    `Proj_` + slug + `_` + the first 16 hex characters of the id's BLAKE2b-128 digest (UTF-8).
    The slug keeps ASCII letters and digits, turns every run of other characters into one `_`,
    is trimmed of `_` and cut to 40 characters; an id with no ASCII letter or digit (`///`) has
    an empty slug and is named `Proj_<hash>`. The result matches `^[A-Z][_0-9A-Za-z]*$` and is
    at most 62 characters long.
    """
    check_project_id(project_id)
    digest = hashlib.blake2b(project_id.encode("utf-8"), digest_size=16).hexdigest()[:_HASH_HEX]
    slug = _NOT_SLUG.sub("_", project_id).strip("_")[:_SLUG_MAX].rstrip("_")
    return f"{COLLECTION_PREFIX}{slug}_{digest}" if slug else f"{COLLECTION_PREFIX}{digest}"


def _strip_tail(text: str) -> str:
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in _TRAILING_JUNK):
        end -= 1
    return text[:end]


def trim_text(text: str, max_chars: int) -> str:
    """Return `text` cut to at most `max_chars` characters at a natural boundary.

    Text that fits is returned unchanged. Otherwise the result is a prefix of `text`, chosen in
    this order:

    1. the longest prefix ending a sentence (`.`, `?` or `!` followed by whitespace) that keeps
       at least 60% of `max_chars`; it ends with its punctuation and gets no ellipsis;
    2. the prefix before the last whitespace that leaves room for `…`, with trailing whitespace
       and `,;:` or dashes stripped, followed by `…`;
    3. a hard cut at `max_chars - 1` characters (one character less if that would split a
       surrogate pair, trailing whitespace stripped), followed by `…`.

    Raises `ValueError` if `max_chars` is below 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    if len(text) <= max_chars:
        return text

    # 1. Sentence end: text[end - 1] is the punctuation, text[end] the whitespace after it.
    for end in range(max_chars, 0, -1):
        if end * _SENTENCE_MIN_DEN < max_chars * _SENTENCE_MIN_NUM:
            break
        if text[end - 1] in _SENTENCE_END and text[end].isspace():
            return text[:end]

    # 2. Word boundary: keep text[:cut] where text[cut] is whitespace, leaving room for "…".
    for cut in range(max_chars - 1, 0, -1):
        if text[cut].isspace():
            kept = _strip_tail(text[:cut])
            if kept:
                return kept + ELLIPSIS
            # An earlier boundary keeps a prefix of this one: nothing but junk either.
            break

    # 3. Hard cut, never between the halves of a surrogate pair.
    cut = max_chars - 1
    if cut > 0 and "\ud800" <= text[cut - 1] <= "\udbff" and "\udc00" <= text[cut] <= "\udfff":
        cut -= 1
    return text[:cut].rstrip() + ELLIPSIS


def unit_score(value: float) -> float:
    """Clamp a score to [0.0, 1.0]; NaN and -inf give 0.0, +inf gives 1.0."""
    if math.isnan(value) or value <= 0.0:
        return 0.0
    if value >= 1.0:
        return 1.0
    return float(value)
