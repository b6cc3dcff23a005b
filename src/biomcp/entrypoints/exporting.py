"""Where an export goes: a file (written beside it under a temporary name and renamed into
place when complete, so a failed export leaves no half-written file and an earlier export of
the same name stays whole), an open text stream, or standard output."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from biomcp.entrypoints.services import Services
from biomcp.usecases.export import ExportSummary

__all__ = ["export_to"]


async def export_to(
    services: Services, target: str | os.PathLike[str] | IO[str] | None, **options: Any
) -> ExportSummary:
    """Run `services.export` with `options`, writing to `target`: a path, a text stream, or
    standard output (None or "-"); a `new` export then moves its key's export mark.

    Raises:
        OSError: the file cannot be written (nothing is left behind).
        what `ExportRecords.run` raises.
    """
    if target is None or target == "-":
        summary = await services.export.run(sys.stdout.write, **options)
        sys.stdout.flush()
    elif not isinstance(target, str | os.PathLike):
        summary = await services.export.run(target.write, **options)
    else:
        summary = await _to_file(services, Path(target).expanduser(), options)
    await services.export.mark(summary)  # a `new` export is complete where it went
    return summary


async def _to_file(services: Services, path: Path, options: dict[str, Any]) -> ExportSummary:
    try:  # an export written over an earlier one keeps its permissions
        mode = path.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            summary = await services.export.run(out.write, **options)
            out.flush()
            os.fsync(out.fileno())  # on disk before the rename (and before a `new` mark)
        os.chmod(scratch, mode)
        os.replace(scratch, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(scratch)
        raise
    return summary
