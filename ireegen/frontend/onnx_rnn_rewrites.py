"""GRU, LSTM and RNN in the forms IREE 3.13's ONNX lowering computes.

That lowering (torch-mlir's onnx-to-torch) rejects GRU and RNN in any
direction but forward and LSTM in reverse, and ignores sequence_lens,
other activations and LSTM peepholes (a wrong result, not a refusal)
(docs/onnx.md, "Recurrent layers").  Two rows, each rooted at all three
ops:

- rnn-cells-unrolled: a node with sequence_lens, other activations, clip,
  peepholes or input_forget, over a short static sequence, becomes its
  cells, one per step, in plain ops (onnx_rnn_unroll.py).

- rnn-directions-as-forward: a reverse, bidirectional or batch-major
  (layout 1) node becomes one forward, sequence-major node per direction
  (the one form all three ops are lowered right in),
  each with its direction's slice of W, R, B, P and the initial states; a
  reverse direction runs on X reversed along the sequence and its Y is
  reversed back; the directions' Y, Y_h and Y_c are joined on the direction
  axis, and transposed back for layout 1.

What no row takes is refused by unsupported_rnn_node in one line naming
the node and the attribute (onnx_import calls it before IREE's lowering):
a wrong result is worse than a refusal.
"""

from __future__ import annotations

import numpy as np

from .onnx_fold import static_shapes
from .onnx_nodes import NodeBuilder, fresh_name, node_attrs, rewrite_nodes
from .onnx_rnn_unroll import (
    DEFAULT_ACTIVATIONS,
    GATES,
    INITIAL_C,
    INITIAL_H,
    SEQUENCE_LENS,
    B,
    P,
    R,
    UnrollBuilder,
    W,
    X,
    join_directions,
    unroll,
    unroll_cause,
)

RNN_OPS = ("GRU", "LSTM", "RNN")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _input(node, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


def _output(node, index: int) -> str:
    return node.output[index] if len(node.output) > index else ""


def _directions(attrs: dict) -> int:
    return 2 if _text(attrs.get("direction", "forward")) == "bidirectional" else 1


def unsupported_rnn_node(model) -> str | None:
    """One line on the first GRU, LSTM or RNN node in a form IREE 3.13's
    lowering does not compute correctly, naming the node and the attribute
    or input at fault; None when every such node is a form it computes."""
    shapes = None
    for i, node in enumerate(model.graph.node):
        if node.op_type not in RNN_OPS or node.domain not in ("", "ai.onnx"):
            continue
        cause = _unsupported_cause(node)
        if cause and _cell_cause(node, node_attrs(node)):
            shapes = static_shapes(model) if shapes is None else shapes
            why = unroll_cause(node, node_attrs(node), shapes)
            cause = f"{cause}; ireegen cannot unroll its cells instead: {why}" if why else cause
        if cause:
            name = f"{node.op_type} {node.name!r}" if node.name else f"{node.op_type} node #{i + 1}"
            return f"{name}: {cause}"
    return None


# The inputs whose shapes an RNN node's attributes define, by position.
_SHAPED_INPUTS = {
    W: "W",
    R: "R",
    B: "B",
    SEQUENCE_LENS: "sequence_lens",
    INITIAL_H: "initial_h",
    INITIAL_C: "initial_c",
    P: "P",
}


def malformed_rnn_node(model) -> str | None:
    """One line on the first GRU, LSTM or RNN node an input of which has
    another shape than its hidden_size, direction, layout and X define
    (W, R, B, sequence_lens, the initial states, P): an exporter's error
    that ONNX's shape inference does not check and that a runtime fails on
    at best; it names the node, the input, its shape and the one expected.
    Also a GRU over symbolic dimensions (_dynamic_cause), with the hint
    that fixes it.  None when every known shape fits."""
    shapes = None
    for i, node in enumerate(model.graph.node):
        if node.op_type not in RNN_OPS or node.domain not in ("", "ai.onnx"):
            continue
        if shapes is None:
            shapes = {**static_shapes(model), **{t.name: list(t.dims) for t in model.graph.initializer}}
        cause = _shape_cause(node, node_attrs(node), shapes) or _dynamic_cause(model, node, shapes)
        if cause:
            name = f"{node.op_type} {node.name!r}" if node.name else f"{node.op_type} node #{i + 1}"
            return f"{name}: {cause}"
    return None


def _dynamic_cause(model, node, shapes: dict) -> str | None:
    """A GRU over an X of symbolic dimensions: IREE 3.13's lowering of GRU
    fails on them ('linalg.fill' op unexpected result less than 0), where
    its LSTM takes them; the sizes given with --input-shape make X static."""
    if node.op_type != "GRU" or _input(node, X) in shapes:
        return None
    symbolic = [
        v.name
        for v in model.graph.input
        if v.type.HasField("tensor_type") and any(not d.HasField("dim_value") for d in v.type.tensor_type.shape.dim)
    ]
    if not symbolic:
        return None
    return (
        "its input X has symbolic dimensions, and IREE 3.13's GRU lowering fails on them; give the sizes of "
        + ", ".join(repr(n) for n in symbolic[:4])
        + " with --input-shape NAME=DIMS"
    )


def _shape_cause(node, a: dict, shapes: dict) -> str | None:
    hidden = a.get("hidden_size")
    if not isinstance(hidden, int) or hidden <= 0:
        return None
    d, g, layout = _directions(a), GATES[node.op_type], a.get("layout", 0)
    x = shapes.get(_input(node, X))
    x = x if x and len(x) == 3 else [None, None, None]
    batch, features = (x[0] if layout else x[1]), x[2]
    state = [batch, d, hidden] if layout else [d, batch, hidden]
    expected = {
        W: [d, g * hidden, features],
        R: [d, g * hidden, hidden],
        B: [d, 2 * g * hidden],
        SEQUENCE_LENS: [batch],
        INITIAL_H: state,
        INITIAL_C: state,
        P: [d, 3 * hidden],
    }
    for index, dims in expected.items():
        got = shapes.get(_input(node, index))
        if got is None or (len(got) == len(dims) and all(e is None or e == n for e, n in zip(dims, got))):
            continue
        needed = "x".join("?" if e is None else str(e) for e in dims)
        return (
            f"its input {_SHAPED_INPUTS[index]} has the shape {'x'.join(map(str, got)) or 'scalar'}, where "
            f"hidden_size={hidden}, {d} direction(s) and X need {needed}: the model is malformed"
        )
    return None


def iree_lowered_form(node) -> bool:
    """Whether `node` is in the one form IREE 3.13's lowering computes
    right as it is: forward, sequence-major, no cause of _unsupported_cause."""
    return _unsupported_cause(node) is None and not node_attrs(node).get("layout", 0)


def _unsupported_cause(node) -> str | None:
    """What of `node` IREE 3.13 does not compute, as a clause; None if nothing."""
    a = node_attrs(node)
    cause = _cell_cause(node, a)
    if cause:
        return cause
    direction = _text(a.get("direction", "forward"))
    if direction != "forward":
        return f"direction={direction}: IREE 3.13 lowers only the forward direction"
    return None


def _cell_cause(node, a: dict) -> str | None:
    """What of `node`'s cell or its inputs IREE 3.13 does not compute in
    any direction, as a clause; None if nothing."""
    if _input(node, SEQUENCE_LENS):
        return "sequence_lens: IREE 3.13's lowering ignores the lengths (the outputs past each length would be wrong)"
    if "clip" in a:
        return "clip: IREE 3.13's lowering rejects clipped cells"
    given = tuple(_text(s) for s in a.get("activations", ()))
    default = DEFAULT_ACTIVATIONS[node.op_type] * _directions(a)
    if given and tuple(s.lower() for s in given) != tuple(s.lower() for s in default):
        return (
            f"activations={','.join(given)}: IREE 3.13's lowering computes any but the default "
            f"({','.join(DEFAULT_ACTIVATIONS[node.op_type])}) wrongly"
        )
    if node.op_type == "LSTM" and a.get("input_forget", 0):
        return "input_forget=1: IREE 3.13's lowering does not couple the input and forget gates"
    if node.op_type == "LSTM" and _input(node, P):
        return "P (peepholes): IREE 3.13's lowering computes LSTM peepholes wrongly"
    return None


def rnn_cells_unrolled(model, shapes: dict, values: dict) -> int:
    """The rnn-cells-unrolled row: a node in a form IREE computes wrongly
    in every direction (_cell_cause) becomes its cells, one per step
    (onnx_rnn_unroll.py), when its sequence is short and static."""
    graph = model.graph

    def rewrite(node, out_nodes) -> bool:
        if node.op_type not in RNN_OPS or node.domain not in ("", "ai.onnx"):
            return False
        a = node_attrs(node)
        if not _cell_cause(node, a) or unroll_cause(node, a, shapes):
            return False
        unroll(
            node, a, UnrollBuilder(graph, out_nodes, f"{node.name or node.op_type.lower()}/ireegen.unrolled"), shapes
        )
        return True

    return rewrite_nodes(graph, rewrite)


def rnn_directions_as_forward(model, shapes: dict, values: dict) -> int:
    """The rnn-directions-as-forward row (see the module docstring)."""
    from onnx import helper, numpy_helper

    graph = model.graph

    def rewrite(node, out_nodes) -> bool:
        if node.op_type not in RNN_OPS or node.domain not in ("", "ai.onnx"):
            return False
        a = node_attrs(node)
        direction, layout = _text(a.get("direction", "forward")), a.get("layout", 0)
        if (direction == "forward" and not layout) or direction not in ("forward", "reverse", "bidirectional"):
            return False
        if _cell_cause(node, a):
            return False  # refused by unsupported_rnn_node, naming the node as the user wrote it
        b = NodeBuilder(graph, out_nodes, f"{node.name or node.op_type.lower()}/ireegen.forward")
        directions = 2 if direction == "bidirectional" else 1
        x = _input(node, X)
        if layout:  # [batch, seq, input] -> [seq, batch, input]
            x = b.op("Transpose", x, perm=[1, 0, 2])
        seq = (shapes.get(_input(node, X)) or [None, None])[1 if layout else 0]
        # A reversal along the sequence: from the last step to before the first.
        before = -seq - 1 if isinstance(seq, int) else -(2**63)

        def axis0() -> str:
            return b.const("axis0", np.array([0], np.int64))

        def reversed_seq(value: str) -> str:
            starts, ends = (
                b.const("last", np.array([-1], np.int64)),
                b.const("before_first", np.array([before], np.int64)),
            )
            return b.op("Slice", value, starts, ends, axis0(), b.const("back", np.array([-1], np.int64)))

        def direction_slice(name: str, d: int, state: bool = False) -> str:
            """Direction d's part of the input `name`, its leading axis kept."""
            if not name:
                return ""
            if name in values and not state:
                return b.const(f"d{d}", numpy_helper.to_array(values[name])[d : d + 1])
            if state and layout:  # [batch, directions, hidden] -> [directions, batch, hidden]
                name = b.op("Transpose", name, perm=[1, 0, 2])
            if directions == 1:
                return name
            start, end = b.const("start", np.array([d], np.int64)), b.const("end", np.array([d + 1], np.int64))
            return b.op("Slice", name, start, end, axis0())

        # The activations are the defaults (_cell_cause): the forward nodes need none.
        attrs = {k: v for k, v in a.items() if k in ("hidden_size", "linear_before_reset", "input_forget")}
        ys, hs, cs = [], [], []
        for d in range(directions):
            backward = direction == "reverse" or d == 1
            inputs = [
                reversed_seq(x) if backward else x,
                direction_slice(_input(node, W), d),
                direction_slice(_input(node, R), d),
                direction_slice(_input(node, B), d),
                _input(node, SEQUENCE_LENS),
                direction_slice(_input(node, INITIAL_H), d, state=True),
            ]
            if node.op_type == "LSTM":
                inputs += [direction_slice(_input(node, INITIAL_C), d, state=True), direction_slice(_input(node, P), d)]
            while inputs and not inputs[-1]:
                inputs.pop()
            outs = [fresh_name(graph, f"{b.prefix}/{part}{d}", out_nodes) for part in ("y", "y_h", "y_c")]
            outs = outs[: 3 if node.op_type == "LSTM" else 2]
            name = f"{node.name or node.op_type.lower()}/{'backward' if backward else 'forward'}"
            out_nodes.append(helper.make_node(node.op_type, inputs, outs, name=name, direction="forward", **attrs))
            ys.append(reversed_seq(outs[0]) if backward else outs[0])
            hs.append(outs[1])
            if node.op_type == "LSTM":
                cs.append(outs[2])
        join_directions(b, ys, _output(node, 0), axis=1, perm=[2, 0, 1, 3] if layout else None)
        join_directions(b, hs, _output(node, 1), axis=0, perm=[1, 0, 2] if layout else None)
        if node.op_type == "LSTM":
            join_directions(b, cs, _output(node, 2), axis=0, perm=[1, 0, 2] if layout else None)
        return True

    return rewrite_nodes(graph, rewrite)
