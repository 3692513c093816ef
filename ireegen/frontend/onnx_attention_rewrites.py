"""Speed rewrites of a transformer's attention ops, rows of
onnx_speed_rewrites.SPEED_REWRITES (the module's docstring says how they
are applied and checked).  Figures: docs/peers.md, "Transformers"."""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, default_opset, elem_types, node_attrs, rewrite_nodes
from .onnx_stable_rewrites import reduce_over

# softmax-as-lane-reductions: the lanes one partial maximum or sum keeps
# (16 float32 lanes: AVX-512's vector; a multiple of AVX2's 8 and NEON's 4),
# the shortest row it takes (two vectors), and the fewest elements (below
# them the extra dispatches cost more than the reductions save).
SOFTMAX_LANES = 16
MIN_SOFTMAX_ROW = 32
MIN_SOFTMAX_ELEMENTS = 8192

_FLOAT = 1  # ONNX's FLOAT: the padding's -inf and the reciprocal are written in float32


def softmax_as_lane_reductions(model, shapes: dict, values: dict) -> int:
    """A Softmax over the last axis (attention's probabilities, [.., L, L]):
    IREE 3.13 reduces each row 16 lanes at a time into one scalar, the
    maximum and the sum each a chain of 16 dependent scalar ops per vector,
    at about a sixth of ONNX Runtime's speed.  Rewritten as the same
    arithmetic with the row split into [L/16, 16]: the row's maximum is a
    ReduceMax over the L/16 vectors (16 lanes, elementwise) then over the
    16 lanes, likewise the sum of Exp(x - max), and the result is the
    exponentials times the Reciprocal of the sum, as ONNX Runtime computes
    it.  The maximum is subtracted before Exp, so every exponential is at
    most 1 and nothing overflows.  A row whose length is not a multiple of
    16 is padded with -inf, whose exponential is 0 (it moves neither the
    maximum nor the sum), and the result is sliced back.  Left as written:
    a Softmax over another axis (IREE vectorizes that reduction along the
    rows), an input that is not float32 or not static, rows shorter than
    MIN_SOFTMAX_ROW and inputs of fewer than MIN_SOFTMAX_ELEMENTS."""
    graph = model.graph
    opset = default_opset(model)
    types = None

    def rewrite(node, out_nodes) -> bool:
        nonlocal types
        if node.op_type != "Softmax" or node.domain not in ("", "ai.onnx") or len(node.input) != 1:
            return False
        x = node.input[0]
        dims = shapes.get(x)
        if not dims or not all(isinstance(d, int) and d > 0 for d in dims):
            return False
        rank = len(dims)
        # Before opset 13 Softmax flattens from `axis` (default 1): over the
        # last axis that is the same per-row softmax.
        axis = node_attrs(node).get("axis", -1 if opset >= 13 else 1)
        if not -rank <= axis < rank or axis % rank != rank - 1:
            return False
        row = dims[-1]
        padded = -(-row // SOFTMAX_LANES) * SOFTMAX_LANES
        if row < MIN_SOFTMAX_ROW or int(np.prod(dims[:-1])) * padded < MIN_SOFTMAX_ELEMENTS:
            return False
        types = elem_types(model) if types is None else types
        if types.get(x) != _FLOAT:
            return False
        b = NodeBuilder(graph, out_nodes, f"{node.name or 'softmax'}/ireegen.lanes")
        value = x
        if padded != row:
            pads = np.zeros(2 * rank, np.int64)
            pads[-1] = padded - row
            value = b.op("Pad", x, b.const("pads", pads), b.scalar("neg_inf", -np.inf, np.float32))
        split = [*dims[:-1], padded // SOFTMAX_LANES, SOFTMAX_LANES]
        lanes = b.op("Reshape", value, b.const("split", np.array(split, np.int64)))
        vectors, within = [rank - 1], [rank]

        def reduced(op: str, v: str) -> str:
            return reduce_over(b, op, reduce_over(b, op, v, vectors, 1, opset), within, 1, opset)

        exps = b.op("Exp", b.op("Sub", lanes, reduced("ReduceMax", lanes)))
        scaled = b.op("Mul", exps, b.op("Reciprocal", reduced("ReduceSum", exps)))
        rows = np.array([*dims[:-1], padded], np.int64)
        if padded == row:
            b.op("Reshape", scaled, b.const("rows", rows), out=node.output[0], name=node.name)
            return True
        joined = b.op("Reshape", scaled, b.const("rows", rows))
        b.op(
            "Slice",
            joined,
            b.const("starts", np.array([0], np.int64)),
            b.const("ends", np.array([row], np.int64)),
            b.const("axis", np.array([-1], np.int64)),
            out=node.output[0],
            name=node.name,
        )
        return True

    return rewrite_nodes(graph, rewrite)
