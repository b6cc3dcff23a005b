"""When a PubMed query is worth a spelling check, and whether a suggestion changes it.

NCBI's ESpell suggests a corrected query for free words; field-tagged terms (`asthma[mh]`,
`Smith J[au]`), boolean operators, numbers, ranges and wildcards are the caller's exact
intentions and are not what a spelling check is for. These rules are pure: the live search
decides from them whether one more (rate-limited) E-utility request is worth sending.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["SPELL_CHECK_BELOW", "free_words", "same_query", "worth_spell_check"]

#: A search finding fewer records than this (or reporting terms it could not find) is checked.
SPELL_CHECK_BELOW = 100

# A quoted phrase or a bare run of characters, optionally followed by a [field tag].
_TOKEN = re.compile(r'"[^"]*"(?:\s*\[[^\]]*\])?|[^\s()"\[\]]+(?:\s*\[[^\]]*\])?|\[[^\]]*\]|[()]')
_OPERATORS = frozenset({"and", "or", "not"})
_GROUPING = frozenset({"(", ")"})
_WORD = re.compile(r"[^\W\d_]{3,}(?:['-][^\W\d_]+)*")


def free_words(term: str) -> list[str]:
    """The words of `term` that carry no field tag and are not operators, numbers, ranges or
    wildcards (`"heart attack" AND asthma[mh] OR diabtes*` -> `["heart", "attack"]`). Words
    right before a tag belong to it (`Smith J[au]`, as PubMed reads it)."""
    words: list[str] = []
    pending: list[str] = []
    for match in _TOKEN.finditer(term):
        token = match.group(0)
        if token.endswith("]"):
            pending = []  # the tag covers the words since the last operator
        elif token in _GROUPING or token.lower() in _OPERATORS:
            words += pending
            pending = []
        elif "*" not in token and ":" not in token:
            pending += [w.group(0) for w in _WORD.finditer(token.strip('"'))]
    return words + pending


def same_query(original: str, suggestion: str | None) -> bool:
    """True when `suggestion` is `original` again (case and spacing aside) or absent."""
    if suggestion is None or not suggestion.strip():
        return True
    return " ".join(original.casefold().split()) == " ".join(suggestion.casefold().split())


def worth_spell_check(term: str, count: int, error_kinds: Sequence[str]) -> bool:
    """Whether a search of `term` that found `count` records, with NCBI's ErrorList entries
    `error_kinds` (PhraseNotFound...), should ask ESpell: only when the term has free words
    and the search found few records or could not use some of its words."""
    if not free_words(term):
        return False
    return count < SPELL_CHECK_BELOW or any(kind == "PhraseNotFound" for kind in error_kinds)
