"""Speed rewrites of a transformer's attention ops, rows of
onnx_speed_rewrites.SPEED_REWRITES (the module's docstring says how they
are applied and checked).  Figures: docs/peers.md, "Transformers"."""

from __future__ import annotations

import numpy as np

from .onnx_nodes import NodeBuilder, default_opset, elem_types, known_arrays, node_attrs, node_reads, rewrite_nodes
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
    it.  The product is taken on the rows joined back (and sliced): with
    data tiling, IREE 3.13 fuses it into the next MatMul's packing, and
    fused on the [L/16, 16] form it exceeded the stack limit (ViT's
    probabilities x V).  The maximum is subtracted before Exp, so every exponential is at
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
        scale = b.op("Reciprocal", reduced("ReduceSum", exps))
        rows = np.array([*dims[:-1], padded], np.int64)
        joined = b.op("Reshape", exps, b.const("rows", rows))
        if padded != row:
            joined = b.op(
                "Slice",
                joined,
                b.const("starts", np.array([0], np.int64)),
                b.const("ends", np.array([row], np.int64)),
                b.const("axis", np.array([-1], np.int64)),
            )
        scale = b.op("Reshape", scale, b.const("row_scale", np.array([*dims[:-1], 1], np.int64)))
        b.op("Mul", joined, scale, out=node.output[0], name=node.name)
        return True

    return rewrite_nodes(graph, rewrite)


# matmul-rows-padded: the row multiple of the padded region (16, as
# matmul-columns-padded's columns) and the fewest rows a seed MatMul pads.
ROW_MULTIPLE = 16
MIN_PADDED_ROWS = 64

# Ops that compute each row of their result from the same row of their
# operands alone (broadcast constants aside), so rows added to the operands
# stay in rows of the result that the exits slice off.
ROWWISE = frozenset(
    (
        "Abs Add Clip Div Elu Erf Exp Gelu HardSigmoid HardSwish Identity LeakyRelu Max Min Mish Mul Neg "
        "Pow PRelu Reciprocal Relu Selu Sigmoid Softplus Sqrt Sub Sum Tanh"
    ).split()
)
# In the names of the values ireegen's rewrites write (NodeBuilder's prefixes).
_WRITTEN_BY_US = "ireegen."
# Reductions taken over the last axis only, with keepdims: a row's own value.
_ROW_REDUCTIONS = frozenset(("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"))


def matmul_rows_padded(model, shapes: dict, values: dict) -> int:
    """A MatMul of a computed [.., M, K] by a constant [K, N] (a layer's
    weights) whose row count M (the tokens: ViT's 197) is static, at least
    MIN_PADDED_ROWS and not a multiple of ROW_MULTIPLE (not one of the
    products ireegen's convolution and RNN rewrites write, whose speed with
    padded rows was not measured): IREE 3.13's default
    matmul codegen runs it about twice as slow as with M rounded up
    (docs/peers.md, "Transformers").  Rewritten with the rows padded with
    zeros to the next multiple, not around each MatMul (a Pad and a Slice
    per product cost more than they save with data tiling) but over the
    whole region of row-wise ops the padded rows can flow through: the
    ROWWISE elementwise ops, further MatMuls by constant [K, N] weights,
    LayerNormalization and reductions over the last axis.  A value enters
    the region padded (a Pad) and leaves it sliced back to M rows (a Slice)
    where an op outside the region or a graph output needs it.  Every op in
    the region computes a row from the same row alone, so the added rows
    never reach the sliced rows: the numbers are the graph's."""
    graph = model.graph
    known = known_arrays(graph, values)
    types = elem_types(model)
    seeds = [k for k, node in enumerate(graph.node) if _seed_rows(node, known, shapes, types)]
    if not seeds:
        return 0
    return _Rows(graph, shapes, known).rewrite(set(seeds))


def _seed_rows(node, known: dict, shapes: dict, types: dict) -> int | None:
    """The row count of a MatMul that starts a padded region (the rows of
    its computed float32 A; B a constant matrix), or None."""
    if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx") or len(node.input) != 2:
        return None
    if _WRITTEN_BY_US in node.output[0]:
        return None  # the convolution and RNN rewrites' products: measured on transformers only
    a, w = node.input
    dims = shapes.get(a)
    if a in known or w not in known or len(known[w].dims) != 2 or types.get(a) != _FLOAT:
        return None
    if not dims or len(dims) < 2 or not all(isinstance(d, int) and d > 0 for d in dims):
        return None
    rows = dims[-2]
    return rows if rows >= MIN_PADDED_ROWS and rows % ROW_MULTIPLE else None


class _Rows:
    """One walk over the graph's nodes in order, keeping the padded form of
    each value the region reached (`padded`: name -> (its padded name, its
    row count)) and the values that exist as the graph has them (`present`)."""

    def __init__(self, graph, shapes: dict, known: dict):
        self.graph, self.shapes, self.known = graph, shapes, known
        self.padded = {}
        self.present = {i.name for i in graph.input} | set(known) | {""}
        self.out_nodes = []
        self.b = NodeBuilder(graph, self.out_nodes, "")  # one for the walk: its prefix names each node's

    def rewrite(self, seeds: set) -> int:
        count = 0
        for k, node in enumerate(list(self.graph.node)):
            self.b.prefix = f"{node.name or node.op_type}/ireegen.rows"
            if k in seeds:
                rows = self.shapes[node.input[0]][-2]
                self._emit(node, [self._as_padded(node.input[0], rows), node.input[1]], rows)
                count += 1
            elif not self._region_op(node):
                for name in node_reads(node):  # a Loop's body too
                    self._as_present(name)
                self.out_nodes.append(node)
                self.present.update(node.output)
        for output in self.graph.output:
            self._as_present(output.name)
        del self.graph.node[:]
        self.graph.node.extend(self.out_nodes)
        return count

    def _emit(self, node, operands: list, rows: int) -> None:
        out = self.b.op(node.op_type, *operands, **node_attrs(node))
        self.padded[node.output[0]] = (out, rows)

    def _as_padded(self, name: str, rows: int) -> str:
        if name not in self.padded:
            dims = self.shapes[name]
            pads = np.zeros(2 * len(dims), np.int64)
            pads[2 * len(dims) - 2] = -rows % ROW_MULTIPLE
            self.padded[name] = (self.b.op("Pad", name, self.b.const("pads", pads)), rows)
        return self.padded[name][0]

    def _as_present(self, name: str) -> None:
        """Makes `name` exist as the graph has it, slicing its padded form back."""
        if name not in self.present and name in self.padded:
            value, rows = self.padded[name]
            b = self.b
            b.op(
                "Slice",
                value,
                b.const("starts", np.array([0], np.int64)),
                b.const("ends", np.array([rows], np.int64)),
                b.const("axis", np.array([-2], np.int64)),
                out=name,
            )
            self.present.add(name)

    def _region_op(self, node) -> bool:
        """Appends the padded form of a row-wise op with an operand in the
        region; False for any other node."""
        if node.domain not in ("", "ai.onnx") or len(node.output) != 1:
            return False
        reached = [self.padded[i][1] for i in node.input if i in self.padded]
        out_dims = self.shapes.get(node.output[0])
        if not reached or not out_dims or len(out_dims) < 2 or out_dims[-2] != reached[0]:
            return False
        rows = reached[0]
        if node.op_type == "MatMul":
            a, w = node.input if len(node.input) == 2 else ("", "")
            if a not in self.padded or w not in self.known or len(self.known[w].dims) != 2:
                return False
        elif node.op_type == "LayerNormalization":
            if node_attrs(node).get("axis", -1) % len(out_dims) != len(out_dims) - 1:
                return False
            scale_bias = node.input[1:]
            if node.input[0] not in self.padded or any(self._row_varying(i) for i in scale_bias):
                return False
            if not all(self._takes(i, out_dims) for i in scale_bias):
                return False
        elif node.op_type in _ROW_REDUCTIONS:
            if node.input[0] not in self.padded or _reduced_axes(node, self.known, len(out_dims)) != [
                len(out_dims) - 1
            ]:
                return False
        elif node.op_type not in ROWWISE or not all(self._takes(i, out_dims) for i in node.input):
            return False
        operands = [self._as_padded(i, rows) if self._row_varying(i) else i for i in node.input]
        self._emit(node, operands, rows)
        return True

    def _row_varying(self, name: str) -> bool:
        """Whether the operand `name` (taken by _takes) has rows: it is used padded."""
        if name == "" or name in self.known:
            return False
        dims = self.shapes.get(name)
        return name in self.padded or (dims is not None and len(dims) >= 2 and dims[-2] != 1)

    def _takes(self, name: str, out_dims) -> bool:
        """Whether `name` can be an operand of a padded row-wise op: one in
        the region, a value that does not vary along the rows (of fewer
        than two axes or one row: it broadcasts alike to every row, the
        added ones included), or a computed value of the result's static
        shape (padded on entry)."""
        if name == "" or name in self.padded:
            return True
        dims = list(self.known[name].dims) if name in self.known else self.shapes.get(name)
        if dims is None:
            return False
        if len(dims) < 2 or dims[-2] == 1:
            return True
        return name not in self.known and dims == out_dims and all(isinstance(d, int) for d in dims)


def _reduced_axes(node, known: dict, rank: int) -> list | None:
    """A reduction's axes as non-negative ints, or None when they are not
    written down, computed, or the reduction drops them (keepdims 0)."""
    from onnx import numpy_helper

    attrs = node_attrs(node)
    if not attrs.get("keepdims", 1):
        return None
    if len(node.input) > 1 and node.input[1]:
        if node.input[1] not in known:
            return None
        axes = numpy_helper.to_array(known[node.input[1]]).ravel().tolist()
    else:
        axes = list(attrs.get("axes") or [])
    return sorted({int(a) % rank for a in axes}) or None
