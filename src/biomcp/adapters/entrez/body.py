"""Reading an E-utilities answer within a size bound, while it streams.

`read_bounded` reads a streamed `httpx.Response` chunk by chunk, counting the bytes received
(as sent, possibly compressed) and the bytes after the `Content-Encoding` is undone, and gives
up as soon as either count passes the limit: memory holds at most the limit plus one decoded
step, and a gzip bomb (a small body that inflates a thousandfold) is refused after inflating
about the limit, not the whole of it. A declared `Content-Length` past the limit is refused
before a byte is read.

The decoding is done here, not by httpx: httpx inflates each network chunk whole (64 KiB of
gzip can give 64 MiB at once), this module inflates it in steps of `STEP` bytes. Only `gzip`
and `deflate` are asked for (`ACCEPT_ENCODING`) and read; any other encoding is refused. A
compressed stream that ends before its end marker is a response cut short.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx

from biomcp.ports.entrez import EntrezResponseError

__all__ = [
    "ACCEPT_ENCODING",
    "STEP",
    "BodyCounts",
    "ResponseCutShortError",
    "ResponseTooLargeError",
    "read_bounded",
]

#: The encodings this module can undo, for the request's `Accept-Encoding`.
ACCEPT_ENCODING = "gzip, deflate"
#: The most a compressed chunk is inflated by at once.
STEP = 256 * 1024
_MIB = 1024 * 1024


class ResponseTooLargeError(EntrezResponseError):
    """The answer is larger than the configured maximum (compressed or decompressed); asking
    again would get the same answer, so it is not retried."""


class ResponseCutShortError(EntrezResponseError):
    """The answer ended before its end (a compressed stream without its end marker)."""


@dataclass(slots=True)
class BodyCounts:
    """Bytes read from the network (`received`) and after decoding (`decoded`)."""

    received: int = 0
    decoded: int = 0


def _mib(size: int) -> str:
    return f"{size / _MIB:.4g} MiB"


class _Decoder:
    """Undoes one content encoding, yielding pieces of at most `STEP` bytes."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding == "identity":
            self._inflater = None
        elif encoding in ("gzip", "x-gzip"):
            self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        else:  # deflate: zlib-wrapped as the RFC says; raw deflate (some servers) as a fallback
            self._inflater = zlib.decompressobj(zlib.MAX_WBITS)
        self._started = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if self._inflater is None:
            if chunk:
                yield chunk
            return
        data = chunk
        while data:
            piece = self._inflate(data)
            data = self._inflater.unconsumed_tail
            if piece:
                yield piece
            # Output can stay pending inside zlib once the input is consumed: drain it.
            while len(piece) == STEP and not data:
                piece = self._inflate(b"")
                if piece:
                    yield piece

    def finish(self) -> Iterator[bytes]:
        if self._inflater is None:
            return
        while piece := self._inflate(b""):
            yield piece
        if self._started and not self._inflater.eof:
            raise ResponseCutShortError(
                f"the {self.encoding}-compressed answer ended before its end marker"
            )

    def _inflate(self, data: bytes) -> bytes:
        assert self._inflater is not None  # noqa: S101 - checked by the callers
        try:
            piece = self._inflater.decompress(data, STEP)
        except zlib.error as exc:
            if self.encoding == "deflate" and not self._started:
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                self._started = True
                return self._inflate(data)
            raise EntrezResponseError(
                f"the {self.encoding}-compressed answer is corrupt: {exc}"
            ) from None
        self._started = self._started or bool(data)
        return piece


def _decoder(response: httpx.Response) -> _Decoder:
    raw = response.headers.get("Content-Encoding", "").strip().lower() or "identity"
    if raw not in ("identity", "gzip", "x-gzip", "deflate"):
        raise EntrezResponseError(
            f"the answer uses a content encoding this client did not ask for: {raw[:40]!r}"
        )
    return _Decoder(raw)


async def _whole(response: httpx.Response) -> AsyncIterator[bytes]:
    yield response.content


async def read_bounded(
    response: httpx.Response, limit: int, counts: BodyCounts, what: str
) -> bytes:
    """The decoded body of a streamed `response`, read while both counts stay within `limit`.

    Args:
        response: a response from `client.send(request, stream=True)`; the caller closes it.
        limit: the most bytes allowed, received and decoded alike.
        counts: updated as bytes arrive (kept by the caller even when this raises).
        what: how messages name the answer ("NCBI efetch").

    Raises:
        ResponseTooLargeError: a count passed `limit` (or the declared length did).
        ResponseCutShortError: a compressed stream ended early.
        EntrezResponseError: an encoding not asked for, or corrupt compressed data.
        httpx.HTTPError: the transport failed while reading.
    """
    if response.is_stream_consumed:
        # Read whole before it reached us (an in-memory transport): decoded already.
        raw, decoder = _whole(response), _Decoder("identity")
    else:
        raw, decoder = response.aiter_raw(), _decoder(response)
    declared = response.headers.get("Content-Length", "").strip()
    if declared.isdigit() and int(declared) > limit:
        raise ResponseTooLargeError(
            f"{what} answer declares {_mib(int(declared))}, over the {_mib(limit)} limit "
            "(NCBI_MAX_RESPONSE_MB); refused unread"
        )
    parts: list[bytes] = []

    def keep(pieces: Iterator[bytes]) -> None:
        for piece in pieces:
            counts.decoded += len(piece)
            if counts.decoded > limit:
                raise ResponseTooLargeError(
                    f"{what} answer is over the {_mib(limit)} limit once decompressed "
                    f"(refused after {_mib(counts.received)} received; NCBI_MAX_RESPONSE_MB)"
                )
            parts.append(piece)

    async for chunk in raw:
        counts.received += len(chunk)
        if counts.received > limit:
            raise ResponseTooLargeError(
                f"{what} answer is over the {_mib(limit)} limit (NCBI_MAX_RESPONSE_MB); "
                "refused while reading"
            )
        keep(decoder.feed(chunk))
    keep(decoder.finish())
    return b"".join(parts)
