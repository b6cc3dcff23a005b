"""The OpenAI `Embedder`: the embeddings API through the official SDK (`AsyncOpenAI`).

* Inputs go in order-preserving batches of at most `batch_size` texts (never more than the
  API's 2048) and at most `max_request_tokens` estimated tokens (the API refuses more than
  300,000 tokens summed over one request). Tokens are estimated as UTF-8 bytes / 3, which
  over-counts English BPE tokens (about 4 bytes each), so estimates err on the safe side.
* Retries are the SDK's own (`max_retries`): 408, 409, 429 and 5xx answers, timeouts and
  connection failures, with exponential backoff and jitter, honouring `Retry-After`. No
  second retry layer is stacked on top.
* `dimensions` is passed through when set (text-embedding-3 models only); vectors are
  re-normalized to unit length (shortened vectors are not unit length as they come).
* Every SDK exception becomes a port error: 400/422 -> `EmbeddingInputError`; everything else
  (refused key, unknown model, rate limits and server errors after retries, timeouts,
  connection failures, malformed answers) -> `EmbeddingUnavailableError`. Neither the API key
  nor any part of it appears in a message or a log line of this module.
* The SDK client (and its connection pool) is opened on first use and reused by later calls
  on the same event loop; `aclose()` (or `async with`) closes it, and must be awaited before
  that loop ends (a pool cannot be closed from another loop). A call from a new loop opens a
  new client.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

import openai
from openai import AsyncOpenAI

from biomcp.ports.embeddings import (
    EmbeddingError,
    EmbeddingInputError,
    EmbeddingUnavailableError,
)

__all__ = ["API_MAX_INPUTS", "API_MAX_REQUEST_TOKENS", "OPENAI_MODELS", "OpenAIEmbedder"]

_log = logging.getLogger("biomcp.embeddings.openai")

API_MAX_INPUTS = 2048
API_MAX_REQUEST_TOKENS = 300_000
# model -> (native dimension, input window in tokens, supports `dimensions`)
OPENAI_MODELS: dict[str, tuple[int, int, bool]] = {
    "text-embedding-3-small": (1536, 8191, True),
    "text-embedding-3-large": (3072, 8191, True),
    "text-embedding-ada-002": (1536, 8191, False),
}
_SECRETISH = re.compile(r"(sk-|Bearer\s+)[^\s\"',;)]+", re.IGNORECASE)


def estimate_tokens(text: str) -> int:
    """A safe over-estimate of a text's BPE token count (UTF-8 bytes / 3, at least 1)."""
    return max(1, math.ceil(len(text.encode("utf-8", "surrogatepass")) / 3))


class OpenAIEmbedder:
    """`Embedder` over the OpenAI embeddings API (or any API compatible with it).

    Args:
        model: an OpenAI embedding model (text-embedding-3-small, text-embedding-3-large,
            text-embedding-ada-002); another name needs `dimensions`.
        api_key: the API key (required; never logged nor shown in errors).
        base_url: the API root (`https://api.openai.com/v1` by default).
        dimensions: shorten the vectors to this many dimensions (text-embedding-3 models).
        batch_size: texts per request (1..2048).
        max_request_tokens: estimated tokens per request (at most the API's 300,000).
        max_retries: retries of a failed request (the SDK's backoff, honouring Retry-After).
        timeout_s: the timeout of one HTTP request, in seconds.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        api_key: str,
        base_url: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 512,
        max_request_tokens: int = 250_000,
        max_retries: int = 4,
        timeout_s: float = 60.0,
    ) -> None:
        if not isinstance(api_key, str) or not api_key.strip():
            raise ValueError("an OpenAI API key is required")
        if not 1 <= batch_size <= API_MAX_INPUTS:
            raise ValueError(f"batch_size must be in 1..{API_MAX_INPUTS}, got {batch_size}")
        if not 1 <= max_request_tokens <= API_MAX_REQUEST_TOKENS:
            raise ValueError(
                f"max_request_tokens must be in 1..{API_MAX_REQUEST_TOKENS}, "
                f"got {max_request_tokens}"
            )
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        known = OPENAI_MODELS.get(model)
        if dimensions is not None:
            if dimensions < 1:
                raise ValueError(f"dimensions must be >= 1, got {dimensions}")
            if known is not None and not known[2]:
                raise ValueError(f"{model} does not support `dimensions`")
            if known is not None and dimensions > known[0]:
                raise ValueError(f"{model} has at most {known[0]} dimensions, got {dimensions}")
        elif known is None:
            raise ValueError(f"unknown OpenAI embedding model {model!r}: pass `dimensions`")
        self.model = model
        self.base_url = base_url
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.max_request_tokens = max_request_tokens
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self._api_key = api_key
        if dimensions is not None:
            self._dim = dimensions
        elif known is not None:
            self._dim = known[0]
        self._window = known[1] if known is not None else None
        self._client: AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    # -- the port ------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return f"openai/{self.model}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def runtime(self) -> str:
        """What computes the vectors, for a person reading a diagnosis (the host only: a
        base URL may carry credentials)."""
        host = urlsplit(self.base_url).hostname if self.base_url else "api.openai.com"
        return f"OpenAI embeddings API at {host}"

    @property
    def max_tokens(self) -> int | None:
        return self._window

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single str")
        if not texts:
            return []
        for index, text in enumerate(texts):
            if not isinstance(text, str):
                raise EmbeddingInputError(f"input {index} is a {type(text).__name__}, not a str")
            if not text:
                raise EmbeddingInputError(f"input {index} is empty: the OpenAI API refuses ''")
        client = self._client_for_loop()
        vectors: list[list[float]] = []
        for batch in self.batches(texts):
            vectors.extend(await self._embed_batch(client, batch))
        return vectors

    # -- batching ------------------------------------------------------------------------------

    def batches(self, texts: Sequence[str]) -> Iterator[list[str]]:
        """`texts` cut, in order, into request batches within `batch_size` inputs and
        `max_request_tokens` estimated tokens (a text over the budget goes alone)."""
        batch: list[str] = []
        tokens = 0
        for text in texts:
            cost = estimate_tokens(text)
            if batch and (len(batch) >= self.batch_size or tokens + cost > self.max_request_tokens):
                yield batch
                batch, tokens = [], 0
            batch.append(text)
            tokens += cost
        if batch:
            yield batch

    # -- the API -------------------------------------------------------------------------------

    async def _embed_batch(self, client: AsyncOpenAI, batch: list[str]) -> list[list[float]]:
        extra: dict[str, Any] = {}
        if self.dimensions is not None:
            extra["dimensions"] = self.dimensions
        try:
            response = await client.embeddings.create(input=batch, model=self.model, **extra)
        except Exception as exc:  # the SDK's errors, and anything its parsing raises
            raise self._translate(exc) from (None if _is_auth(exc) else exc)
        try:
            data = sorted(response.data, key=lambda item: item.index)
            rows = [list(item.embedding) for item in data]
        except (AttributeError, TypeError, ValueError) as exc:
            raise EmbeddingUnavailableError(
                f"{self.model_id}: malformed embeddings response ({type(exc).__name__})"
            ) from exc
        if len(rows) != len(batch):
            raise EmbeddingUnavailableError(
                f"{self.model_id}: {len(rows)} vectors returned for {len(batch)} inputs"
            )
        return [self._unit(row, index) for index, row in enumerate(rows)]

    def _unit(self, row: list[Any], index: int) -> list[float]:
        if len(row) != self._dim:
            raise EmbeddingUnavailableError(
                f"{self.model_id}: vector {index} has {len(row)} dimensions, expected {self._dim}"
            )
        try:
            vector = [float(x) for x in row]
        except (TypeError, ValueError) as exc:
            raise EmbeddingUnavailableError(
                f"{self.model_id}: vector {index} holds non-numbers"
            ) from exc
        norm = math.sqrt(math.fsum(x * x for x in vector))
        if not math.isfinite(norm) or norm == 0.0:
            raise EmbeddingUnavailableError(f"{self.model_id}: vector {index} is unusable")
        return [x / norm for x in vector]

    def _translate(self, exc: BaseException) -> EmbeddingError:
        """The port error for an SDK exception; messages carry no key material."""
        retries = f"after {self.max_retries} retries"
        if _is_auth(exc):
            status = getattr(exc, "status_code", "?")
            return EmbeddingUnavailableError(
                f"{self.model_id}: the API key was refused (HTTP {status}); check the "
                "configured OpenAI API key"
            )
        if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
            return EmbeddingInputError(
                f"{self.model_id}: the API rejected the input (HTTP {exc.status_code}): "
                f"{self._server_message(exc)}"
            )
        if isinstance(exc, openai.NotFoundError):
            return EmbeddingUnavailableError(
                f"{self.model_id}: not found (HTTP 404): {self._server_message(exc)}"
            )
        if isinstance(exc, openai.RateLimitError):
            return EmbeddingUnavailableError(
                f"{self.model_id}: rate limited (HTTP 429) {retries}: {self._server_message(exc)}"
            )
        if isinstance(exc, openai.APIStatusError):
            return EmbeddingUnavailableError(
                f"{self.model_id}: HTTP {exc.status_code} {retries}: {self._server_message(exc)}"
            )
        if isinstance(exc, openai.APITimeoutError):
            return EmbeddingUnavailableError(
                f"{self.model_id}: request timed out ({self.timeout_s:g} s) {retries}"
            )
        if isinstance(exc, openai.APIConnectionError):
            return EmbeddingUnavailableError(
                f"{self.model_id}: cannot reach the embeddings API {retries}"
            )
        return EmbeddingUnavailableError(
            f"{self.model_id}: embeddings request failed: {type(exc).__name__}: "
            f"{self._redact(str(exc))}"
        )

    def _server_message(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        if isinstance(body, dict):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, dict) else None
            if isinstance(message, str) and message:
                return self._redact(message)
        return self._redact(exc.message)

    def _redact(self, text: str) -> str:
        text = text.replace(self._api_key, "***")
        return _SECRETISH.sub(lambda m: f"{m.group(1)}***", text)

    # -- the client ----------------------------------------------------------------------------

    def _client_for_loop(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            if self._client is not None:
                _log.debug("new event loop: opening a new OpenAI client")
            self._client = AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.base_url,
                max_retries=self.max_retries,
                timeout=self.timeout_s,
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (a later `embed` opens a new one)."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder({self.model!r}, base_url={self.base_url!r}, "
            f"dimensions={self.dimensions}, api_key=***)"
        )


def _is_auth(exc: BaseException) -> bool:
    return isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError)
