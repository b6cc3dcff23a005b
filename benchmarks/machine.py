"""What a benchmark ran on, printed with every figure, and the shape of its `goals` section."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any


def _meminfo_gib() -> dict[str, float]:
    """MemTotal and MemAvailable from /proc/meminfo, in GiB (empty off Linux)."""
    found: dict[str, float] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "MemAvailable"):
                    found[key] = round(int(rest.split()[0]) / 2**20, 1)
    except OSError:
        pass
    return found


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def describe() -> dict[str, Any]:
    """Cores, memory, load average (1 / 5 / 15 min, read when called), Python and platform."""
    memory_gib = None
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        page_size = os.sysconf("SC_PAGE_SIZE")
        memory_gib = round(pages * page_size / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_gib": memory_gib,
        "memory_available_gib": _meminfo_gib().get("MemAvailable"),
        "loadavg_1_5_15": loadavg(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def goal(target: str, measured: Any, met: bool | None, **extra: Any) -> dict[str, Any]:
    """One entry of a benchmark's `goals` section (`met` None: not measured in this run)."""
    return {"goal": target, "measured": measured, "met": met, **extra}
