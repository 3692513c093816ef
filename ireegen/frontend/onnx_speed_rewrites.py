"""Graph rewrites for speed: ONNX patterns that IREE 3.13 compiles into slow
code, replaced by an equivalent form it compiles well.  Same shape as
onnx_rewrites.REWRITES (name, function(model, shapes, values) -> nodes
rewritten), applied after it by onnx_rewrites.apply_rewrites and listed in
the manifest's `onnx_rewrites` alike; emit's verification checks the result,
and tests/test_onnx_speed_rewrites.py checks each against ONNX Runtime on the
model as written.  Each entry is here because it measured faster on every
model it matched (docs/peers.md, "Real models").
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import add_const, fresh_name, known_arrays, node_attrs

MAX_TAPS = 25  # kernels up to 5x5: beyond that the sum of shifted slices is no longer one small dispatch


def depthwise_conv_as_taps(model, shapes: dict, values: dict) -> int:
    """A depthwise Conv with stride 1 (`group` = input channels = output
    channels, weights [C, 1, kh, kw], the 3x3 of MobileNet's inverted
    residual blocks): IREE 3.13 compiles it at about 5 GFLOP/s, a tenth of
    its matrix products.  Rewritten as what it computes: the (padded) input's
    kh x kw shifted Slices, each times its tap's per-channel weight, summed
    with the bias; IREE fuses that into one vectorized elementwise dispatch.
    MobileNetV2 at --target-cpu host with im2col: 14.3 -> 8.7 ms.  Strided
    ones stay Convs (strided slices measured slower)."""
    from onnx import helper, numpy_helper

    graph = model.graph
    known = known_arrays(graph, values)
    rewritten = 0
    out_nodes = []
    for node in list(graph.node):
        a = node_attrs(node) if node.op_type == "Conv" else {}
        x = node.input[0] if node.input else ""
        w = node.input[1] if len(node.input) > 1 else ""
        dims, out_dims = shapes.get(x), shapes.get(node.output[0]) if node.output else None
        weights = numpy_helper.to_array(known[w]) if node.op_type == "Conv" and w in known else None
        if (
            weights is None
            or node.domain not in ("", "ai.onnx")
            or not dims
            or len(dims) != 4
            or not out_dims
            or not all(isinstance(d, int) and d > 0 for d in (*dims, *out_dims))
            or weights.dtype != np.float32
            or dims[1] < 2  # one channel: an ordinary Conv
            or weights.shape[:2] != (dims[1], 1)
            or a.get("group", 1) != dims[1]
            or out_dims[1] != dims[1]
            or list(a.get("strides") or [1, 1]) != [1, 1]
            or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
            or int(np.prod(weights.shape[2:])) > MAX_TAPS
        ):
            out_nodes.append(node)
            continue
        channels, (kh, kw) = dims[1], weights.shape[2:]
        dh, dw = list(a.get("dilations") or [1, 1])
        pads = list(a.get("pads") or [0, 0, 0, 0])
        height, width = out_dims[2:]
        prefix = f"{node.name or 'depthwise'}/ireegen.taps"
        value = x
        if any(pads):
            value = fresh_name(graph, f"{prefix}/padded", out_nodes)
            full = np.array([0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]], np.int64)
            out_nodes.append(helper.make_node("Pad", [x, add_const(graph, f"{prefix}/pads", full)], [value]))
        axes = add_const(graph, f"{prefix}/axes", np.array([2, 3], np.int64))
        terms = []
        for i in range(kh):
            for j in range(kw):
                shifted = fresh_name(graph, f"{prefix}/shifted", out_nodes)
                starts = np.array([i * dh, j * dw], np.int64)
                out_nodes.append(
                    helper.make_node(
                        "Slice",
                        [
                            value,
                            add_const(graph, f"{prefix}/starts", starts),
                            add_const(graph, f"{prefix}/ends", starts + np.array([height, width], np.int64)),
                            axes,
                        ],
                        [shifted],
                    )
                )
                tap = add_const(graph, f"{prefix}/tap", weights[:, 0, i, j].reshape(1, channels, 1, 1).copy())
                terms.append(fresh_name(graph, f"{prefix}/term", out_nodes))
                out_nodes.append(helper.make_node("Mul", [shifted, tap], [terms[-1]]))
        if len(node.input) > 2 and node.input[2]:
            bias = fresh_name(graph, f"{prefix}/bias", out_nodes)
            shape = add_const(graph, f"{prefix}/bias_shape", np.array([1, channels, 1, 1], np.int64))
            out_nodes.append(helper.make_node("Reshape", [node.input[2], shape], [bias]))
            terms.append(bias)
        out_nodes.append(helper.make_node("Sum", terms, list(node.output), name=node.name))
        rewritten += 1
    if rewritten:
        del graph.node[:]
        graph.node.extend(out_nodes)
    return rewritten


SPEED_REWRITES = (("depthwise-conv-as-taps", depthwise_conv_as_taps),)
