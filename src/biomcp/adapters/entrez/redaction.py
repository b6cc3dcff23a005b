"""Secrets kept out of log lines: httpx and httpcore log full request URLs, API key included.

`install_redaction(secrets)` adds one filter to the `httpx`, `httpcore` and `biomcp.entrez`
loggers; from then on every record they pass has each secret replaced by `***`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

__all__ = ["REDACTED_LOGGERS", "RedactFilter", "install_redaction"]

#: The loggers whose records may carry a request URL.
REDACTED_LOGGERS = ("httpx", "httpcore", "biomcp.entrez")


class RedactFilter(logging.Filter):
    """Replaces `secrets` in the formatted message of each record it passes."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, "***")
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


# One filter for the process: loggers are process-wide, and a filter added twice runs twice.
_redaction = RedactFilter()


def install_redaction(secrets: Iterable[str]) -> None:
    """Redact `secrets` from the records of `REDACTED_LOGGERS` from now on."""
    _redaction.secrets.update(secrets)
    for name in REDACTED_LOGGERS:
        logger = logging.getLogger(name)
        if _redaction not in logger.filters:
            logger.addFilter(_redaction)
