"""Rewrites around IREE 3.13 lowerings that lose precision or overflow
where ONNX Runtime does not: each keeps the op's meaning and computes it in
the numerically stable form.  A row of onnx_rewrites.REWRITES, with a
reproducer in tests/test_iree_bugs.py and a section in
docs/known-iree-issues.md."""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, default_opset, elem_types, node_attrs, rewrite_nodes

# The element types the stable form is written for: the shift's zero has the input's type.
_FLOAT_TYPES = (1, 10, 11)  # FLOAT, FLOAT16, DOUBLE


def reduce_log_sum_exp_stable(model, shapes: dict, values: dict) -> int:
    """ReduceLogSumExp: IREE 3.13 lowers it as log(sum(exp(x))), so an input
    of 89 or more gives +inf and one of -104 or less -inf (float32), where
    ONNX Runtime gives the finite answer.  Rewritten as
    m + Log(ReduceSum(Exp(x - m))), m the ReduceMax over the same axes (0
    where that maximum is infinite, as ONNX Runtime and numpy do): every exp
    is at most 1 and the largest is 1, so nothing overflows and the sum is
    at least 1.  The axes, keepdims and noop_with_empty_axes are the node's
    own; ReduceSum takes its axes as an input from opset 13, the other
    reductions from opset 18."""
    from onnx import helper

    graph = model.graph
    opset = default_opset(model)
    types = None

    def rewrite(node, out_nodes) -> bool:
        nonlocal types
        if node.op_type != "ReduceLogSumExp" or node.domain not in ("", "ai.onnx"):
            return False
        types = elem_types(model) if types is None else types
        x, axes = node.input[0], list(node.input[1:])
        if types.get(x) not in _FLOAT_TYPES:
            return False
        a = node_attrs(node)
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'reduce_log_sum_exp'}/ireegen.stable")
        kept = {k: v for k, v in a.items() if k != "keepdims"}
        peak = b.op("ReduceMax", x, *axes, keepdims=1, **kept)
        dtype = helper.tensor_dtype_to_np_dtype(types[x])
        zero, inf = b.const("zero", np.zeros((), dtype)), b.const("inf", np.array(np.inf, dtype))
        # Abs and Equal rather than IsInf, which takes float16 only from opset 20.
        shift = b.op("Where", b.op("Equal", b.op("Abs", peak), inf), zero, peak)
        exp = b.op("Exp", b.op("Sub", x, shift))
        summed = b.op("Log", b.op("ReduceSum", exp, *_sum_axes(b, axes, a, opset), **_sum_attrs(a, opset)))
        offset = shift if a.get("keepdims", 1) else b.op("ReduceMax", shift, *axes, **a)
        b.op("Add", summed, offset, out=node.output[0], name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)


def _sum_axes(b: NodeBuilder, axes: list, attrs: dict, opset: int) -> list:
    """ReduceSum's axes input: the node's own input, or from opset 13 its
    `axes` attribute as a constant (none: every axis)."""
    if axes or opset < 13 or "axes" not in attrs:
        return axes
    return [b.const("axes", np.array(attrs["axes"], np.int64))]


def _sum_attrs(attrs: dict, opset: int) -> dict:
    """ReduceSum's attributes: the node's, less `axes` from opset 13."""
    return {k: v for k, v in attrs.items() if not (k == "axes" and opset >= 13)}
