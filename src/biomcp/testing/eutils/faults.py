"""Scriptable failures for the fake E-utilities server.

A `FaultInjector` decides, request by request, whether to answer normally or with a fault:

* `429`: HTTP 429 with NCBI's JSON body and a `Retry-After` header (seconds, may be fractional);
* `500`, `502`, `503`: the HTTP error with a small HTML page;
* `slow`: wait `delay` seconds, then answer normally;
* `truncated`: the normal answer cut at half its length, status 200;
* `truncated_xml`: the normal XML answer without its closing root element (everything else
  intact), status 200;
* `truncated_medline`: the normal MEDLINE answer without its last record's end (cut at the
  start of its `SO  - ` line, on a line boundary), status 200;
* `html`: an NCBI-like HTML error page with status 200;
* `ncbi_error`: the endpoint's root element holding an `<ERROR>`, status 200;
* `oversized`: a 200 answer of `size` bytes (default 200 MB), streamed in chunks without a
  `Content-Length`;
* `gzip_bomb`: a gzip-compressed 200 answer (`Content-Encoding: gzip`) that inflates to
  `size` bytes (default 1 GiB) from about a thousandth of that.

The two streamed kinds produce their bytes as the client reads them, so the fake never holds
them; `FaultInjector.bytes_streamed` counts what was handed to the connection (it stops
growing once the client hangs up). Their bodies are synthetic (an XML root padded with
spaces), labelled as such in a comment.

Two modes, usable together: a fixed `sequence` consumed by the next requests (optionally only
those to one endpoint), and a seeded `random` mode failing each request with a probability.
The sequence is consulted first. All methods are thread-safe: tests script faults from their
own thread while the server answers from its own.
"""

from __future__ import annotations

import asyncio
import json
import random
import struct
import threading
import zlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal, cast

from starlette.responses import Response, StreamingResponse

__all__ = [
    "CUT_KINDS",
    "ENDPOINTS",
    "FAULT_KINDS",
    "LOOKUPS",
    "STREAMED_KINDS",
    "Fault",
    "FaultInjector",
    "FaultKind",
    "cut_body",
    "gzip_bomb",
    "streamed_response",
]

FaultKind = Literal[
    "429", "500", "502", "503", "slow", "truncated", "truncated_xml", "truncated_medline",
    "html", "ncbi_error", "oversized", "gzip_bomb",
]  # fmt: skip
FAULT_KINDS: tuple[FaultKind, ...] = (
    "429", "500", "502", "503", "slow", "truncated", "truncated_xml", "truncated_medline",
    "html", "ncbi_error", "oversized", "gzip_bomb",
)  # fmt: skip
#: Kinds answered with the normal answer, cut (see `cut_body`).
CUT_KINDS: tuple[FaultKind, ...] = ("truncated", "truncated_xml", "truncated_medline")
#: Kinds answered with a large synthetic stream (see `streamed_response`).
STREAMED_KINDS: tuple[FaultKind, ...] = ("oversized", "gzip_bomb")
_DEFAULT_SIZES = {"oversized": 200_000_000, "gzip_bomb": 1 << 30}
_MAX_SIZE = 1 << 40
_CHUNK = 64 * 1024
ENDPOINTS = ("esearch", "efetch", "esummary", "elink", "einfo", "espell")
#: Services beside the E-utilities that faults can be aimed at by name too.
LOOKUPS = ("idconv", "ecitmatch")
#: Endpoints narrowed to one database (`efetch:pmc`: EFetch of PMC full text only).
NARROWED = ("efetch:pmc", "elink:pmc")

_HTTP_TITLES = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault. `retry_after` (seconds) is sent with 429s; `delay` (seconds) is how long a
    `slow` answer waits; `size` (bytes, once decompressed) is how large an `oversized` or
    `gzip_bomb` answer is (0: the kind's default, 200 MB or 1 GiB)."""

    kind: FaultKind
    retry_after: float = 1.0
    delay: float = 1.0
    size: int = 0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")
        if self.retry_after < 0 or self.delay < 0:
            raise ValueError("retry_after and delay must be >= 0")
        if not 0 <= self.size <= _MAX_SIZE:
            raise ValueError(f"size must be within [0, {_MAX_SIZE}]")

    @property
    def body_size(self) -> int:
        """The streamed answer's size in bytes (once decompressed)."""
        return self.size or _DEFAULT_SIZES.get(self.kind, 0)

    @classmethod
    def of(
        cls, spec: Fault | str | int | Mapping[str, Any], *, retry_after: float = 1.0,
        delay: float = 1.0,
    ) -> Fault:  # fmt: skip
        """A fault from a `Fault`, a kind (`"429"`, `429`, `"slow"`), or a mapping such as
        `{"kind": "429", "retry_after": 0.2}`; the keyword defaults fill what is not given.

        Raises:
            ValueError: for an unknown kind or a negative duration.
        """
        if isinstance(spec, Fault):
            return spec
        if isinstance(spec, str | int):
            return cls(cast("FaultKind", str(spec).strip()), retry_after, delay)
        unknown = set(spec) - {"kind", "retry_after", "delay", "size"}
        if unknown:
            raise ValueError(f"unknown fault option(s): {sorted(unknown)}")
        return cls(
            cast("FaultKind", str(spec["kind"]).strip()),
            float(spec.get("retry_after", retry_after)),
            float(spec.get("delay", delay)),
            int(spec.get("size", 0)),
        )

    def as_dict(self) -> dict[str, Any]:
        """The fault as the admin endpoint shows it (`size` only when one was given)."""
        shown = asdict(self)
        if not self.size:
            del shown["size"]
        return shown


class FaultInjector:
    """The fault plan of one server. `retry_after` and `delay` are the defaults for faults
    given by kind alone."""

    def __init__(self, *, retry_after: float = 1.0, delay: float = 1.0) -> None:
        self.retry_after = retry_after
        self.delay = delay
        self._lock = threading.Lock()
        self._queue: deque[Fault] = deque()
        self._endpoint: str | None = None
        self._probability = 0.0
        self._kinds: tuple[Fault, ...] = ()
        self._rng = random.Random()  # noqa: S311 - reproducible test faults, not secrets
        self._streamed = 0

    @property
    def bytes_streamed(self) -> int:
        """Bytes of `oversized` / `gzip_bomb` answers handed to connections so far (as sent:
        compressed for a bomb)."""
        with self._lock:
            return self._streamed

    def count_streamed(self, size: int) -> None:
        with self._lock:
            self._streamed += size

    def sequence(
        self,
        faults: Iterable[Fault | str | int | Mapping[str, Any]],
        *,
        endpoint: str | None = None,
    ) -> None:
        """Fail the next requests with `faults`, in order, one each (replacing any sequence
        not yet consumed). With `endpoint` ("efetch", "esearch"...), only requests to that
        endpoint consume the sequence; the others are answered normally. `efetch:pmc` (or
        `elink:pmc`) aims at the requests of that endpoint for `db=pmc` only.

        Raises:
            ValueError: for an unknown fault kind or endpoint.
        """
        parsed = [self._fault(f) for f in faults]
        target = _endpoint(endpoint)
        with self._lock:
            self._queue = deque(parsed)
            self._endpoint = target

    def random(
        self,
        probability: float,
        kinds: Iterable[Fault | str | int | Mapping[str, Any]] = ("429", "503"),
        seed: int | None = None,
    ) -> None:
        """Fail each request with `probability`, with a kind drawn uniformly from `kinds`;
        `seed` makes the draws reproducible.

        Raises:
            ValueError: for a probability outside [0, 1], no kinds, or an unknown kind.
        """
        if not 0.0 <= probability <= 1.0:
            raise ValueError(f"probability must be within [0, 1], got {probability}")
        parsed = tuple(self._fault(k) for k in kinds)
        if probability > 0 and not parsed:
            raise ValueError("random faults need at least one kind")
        with self._lock:
            self._probability = probability
            self._kinds = parsed
            self._rng = random.Random(seed)  # noqa: S311 - reproducible test faults

    def clear(self) -> None:
        """No faults any more: every request is answered normally."""
        with self._lock:
            self._queue.clear()
            self._endpoint = None
            self._probability = 0.0
            self._kinds = ()

    @property
    def pending(self) -> int:
        """How many faults of the sequence are still to be served."""
        with self._lock:
            return len(self._queue)

    def describe(self) -> dict[str, Any]:
        """The current plan, as the admin endpoint reports it."""
        with self._lock:
            return {
                "sequence": [f.as_dict() for f in self._queue],
                "endpoint": self._endpoint,
                "probability": self._probability,
                "kinds": [f.as_dict() for f in self._kinds],
            }

    def next_fault(self, endpoint: str, db: str | None = None) -> Fault | None:
        """The fault for the next request to `endpoint` (for database `db`), or None to answer
        normally."""
        narrowed = f"{endpoint}:{db.strip().lower()}" if db else None
        with self._lock:
            if self._queue and self._endpoint in (None, endpoint, narrowed):
                return self._queue.popleft()
            if self._probability > 0 and self._rng.random() < self._probability:
                return self._rng.choice(self._kinds)
        return None

    def _fault(self, spec: Fault | str | int | Mapping[str, Any]) -> Fault:
        return Fault.of(spec, retry_after=self.retry_after, delay=self.delay)


def _endpoint(name: str | None) -> str | None:
    if name is None:
        return None
    short = name.strip().removesuffix(".fcgi")
    known = ENDPOINTS + LOOKUPS + NARROWED
    if short not in known:
        raise ValueError(f"unknown endpoint {name!r}; expected one of {known}")
    return short


# --------------------------------------------------------------------------- fault bodies


def retry_after_header(seconds: float) -> str:
    """`1` for whole seconds, `0.2` otherwise (the client reads either)."""
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def invalid_api_key_body(key: str) -> bytes:
    """NCBI's answer (HTTP 400) to a request whose `api_key` it does not know."""
    return json.dumps(
        {"error": "API key invalid", "api-key": key, "type": "invalid", "status": "unknown"}
    ).encode()


def rate_limit_body() -> bytes:
    """NCBI's answer to a client over its request budget."""
    body = {"error": "API rate limit exceeded", "api-key": "127.0.0.1", "count": "4", "limit": "3"}
    return json.dumps(body).encode() + b"\n"


def http_error_page(status: int) -> bytes:
    """The small HTML page a proxy in front of E-utilities sends with a 5xx."""
    title = _HTTP_TITLES.get(status, "Error")
    return (
        f"<html><head><title>{status} {title}</title></head><body><center><h1>{status} {title}"
        f"</h1></center><hr><center>nginx</center></body></html>\n"
    ).encode()


def html_error_page() -> bytes:
    """An NCBI-style HTML error page, the kind NCBI sends with status 200 when overloaded."""
    return (
        b'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        b'"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
        b'<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">\n'
        b"<head><title>NCBI - WWW Error Blocked Diagnostic</title></head>\n"
        b"<body><h1>Error</h1><p>The server is temporarily unable to service your request. "
        b"Please try again later.</p></body>\n</html>\n"
    )


NCBI_ERROR_MESSAGE = (
    "Search Backend failed: Exception:\nThe backend is temporarily unavailable, "
    "please try again later."
)


# --------------------------------------------------------------------------- cut answers


def cut_body(kind: FaultKind, body: bytes) -> bytes:
    """The normal answer `body` cut as fault `kind` says (`CUT_KINDS`): at half its length,
    before its closing root element (`truncated_xml`), or at the start of its last `SO  - `
    line (`truncated_medline`). A body without what a precise cut looks for is cut at half."""
    if kind == "truncated_xml":
        end = body.rstrip().rfind(b"</")
        if end > 0:
            return body[:end]
    elif kind == "truncated_medline":
        end = body.rfind(b"\nSO  - ")
        if end >= 0:
            return body[: end + 1]
    return body[: len(body) // 2]


# --------------------------------------------------------------------------- large answers

_FILLER_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<eFetchResult>'
    b"<!-- synthetic test filler: an answer too large to be read -->\n"
)


def streamed_response(fault: Fault, injector: FaultInjector) -> Response:
    """The answer of a `STREAMED_KINDS` fault: `fault.body_size` bytes of synthetic XML,
    produced chunk by chunk as the connection takes them (gzip-compressed for `gzip_bomb`).
    Every chunk handed over is counted in `injector.count_streamed`."""
    size = fault.body_size
    if fault.kind == "gzip_bomb":
        body = gzip_bomb(size)
        return StreamingResponse(
            _chunks(body, injector.count_streamed),
            media_type="text/xml",
            headers={"Content-Encoding": "gzip", "Content-Length": str(len(body))},
        )
    return StreamingResponse(_filler(size, injector.count_streamed), media_type="text/xml")


async def _filler(size: int, count: Callable[[int], None]) -> AsyncIterator[bytes]:
    head = _FILLER_HEAD[:size]
    count(len(head))
    yield head
    left = size - len(head)
    block = b" " * _CHUNK
    while left > 0:
        chunk = block[: min(_CHUNK, left)]
        left -= len(chunk)
        count(len(chunk))
        yield chunk
        await asyncio.sleep(0)  # let the server notice a hang-up (it then stops the stream)


async def _chunks(body: bytes, count: Callable[[int], None]) -> AsyncIterator[bytes]:
    for start in range(0, len(body), _CHUNK):
        chunk = body[start : start + _CHUNK]
        count(len(chunk))
        yield chunk
        await asyncio.sleep(0)


@lru_cache(maxsize=4)
def gzip_bomb(size: int) -> bytes:
    """A gzip stream inflating to `size` bytes of synthetic XML (mostly spaces), about a
    thousandth of `size` long. Built in about a second per GiB: one MiB of spaces is deflated
    once after a full flush, which makes its compressed form independent of what came before,
    and that form is repeated. Cached per size."""
    head = _FILLER_HEAD[:size]
    block = b" " * (1 << 20)
    full, rest = divmod(size - len(head), len(block))
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    parts = [packer.compress(head), packer.flush(zlib.Z_FULL_FLUSH)]
    crc = zlib.crc32(head)
    if full:
        piece = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
        parts += [piece] * full
        for _ in range(full):
            crc = zlib.crc32(block, crc)
    parts += [packer.compress(block[:rest]), packer.flush()]
    crc = zlib.crc32(block[:rest], crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # gzip, deflate, no name/time
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return header + b"".join(parts) + trailer
