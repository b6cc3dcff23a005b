"""A fake OpenAI embeddings API for tests and offline demos.

`POST /v1/embeddings` answers like OpenAI's (same request fields, same response and error
shapes, `encoding_format` "float" or "base64") with deterministic vectors from
`HashingEmbedder` (texts sharing words get similar vectors), honouring `dimensions`.
It checks `Authorization: Bearer <key>`, logs every request (never the key) and fails on demand:

    with FakeOpenAIServer(api_key="sk-test") as server:
        client = AsyncOpenAI(api_key="sk-test", base_url=server.base_url)
        server.faults.next(2, "429", retry_after=0.01)   # the next 2 requests get a 429
        ...
        assert server.log[-1]["status"] == 200

Limits enforced like OpenAI's: at most 2048 inputs per request, no empty string, at most
`max_input_tokens` tokens per input and `max_request_tokens` per request (tokens counted
roughly: words and punctuation marks), `dimensions` only for the text-embedding-3 models.
`async with` works the same way (start and stop run off the event loop).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
import threading
import time
from array import array
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from biomcp.adapters.embeddings.hashing import HashingEmbedder
from biomcp.testing.openai_faults import OpenAIFault, OpenAIFaults
from biomcp.testing.serving import BackgroundServer, ServerLifecycle

__all__ = [
    "FAKE_MODELS",
    "MAX_INPUTS",
    "FakeOpenAIServer",
    "FakeOpenAIState",
    "OpenAIFault",
    "OpenAIFaults",
    "count_tokens",
    "create_app",
]

FAKE_MODELS: Mapping[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_SHORTENABLE = frozenset({"text-embedding-3-small", "text-embedding-3-large"})
MAX_INPUTS = 2048
_INVALID_INPUT = (
    "'$.input' is invalid. Please check the API reference: "
    "https://platform.openai.com/docs/api-reference."
)
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_START_TIMEOUT = 15.0


def _error(
    status: int,
    message: str,
    *,
    type_: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


class FakeOpenAIState:
    """What the fake knows: the accepted key, the models, the limits, the faults and the log."""

    def __init__(
        self,
        api_key: str,
        *,
        models: Mapping[str, int] = FAKE_MODELS,
        max_inputs: int = MAX_INPUTS,
        max_input_tokens: int = 8192,
        max_request_tokens: int = 300_000,
    ) -> None:
        self.api_key = api_key
        self.models = dict(models)
        self.max_inputs = max_inputs
        self.max_input_tokens = max_input_tokens
        self.max_request_tokens = max_request_tokens
        self.faults = OpenAIFaults()
        self._lock = threading.Lock()
        self._log: list[dict[str, Any]] = []
        self._embedders: dict[int, HashingEmbedder] = {}
        self._requests = 0

    @property
    def log(self) -> list[dict[str, Any]]:
        """Every embeddings request so far (a copy), oldest first: `t`, `model`, `inputs`
        (the number of inputs), `texts`, `dimensions`, `encoding_format`, `authorized`,
        `status`, `fault`."""
        with self._lock:
            return [dict(entry) for entry in self._log]

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def record(self, entry: dict[str, Any]) -> str:
        """Log `entry` and return a request id for it."""
        with self._lock:
            self._log.append(entry)
            self._requests += 1
            return f"req_fake{self._requests:08d}"

    def vector(self, text: str, dim: int) -> list[float]:
        with self._lock:
            embedder = self._embedders.get(dim)
            if embedder is None:
                embedder = self._embedders[dim] = HashingEmbedder(dim, "fake-openai")
        return embedder.embed_one(text)


def count_tokens(text: str) -> int:
    """The fake's token count: words and punctuation marks (a rough stand-in for BPE)."""
    return len(_TOKEN.findall(text))


def _mask(key: str) -> str:
    """How OpenAI echoes a refused key (a few characters at each end)."""
    if len(key) <= 8:
        return "*" * len(key)
    return f"{key[:3]}{'*' * (len(key) - 7)}{key[-4:]}"


def _retry_headers(seconds: float) -> dict[str, str]:
    return {"retry-after": f"{seconds:g}", "retry-after-ms": f"{seconds * 1000:g}"}


def _encode(vector: list[float], encoding_format: str) -> list[float] | str:
    packed = array("f", vector)
    if encoding_format == "base64":
        if sys.byteorder != "little":  # pragma: no cover - big-endian hosts only
            packed.byteswap()
        return base64.b64encode(packed.tobytes()).decode("ascii")
    return packed.tolist()


def _inputs(raw: object) -> list[str] | None:
    """The request's inputs as texts (token arrays become pseudo-words); None when the shape
    is not one OpenAI accepts."""
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list) or not raw:
        return None
    if all(isinstance(x, str) for x in raw):
        return list(raw)
    if all(isinstance(x, int) and not isinstance(x, bool) for x in raw):
        return [" ".join(f"t{x}" for x in raw)]
    if all(
        isinstance(x, list) and x and all(isinstance(t, int) and not isinstance(t, bool) for t in x)
        for x in raw
    ):
        return [" ".join(f"t{t}" for t in x) for x in raw]
    return None


def _embeddings(state: FakeOpenAIState) -> Callable[[Request], Awaitable[Response]]:
    async def answer(request: Request) -> Response:
        entry: dict[str, Any] = {
            "t": time.time(),
            "model": None,
            "inputs": 0,
            "texts": [],
            "dimensions": None,
            "encoding_format": None,
            "authorized": False,
            "status": 200,
            "fault": None,
        }
        response = await _answer(state, request, entry)
        entry["status"] = response.status_code
        response.headers["x-request-id"] = state.record(entry)
        return response

    return answer


async def _answer(state: FakeOpenAIState, request: Request, entry: dict[str, Any]) -> Response:
    refused = _refuse_key(state, request.headers.get("authorization", ""))
    if refused is not None:
        return refused
    entry["authorized"] = True
    fault = state.faults.take()
    if fault is not None:
        entry["fault"] = fault.kind
        failed = await _inject(fault)
        if failed is not None:
            return failed
    try:
        body = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        return _error(
            400,
            "We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly.)",
        )
    call = _parse_call(state, body, entry)
    if isinstance(call, Response):
        return call
    total = _token_total(state, call.texts)
    if isinstance(total, Response):
        return total
    data = [
        {
            "object": "embedding",
            "index": index,
            "embedding": _encode(state.vector(text, call.dim), call.encoding_format),
        }
        for index, text in enumerate(call.texts)
    ]
    return JSONResponse(
        {
            "object": "list",
            "data": data,
            "model": call.model,
            "usage": {"prompt_tokens": total, "total_tokens": total},
        }
    )


def _refuse_key(state: FakeOpenAIState, authorization: str) -> Response | None:
    """OpenAI's 401 for a missing or wrong bearer key; None for the accepted key."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _error(
            401,
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        )
    if token.strip() != state.api_key:
        return _error(
            401,
            f"Incorrect API key provided: {_mask(token.strip())}. You can find your API key "
            "at https://platform.openai.com/account/api-keys.",
            code="invalid_api_key",
        )
    return None


async def _inject(fault: OpenAIFault) -> Response | None:
    """The failed answer `fault` stands for; None when the request goes on (after a `slow`
    fault's delay)."""
    if fault.kind == "slow":
        await asyncio.sleep(fault.delay)
        return None
    if fault.kind == "garbage":
        return Response("<html>upstream hiccup</html>", media_type="application/json")
    if fault.kind == "429":
        return _error(
            429,
            "Rate limit reached for requests per min (RPM): Limit 3000, Used 3000, "
            f"Requested 1. Please try again in {int(fault.retry_after * 1000)}ms.",
            type_="requests",
            code="rate_limit_exceeded",
            headers=_retry_headers(fault.retry_after),
        )
    return _error(
        int(fault.kind),
        "The server had an error while processing your request. Sorry about that!",
        type_="server_error",
        headers=_retry_headers(fault.retry_after) if fault.retry_after > 0 else None,
    )


@dataclass(frozen=True, slots=True)
class _Call:
    """A valid embeddings request: the model, its texts, the vector size and encoding."""

    model: str
    texts: list[str]
    dim: int
    encoding_format: str


def _parse_call(state: FakeOpenAIState, body: object, entry: dict[str, Any]) -> _Call | Response:
    """The request in `body`, or OpenAI's error for the first field it refuses; `entry` logs
    each field as it is read."""
    if not isinstance(body, dict):
        return _error(400, "The request body must be a JSON object.")
    model = body.get("model")
    entry["model"] = model
    if not isinstance(model, str) or not model:
        return _error(400, "you must provide a model parameter")
    if model not in state.models:
        return _error(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )
    texts = _inputs(body.get("input"))
    if texts is None:
        return _error(400, _INVALID_INPUT)
    entry["inputs"] = len(texts)
    entry["texts"] = texts
    if len(texts) > state.max_inputs or any(text == "" for text in texts):
        return _error(400, _INVALID_INPUT)
    encoding_format = body.get("encoding_format", "float")
    entry["encoding_format"] = encoding_format
    if encoding_format not in ("float", "base64"):
        return _error(
            400,
            f"'{encoding_format}' is not one of ['float', 'base64'] - 'encoding_format'",
            param="encoding_format",
        )
    dimensions = body.get("dimensions")
    entry["dimensions"] = dimensions
    dim = _dimension(model, state.models[model], dimensions)
    if isinstance(dim, Response):
        return dim
    return _Call(model, texts, dim, encoding_format)


def _dimension(model: str, dim: int, dimensions: object) -> int | Response:
    """The vector size asked for (`dimensions`, if the model can shorten its vectors to it),
    else the model's own `dim`; OpenAI's error for a size it refuses."""
    if dimensions is None:
        return dim
    if model not in _SHORTENABLE:
        return _error(400, "This model does not support specifying dimensions.")
    if not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1:
        return _error(
            400, f"{dimensions!r} is less than the minimum of 1 - 'dimensions'", param=None
        )
    if dimensions > dim:
        return _error(
            400,
            f"This model's maximum embedding dimension is {dim}, but you requested {dimensions}.",
        )
    return dimensions


def _token_total(state: FakeOpenAIState, texts: list[str]) -> int | Response:
    """The request's token count, or OpenAI's error when an input or the request is over its
    limit."""
    counts = [count_tokens(text) for text in texts]
    for count in counts:
        if count > state.max_input_tokens:
            return _error(
                400,
                f"This model's maximum context length is {state.max_input_tokens} tokens, "
                f"however you requested {count} tokens ({count} in your prompt; 0 for the "
                "completion). Please reduce your prompt; or completion length.",
            )
    total = sum(counts)
    if total > state.max_request_tokens:
        return _error(
            400,
            f"Requested {total} tokens, max {state.max_request_tokens} tokens per request",
            type_="max_tokens_per_request",
            code="max_tokens_per_request",
        )
    return total


def create_app(state: FakeOpenAIState) -> Starlette:
    """The fake as a Starlette app (`app.state.fake` holds `state`)."""
    app = Starlette(routes=[Route("/v1/embeddings", _embeddings(state), methods=["POST"])])
    app.state.fake = state
    return app


class FakeOpenAIServer(ServerLifecycle):
    """The fake OpenAI embeddings API served by uvicorn on `host`:`port` (0: a free port, bound
    here so the port is known before serving starts), in a background thread.

    Attributes:
        state: the server's state (key, models, limits, faults, log).
        faults: the fault plan: `.next(count, kind, retry_after=, delay=)`, `.sequence([...])`,
            `.clear()`.
    """

    def __init__(
        self,
        api_key: str = "sk-fake-0123456789abcdef",
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Mapping[str, int] = FAKE_MODELS,
        max_input_tokens: int = 8192,
        max_request_tokens: int = 300_000,
        log_level: str = "critical",
    ) -> None:
        self.state = FakeOpenAIState(
            api_key,
            models=models,
            max_input_tokens=max_input_tokens,
            max_request_tokens=max_request_tokens,
        )
        self.app = create_app(self.state)
        self.host = host
        self._serving = BackgroundServer(
            self.app, host=host, port=port, name="fake-openai", log_level=log_level
        )

    def start(self) -> Self:
        """Bind, serve in a background thread, and return once connections are accepted.

        Raises:
            RuntimeError: when already running or not up in time.
            OSError: when the address cannot be bound.
        """
        self._serving.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the thread and the socket (idempotent)."""
        self._serving.stop()

    @property
    def api_key(self) -> str:
        return self.state.api_key

    @property
    def port(self) -> int:
        """The bound port (the requested one until started)."""
        return self._serving.port

    @property
    def base_url(self) -> str:
        """`http://host:port/v1`, the value for the OpenAI client's `base_url`."""
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def faults(self) -> OpenAIFaults:
        return self.state.faults

    @property
    def log(self) -> list[dict[str, Any]]:
        """The embeddings requests served so far (a copy), oldest first."""
        return self.state.log

    def clear_log(self) -> None:
        self.state.clear_log()
