"""1-D convolutions as matrix products: the speed rewrite for the audio and
sequence models' Conv1d (an STFT as a strided Conv, the encoders of speech
models), whose direct convolution IREE 3.13 compiles slowly at any size.  A
row of onnx_nodes.Rewrite (name, roots, function) as onnx_rewrites.REWRITES,
applied with the speed rewrites and listed in the manifest's
`onnx_rewrites`; emit's verification checks the
result, tests/test_onnx_conv1d_rewrites.py checks it against ONNX Runtime
on random shapes.  Figures: docs/peers.md, "Small models".
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, Rewrite, known_arrays, node_attrs, rewrite_nodes

# The gathered windows are Lout x Cin*K floats per batch item: K times the
# input at stride 1.  Past this many bytes, the copy would cost more memory
# than a convolution is worth (a 400-tap filter bank over a minute of audio).
MAX_COLUMN_BYTES = 16 << 20
# Output channels that are not a multiple of 4 are padded with zero weights
# to a multiple of PADDED_COLUMNS, and the padding sliced off: IREE 3.13
# tiles such a dimension badly, while padding one that is a multiple of 4
# lost as often as it won (docs/peers.md, "Small models").  Not below
# MIN_PADDED channels, where the zeros would cost more.
PADDED_COLUMNS = 16
MIN_PADDED = 32


def conv1d_as_matmul(model, shapes: dict, values: dict) -> int:
    """A Conv over one spatial axis (x [N, Cin, L], constant float weights
    [Cout, Cin, K], `group` 1, any stride, dilation and explicit pads) is a
    matrix product over its windows.  Rewritten as the zero Pad, a Gather of
    the windows with constant indices (window t, tap k reads t*stride +
    k*dilation), then positions x (Cin*K) times (Cin*K) x Cout, the bias,
    and a Transpose back to [N, Cout, Lout].  That order (output channels as
    the vector dimension) is the one that measured faster, and the product
    faster than the Conv on every shape measured (docs/peers.md, "Small
    models")."""
    from onnx import numpy_helper

    graph = model.graph
    known = known_arrays(graph, values)

    def rewrite(node, out_nodes) -> bool:
        form = _matched(node, shapes, known, numpy_helper) if node.op_type == "Conv" else None
        if form is None:
            return False
        weights, pads, stride, dilation, out_dims = form
        _rewrite(graph, out_nodes, node, weights, pads, stride, dilation, shapes[node.input[0]], out_dims)
        return True

    return rewrite_nodes(graph, rewrite)


def _matched(node, shapes: dict, known: dict, numpy_helper):
    """(weights, pads, stride, dilation, output dims) of a Conv this rewrite
    takes, else None."""
    if node.domain not in ("", "ai.onnx") or len(node.input) < 2 or len(node.output) != 1:
        return None
    a = node_attrs(node)
    x, w = node.input[0], node.input[1]
    dims, out_dims = shapes.get(x), shapes.get(node.output[0])
    if w not in known or not dims or not out_dims or len(dims) != 3 or len(out_dims) != 3:
        return None
    if not all(isinstance(d, int) and d > 0 for d in (*dims, *out_dims)):
        return None
    weights = numpy_helper.to_array(known[w])
    auto_pad = a.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if (
        weights.dtype != np.float32
        or weights.ndim != 3
        or a.get("group", 1) != 1
        or auto_pad not in ("NOTSET", "VALID")
    ):
        return None
    cout, cin, k = weights.shape
    (stride,), (dilation,) = a.get("strides") or [1], a.get("dilations") or [1]
    pads = [0, 0] if auto_pad == "VALID" else list(a.get("pads") or [0, 0])
    if len(pads) != 2 or min(pads) < 0 or stride < 1 or dilation < 1 or dims[1] != cin:
        return None
    length = (dims[2] + pads[0] + pads[1] - dilation * (k - 1) - 1) // stride + 1
    if out_dims != [dims[0], cout, length] or 4 * dims[0] * length * cin * k > MAX_COLUMN_BYTES:
        return None
    if len(node.input) > 2 and node.input[2] and shapes.get(node.input[2]) not in ([cout], None):
        return None
    return weights, pads, stride, dilation, out_dims


def _rewrite(graph, out_nodes, node, weights, pads, stride, dilation, dims, out_dims) -> None:
    b = NodeBuilder(graph, out_nodes, f"{node.name or 'conv1d'}/ireegen.conv1d")
    cout, cin, k = weights.shape
    n, length = dims[0], out_dims[2]
    value = node.input[0]
    if any(pads):
        value = b.op("Pad", value, b.const("pads", np.array([0, 0, pads[0], 0, 0, pads[1]], np.int64)))
    if k == 1 and stride == 1:  # pointwise: the windows are the axis itself
        columns = b.op("Unsqueeze", value, b.const("tap_axis", np.array([3], np.int64)))
    else:  # [N, Cin, Lout, K]: window t, tap k reads t*stride + k*dilation
        windows = np.arange(length, dtype=np.int64)[:, None] * stride + np.arange(k, dtype=np.int64) * dilation
        columns = b.op("Gather", value, b.const("windows", windows), axis=2)
    if cin > 1:
        columns = b.op("Transpose", columns, perm=[0, 2, 1, 3])  # [N, Lout, Cin, K]
    columns = b.op("Reshape", columns, b.const("rows_shape", np.array([n, length, cin * k], np.int64)))
    matrix = weights.reshape(cout, cin * k).T
    padded = -(-cout // PADDED_COLUMNS) * PADDED_COLUMNS if cout % 4 and cout >= MIN_PADDED else cout
    if padded != cout:
        matrix = np.concatenate([matrix, np.zeros((cin * k, padded - cout), np.float32)], axis=1)
    product = b.op("MatMul", columns, b.const("weights", np.ascontiguousarray(matrix)))
    if padded != cout:
        starts, ends = np.array([0], np.int64), np.array([cout], np.int64)
        product = b.op(
            "Slice", product, b.const("starts", starts), b.const("ends", ends), b.const("axis", np.array([2], np.int64))
        )
    if len(node.input) > 2 and node.input[2]:
        product = b.op("Add", product, node.input[2])
    b.op("Transpose", product, out=node.output[0], name=node.name, perm=[0, 2, 1])


CONV1D_REWRITES = (Rewrite("conv1d-as-matmul", ("Conv",), conv1d_as_matmul),)
