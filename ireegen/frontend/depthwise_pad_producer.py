"""onnx_speed_rewrites' `depthwise-pad-in-producer`: the zero border a
channels-last depthwise Conv pads its input with, computed by the pointwise
MatMul that produces that input instead of copied around it.

In a depthwise-separable CNN (nhwc_layout.py's form) each depthwise Conv's
input is a pointwise expansion, [N*H*W, C] pixels times [C, M] weights with
M several times C, then an activation, then a Pad of H and W.  IREE 3.13
fills the padded [N, H', W', M] buffer and copies the interior into it: two
passes over the largest tensors of the network (MobileNetV2: 13% of its
time at IREE's default flags, docs/peers.md).  Here the Pad moves to the
expansion's input instead, M / C times fewer floats: the MatMul runs over
the H' x W' padded pixels, the activation follows, and one Mul by a
constant [1, H', W', 1] mask (1 inside, 0 on the border) zeroes what the
bias and the activation made of the border, which IREE fuses into the
producer's or the consumer's dispatch.

The form matched, rooted at the Pad (every value in it used once, none a
graph output):

    rows = Reshape(x, [N*H*W, C])             x: [N, H, W, C]
    y = MatMul(rows, W) [+ B]                  W: constant [C, M], M > C
    z = Reshape(y, [N, H, W, M])
    z = op(z [, constants])  ...               MASKABLE, per channel or scalar
    Pad(z, [0, t, l, 0, 0, b, r, 0])           constant zeros

It applies where the padded grid has at most MAX_BORDER more pixels than
the unpadded one (the MatMul's extra rows cost more than the copy saves on
small maps).  The border's values are finite before the mask (MASKABLE's
ops map finite values to finite ones), so the mask makes them exactly zero.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, known_arrays, node_reads

MAX_BORDER = 0.35  # extra pixels of the padded grid, over the unpadded ones
ROW_TILE = 8  # IREE 3.13 tiles a matmul's rows by 8 on x86 when their count allows, else by less
# Elementwise ops whose result on finite operands is finite.
MASKABLE = frozenset(
    "Add Clip HardSigmoid HardSwish Identity LeakyRelu Max Min Mul Neg PRelu Relu Sigmoid Sub Tanh".split()
)


def depthwise_pad_in_producer(model, shapes: dict, values: dict) -> int:
    """Moves each matched Pad onto its producing expansion's input; returns how many."""
    graph = model.graph
    known = known_arrays(graph, values)
    producer = {o: node for node in graph.node for o in node.output}
    for node in graph.node:  # exporters share one constant among Convs through Identity nodes
        if node.op_type == "Identity" and node.input[0] in known:
            known[node.output[0]] = known[node.input[0]]
    consumers: dict = {}
    for node in graph.node:
        for i in node_reads(node):
            consumers.setdefault(i, []).append(node)
    for output in graph.output:
        consumers.setdefault(output.name, []).append(None)  # a graph output: a reader outside
    matches = [m for node in graph.node if (m := _match(node, producer, consumers, known, shapes))]
    if not matches:
        return 0
    rewritten, inserted = {}, {}  # node id -> replacement node; node id -> nodes to put before it
    for pad, chain, rows_reshape, out_reshape, grid in matches:
        _rewrite(graph, known, pad, chain, rows_reshape, out_reshape, grid, rewritten, inserted)
    nodes = []
    for node in graph.node:
        nodes.extend(inserted.get(id(node), []))
        replacement = rewritten.get(id(node), node)
        if replacement is not None:
            nodes.append(replacement)
    del graph.node[:]
    graph.node.extend(nodes)
    changed = {o for m in matches for n in (m[0], *m[1], m[3]) for o in n.output}
    kept = [v for v in graph.value_info if v.name not in changed]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    return len(matches)


def _array(known: dict, name: str):
    from onnx import numpy_helper

    return numpy_helper.to_array(known[name]) if name in known else None


def _match(pad, producer: dict, consumers: dict, known: dict, shapes: dict):
    """(pad, chain, rows Reshape, output Reshape, (N, H, W, C, M, top, left, bottom, right))
    when `pad` roots the form of the module docstring, else None."""
    if pad.op_type != "Pad" or pad.domain not in ("", "ai.onnx") or len(pad.input) != 2:
        return None
    if any(a.name == "mode" and a.s not in (b"constant", b"") for a in pad.attribute):
        return None
    pads = _array(known, pad.input[1])
    dims = shapes.get(pad.input[0])
    if pads is None or pads.shape != (8,) or not dims or len(dims) != 4:
        return None
    if pads.min() < 0 or pads[[0, 3, 4, 7]].any() or not pads.any():
        return None
    uses = {name: len(readers) for name, readers in consumers.items()}
    chain, value = [], pad.input[0]
    while True:
        node = producer.get(value)
        if node is None or uses.get(value) != 1 or node.domain not in ("", "ai.onnx"):
            return None
        if node.op_type == "Reshape":
            break
        computed = [i for i in node.input if i and i not in known]
        if node.op_type not in MASKABLE or len(node.output) != 1 or computed != [node.input[0]]:
            return None
        for c in node.input[1:]:
            array = _array(known, c) if c else None
            if (
                array is not None
                and array.ndim >= 2
                and array.size > 1
                and array.shape[-3:-1] != (1, 1)[: array.ndim - 1]
            ):
                return None  # varies over H or W: its border would be the grid's
        chain.insert(0, node)
        value = node.input[0]
    out_reshape = node
    n, h, w, m = dims
    if shapes.get(out_reshape.input[0]) != [n * h * w, m]:
        return None
    node = producer.get(out_reshape.input[0])
    if node is not None and node.op_type == "Add" and uses.get(node.output[0]) == 1:
        bias = _array(known, node.input[1])
        if bias is None or bias.size not in (1, m) or bias.ndim > 2 or (bias.ndim == 2 and bias.shape[0] != 1):
            return None
        chain_head = [node]
        node = producer.get(node.input[0])
        value = chain_head[0].input[0]
    else:
        chain_head, value = [], out_reshape.input[0]
    if node is None or node.op_type != "MatMul" or uses.get(value) != 1:
        return None
    weights = _array(known, node.input[1])
    rows = node.input[0]
    rows_reshape = producer.get(rows)
    if weights is None or weights.dtype != np.float32 or weights.ndim != 2 or weights.shape[1] != m:
        return None  # the mask is float32
    if uses.get(rows) != 1:
        return None
    c = weights.shape[0]
    if c >= m or rows_reshape is None or rows_reshape.op_type != "Reshape":
        return None
    if shapes.get(rows_reshape.input[0]) != [n, h, w, c]:
        return None
    top, left, bottom, right = (int(p) for p in pads[[1, 2, 5, 6]])
    hp, wp = h + top + bottom, w + left + right
    if hp * wp > (1 + MAX_BORDER) * h * w:
        return None
    extra = next(e for e in range(ROW_TILE) if n * (hp + e) * wp % ROW_TILE == 0)
    if extra and not all(_reads_rows(s, hp, known) for s in consumers.get(pad.output[0], [])):
        return None  # extra rows only where every reader takes the grid's first rows
    return pad, [*chain_head, node, *chain], rows_reshape, out_reshape, (n, h, w, c, m, top, left, bottom, right, extra)


def _reads_rows(node, rows: int, known: dict) -> bool:
    """Whether `node` is a Slice of constant starts and ends over axes 1 and 2
    that reads nothing past row `rows` of an NHWC grid."""
    if node is None or node.op_type != "Slice" or len(node.input) < 4:
        return False
    starts, ends, axes = (_array(known, i) for i in node.input[1:4])
    if starts is None or ends is None or axes is None or list(axes) not in ([1, 2], [2, 1]):
        return False
    row = list(axes).index(1)
    return 0 <= starts[row] and 0 <= ends[row] <= rows  # a negative end would count from the new last row


def _rewrite(graph, known, pad, chain, rows_reshape, out_reshape, grid, rewritten: dict, inserted: dict) -> None:
    """Pads the expansion's input, reshapes over the padded grid, masks the border."""

    n, h, w, c, m, top, left, bottom, right, extra = grid
    hp, wp = h + top + bottom, w + left + right
    made = []
    b = NodeBuilder(graph, made, f"{pad.output[0]}/ireegen.pad_in_producer")
    below = bottom + extra
    pads = np.array([0, top, left, 0, 0, below, right, 0], np.int64)
    padded = b.op("Pad", rows_reshape.input[0], b.const("pads", pads))
    rows_shape = b.const("rows_shape", np.array([n * (hp + extra) * wp, c], np.int64))
    b.op("Reshape", padded, rows_shape, out=rows_reshape.output[0], name=rows_reshape.name)
    inserted[id(rows_reshape)] = made[:-1]
    rewritten[id(rows_reshape)] = made[-1]
    grid_shape = b.const("grid_shape", np.array([n, hp + extra, wp, m], np.int64))
    b.op("Reshape", out_reshape.input[0], grid_shape, out=out_reshape.output[0], name=out_reshape.name)
    rewritten[id(out_reshape)] = made[-1]
    mask = np.zeros((1, hp + extra, wp, 1), np.float32)
    mask[:, top : top + h, left : left + w] = 1
    b.op("Mul", pad.input[0], b.const("border_mask", mask), out=pad.output[0], name=pad.name)
    rewritten[id(pad)] = made[-1]
