"""Single-line logs: one record, one line; session ids below INFO."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from biomcp.entrypoints.logs import MAX_LOG_LINE_CHARS, configure_logging

pytestmark = pytest.mark.unit


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    buffer = io.StringIO()
    handler = configure_logging("info")
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(buffer)
    try:
        yield buffer
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def test_a_record_is_one_line_whatever_it_holds(stream: io.StringIO) -> None:
    log = logging.getLogger("biomcp.test")
    log.info("value: %s", "a\nFORGED ERROR line\r\x1b[31m" + "x" * 200)
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        log.exception("it failed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert "a\\nFORGED ERROR line\\r\\x1b[31m" in lines[0]
    assert "x" * 200 in lines[0]  # long identifiers are never wrapped
    assert " INFO biomcp.test: value: " in lines[0]
    assert " ERROR biomcp.test: it failed\\nTraceback" in lines[1]
    assert "ValueError: boom\\nsecond line" in lines[1]


def test_a_huge_record_is_cut(stream: io.StringIO) -> None:
    logging.getLogger("biomcp.test").warning("%s", "y" * 100_000)
    (line,) = stream.getvalue().splitlines()
    assert len(line) < MAX_LOG_LINE_CHARS + 100
    assert "cut:" in line


def test_session_ids_are_not_logged_at_info(stream: io.StringIO) -> None:
    logging.getLogger("mcp.server.streamable_http_manager").info(
        "Created new transport with session ID: abc123"
    )
    logging.getLogger("mcp.server.streamable_http").info("Terminating session: abc123")
    logging.getLogger("mcp.server.streamable_http_manager").warning("kept")
    text = stream.getvalue()
    assert "abc123" not in text
    assert "kept" in text


def test_at_debug_session_records_show_as_debug() -> None:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    buffer = io.StringIO()
    handler = configure_logging("debug")
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(buffer)
    try:
        logging.getLogger("mcp.server.streamable_http_manager").info("session ID: abc123")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    assert " DEBUG mcp.server.streamable_http_manager: session ID: abc123" in buffer.getvalue()
