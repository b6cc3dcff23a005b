"""What both evaluations share: the error for bad input files, a JSONL reader, progress."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from biomcp.usecases.errors import InvalidRequestError

__all__ = ["PMID_PATTERN", "EvaluationDataError", "Progress", "read_jsonl"]

#: A PMID as data sets and gold files spell it.
PMID_PATTERN = re.compile(r"[1-9][0-9]{0,9}")

Progress = Callable[[str], None]


class EvaluationDataError(InvalidRequestError):
    """A data set or gold file is missing, unreadable or malformed (the message says where)."""


def read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise EvaluationDataError(f"{path}:{number}: not JSON ({exc.msg})") from None
                if not isinstance(item, dict):
                    raise EvaluationDataError(f"{path}:{number}: expected a JSON object")
                yield number, item
    except OSError as exc:
        raise EvaluationDataError(f"cannot read {path}: {exc.strerror or exc}") from None
