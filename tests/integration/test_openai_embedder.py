"""OpenAIEmbedder over real HTTP against the fake OpenAI embeddings server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import socket
import time
import traceback
from array import array
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx
import pytest

try:
    import openai  # noqa: F401
except ImportError:  # pragma: no cover - only without the openai package
    if os.environ.get("CI"):
        raise
    pytest.skip(
        "the openai package is not installed (CI=1 makes this a failure)", allow_module_level=True
    )

from biomcp.adapters.embeddings.hashing import HashingEmbedder
from biomcp.adapters.embeddings.openai import OpenAIEmbedder, estimate_tokens
from biomcp.ports.embeddings import (
    EmbeddingError,
    EmbeddingInputError,
    EmbeddingUnavailableError,
)
from biomcp.testing.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.integration

KEY = "sk-integration-abcdefghijklmnop0123"
WRONG = "sk-not-the-right-key-zyxwvu9876"
_T = TypeVar("_T")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY) as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    server.faults.clear()
    server.clear_log()
    yield server
    server.faults.clear()


def make(fake: FakeOpenAIServer, **overrides: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"api_key": KEY, "base_url": fake.base_url, "max_retries": 2}
    options.update(overrides)
    model = options.pop("model", "text-embedding-3-small")
    return OpenAIEmbedder(model, **options)


def run(embedder: OpenAIEmbedder, work: Callable[[], Awaitable[_T]]) -> _T:
    async def scenario() -> _T:
        async with embedder:
            return await work()

    return asyncio.run(scenario())


def embed(embedder: OpenAIEmbedder, texts: list[str]) -> list[list[float]]:
    return run(embedder, lambda: embedder.embed(texts))


def expected_vector(text: str, dim: int) -> list[float]:
    """What the fake sends (float32), re-normalized like the adapter does."""
    raw = array("f", HashingEmbedder(dim).embed_one(text)).tolist()
    norm = math.sqrt(math.fsum(x * x for x in raw))
    return [x / norm for x in raw]


def close_to(a: list[float], b: list[float], tol: float = 1e-6) -> bool:
    return max(abs(x - y) for x, y in zip(a, b, strict=True)) <= tol


def whole_chain(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)) + repr(error)


# --------------------------------------------------------------------------- requests


def test_vectors_match_the_fake_and_come_in_order(fake: FakeOpenAIServer) -> None:
    texts = [f"sentence {i} about aspirin" for i in range(10)]
    vectors = embed(make(fake), texts)
    assert all(close_to(v, expected_vector(t, 1536)) for v, t in zip(vectors, texts, strict=True))
    (entry,) = fake.log
    assert entry["model"] == "text-embedding-3-small"
    assert entry["texts"] == texts
    assert entry["dimensions"] is None
    assert entry["encoding_format"] == "base64"  # the SDK's default, decoded by the SDK


def test_dimensions_are_passed_through(fake: FakeOpenAIServer) -> None:
    embedder = make(fake, dimensions=256)
    assert embedder.dim == 256
    (vector,) = embed(embedder, ["heart attack"])
    assert len(vector) == 256
    assert abs(math.sqrt(math.fsum(x * x for x in vector)) - 1) < 1e-9
    assert fake.log[-1]["dimensions"] == 256


def test_model_table() -> None:
    assert OpenAIEmbedder(api_key=KEY).dim == 1536
    assert OpenAIEmbedder("text-embedding-3-large", api_key=KEY).dim == 3072
    ada = OpenAIEmbedder("text-embedding-ada-002", api_key=KEY)
    assert (ada.dim, ada.max_tokens, ada.model_id) == (1536, 8191, "openai/text-embedding-ada-002")
    assert OpenAIEmbedder("my-proxy-model", api_key=KEY, dimensions=99).dim == 99


@pytest.mark.parametrize(
    ("model", "options", "message"),
    [
        ("text-embedding-ada-002", {"dimensions": 256}, "does not support"),
        ("text-embedding-3-small", {"dimensions": 4096}, "at most 1536"),
        ("who-knows", {}, "pass `dimensions`"),
        ("text-embedding-3-small", {"batch_size": 2049}, "batch_size"),
        ("text-embedding-3-small", {"max_request_tokens": 300_001}, "max_request_tokens"),
        ("text-embedding-3-small", {"api_key": ""}, "API key is required"),
    ],
)
def test_bad_configuration_is_refused(model: str, options: dict[str, Any], message: str) -> None:
    options = {"api_key": KEY, **options}
    with pytest.raises(ValueError, match=message):
        OpenAIEmbedder(model, **options)


def test_batches_respect_the_input_count(fake: FakeOpenAIServer) -> None:
    texts = [f"t{i}" for i in range(250)]
    vectors = embed(make(fake, batch_size=100), texts)
    assert [e["inputs"] for e in fake.log] == [100, 100, 50]
    assert [t for e in fake.log for t in e["texts"]] == texts
    assert all(close_to(v, expected_vector(t, 1536)) for v, t in zip(vectors, texts, strict=True))


def test_batches_respect_the_token_budget(fake: FakeOpenAIServer) -> None:
    texts = [("word " * (20 + i % 40)).strip() for i in range(60)]
    budget = 600
    embed(make(fake, max_request_tokens=budget), texts)
    assert len(fake.log) > 1
    for entry in fake.log:
        assert sum(estimate_tokens(t) for t in entry["texts"]) <= budget
    assert [t for e in fake.log for t in e["texts"]] == texts


def test_a_text_over_the_budget_goes_alone(fake: FakeOpenAIServer) -> None:
    big = "x " * 400
    embed(make(fake, max_request_tokens=100), ["a", big, "b"])
    assert [e["texts"] for e in fake.log] == [["a"], [big], ["b"]]


def test_the_estimate_over_counts_the_fakes_tokens() -> None:
    for text in ["The quick brown fox.", "β-blockers (5 µg/kg) ± 2", "HbA1c fell 0.5%"]:
        assert estimate_tokens(text) >= len(text.split())


def test_empty_input_sends_nothing(fake: FakeOpenAIServer) -> None:
    assert embed(make(fake), []) == []
    assert fake.log == []


def test_empty_strings_are_refused_before_any_request(fake: FakeOpenAIServer) -> None:
    with pytest.raises(EmbeddingInputError, match="input 1 is empty"):
        embed(make(fake), ["a", ""])
    assert fake.log == []


# --------------------------------------------------------------------------- retries


def test_429s_are_retried_honouring_retry_after(fake: FakeOpenAIServer) -> None:
    fake.faults.next(2, "429", retry_after=0.05)
    start = time.monotonic()
    (vector,) = embed(make(fake), ["a"])
    assert time.monotonic() - start >= 0.1
    assert [e["status"] for e in fake.log] == [429, 429, 200]
    assert close_to(vector, expected_vector("a", 1536))


def test_5xx_are_retried(fake: FakeOpenAIServer) -> None:
    fake.faults.sequence(["500", "503"])
    embed(make(fake), ["a"])
    assert [e["status"] for e in fake.log] == [500, 503, 200]


def test_retries_back_off_exponentially_without_retry_after(fake: FakeOpenAIServer) -> None:
    fake.faults.next(3, "500")
    start = time.monotonic()
    with pytest.raises(EmbeddingUnavailableError, match="HTTP 500 after 2 retries"):
        embed(make(fake), ["a"])
    elapsed = time.monotonic() - start
    assert [e["status"] for e in fake.log] == [500, 500, 500]
    assert elapsed >= 0.5 * 0.75 + 1.0 * 0.75 - 0.05  # 0.5 s then 1 s, minus up to 25% jitter


def test_persistent_500_is_unavailable_after_the_retries(fake: FakeOpenAIServer) -> None:
    fake.faults.next(10, "500", retry_after=0.01)
    with pytest.raises(EmbeddingUnavailableError) as caught:
        embed(make(fake, max_retries=3), ["a"])
    assert len(fake.log) == 4
    assert "500" in str(caught.value)
    assert KEY not in whole_chain(caught.value)


def test_persistent_429_is_unavailable(fake: FakeOpenAIServer) -> None:
    fake.faults.next(10, "429", retry_after=0.01)
    with pytest.raises(EmbeddingUnavailableError, match="rate limited"):
        embed(make(fake, max_retries=1), ["a"])
    assert len(fake.log) == 2


def test_a_timeout_is_retried(fake: FakeOpenAIServer) -> None:
    fake.faults.next(1, "slow", delay=1.0)
    (vector,) = embed(make(fake, timeout_s=0.3, max_retries=1), ["a"])
    assert close_to(vector, expected_vector("a", 1536))
    assert [e["fault"] for e in fake.log][-1] is None


def test_persistent_timeouts_are_unavailable(fake: FakeOpenAIServer) -> None:
    fake.faults.next(3, "slow", delay=1.0)
    with pytest.raises(EmbeddingUnavailableError, match="timed out"):
        embed(make(fake, timeout_s=0.2, max_retries=0), ["a"])


def test_an_unreadable_answer_is_unavailable(fake: FakeOpenAIServer) -> None:
    fake.faults.next(1, "garbage")
    with pytest.raises(EmbeddingUnavailableError) as caught:
        embed(make(fake, max_retries=0), ["a"])
    assert KEY not in whole_chain(caught.value)


def test_an_unreachable_api_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = OpenAIEmbedder(api_key=KEY, base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(EmbeddingUnavailableError, match="cannot reach"):
        embed(embedder, ["a"])


# --------------------------------------------------------------------------- refusals and keys


def test_an_input_the_api_refuses_is_an_input_error(fake: FakeOpenAIServer) -> None:
    with pytest.raises(EmbeddingInputError, match="maximum context length"):
        embed(make(fake), ["ok", "word " * 9000])
    assert len(fake.log) == 1  # a 400 is not retried


def test_an_unknown_model_is_unavailable(fake: FakeOpenAIServer) -> None:
    with pytest.raises(EmbeddingUnavailableError, match="404"):
        embed(make(fake, model="no-such-model", dimensions=8), ["a"])


def test_a_wrong_key_is_refused_without_leaking_it(
    fake: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with pytest.raises(EmbeddingUnavailableError, match="key was refused") as caught:
        embed(make(fake, api_key=WRONG), ["a"])
    assert len(fake.log) == 1  # a 401 is not retried
    chain = whole_chain(caught.value)
    for fragment in (WRONG, WRONG[:10], WRONG[-4:]):
        assert fragment not in chain
        assert fragment not in caplog.text
    assert caught.value.__cause__ is None


def test_the_key_never_reaches_the_logs(
    fake: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.faults.sequence(["429", "500"])
    embedder = make(fake)
    embed(embedder, ["a", "b"])
    with pytest.raises(EmbeddingInputError):
        embed(embedder, ["word " * 9000])
    assert caplog.records  # the SDK did log at DEBUG
    text = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert KEY not in text
    assert KEY not in repr(embedder)
    assert all(KEY not in str(entry) for entry in fake.log)


def test_translated_errors_are_port_errors_for_any_sdk_failure() -> None:
    embedder = OpenAIEmbedder(api_key=KEY)
    error = embedder._translate(RuntimeError(f"odd failure with {KEY} and Bearer {KEY}"))
    assert isinstance(error, EmbeddingUnavailableError)
    assert KEY not in str(error)
    assert isinstance(embedder._translate(ValueError("No embedding data received")), EmbeddingError)


# --------------------------------------------------------------------------- event loops


def test_one_client_per_loop_and_reuse_within_a_loop(fake: FakeOpenAIServer) -> None:
    embedder = make(fake)

    async def twice() -> tuple[object, object]:
        await embedder.embed(["a"])
        first = embedder._client
        await embedder.embed(["b"])
        return first, embedder._client

    first, second = run(embedder, twice)
    assert first is second
    assert embedder._client is None  # closed by `async with`
    embed(embedder, ["c"])  # a new loop: a new client


# --------------------------------------------------------------------------- the fake itself


def post(fake: FakeOpenAIServer, body: Any, key: str | None = KEY) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{fake.base_url}/embeddings", json=body, headers=headers, timeout=10)


def test_fake_response_shape(fake: FakeOpenAIServer) -> None:
    reply = post(
        fake, {"model": "text-embedding-3-small", "input": ["a", "b"], "encoding_format": "float"}
    )
    assert reply.status_code == 200
    body = reply.json()
    assert body["object"] == "list"
    assert body["model"] == "text-embedding-3-small"
    assert [d["index"] for d in body["data"]] == [0, 1]
    assert all(d["object"] == "embedding" and len(d["embedding"]) == 1536 for d in body["data"])
    assert body["usage"] == {"prompt_tokens": 2, "total_tokens": 2}
    assert reply.headers["x-request-id"].startswith("req_")


def test_fake_accepts_a_string_and_token_arrays(fake: FakeOpenAIServer) -> None:
    assert len(post(fake, {"model": "text-embedding-3-small", "input": "one"}).json()["data"]) == 1
    tokens = post(fake, {"model": "text-embedding-3-small", "input": [[1, 2], [3]]})
    assert len(tokens.json()["data"]) == 2


def test_fake_rejects_more_than_2048_inputs(fake: FakeOpenAIServer) -> None:
    reply = post(fake, {"model": "text-embedding-3-small", "input": ["a"] * 2049})
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert "'$.input' is invalid" in reply.json()["error"]["message"]
    assert post(fake, {"model": "text-embedding-3-small", "input": ["a"] * 2048}).status_code == 200


def test_fake_rejects_a_request_over_300k_tokens(fake: FakeOpenAIServer) -> None:
    reply = post(fake, {"model": "text-embedding-3-small", "input": ["w " * 8000] * 40})
    assert reply.status_code == 400
    assert reply.json()["error"]["code"] == "max_tokens_per_request"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"input": ["a"]}, 400),
        ({"model": "text-embedding-3-small", "input": []}, 400),
        ({"model": "text-embedding-3-small", "input": [""]}, 400),
        ({"model": "text-embedding-3-small", "input": [1.5]}, 400),
        ({"model": "text-embedding-3-small", "input": ["a"], "encoding_format": "hex"}, 400),
        ({"model": "text-embedding-3-small", "input": ["a"], "dimensions": 0}, 400),
        ({"model": "text-embedding-ada-002", "input": ["a"], "dimensions": 8}, 400),
        ({"model": "gpt-nothing", "input": ["a"]}, 404),
    ],
)
def test_fake_validates_like_openai(fake: FakeOpenAIServer, body: Any, status: int) -> None:
    reply = post(fake, body)
    assert reply.status_code == status
    assert set(reply.json()["error"]) == {"message", "type", "param", "code"}


def test_fake_checks_the_bearer_key_and_masks_it(fake: FakeOpenAIServer) -> None:
    missing = post(fake, {"model": "text-embedding-3-small", "input": ["a"]}, key=None)
    assert missing.status_code == 401
    wrong = post(fake, {"model": "text-embedding-3-small", "input": ["a"]}, key=WRONG)
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    assert WRONG not in wrong.text
    assert [e["authorized"] for e in fake.log] == [False, False]


def test_fake_faults_are_consumed_in_order(fake: FakeOpenAIServer) -> None:
    fake.faults.sequence(["503", "429"])
    assert fake.faults.pending == 2
    statuses = [
        post(fake, {"model": "text-embedding-3-small", "input": ["a"]}).status_code
        for _ in range(3)
    ]
    assert statuses == [503, 429, 200]
    assert [e["fault"] for e in fake.log] == ["503", "429", None]
    with pytest.raises(ValueError, match="unknown fault kind"):
        fake.faults.next(1, "418")  # type: ignore[arg-type]
