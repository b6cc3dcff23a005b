"""The server's logging: one record, one line, on stderr.

The SDK configures a Rich handler when the MCP server is built; Rich wraps at the console width
(80 columns when stderr is not a terminal), which splits identifiers across lines. Here:

* `configure_logging` puts a plain handler on the root logger instead (replacing the SDK's):
  `2026-01-02T03:04:05Z INFO biomcp.server: message`, with newlines and other control
  characters escaped (a traceback becomes one line; a value cannot forge a second record) and
  each record cut at `MAX_LOG_LINE_CHARS`.
* Session ids are not logged at INFO: the SDK announces each new Streamable HTTP session, and
  its end, with the id at INFO; those records are lowered to DEBUG (`SessionIdsAtDebug`).

`biomcp serve` and `biomcp serve-http` call `configure_logging` once the server is built;
uvicorn's own loggers keep their handlers (`http.run`), with the same formatter.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Final

__all__ = [
    "MAX_LOG_LINE_CHARS",
    "SessionIdsAtDebug",
    "SingleLineFormatter",
    "configure_logging",
]

#: The longest line one record may print.
MAX_LOG_LINE_CHARS: Final = 8192
#: The SDK's loggers that name session ids at INFO.
SESSION_LOGGERS: Final = ("mcp.server.streamable_http_manager", "mcp.server.streamable_http")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\x{ord(char):02x}")


class SingleLineFormatter(logging.Formatter):
    """`<UTC time> <LEVEL> <logger>: <message>`, one line whatever the message holds."""

    def __init__(self, fmt: str | None = None) -> None:
        super().__init__(fmt or "%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return time.strftime(datefmt or "%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if len(text) > MAX_LOG_LINE_CHARS:
            text = f"{text[:MAX_LOG_LINE_CHARS]}... (cut: {len(text):,} characters)"
        return _CONTROL.sub(_escape, text)


class SessionIdsAtDebug(logging.Filter):
    """Lowers the SDK's session-id records from INFO to DEBUG; drops them below `level`."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self._level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name in SESSION_LOGGERS and record.levelno == logging.INFO:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return self._level <= logging.DEBUG
        return True


def configure_logging(level: str = "info") -> logging.Handler:
    """Single-line logging on stderr at `level` for the whole process (replacing the root
    logger's handlers, the SDK's Rich handler included). Returns the handler."""
    numeric = logging.getLevelName(level.upper())
    numeric = numeric if isinstance(numeric, int) else logging.INFO
    handler = logging.StreamHandler()
    handler.setFormatter(SingleLineFormatter())
    handler.addFilter(SessionIdsAtDebug(numeric))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(numeric)
    return handler
