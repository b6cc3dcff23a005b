"""Every start a shared NCBI budget granted, by the budget's own clock.

The budget logs keep only their last starts, so a test cannot read the whole run from them.
These helpers keep every granted start instead. Tests then assert on timestamps the code takes
under its own lock, never on when a loaded machine delivered a request to the fake E-utilities.

* PostgreSQL: a trigger copies each row inserted into `ncbi_budget_starts` to `budget_audit`.
* The file in a data folder: `AUDITED_FILE_LOG` is Python source a child process runs before it
  builds its client. It swaps in a `FileStartLog` that remembers each stamp it granted, and
  `granted_starts()` returns them.
"""

from __future__ import annotations

import psycopg

from biomcp.adapters.entrez.budget_sql import libpq_url

__all__ = [
    "AUDITED_FILE_LOG",
    "SQL_ROUNDING_S",
    "audited_starts",
    "every_arrival_granted",
    "install_budget_audit",
]

_AUDIT = """
CREATE TABLE IF NOT EXISTS budget_audit (identity text, started_at timestamptz);
TRUNCATE budget_audit;
CREATE OR REPLACE FUNCTION budget_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO budget_audit VALUES (NEW.identity, NEW.started_at);
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER budget_audit AFTER INSERT ON ncbi_budget_starts
    FOR EACH ROW EXECUTE FUNCTION budget_audit();
"""

#: Float rounding of PostgreSQL's microsecond timestamps read back as epoch seconds.
SQL_ROUNDING_S = 1e-3


def install_budget_audit(url: str) -> None:
    """From now on, copy every start recorded in the migrated database at `url` to
    `budget_audit` (emptied first)."""
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(_AUDIT)


def audited_starts(url: str, identity: str | None = None) -> list[float]:
    """Every start recorded since `install_budget_audit` (epoch seconds), for one identity or
    for all."""
    query = "SELECT extract(epoch FROM started_at)::float8 FROM budget_audit"
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        if identity is None:
            rows = conn.execute(query).fetchall()
        else:
            rows = conn.execute(query + " WHERE identity = %s", (identity,)).fetchall()
    return [float(value) for (value,) in rows]


def every_arrival_granted(arrivals: list[float], granted: list[float]) -> bool:
    """Whether the k-th arrival at the fake follows at least k granted starts, both in wall-clock
    seconds of this machine: no request reached it without its turn."""
    ordered = sorted(granted)
    return all(
        sum(1 for start in ordered if start <= arrived) >= k
        for k, arrived in enumerate(sorted(arrivals), start=1)
    )


AUDITED_FILE_LOG = """
import threading as _threading
import time as _time
from biomcp.adapters.entrez import budget as _budget, ratelimit as _ratelimit

_GRANTED: list[float] = []

class _AuditedFileStartLog(_budget.FileStartLog):
    # The shared file's log, keeping the stamp of every start it granted.

    def __init__(self, path):
        self._stamp = 0.0
        self._audit = _threading.Lock()
        super().__init__(path, clock=self._now)

    def _now(self):
        self._stamp = _time.time()
        return self._stamp

    def take(self, limit, span, interval):
        with self._audit:
            wait = super().take(limit, span, interval)
            if wait == 0 and self.usable:
                _GRANTED.append(self._stamp)
        return wait

_ratelimit.FileStartLog = _AuditedFileStartLog

def granted_starts():
    return list(_GRANTED)
"""
