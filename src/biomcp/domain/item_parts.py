"""Splitting a long project item into parts an embedder reads whole.

An item whose estimated tokens exceed the budget is cut into consecutive parts, each within
the budget, so that every part of its text reaches the vector arm. The rules:

* parts end at sentence ends (`chunking.sentence_spans`): never inside a numeric claim, never
  between a number and a following sentence giving its comparator;
* a sentence over the budget is cut at spaces, else between pre-tokens, never inside a
  numeric claim (`numeric.claim_spans`); a single claim (or word) over the budget travels whole.
* parts do not overlap: joined in order they give the text back exactly.

Token counts are `tokens.token_spans` estimates of the default embedder's WordPiece tokens.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from itertools import accumulate

from biomcp.domain.chunking import chunking_for_window, sentence_spans
from biomcp.domain.numeric import claim_spans
from biomcp.domain.tokens import token_spans

__all__ = ["part_budget", "part_spans"]

_SPACE = re.compile(r"\s+")


def part_budget(window_tokens: int | None) -> int | None:
    """The estimated tokens one part may hold for an embedder reading `window_tokens` of its
    tokens (None: an unbounded window, items are never split). The chunker's maximum for the
    same window, so both leave the same slack for the estimate.

    Raises:
        InvalidConfigError: for a window too small to hold a useful part (< 32 tokens).
    """
    return None if window_tokens is None else chunking_for_window(window_tokens).max_tokens


class _Weights:
    """Estimated tokens of any span of one text, by prefix sums over its pre-tokens."""

    def __init__(self, text: str) -> None:
        spans = token_spans(text)
        self.starts = [s for s, _, _ in spans]
        self._sums = [0.0, *accumulate(w for _, _, w in spans)]

    def __call__(self, start: int, end: int) -> int:
        lo = bisect_left(self.starts, start)
        hi = bisect_left(self.starts, end)
        return math.ceil(self._sums[hi] - self._sums[lo])


def _outside(claims: list[tuple[int, int]], pos: int) -> bool:
    i = bisect_left(claims, (pos, pos)) - 1
    return not any(start < pos < end for start, end in claims[max(0, i) : i + 2])


def _greedy(
    start: int, end: int, cuts: list[int], budget: int, weigh: _Weights
) -> list[tuple[int, int]]:
    """Pieces of [start, end) ending at the last allowed cut that keeps each within budget."""
    pieces: list[tuple[int, int]] = []
    here, last_fit = start, None
    for cut in [*cuts, end]:
        if weigh(here, cut) <= budget:
            last_fit = cut
            continue
        if last_fit is not None and last_fit > here:
            pieces.append((here, last_fit))
            here = last_fit
            last_fit = cut if weigh(here, cut) <= budget else None
        if last_fit is None and cut != end:
            pieces.append((here, cut))  # nothing smaller fits: an indivisible run
            here = cut
    if here < end:
        pieces.append((here, end))
    return pieces


def _units(text: str, budget: int, weigh: _Weights) -> list[tuple[int, int]]:
    """Sentences, each over-budget one cut at spaces (else pre-tokens) outside claims."""
    claims = claim_spans(text)
    units: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        if weigh(start, end) <= budget:
            units.append((start, end))
            continue
        spaces = [m.end() for m in _SPACE.finditer(text, start, end) if start < m.end() < end]
        cuts = [c for c in spaces if _outside(claims, c)] or [
            s for s in weigh.starts if start < s < end and _outside(claims, s)
        ]
        units.extend(_greedy(start, end, cuts, budget, weigh))
    return units


def part_spans(text: str, budget: int | None) -> list[tuple[int, int]]:
    """(start, end) of each part of `text`, in order, covering it exactly; one part when the
    whole text fits `budget` estimated tokens (or `budget` is None)."""
    weigh = _Weights(text)
    if budget is None or weigh(0, len(text)) <= budget:
        return [(0, len(text))]
    units = _units(text, budget, weigh)
    return _greedy(0, len(text), [start for start, _ in units[1:]], budget, weigh)
