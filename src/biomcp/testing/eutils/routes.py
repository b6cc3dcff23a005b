"""The request wrapper every route of the fake shares (the E-utilities and the lookups): the
parameters from the query string and a form body, the fault plan consulted, the request logged
(the API key masked), and the answer built off the event loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import Response

from biomcp.testing.eutils import faults as fault_bodies
from biomcp.testing.eutils.faults import Fault
from biomcp.testing.eutils.handlers import Params, Reply
from biomcp.testing.eutils.state import ServerState, now

__all__ = ["ErrorBody", "Handler", "loggable", "request_route"]

#: An endpoint's answer to one request (run off the event loop) and its in-band error body.
Handler = Callable[[ServerState, Params], Reply]
ErrorBody = Callable[[str], Reply]

_MASKED = "***"


def request_route(
    state: ServerState, endpoint: str, handler: Handler, error_body: ErrorBody
) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint answering with `handler`, unless the fault plan has a fault for
    `endpoint` (or for any endpoint) next."""

    async def answer(request: Request) -> Response:
        arrived, arrived_mono = now(), time.monotonic()
        pairs = list(request.query_params.multi_items())
        if request.method == "POST":
            body = (await request.body()).decode("utf-8", "replace")
            pairs += parse_qsl(body, keep_blank_values=True)
        params = Params(pairs)
        key = next((v for k, v in pairs if k.lower() == "api_key" and v), None)
        fault = None
        if state.api_keys is not None and key is not None and key not in state.api_keys:
            # NCBI refuses an unknown key outright, whatever the request (no key is fine)
            response = Response(
                fault_bodies.invalid_api_key_body(key), 400, media_type="application/json"
            )
        else:
            fault = state.faults.next_fault(endpoint, params.get("db"))
            response = await _respond(state, handler, error_body, params, fault)
        state.record(
            {
                "t": arrived,
                # The system-wide monotonic clock (Linux: CLOCK_MONOTONIC), comparable with
                # another process's `time.monotonic()`, e.g. a client's rate-limit starts.
                "mono": arrived_mono,
                "endpoint": endpoint,
                "method": request.method,
                "params": loggable(pairs),
                "has_api_key": key is not None,
                "status": response.status_code,
                "fault": fault.kind if fault is not None else None,
            }
        )
        return response

    return answer


def loggable(pairs: list[tuple[str, str]]) -> dict[str, str | list[str]]:
    """Request parameters as the log shows them: a repeated name as a list, the key masked."""
    grouped: dict[str, str | list[str]] = {}
    for key, value in pairs:
        shown = _MASKED if key.lower() == "api_key" else value
        if key not in grouped:
            grouped[key] = shown
        else:
            previous = grouped[key]
            grouped[key] = [*previous, shown] if isinstance(previous, list) else [previous, shown]
    return grouped


async def _respond(
    state: ServerState, handler: Handler, error_body: ErrorBody, params: Params, fault: Fault | None
) -> Response:
    # Searching and rendering are CPU work (the first search builds the index): off the event
    # loop, so admin calls and other requests are not held up.
    loop = asyncio.get_running_loop()

    async def normal() -> Response:
        reply = await loop.run_in_executor(state.executor, handler, state, params)
        return Response(reply.body, reply.status, media_type=reply.media_type)

    if fault is None:
        return await normal()
    kind = fault.kind
    if kind == "429":
        return Response(
            fault_bodies.rate_limit_body(),
            status_code=429,
            media_type="application/json",
            headers={"Retry-After": fault_bodies.retry_after_header(fault.retry_after)},
        )
    if kind in ("500", "502", "503"):
        status = int(kind)
        return Response(fault_bodies.http_error_page(status), status, media_type="text/html")
    if kind == "html":
        return Response(fault_bodies.html_error_page(), media_type="text/html")
    if kind == "ncbi_error":
        reply = error_body(fault_bodies.NCBI_ERROR_MESSAGE)
        return Response(reply.body, reply.status, media_type=reply.media_type)
    if kind == "slow":
        await asyncio.sleep(fault.delay)
        return await normal()
    if kind in fault_bodies.STREAMED_KINDS:
        return fault_bodies.streamed_response(fault, state.faults)
    answered = await normal()  # the cut kinds: truncated, truncated_xml, truncated_medline
    body = fault_bodies.cut_body(kind, bytes(answered.body))
    return Response(body, answered.status_code, media_type=answered.media_type)
