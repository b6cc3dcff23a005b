"""A set of row ids that tests a whole column of row ids at once (a search's facet filter)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["Rids", "RowSet", "members"]

#: A search's row-id restriction (None: none).
Rids = frozenset[int] | None


class RowSet(frozenset[int]):
    """Row ids, with a lookup table built on first use: a mask over a million slots is then one
    gather instead of a sort (`np.isin`). Kept while the reads remember the facet filter."""

    _table: np.ndarray | None

    def __new__(cls, rids: Iterable[int] = ()) -> RowSet:
        made = super().__new__(cls, rids)
        made._table = None
        return made

    def members(self, rids: np.ndarray) -> np.ndarray:
        """Which of `rids` (negative ones included: none of them) are in the set."""
        if self._table is None:
            table = np.zeros((max(self) + 1) if self else 0, dtype=bool)
            table[np.fromiter(self, np.int64, len(self))] = True
            self._table = table
        table = self._table
        inside = (rids >= 0) & (rids < len(table))
        found = np.zeros(len(rids), dtype=bool)
        found[inside] = table[rids[inside]]
        return found


def members(rids: np.ndarray, chosen: frozenset[int]) -> np.ndarray:
    """Which of `rids` are in `chosen` (through its table when it is a `RowSet`)."""
    if isinstance(chosen, RowSet):
        return chosen.members(rids)
    return np.isin(rids, np.fromiter(chosen, np.int64, len(chosen)))
