"""The fake OpenAI embeddings API refuses what OpenAI refuses, in OpenAI's words, served
in-process (no port)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from biomcp.testing.openai_server import FakeOpenAIState, create_app

pytestmark = pytest.mark.unit

KEY = "sk-unit-0123456789"


def _post(
    body: dict[str, Any], *, key: str | None = KEY, max_input_tokens: int = 8192
) -> httpx.Response:
    state = FakeOpenAIState(KEY, max_input_tokens=max_input_tokens)
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}

    async def scenario() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(state))
        async with httpx.AsyncClient(transport=transport, base_url="http://fake") as http:
            return await http.post("/v1/embeddings", json=body, headers=headers)

    return asyncio.run(scenario())


def test_a_missing_or_wrong_key_is_a_401_that_masks_the_key() -> None:
    body = {"model": "text-embedding-3-small", "input": "x"}
    assert _post(body, key=None).status_code == 401
    wrong = _post(body, key="sk-wrong-key-000000")
    assert wrong.status_code == 401
    assert wrong.json()["error"]["code"] == "invalid_api_key"
    assert "sk-wrong-key-000000" not in wrong.text


def test_a_missing_or_unknown_model_is_refused() -> None:
    assert _post({"input": "x"}).status_code == 400
    unknown = _post({"model": "no-such-model", "input": "x"})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(
    ("model", "dimensions", "message"),
    [
        ("text-embedding-ada-002", 256, "does not support specifying dimensions"),
        ("text-embedding-3-small", 0, "less than the minimum of 1"),
        ("text-embedding-3-small", True, "less than the minimum of 1"),
        ("text-embedding-3-small", 1537, "maximum embedding dimension is 1536"),
    ],
)
def test_dimensions_the_model_cannot_give_are_refused(
    model: str, dimensions: object, message: str
) -> None:
    reply = _post({"model": model, "input": "x", "dimensions": dimensions})
    assert reply.status_code == 400
    assert message in reply.json()["error"]["message"]


def test_dimensions_shorten_the_vectors_of_a_text_embedding_3_model() -> None:
    reply = _post({"model": "text-embedding-3-large", "input": ["a", "b"], "dimensions": 64})
    assert reply.status_code == 200
    assert [len(d["embedding"]) for d in reply.json()["data"]] == [64, 64]


def test_an_input_over_the_token_limit_is_refused_and_the_usage_counts_tokens() -> None:
    body = {"model": "text-embedding-3-small", "input": ["one two three", "four, five"]}
    assert _post(body, max_input_tokens=2).status_code == 400
    assert _post(body).json()["usage"] == {"prompt_tokens": 6, "total_tokens": 6}


def test_an_unknown_encoding_format_is_refused() -> None:
    reply = _post({"model": "text-embedding-3-small", "input": "x", "encoding_format": "hex"})
    assert reply.status_code == 400
    assert reply.json()["error"]["param"] == "encoding_format"
