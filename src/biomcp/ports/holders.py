"""Who holds a lock, as the lock errors of the ports carry it (`holder`).

A holder is a small dict: `pid`, `host`, `program` and `since` for a process, or
`backend_pid` for a PostgreSQL session not known to be bio-mcp's. It never carries a path.
"""

from __future__ import annotations

__all__ = ["describe_holder"]


def describe_holder(holder: dict[str, object] | None, unknown: str = "another process") -> str:
    """`holder` in words (`pid 12 (biomcp) on host-a, since 2026-11-28T18:00:00+00:00`);
    `unknown` when nobody is named."""
    if not holder:
        return unknown
    words = f"pid {holder.get('pid', holder.get('backend_pid', '?'))}"
    if holder.get("program"):
        words += f" ({holder['program']})"
    if holder.get("host"):
        words += f" on {holder['host']}"
    if holder.get("since"):
        words += f", since {holder['since']}"
    return words
