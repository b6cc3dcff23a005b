"""Where an export goes: a regular file (written beside it under a temporary name and renamed
into place when complete, so a failed export leaves no half-written file and an earlier export
of the same name stays whole), a device, pipe or open descriptor (written to as a stream), an
open text stream, or standard output."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from biomcp.entrypoints.services import Services
from biomcp.usecases.export import ExportSummary

__all__ = ["export_to"]

#: Folders whose entries are a process's open descriptors (/dev/stdout, /dev/fd/N lead there).
_DESCRIPTORS = re.compile(r"/proc/[^/]+/fd|/dev/fd")
#: The kernel's own bound on the links one path may follow.
_MAX_LINKS = 40


async def export_to(
    services: Services, target: str | os.PathLike[str] | IO[str] | None, **options: Any
) -> ExportSummary:
    """Run `services.export` with `options`, writing to `target`: a path, a text stream, or
    standard output (None or "-"); a `new` export then moves its key's export mark.

    A path naming a regular file, or nothing yet, is replaced whole once the export is
    complete; a device, a pipe or an open descriptor (/dev/stdout, /dev/fd/N) is written to
    as a stream and stays what it is.

    Raises:
        OSError: the target cannot be written (a file left as it was; no mark moved).
        what `ExportRecords.run` raises.
    """
    if target is None or target == "-":
        summary = await services.export.run(sys.stdout.write, **options)
        sys.stdout.flush()
    elif not isinstance(target, str | os.PathLike):
        summary = await services.export.run(target.write, **options)
    else:
        path = Path(target).expanduser()
        file = _replaceable(path)
        if file is None:
            summary = await _to_stream(services, path, options)
        else:
            summary = await _to_file(services, file, options)
    await services.export.mark(summary)  # a `new` export is complete where it went
    return summary


def _replaceable(path: Path) -> Path | None:
    """The file `path` leads to, its links followed, when it is a regular file or nothing yet;
    None when it is a device, a pipe, a socket or an open descriptor."""
    current = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        folder = os.path.realpath(os.path.dirname(current))
        if _DESCRIPTORS.fullmatch(folder):
            return None  # its link names an open file, not a place to put a new one
        current = os.path.join(folder, os.path.basename(current))
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return Path(current)
        if not stat.S_ISLNK(mode):
            return Path(current) if stat.S_ISREG(mode) else None
        current = os.path.join(folder, os.readlink(current))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))


async def _to_stream(services: Services, path: Path, options: dict[str, Any]) -> ExportSummary:
    # Appending: a descriptor's file already holding output (`>> log`) keeps it.
    with open(path, "a", encoding="utf-8", newline="") as out:
        summary = await services.export.run(out.write, **options)
        out.flush()  # a failed write (a full device, a closed pipe) raises here
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
