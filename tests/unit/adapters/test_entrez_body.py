"""Reading answers within the size limit while they stream, and the MEDLINE shape check."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import AsyncIterator, Sequence

import httpx
import pytest

from biomcp.adapters.entrez.body import (
    STEP,
    BodyCounts,
    ResponseCutShortError,
    ResponseTooLargeError,
    read_bounded,
)
from biomcp.adapters.entrez.medline import incomplete_medline
from biomcp.ports.entrez import EntrezResponseError
from biomcp.testing.eutils.faults import gzip_bomb

pytestmark = pytest.mark.unit

KIB = 1024


class Chunks(httpx.AsyncByteStream):
    """A response body arriving in `chunks`; records how many were pulled and if closed."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = list(chunks)
        self.pulled = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.pulled += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


def _read(
    chunks: Sequence[bytes], limit: int, headers: dict[str, str] | None = None
) -> tuple[bytes | Exception, BodyCounts, Chunks]:
    stream = Chunks(chunks)
    response = httpx.Response(200, headers=headers or {}, stream=stream)
    counts = BodyCounts()

    async def go() -> bytes:
        try:
            return await read_bounded(response, limit, counts, "NCBI test")
        finally:
            await response.aclose()

    try:
        result: bytes | Exception = asyncio.run(go())
    except EntrezResponseError as exc:
        result = exc
    return result, counts, stream


def _split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_a_plain_answer_within_the_limit_is_read_whole() -> None:
    body = b"<eSearchResult>" + b"x" * 100_000 + b"</eSearchResult>"
    result, counts, stream = _read(_split(body, 4096), 200_000)
    assert result == body
    assert counts.received == counts.decoded == len(body)
    assert stream.closed


def test_a_plain_answer_over_the_limit_stops_at_the_first_chunk_past_it() -> None:
    result, counts, stream = _read([b"a" * KIB] * 1000, 10 * KIB)
    assert isinstance(result, ResponseTooLargeError)
    assert counts.received == 11 * KIB
    assert stream.pulled == 11  # nothing read past the chunk that crossed the limit
    assert stream.closed


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    result, counts, stream = _read([b"a" * KIB] * 20, 10 * KIB, {"Content-Length": "20480"})
    assert isinstance(result, ResponseTooLargeError)
    assert "refused unread" in str(result)
    assert (counts.received, stream.pulled) == (0, 0)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
def test_compressed_answers_are_inflated(encoding: str) -> None:
    body = b"<eSearchResult><Count>3</Count></eSearchResult>" * 2000
    if encoding == "gzip":
        packed = gzip.compress(body)
    elif encoding == "deflate":
        packed = zlib.compress(body)
    else:
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        packed = packer.compress(body) + packer.flush()
    header = "gzip" if encoding == "gzip" else "deflate"
    result, counts, _ = _read(_split(packed, 100), 1_000_000, {"Content-Encoding": header})
    assert result == body
    assert (counts.received, counts.decoded) == (len(packed), len(body))


def test_a_bomb_is_refused_after_inflating_one_step_past_the_limit() -> None:
    bomb = gzip_bomb(64 * 1024 * 1024)  # synthetic: 64 MiB of XML padding in ~64 KiB
    assert len(bomb) < 100 * KIB
    result, counts, _ = _read([bomb], 1024 * KIB, {"Content-Encoding": "gzip"})
    assert isinstance(result, ResponseTooLargeError)
    assert "once decompressed" in str(result)
    assert 1024 * KIB < counts.decoded <= 1024 * KIB + STEP


def test_a_compressed_stream_without_its_end_is_cut_short() -> None:
    packed = gzip.compress(b"<eSearchResult/>" * 1000)
    result, _, _ = _read([packed[: len(packed) // 2]], 1_000_000, {"Content-Encoding": "gzip"})
    assert isinstance(result, ResponseCutShortError)


def test_corrupt_data_and_encodings_not_asked_for_are_response_errors() -> None:
    corrupt, _, _ = _read([b"not gzip at all"], 1000, {"Content-Encoding": "gzip"})
    assert isinstance(corrupt, EntrezResponseError)
    assert not isinstance(corrupt, ResponseTooLargeError)
    brotli, _, stream = _read([b"xx"], 1000, {"Content-Encoding": "br"})
    assert isinstance(brotli, EntrezResponseError)
    assert "did not ask for" in str(brotli)
    assert stream.pulled == 0


# --- MEDLINE --------------------------------------------------------------------------------

RECORD = (
    "PMID- 30000001\nOWN - NLM\nTI  - A synthetic title that wraps onto a second\n"
    "      line.\nAB  - Synthetic abstract.\nSO  - Synth J. 2024 Jan;1(1):1-2.\n"
)


def test_whole_medline_text_passes() -> None:
    assert incomplete_medline("\n" + RECORD + "\n" + RECORD.replace("30000001", "2")) is None
    assert incomplete_medline("\n\n") is None  # no record at all
    assert incomplete_medline(RECORD.rstrip("\n")) is None


@pytest.mark.parametrize(
    "cut",
    [
        RECORD[: RECORD.index("SO  -")],  # on a line boundary, before the last field
        RECORD[: RECORD.index("Synthetic abstract") + 4],  # mid-line
        RECORD[: RECORD.index("line.")],  # inside a continuation
        RECORD + "\n" + RECORD[:40],  # the second record cut
    ],
)
def test_medline_text_cut_short_is_told(cut: str) -> None:
    problem = incomplete_medline(cut)
    assert problem is not None
    assert "cut short" in problem


def test_text_that_is_not_medline_is_told() -> None:
    assert incomplete_medline("Error: something\n") == "it does not start with a PMID- line"
