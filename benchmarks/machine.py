"""What a benchmark ran on, printed with every figure."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any


def describe() -> dict[str, Any]:
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
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }
