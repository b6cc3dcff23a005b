"""Rewrite the exported all-MiniLM-L6-v2 graph into ONNX Runtime's fused BERT operators.

The int8 export the default embedder runs (`onnx.py`) is a PyTorch dynamo export: each
layer's attention is some twenty small nodes (three projections, reshapes, transposes, a
scaled `MatMul`, the mask, `Softmax`, an `IsNaN` / `Where` guard against rows with every key
masked, the value `MatMul`), and each GELU is five element-wise nodes. ONNX Runtime's own
graph optimizer fuses neither pattern, so the CPU runs them one by one. This module replaces,
in memory, before the session is created:

* each layer's attention by one `com.microsoft.Attention` node: the query, key and value
  weights concatenated into one `[hidden, 3 * hidden]` projection (a `Concat` of the three
  dequantized initializers, which ONNX Runtime folds at load), the attention mask as int32
  key padding;
* each `Add(bias) -> Div(sqrt 2) -> Erf -> Add 1 -> Mul 0.5 -> Mul x` by one
  `com.microsoft.BiasGelu`.

Nothing else changes (the weights are the file's own, dequantized by the file's own nodes), so
the vectors of real tokens are the same to float rounding (cosine > 0.99999 to the unfused
graph; tested). The `IsNaN` guard goes with the attention: it only matters for a row whose
every key is masked, and every input here keeps at least its `[CLS]` token.

`int8_compute` then rewrites the fused graph once more, for int8 compute on the file's own int8
weights (see there).

A pattern that does not match exactly raises `FusionError`: the caller then runs the graph as
exported. The rewrite needs the `onnx` package (the protobuf model); its cost at load is a few
tens of milliseconds. Speed figures: benchmarks/README.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["FusionError", "FusionReport", "fuse_bert", "fused_model_bytes"]

_MS = "com.microsoft"


class FusionError(ValueError):
    """The graph does not have the shape this rewrite expects; it is left as it was."""


@dataclass(frozen=True)
class FusionReport:
    attention: int
    gelu: int
    nodes_before: int
    nodes_after: int


class _Graph:
    """Producer / consumer lookups over a graph's nodes."""

    def __init__(self, graph: Any) -> None:
        self.initializers = {init.name: init for init in graph.initializer}
        self.added_initializers: list[Any] = []
        self.producer: dict[str, Any] = {}
        self.consumers: dict[str, list[Any]] = {}
        for node in graph.node:
            for name in node.output:
                self.producer[name] = node
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)

    def add(self, *initializers: Any) -> None:
        self.added_initializers.extend(initializers)
        self.initializers.update((init.name, init) for init in initializers)

    def made_by(self, name: str, op: str) -> Any:
        node = self.producer.get(name)
        if node is None or node.op_type != op:
            found = "an input or initializer" if node is None else node.op_type
            raise FusionError(f"expected {op} to produce {name!r}, found {found}")
        return node

    def only_consumer(self, name: str, op: str) -> Any:
        found = [n for n in self.consumers.get(name, []) if n.op_type == op]
        if len(found) != 1:
            raise FusionError(f"expected one {op} to read {name!r}, found {len(found)}")
        return found[0]

    def constant(self, name: str) -> bool:
        """An initializer, or a node computed from initializers alone (a dequantized weight)."""
        if name in self.initializers:
            return True
        node = self.producer.get(name)
        return node is not None and all(self.constant(i) for i in node.input if i)

    def scalar(self, name: str) -> float | None:
        if name not in self.initializers:
            return None
        from onnx import numpy_helper

        value = numpy_helper.to_array(self.initializers[name])
        return float(value) if value.size == 1 else None


def _projection(g: _Graph, heads_view: str) -> tuple[str, str, str]:
    """(hidden input, weight, bias) of `Transpose(Reshape(Add(MatMul(h, W), b)))`."""
    transpose = g.made_by(heads_view, "Transpose")
    reshape = g.made_by(transpose.input[0], "Reshape")
    add = g.made_by(reshape.input[0], "Add")
    matmul = g.made_by(add.input[0], "MatMul")
    if not (g.constant(matmul.input[1]) and g.constant(add.input[1])):
        raise FusionError(f"the projection behind {heads_view!r} has non-constant weights")
    return matmul.input[0], matmul.input[1], add.input[1]


def _attention(g: _Graph, softmax: Any, index: int, heads: int) -> tuple[list[Any], str, str]:
    """The fused nodes for the attention around `softmax`, and the output they replace."""
    probs = softmax.output[0]
    readers = g.consumers.get(probs, [])
    guard = [n for n in readers if n.op_type == "Where"]
    if guard:  # Where(IsNaN(p), 0, p): dropped with the rest
        probs = guard[0].output[0]
    weighted = g.only_consumer(probs, "MatMul")
    merge = g.only_consumer(weighted.output[0], "Transpose")
    out = g.only_consumer(merge.output[0], "Reshape").output[0]
    hidden_v, w_v, b_v = _projection(g, weighted.input[1])
    scores = g.made_by(softmax.input[0], "Add")
    qk = g.made_by(scores.input[0], "MatMul")
    hidden_q, w_q, b_q = _projection(g, g.made_by(qk.input[0], "Mul").input[0])
    # keys: Mul(Reshape(Transpose(Reshape(heads_view))), scale)
    key_scale = g.made_by(qk.input[1], "Mul")
    key_t = g.made_by(g.made_by(key_scale.input[0], "Reshape").input[0], "Transpose")
    hidden_k, w_k, b_k = _projection(g, g.made_by(key_t.input[0], "Reshape").input[0])
    if not hidden_q == hidden_k == hidden_v:
        raise FusionError(f"attention {index}: query, key and value read different inputs")
    from onnx import helper

    weight, bias, fused = f"fused_qkv_weight_{index}", f"fused_qkv_bias_{index}", f"{out}_fused"
    nodes = [
        helper.make_node("Concat", [w_q, w_k, w_v], [weight], axis=1, name=weight),
        helper.make_node("Concat", [b_q, b_k, b_v], [bias], axis=0, name=bias),
        helper.make_node(
            "Attention",
            [hidden_q, weight, bias, "fused_key_padding"],
            [fused],
            domain=_MS,
            num_heads=heads,
            name=f"fused_attention_{index}",
        ),
    ]
    return nodes, out, fused


def _gelu(g: _Graph, erf: Any, index: int) -> tuple[list[Any], str, str]:
    """`BiasGelu(MatMul, b)` for `x = MatMul + b; x * 0.5 * (1 + erf(x / sqrt 2))`."""
    div = g.made_by(erf.input[0], "Div")
    divisor = g.scalar(div.input[1])
    if divisor is None or abs(divisor - 2**0.5) > 1e-6:
        raise FusionError(f"GELU {index}: erf's argument is not x / sqrt(2)")
    biased = g.made_by(div.input[0], "Add")
    if not g.constant(biased.input[1]) or biased.input[0] not in g.producer:
        raise FusionError(f"GELU {index}: no constant bias before it")
    plus_one = g.only_consumer(erf.output[0], "Add")
    half = g.only_consumer(plus_one.output[0], "Mul")
    times_x = g.only_consumer(half.output[0], "Mul")
    if biased.output[0] not in times_x.input:
        raise FusionError(f"GELU {index}: the last product is not by x")
    from onnx import helper

    fused = f"fused_gelu_{index}"
    node = helper.make_node(
        "BiasGelu", [biased.input[0], biased.input[1]], [fused], domain=_MS, name=fused
    )
    return [node], times_x.output[0], fused


def _topological(nodes: Iterable[Any], available: set[str]) -> list[Any]:
    ordered: list[Any] = []
    pending = list(nodes)
    while pending:
        waiting = []
        for node in pending:
            if all(not name or name in available for name in node.input):
                ordered.append(node)
                available.update(node.output)
            else:
                waiting.append(node)
        if len(waiting) == len(pending):
            raise FusionError("the rewritten graph has a cycle or a missing input")
        pending = waiting
    return ordered


def fused_model_bytes(raw: bytes, *, heads: int = 12) -> tuple[bytes, FusionReport]:
    """The serialized model `raw`, rewritten (see the module docstring).

    Raises:
        FusionError: a pattern did not match (`raw` is untouched: run it as it is).
        ImportError: the `onnx` package is not installed.
    """
    import onnx

    try:
        model = onnx.load_model_from_string(raw)
    except Exception as exc:  # protobuf's DecodeError (its stubs are not installed)
        raise FusionError(f"not an ONNX model: {exc}") from exc
    report = fuse_bert(model, heads=heads)
    return model.SerializeToString(), report


def fuse_bert(model: Any, *, heads: int = 12, mask_input: str = "attention_mask") -> FusionReport:
    """Rewrite `model` (an `onnx.ModelProto`) in place; see the module docstring.

    Raises:
        FusionError: a pattern did not match; the model may then be half rewritten, so run a
            fresh copy of it (`fused_model_bytes` does).
    """
    from onnx import TensorProto, helper

    graph = model.graph
    g = _Graph(graph)
    before = len(graph.node)
    if mask_input not in {i.name for i in graph.input}:
        raise FusionError(f"the model has no {mask_input!r} input")
    added: list[Any] = [
        helper.make_node(
            "Cast", [mask_input], ["fused_key_padding"], to=TensorProto.INT32, name="fused_mask"
        )
    ]
    renamed: dict[str, str] = {}
    softmaxes = [n for n in graph.node if n.op_type == "Softmax"]
    erfs = [n for n in graph.node if n.op_type == "Erf"]
    for index, softmax in enumerate(softmaxes):
        nodes, old, new = _attention(g, softmax, index, heads)
        added += nodes
        renamed[old] = new
    for index, erf in enumerate(erfs):
        nodes, old, new = _gelu(g, erf, index)
        added += nodes
        renamed[old] = new
    if not softmaxes:
        raise FusionError("no attention found")
    _replace(model, g, added, renamed)
    return FusionReport(len(softmaxes), len(erfs), before, len(model.graph.node))


def _replace(model: Any, g: _Graph, added: list[Any], renamed: dict[str, str]) -> None:
    """Add `added` to the graph, read `renamed`'s new names instead of the old ones, keep only
    what the outputs need, in a topological order, and declare the com.microsoft opset."""
    from onnx import helper

    graph = model.graph
    everything = [*graph.node, *added]
    for node in everything:
        for position, name in enumerate(node.input):
            if name in renamed:
                node.input[position] = renamed[name]
    producer = {name: node for node in everything for name in node.output}
    wanted = [o.name for o in graph.output]
    seen: set[str] = set()
    kept: set[int] = set()
    while wanted:
        name = wanted.pop()
        if name in seen or name not in producer:
            continue
        seen.add(name)
        node = producer[name]
        kept.add(id(node))
        wanted.extend(i for i in node.input if i)
    initial = [*graph.initializer, *g.added_initializers]
    available = {i.name for i in graph.input} | {i.name for i in initial}
    ordered = _topological((n for n in everything if id(n) in kept), available)
    used = {name for node in ordered for name in node.input}
    initializers = [init for init in initial if init.name in used]
    del graph.node[:]
    graph.node.extend(ordered)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    if not any(op.domain == _MS for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid(_MS, 1))


# -- int8 compute --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Int8Report:
    matmuls: int
    attentions: int
    #: projections whose bias their int8 product adds (`_bias_into`)
    biases: int = 0


def _int8_weight(g: _Graph, name: str) -> tuple[Any, Any]:
    """(int8 weight [K, N], its per-column scales [N]) behind `Mul(Cast(q), scale)`: the file's
    own quantized weight, as it is stored."""
    from onnx import TensorProto, numpy_helper

    mul = g.made_by(name, "Mul")
    cast = g.made_by(mul.input[0], "Cast")
    weight = g.initializers.get(cast.input[0])
    scale = g.initializers.get(mul.input[1])
    if weight is None or scale is None or weight.data_type != TensorProto.INT8:
        raise FusionError(f"{name!r} is not an int8 initializer times its scales")
    q = numpy_helper.to_array(weight)
    s = numpy_helper.to_array(scale).astype("float32").reshape(-1)
    if q.ndim != 2 or s.size not in (1, q.shape[1]):
        raise FusionError(f"{name!r}: a weight of shape {q.shape} with {s.size} scales")
    if s.size == 1:
        s = s.repeat(q.shape[1])
    return q, s


def _weight_inputs(g: _Graph, stem: str, q: Any, s: Any, unsigned: bool) -> list[str]:
    """The initializers a quantized product reads its weight from: [weight, scales], or, for
    `unsigned`, [weight + 128 as uint8, scales, zero points of 128] (the same values)."""
    import numpy as np
    from onnx import numpy_helper

    if not unsigned:
        g.add(numpy_helper.from_array(q, f"{stem}_w"), numpy_helper.from_array(s, f"{stem}_s"))
        return [f"{stem}_w", f"{stem}_s"]
    g.add(
        numpy_helper.from_array((q.astype(np.int16) + 128).astype(np.uint8), f"{stem}_w"),
        numpy_helper.from_array(s, f"{stem}_s"),
        numpy_helper.from_array(np.full(q.shape[1], 128, dtype=np.uint8), f"{stem}_z"),
    )
    return [f"{stem}_w", f"{stem}_s", f"{stem}_z"]


def _bias_into(g: _Graph, product: str, out: str) -> tuple[list[str], str, list[Any]]:
    """How the constant bias added to `product` (a projection's output) moves into its
    `DynamicQuantizeMatMul` (whose output is `out`): (the bias input, [] for none; the name the
    nodes after it read in place of the old one; the nodes that replace the bias node, with the
    bias taken out). `Add(product, b)` is replaced by nothing, `BiasGelu(product, b)` by
    `Gelu(out)`; any other reader, or a product read twice, keeps its bias where it is."""
    from onnx import helper

    readers = g.consumers.get(product, [])
    if len(readers) != 1:
        return [], product, []
    reader = readers[0]
    if len(reader.input) != 2 or reader.input[0] != product or not g.constant(reader.input[1]):
        return [], product, []
    if reader.op_type == "Add" and reader.domain in ("", "ai.onnx"):
        return [reader.input[1]], reader.output[0], []
    if reader.op_type == "BiasGelu" and reader.domain == _MS:
        gelu = helper.make_node("Gelu", [out], [f"{out}_gelu"], domain=_MS, name=f"{out}_gelu")
        return [reader.input[1]], reader.output[0], [gelu]
    return [], product, []


def _int8_matmul(g: _Graph, node: Any, unsigned: bool) -> tuple[list[Any], str, str, int]:
    """`MatMul(x, Mul(Cast(q), s))` as a `DynamicQuantizeMatMul` that takes in the bias after
    it when it can: (the new nodes, the output the graph read, the output it reads instead,
    the number of biases taken in)."""
    from onnx import helper

    q, s = _int8_weight(g, node.input[1])
    stem = f"int8_{node.output[0]}"
    weight = _weight_inputs(g, stem, q, s, unsigned)
    bias, replaced, after = _bias_into(g, node.output[0], f"{stem}_out")
    if bias and len(weight) == 2:  # no zero point: the bias is still the fifth input
        weight.append("")
    matmul = helper.make_node(
        "DynamicQuantizeMatMul",
        [node.input[0], *weight, *bias],
        [f"{stem}_out"],
        domain=_MS,
        name=stem,
    )
    out = after[-1].output[0] if after else f"{stem}_out"
    return [matmul, *after], replaced, out, len(bias)


def _int8_attention(g: _Graph, node: Any, unsigned: bool) -> tuple[list[Any], str]:
    """`Attention(x, Concat(Mul(Cast(q_i), s_i)), b, mask)` as `DynamicQuantizeLinear(x)` then
    a `QAttention` over the three int8 weights side by side: (the new nodes, the output the
    graph reads in place of the attention's)."""
    import numpy as np
    from onnx import helper

    concat = g.made_by(node.input[1], "Concat")
    parts = [_int8_weight(g, name) for name in concat.input]
    q = np.concatenate([p[0] for p in parts], axis=1)
    s = np.concatenate([p[1] for p in parts])
    stem = f"int8_{node.output[0]}"
    weight = _weight_inputs(g, stem, q, s, unsigned)
    x = node.input[0]
    quantized = [f"{stem}_x", f"{stem}_x_scale", f"{stem}_x_zero"]
    nodes = [
        helper.make_node("DynamicQuantizeLinear", [x], quantized, name=f"{stem}_quantize"),
        helper.make_node(
            "QAttention",
            [
                quantized[0],
                weight[0],
                node.input[2],
                quantized[1],
                weight[1],
                node.input[3],
                quantized[2],
                *weight[2:],
            ],
            [f"{stem}_out"],
            domain=_MS,
            name=stem,
            **{a.name: helper.get_attribute_value(a) for a in node.attribute},
        ),
    ]
    return nodes, f"{stem}_out"


def int8_compute(model: Any, *, unsigned: bool = False) -> Int8Report:
    """Rewrite a fused model (`fuse_bert`) in place so that its projections compute in int8:

    * `MatMul(x, Mul(Cast(q), s))` -> `com.microsoft.DynamicQuantizeMatMul(x, q, s)`;
    * `Attention(x, Concat(Mul(Cast(q_i), s_i)), b, mask)` -> `DynamicQuantizeLinear(x)` ->
      `com.microsoft.QAttention` over the three int8 weights side by side.

    The weights are the file's own int8 values and per-column scales, unchanged; what is new is
    that each projection's input is quantized too (uint8, one scale per run, chosen from that
    run's values), so the products run on the CPU's int8 dot-product instructions. The vectors
    then depend, slightly, on the other texts of a run (the embedder runs texts of about one
    length together).

    `unsigned` stores each weight as its value + 128 in uint8, with zero points of 128: the same
    numbers, multiplied by ONNX Runtime's uint8 x uint8 kernels, which cannot saturate on a CPU
    without VNNI (where uint8 x int8 products are summed in saturating 16-bit lanes).

    A projection's bias goes into its `DynamicQuantizeMatMul` (`_bias_into`), which adds it as
    it scales the product's output: the `Add` of the bias, a pass over the projection's output,
    is gone, and a `BiasGelu` after it becomes a `Gelu`. The same fp32 additions in the same
    order, so the same vectors, bit for bit (tested); faster most on a CPU with AMX, where the
    int8 products are fast and the passes over the activations count (figures:
    benchmarks/README.md, "2026-11-28", batch sizes).

    Raises:
        FusionError: a projection is not of the expected form (run the fp32 graph instead).
    """
    graph = model.graph
    g = _Graph(graph)
    added: list[Any] = []
    renamed: dict[str, str] = {}
    matmuls = attentions = biases = 0
    for node in list(graph.node):
        if node.op_type == "MatMul" and g.constant(node.input[1]):
            nodes, replaced, out, bias = _int8_matmul(g, node, unsigned)
            added += nodes
            renamed[replaced] = out
            matmuls += 1
            biases += bias
        elif node.op_type == "Attention" and node.domain == _MS:
            nodes, out = _int8_attention(g, node, unsigned)
            added += nodes
            renamed[node.output[0]] = out
            attentions += 1
    if not matmuls or not attentions:
        raise FusionError("no int8 projection found (is the model fused?)")
    _replace(model, g, added, renamed)
    return Int8Report(matmuls, attentions, biases)
