"""Rewrites around IREE 3.13 lowerings that overflow where ONNX Runtime
does not: each keeps the op's meaning and computes it in the numerically
stable form.  A row of onnx_rewrites.REWRITES, with a reproducer in
tests/test_stable_rewrites.py and a section in docs/known-iree-issues.md."""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, default_opset, elem_types, node_attrs, rewrite_nodes

# The element types the stable form is written for: the shift's zero has the input's type.
_FLOAT_TYPES = (1, 10, 11)  # FLOAT, FLOAT16, DOUBLE

# The opset from which each reduction takes its axes as an input, not an attribute.
_AXES_INPUT_FROM = {"ReduceMax": 18, "ReduceSum": 13}


def reduce_log_sum_exp_stable(model, shapes: dict, values: dict) -> int:
    """ReduceLogSumExp: IREE 3.13 lowers it as log(sum(exp(x))), so an input
    of 89 or more gives +inf and one of -104 or less -inf (float32), where
    ONNX Runtime gives the finite answer.  Rewritten as
    m + Log(ReduceSum(Exp(x - m))), m the ReduceMax over the same axes (0
    where that maximum is infinite, as ONNX Runtime and numpy do): every exp
    is at most 1 and the largest is 1, so nothing overflows and the sum is
    at least 1.  The axes are written out (IREE lowers a ReduceMax without
    them only before opset 18), as each reduction takes them in the model's
    opset.  Left as written: an input that is not float, of unknown rank or
    with no elements (nothing to overflow), axes computed at run time, and
    an empty axes list with noop_with_empty_axes (no reduction)."""
    from onnx import helper

    graph = model.graph
    opset = default_opset(model)
    types = None

    def rewrite(node, out_nodes) -> bool:
        nonlocal types
        if node.op_type != "ReduceLogSumExp" or node.domain not in ("", "ai.onnx"):
            return False
        types = elem_types(model) if types is None else types
        x = node.input[0]
        dims = shapes.get(x)
        axes = _axes(node, values, dims)
        if types.get(x) not in _FLOAT_TYPES or axes is None or 0 in dims:
            return False
        keepdims = node_attrs(node).get("keepdims", 1)
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'reduce_log_sum_exp'}/ireegen.stable")
        peak = reduce_over(b, "ReduceMax", x, axes, 1, opset)
        dtype = helper.tensor_dtype_to_np_dtype(types[x])
        zero, inf = b.const("zero", np.zeros((), dtype)), b.const("inf", np.array(np.inf, dtype))
        # Abs and Equal rather than IsInf, which takes float16 only from opset 20.
        shift = b.op("Where", b.op("Equal", b.op("Abs", peak), inf), zero, peak)
        summed = b.op("Log", reduce_over(b, "ReduceSum", b.op("Exp", b.op("Sub", x, shift)), axes, keepdims, opset))
        offset = shift if keepdims else reduce_over(b, "ReduceMax", shift, axes, 0, opset)
        b.op("Add", summed, offset, out=node.output[0], name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)


def _axes(node, values: dict, dims) -> list | None:
    """The node's reduced axes as non-negative ints (every axis when it
    names none), or None where they are not known at build time or nothing
    is reduced."""
    if not dims or not all(isinstance(d, int) for d in dims):
        return None
    attrs = node_attrs(node)
    if len(node.input) > 1 and node.input[1]:
        if node.input[1] not in values:
            return None
        from onnx import numpy_helper

        given = numpy_helper.to_array(values[node.input[1]]).astype(np.int64).ravel().tolist()
    else:
        given = list(attrs.get("axes") or [])
    if not given:
        return None if attrs.get("noop_with_empty_axes", 0) else list(range(len(dims)))
    return sorted({a % len(dims) for a in given})


def reduce_over(b: NodeBuilder, op: str, value: str, axes: list, keepdims: int, opset: int) -> str:
    """`op` over `axes`, given as the op takes them in `opset`."""
    if opset >= _AXES_INPUT_FROM[op]:
        return b.op(op, value, b.const("axes", np.array(axes, np.int64)), keepdims=keepdims)
    return b.op(op, value, axes=axes, keepdims=keepdims)
