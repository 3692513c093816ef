"""Graph rewrites for speed: ONNX patterns that IREE 3.13 compiles into slow
code, replaced by an equivalent form it compiles well.  Rows of
onnx_nodes.Rewrite (name, roots, function) as onnx_rewrites.REWRITES,
applied after it by onnx_rewrites.apply_rewrites and listed in
the manifest's `onnx_rewrites` alike; emit's verification checks the result,
and tests/test_onnx_speed_rewrites.py checks each against ONNX Runtime on the
model as written.  Each entry is here because it measured faster on every
model it matched (docs/peers.md, "Real models").
"""

from __future__ import annotations

import numpy as np

from . import depthwise_taps, rnn_steps
from .conv_im2col import conv_as_im2col_matmul
from .conv_pointwise_matmul import pointwise_conv_as_matmul
from .conv_transpose_matmul import conv_transpose_as_matmul
from .depthwise_pad_producer import depthwise_pad_in_producer
from .depthwise_taps import MAX_TAPS
from .nhwc_layout import depthwise_separable_as_nhwc
from .onnx_attention_rewrites import matmul_rows_padded, softmax_as_lane_reductions
from .onnx_nodes import NodeBuilder, Rewrite, known_arrays, node_attrs, rewrite_nodes, static_conv2d
from .onnx_rnn_rewrites import RNN_OPS, iree_lowered_form
from .onnx_rnn_unroll import UnrollBuilder
from .resize_matmul import linear_resize_as_matmuls


def depthwise_conv_as_taps(model, shapes: dict, values: dict) -> int:
    """A depthwise Conv (`group` = input channels = output channels, weights
    [C, 1, kh, kw], the 3x3 of MobileNet's inverted residual blocks): IREE
    3.13 compiles it at a tenth of the speed of its matrix products.
    Rewritten as what it computes: kh x kw shifted Slices of the (padded)
    input, each times its tap's per-channel weight, summed with the bias;
    IREE fuses that into one vectorized elementwise dispatch.  Strided ones
    (stride s) first split the padded input into its s x s stride phases (a
    Reshape and one Transpose), so that every tap is a contiguous slice of
    one phase (depthwise_taps.py).  Figures: docs/peers.md, "Real models"."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        conv = static_conv2d(node, "Conv", known, shapes)
        a, dims, out_dims, weights = conv or ({}, None, None, None)
        x = node.input[0] if node.input else ""
        if (
            conv is None
            or dims[1] < 2  # one channel: an ordinary Conv
            or weights.shape[:2] != (dims[1], 1)
            or a.get("group", 1) != dims[1]
            or out_dims[1] != dims[1]
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
            or int(np.prod(weights.shape[2:])) > MAX_TAPS
            or not depthwise_taps.supported(a)
        ):
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'depthwise'}/ireegen.taps")
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        depthwise_taps.build(b, x, weights, bias, a, dims, out_dims, node.output[0], node.name)
        return True

    return rewrite_nodes(graph, rewrite)


def grouped_conv_as_batched_matmul(model, shapes: dict, values: dict) -> int:
    """A grouped Conv (1 < `group` < input channels, the 3x3 of RegNet's
    and ResNeXt's blocks, group width 8 and up): IREE 3.13 compiles it at a
    sixth of ONNX Runtime's speed with every flag set tried (docs/peers.md,
    "Grouped convolutions").  Rewritten as per-group im2col and one batched
    MatMul: the kh x kw shifted windows of the (padded) input
    (depthwise_taps.windows, which also takes strides and dilations),
    stacked after each channel to [N, G, Cg*kh*kw, Ho*Wo], times the
    weights as [G, Mg, Cg*kh*kw], plus the bias."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        conv = static_conv2d(node, "Conv", known, shapes)
        a, dims, out_dims, weights = conv or ({}, None, None, None)
        groups = a.get("group", 1)
        if (
            conv is None
            or not 1 < groups < dims[1]
            or dims[1] % groups
            or weights.shape[0] % groups
            or weights.shape[1] != dims[1] // groups
            or out_dims[1] != weights.shape[0]
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
            or int(np.prod(weights.shape[2:])) > MAX_TAPS
            or not depthwise_taps.supported(a)
        ):
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'grouped'}/ireegen.grouped")
        n, ho, wo = out_dims[0], out_dims[2], out_dims[3]
        per_group, taps = dims[1] // groups, int(np.prod(weights.shape[2:]))
        shifted, rank = depthwise_taps.windows(b, node.input[0], dims, weights.shape[2:], a, out_dims[2:])
        axis = b.const("tap_axis", np.array([2], np.int64))
        stacked = b.op("Concat", *(b.op("Unsqueeze", v, axis) for v in shifted), axis=2)
        cols = b.op("Reshape", stacked, b.const("cols", np.array([n, groups, per_group * taps, ho * wo], np.int64)))
        w = weights.reshape(groups, weights.shape[0] // groups, per_group * taps)
        product = b.op("MatMul", b.const("w", np.ascontiguousarray(w)), cols)
        out = node.output[0]
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        shaped = b.op(
            "Reshape", product, b.const("out_shape", np.array(out_dims, np.int64)), **({} if bias else {"out": out})
        )
        if bias:
            tap_shape = b.const("bias_shape", np.array([1, out_dims[1], 1, 1], np.int64))
            b.op("Add", shaped, b.op("Reshape", bias, tap_shape), out=out, name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)


def rnn_steps_unrolled(model, shapes: dict, values: dict) -> int:
    """A GRU, LSTM or RNN node in the form IREE lowers itself (after
    onnx_rewrites' rnn-directions-as-forward: forward, sequence-major),
    with constant weights and a static sequence of at most
    rnn_steps.MAX_STEPS steps: IREE 3.13 runs it as a loop of one command
    buffer per step, whose submissions cost more than the step's arithmetic
    in async.  Rewritten as its steps in plain ops, the input projection of
    all steps hoisted into one MatMul (rnn_steps.py).  Figures:
    docs/peers.md, "Recurrent layers"."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        if node.op_type not in RNN_OPS or node.domain not in ("", "ai.onnx") or not iree_lowered_form(node):
            return False
        dims = shapes.get(node.input[0]) if node.input else None
        if not dims or len(dims) != 3 or not all(isinstance(d, int) and d > 0 for d in dims):
            return False
        found = rnn_steps.weights(node, known)
        attrs = node_attrs(node)
        if dims[0] > rnn_steps.MAX_STEPS or found is None or dims[2] != found[0].shape[1]:
            return False
        if attrs.get("hidden_size", found[1].shape[1]) != found[1].shape[1]:
            return False
        # UnrollBuilder: names from a set, not a scan of the graph per value.
        b = UnrollBuilder(graph, out_nodes, f"{node.name or node.op_type.lower()}/ireegen.steps")
        rnn_steps.build(b, node, attrs, *found, dims)
        return True

    return rewrite_nodes(graph, rewrite)


# matmul-columns-padded: the column multiple of the padded product (16
# float32 lanes: AVX-512's vector; a multiple of AVX2's 8 and NEON's 4), and
# the fewest columns it pads (below them, padding adds more than a quarter).
COLUMN_MULTIPLE = 16
MIN_PADDED_COLUMNS = 64


def matmul_columns_padded(model, shapes: dict, values: dict) -> int:
    """A MatMul of two computed operands (attention's scores, Q x K^T,
    [.., L, d] x [.., d, L]) whose column count N (the sequence length) is
    not a multiple of COLUMN_MULTIPLE: IREE 3.13's default matmul codegen
    runs it several times slower than with N rounded up (ViT's 197 tokens:
    11.2 ms for 3 x 197 x 197 x 64, 1.4 ms at 208).  Rewritten as the MatMul
    of B padded with zero columns to the next multiple, then a Slice back
    to N: the added columns are products with zeros, sliced off, so the
    numbers are the MatMul's.  A product with a constant operand is left
    alone (a layer's weights, and the MatMuls of the convolution rewrites
    above; data tiling packs those), as are products of fewer than
    MIN_PADDED_COLUMNS columns.  Figures: docs/peers.md,
    "Transformers"."""
    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx") or len(node.input) != 2:
            return False
        a, b_in = node.input
        dims_a, dims_b, dims_y = shapes.get(a), shapes.get(b_in), shapes.get(node.output[0])
        if a in known or b_in in known or not dims_a or not dims_b or not dims_y or len(dims_b) < 2:
            return False
        if None in dims_a or None in dims_b or None in dims_y:
            return False
        n = dims_b[-1]
        if n < MIN_PADDED_COLUMNS or n % COLUMN_MULTIPLE == 0:
            return False
        pads = np.zeros(2 * len(dims_b), np.int64)
        pads[-1] = -n % COLUMN_MULTIPLE
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'matmul'}/ireegen.padded")
        padded = b.op("Pad", b_in, b.const("pads", pads))
        product = b.op("MatMul", a, padded)
        last = b.const("axis", np.array([-1], np.int64))
        b.op(
            "Slice",
            product,
            b.const("starts", np.array([0], np.int64)),
            b.const("ends", np.array([n], np.int64)),
            last,
            out=node.output[0],
            name=node.name,
        )
        return True

    return rewrite_nodes(graph, rewrite)


SPEED_REWRITES = (
    Rewrite("depthwise-conv-as-taps", ("Conv",), depthwise_conv_as_taps),
    Rewrite("grouped-conv-as-batched-matmul", ("Conv",), grouped_conv_as_batched_matmul),
    Rewrite("conv-as-im2col-matmul", ("Conv",), conv_as_im2col_matmul),
    Rewrite("conv-transpose-as-matmul", ("ConvTranspose",), conv_transpose_as_matmul),
    Rewrite("rnn-steps-unrolled", RNN_OPS, rnn_steps_unrolled),
    Rewrite("matmul-columns-padded", ("MatMul",), matmul_columns_padded),
    Rewrite("pointwise-conv-as-matmul", ("Conv",), pointwise_conv_as_matmul),
    Rewrite("linear-resize-as-matmuls", ("Resize",), linear_resize_as_matmuls),
    Rewrite("softmax-as-lane-reductions", ("Softmax",), softmax_as_lane_reductions),
    Rewrite("matmul-rows-padded", ("MatMul",), matmul_rows_padded),
)

# Applied before the strided-depthwise decimation and SPEED_REWRITES: on a
# depthwise-separable CNN it takes every Conv (nhwc_layout.py).
LAYOUT_REWRITES = (
    Rewrite("depthwise-separable-as-nhwc", ("Conv",), depthwise_separable_as_nhwc),
    Rewrite("depthwise-pad-in-producer", ("Pad",), depthwise_pad_in_producer),
)
