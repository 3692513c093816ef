"""A GRU, LSTM or RNN node as its cells, one per step, in plain ops
(MatMul, Add, Mul, the activations, Where), for the forms IREE 3.13's own
lowering computes wrongly or rejects: sequence_lens, other activations,
clip, LSTM peepholes and input_forget (onnx_rnn_rewrites.py's
rnn-cells-unrolled row).  The equations are the ONNX operators' own; a step
past a sequence's length leaves the state as it was and writes zeros to Y,
and a reverse direction runs each sequence from its last valid step, as
ONNX defines sequence_lens.  Only for a static sequence length of at most
MAX_UNROLLED_STEPS and static batch and feature sizes.
"""

from __future__ import annotations

import numpy as np

from .onnx_nodes import used_names

MAX_UNROLLED_STEPS = 64  # the unrolled graph, and its compile time, grow with the steps (docs/onnx.md)

# The inputs by position, as the ops define them (P only in LSTM).
X, W, R, B, SEQUENCE_LENS, INITIAL_H, INITIAL_C, P = range(8)
GATES = {"GRU": 3, "LSTM": 4, "RNN": 1}
DEFAULT_ACTIVATIONS = {"GRU": ("Sigmoid", "Tanh"), "LSTM": ("Sigmoid", "Tanh", "Tanh"), "RNN": ("Tanh",)}

# Activation name (lower case) -> (ONNX op, its alpha default or None, its
# beta default or None): the RNN ops' activation_alpha and activation_beta
# lists are consumed, in order, by the activations that take them, and an
# activation without a given value takes its op's default.
ACTIVATIONS = {
    "sigmoid": ("Sigmoid", None, None),
    "tanh": ("Tanh", None, None),
    "relu": ("Relu", None, None),
    "hardsigmoid": ("HardSigmoid", 0.2, 0.5),
    "leakyrelu": ("LeakyRelu", 0.01, None),
    "thresholdedrelu": ("ThresholdedRelu", 1.0, None),
    "elu": ("Elu", 1.0, None),
    "softsign": ("Softsign", None, None),
    "softplus": ("Softplus", None, None),
}


def _softsign(b, value: str) -> str:
    """x / (1 + |x|), as ONNX defines Softsign."""
    one = b.const("one_f", np.array(1, np.float32))
    return b.op("Div", value, b.op("Add", one, b.op("Abs", value)))


# The activations IREE 3.13's ONNX lowering has no pattern for (a model with
# the op is refused by the import), written as the ops that compute them.
EXPANDED_ACTIVATIONS = {"Softsign": _softsign}


class UnrollBuilder:
    """NodeBuilder's interface (op, const, prefix) with the names in use
    kept in a set: an unrolled node makes thousands of values, and
    onnx_nodes.fresh_name scans the whole graph for each."""

    def __init__(self, graph, out_nodes: list, prefix: str):
        self.graph, self.out_nodes, self.prefix = graph, out_nodes, prefix
        self.used = used_names(graph, out_nodes)
        self.counts = {}

    def _fresh(self, base: str) -> str:
        k = self.counts.get(base, 0)
        while f"{base}{k}" in self.used:
            k += 1
        self.counts[base] = k + 1
        self.used.add(f"{base}{k}")
        return f"{base}{k}"

    def const(self, base: str, array) -> str:
        from onnx import numpy_helper

        name = self._fresh(f"{self.prefix}/{base}")
        self.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type: str, *inputs: str, out: str | None = None, name: str = "", **attrs) -> str:
        from onnx import helper

        out = out or self._fresh(f"{self.prefix}/{op_type.lower()}")
        self.used.add(out)
        self.out_nodes.append(helper.make_node(op_type, list(inputs), [out], name=name, **attrs))
        return out


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _input(node, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


def activation_functions(op_type: str, a: dict):
    """Per direction, the activations as (ONNX op, attributes) tuples; a str
    naming what is not supported instead."""
    directions = 2 if _text(a.get("direction", "forward")) == "bidirectional" else 1
    names = [_text(s).lower() for s in a.get("activations", ())] or [
        s.lower() for s in DEFAULT_ACTIVATIONS[op_type] * directions
    ]
    per = len(DEFAULT_ACTIVATIONS[op_type])
    if len(names) != per * directions:
        return f"activations: {len(names)} given, {per * directions} expected"
    unknown = [n for n in names if n not in ACTIVATIONS]
    if unknown:
        return f"activations={unknown[0]}: not an activation ireegen computes ({', '.join(sorted(ACTIVATIONS))})"
    alphas, betas = list(a.get("activation_alpha", ())), list(a.get("activation_beta", ()))
    functions = []
    for name in names:
        op, alpha, beta = ACTIVATIONS[name]
        attrs = {}
        if alpha is not None:
            attrs["alpha"] = float(alphas.pop(0)) if alphas else alpha
        if beta is not None:
            attrs["beta"] = float(betas.pop(0)) if betas else beta
        functions.append((op, attrs))
    if alphas or betas:
        return "activation_alpha/activation_beta: more values than the activations take"
    return [functions[d * per : (d + 1) * per] for d in range(directions)]


def unroll_cause(node, a: dict, shapes: dict) -> str | None:
    """Why `node` cannot be unrolled, as a clause; None when it can."""
    dims = shapes.get(_input(node, X))
    if not dims or len(dims) != 3 or not all(isinstance(d, int) and d > 0 for d in dims):
        return "the input X has no static shape (ireegen unrolls the cells only over a static sequence)"
    steps = dims[1] if a.get("layout", 0) else dims[0]
    if steps > MAX_UNROLLED_STEPS:
        return f"a sequence of {steps} steps (ireegen unrolls the cells only up to {MAX_UNROLLED_STEPS})"
    functions = activation_functions(node.op_type, a)
    return functions if isinstance(functions, str) else None


def unroll(node, a: dict, b, shapes: dict) -> None:
    """Appends `node`'s unrolled cells through the NodeBuilder `b`; its
    outputs keep their names.  unroll_cause(node, a, shapes) must be None."""
    layout = a.get("layout", 0)
    direction = _text(a.get("direction", "forward"))
    directions = 2 if direction == "bidirectional" else 1
    hidden = int(a["hidden_size"])
    dims = shapes[_input(node, X)]
    steps, batch = (dims[1], dims[0]) if layout else (dims[0], dims[1])
    functions = activation_functions(node.op_type, a)
    x = b.op("Transpose", _input(node, X), perm=[1, 0, 2]) if layout else _input(node, X)
    one, zero = b.const("one", np.array(1, np.int64)), b.const("zero", np.array(0, np.int64))
    lens = _input(node, SEQUENCE_LENS)
    if lens:  # [batch] int64, and each step's mask [batch, 1]
        lens = b.op("Cast", lens, to=7)
    ys, hs, cs = [], [], []
    for d in range(directions):
        cell = _Cell(node, a, b, d, directions, layout, hidden, batch, functions[d])
        backward = direction == "reverse" or d == 1
        h, c = cell.initial_h(), cell.initial_c()
        outs = [None] * steps
        for k in range(steps):
            t = steps - 1 - k if backward else k
            if lens:
                valid = b.op("Less", b.const("k", np.array([k], np.int64)), lens)  # [batch]
                # Step k of sequence i reads time lens[i]-1-k backward (its last valid step first).
                index = b.op("Sub", b.op("Sub", lens, one), b.const("k", np.array(k, np.int64))) if backward else None
                if backward:
                    index = b.op("Where", valid, index, zero)
                    xt = _gather_per_batch(b, x, index, batch, dims[2])
                else:
                    xt = b.op("Gather", x, b.const("t", np.array(t, np.int64)), axis=0)
                mask = b.op("Unsqueeze", valid, b.const("axis1", np.array([1], np.int64)))
            else:
                xt = b.op("Gather", x, b.const("t", np.array(t, np.int64)), axis=0)
                mask = None
            h_new, c_new = cell.step(xt, h, c)
            if mask is not None:
                zeros = b.const("zeros", np.zeros((1, hidden), np.float32))
                y = b.op("Where", mask, h_new, zeros)
                h = b.op("Where", mask, h_new, h)
                c = b.op("Where", mask, c_new, c) if c_new else c
            else:
                y, h, c = h_new, h_new, c_new
            outs[k] = (y, None)
        # Y in time order: step k wrote time t (or lens[i]-1-k for sequence i, backward).
        if backward and lens:
            axis0 = b.const("axis0", np.array([0], np.int64))
            stacked = b.op("Concat", *(b.op("Unsqueeze", y, axis0) for y, _ in outs), axis=0)  # by step
            ordered = [_reversed_by_length(b, stacked, t, lens, batch, hidden) for t in range(steps)]
        else:
            ordered = [outs[steps - 1 - t if backward else t][0] for t in range(steps)]
        axes01 = b.const("axes01", np.array([0, 1], np.int64))
        ys.append(b.op("Concat", *(b.op("Unsqueeze", y, axes01) for y in ordered), axis=0))  # [T, 1, N, H]
        axes0 = b.const("axis0", np.array([0], np.int64))
        hs.append(b.op("Unsqueeze", h, axes0))
        if node.op_type == "LSTM":
            cs.append(b.op("Unsqueeze", c, axes0))
    outputs = list(node.output) + [""] * 3
    join_directions(b, ys, outputs[0], 1, [2, 0, 1, 3] if layout else None)
    join_directions(b, hs, outputs[1], 0, [1, 0, 2] if layout else None)
    if node.op_type == "LSTM":
        join_directions(b, cs, outputs[2], 0, [1, 0, 2] if layout else None)


def _gather_per_batch(b, x: str, index: str, batch: int, features: int) -> str:
    """x[index[i], i, :] for each sequence i of x [steps, batch, features]: [batch, features]."""
    flat = b.op("Reshape", x, b.const("rows", np.array([-1, features], np.int64)))  # [steps * batch, features]
    rows = b.op(
        "Add", b.op("Mul", index, b.const("batch", np.array(batch, np.int64))), b.const("seqs", np.arange(batch))
    )
    return b.op("Gather", flat, rows, axis=0)


def _reversed_by_length(b, stacked: str, t: int, lens: str, batch: int, hidden: int) -> str:
    """Y at time t of a backward direction with sequence lengths, from its
    outputs by step `stacked`: sequence i wrote time t at step lens[i]-1-t
    (zero when t is past its length)."""
    step = b.op("Sub", b.op("Sub", lens, b.const("one", np.array(1, np.int64))), b.const("t", np.array(t, np.int64)))
    valid = b.op("Less", b.const("t", np.array([t], np.int64)), lens)
    step = b.op("Where", valid, step, b.const("zero", np.array(0, np.int64)))
    picked = _gather_per_batch(b, stacked, step, batch, hidden)
    mask = b.op("Unsqueeze", valid, b.const("axis1", np.array([1], np.int64)))
    return b.op("Where", mask, picked, b.const("zeros", np.zeros((1, hidden), np.float32)))


def join_directions(b, parts: list, out: str, axis: int, perm) -> None:
    """The directions' `parts` joined on `axis` as `out` (nothing when the
    node's output is unused), transposed by `perm` (layout 1)."""
    if not out:
        return
    joined = parts[0] if len(parts) == 1 else b.op("Concat", *parts, axis=axis)
    if perm:
        b.op("Transpose", joined, out=out, perm=perm)
    else:
        b.op("Identity", joined, out=out)


class _Cell:
    """One direction's weights and its step, as the ONNX operator defines it."""

    def __init__(self, node, a: dict, b, d: int, directions: int, layout: int, hidden: int, batch: int, functions):
        self.node, self.b, self.hidden, self.batch, self.layout = node, b, hidden, batch, layout
        self.d, self.directions, self.functions = d, directions, functions
        self.op = node.op_type
        self.memo = {}
        self.clip = a.get("clip")
        self.lbr = a.get("linear_before_reset", 0)
        self.input_forget = a.get("input_forget", 0)
        gates = GATES[self.op] * hidden
        self.w = self._direction(_input(node, W))  # [gates, features]
        self.r = self._direction(_input(node, R))  # [gates, hidden]
        self.w_t = b.op("Transpose", self.w, perm=[1, 0])
        bias = _input(node, B)
        if bias:
            both = self._direction(bias)  # [2 * gates]
            self.wb = self._slice(both, 0, gates, 0)
            self.rb = self._slice(both, gates, 2 * gates, 0)
        else:
            self.wb = self.rb = None
        self.p = self._direction(_input(node, P)) if self.op == "LSTM" and _input(node, P) else None

    def _direction(self, name: str) -> str:
        """Direction d's part of a [directions, ...] input, the axis dropped."""
        return self.b.op("Gather", name, self.b.const("d", np.array(self.d, np.int64)), axis=0)

    def _slice(self, value: str, start: int, end: int, axis: int) -> str:
        """value[start:end] along `axis`, made once per cell (the weights' parts)."""
        key = ("slice", value, start, end, axis)
        if key not in self.memo:
            self.memo[key] = self._new_slice(value, start, end, axis)
        return self.memo[key]

    def _new_slice(self, value: str, start: int, end: int, axis: int) -> str:
        b = self.b
        return b.op(
            "Slice",
            value,
            b.const("start", np.array([start], np.int64)),
            b.const("end", np.array([end], np.int64)),
            b.const("axis", np.array([axis], np.int64)),
        )

    def _state(self, index: int) -> str:
        name = _input(self.node, index)
        if not name:
            return self.b.const("zero_state", np.zeros((self.batch, self.hidden), np.float32))
        if self.layout:
            name = self.b.op("Transpose", name, perm=[1, 0, 2])
        return self._direction(name)

    def initial_h(self) -> str:
        return self._state(INITIAL_H)

    def initial_c(self) -> str:
        return self._state(INITIAL_C) if self.op == "LSTM" else ""

    def _gate(self, x_part: str, h_part: str, g: int, bias: bool = True) -> str:
        """x_part + h_part + the gate's two biases, before its activation."""
        b, lo, hi = self.b, g * self.hidden, (g + 1) * self.hidden
        value = b.op("Add", b.op("Slice", *self._bounds(x_part, lo, hi)), h_part)
        if bias and self.wb:
            value = b.op("Add", value, self._slice(self.wb, lo, hi, 0))
            value = b.op("Add", value, self._slice(self.rb, lo, hi, 0))
        return value

    def _bounds(self, value: str, lo: int, hi: int) -> tuple:
        b = self.b
        return (
            value,
            b.const("start", np.array([lo], np.int64)),
            b.const("end", np.array([hi], np.int64)),
            b.const("axis", np.array([1], np.int64)),
        )

    def _hr(self, h: str, lo_gate: int, hi_gate: int) -> str:
        """h times the gates' rows of R, transposed: [batch, (hi - lo) * hidden]."""
        key = ("rows", lo_gate, hi_gate)
        if key not in self.memo:
            rows = self._slice(self.r, lo_gate * self.hidden, hi_gate * self.hidden, 0)
            self.memo[key] = self.b.op("Transpose", rows, perm=[1, 0])
        return self.b.op("MatMul", h, self.memo[key])

    def _act(self, which: int, value: str, clipped: bool = True) -> str:
        """Activation `which` of the direction's list, its input clipped
        (but for LSTM's output activation of the cell state, which ONNX
        Runtime leaves unclipped)."""
        b = self.b
        if self.clip is not None and clipped:
            value = b.op(
                "Clip",
                value,
                b.const("low", np.array(-self.clip, np.float32)),
                b.const("high", np.array(self.clip, np.float32)),
            )
        op, attrs = self.functions[which]
        expanded = EXPANDED_ACTIVATIONS.get(op)
        return expanded(b, value) if expanded else b.op(op, value, **attrs)

    def step(self, xt: str, h: str, c: str) -> tuple:
        """(H, C) after one step from `xt` [batch, features]; C is "" but for LSTM."""
        b, hidden = self.b, self.hidden
        xw = b.op("MatMul", xt, self.w_t)  # [batch, gates]
        if self.op == "RNN":
            return self._act(0, self._gate(xw, self._hr(h, 0, 1), 0)), ""
        if self.op == "GRU":
            z = self._act(0, self._gate(xw, self._hr(h, 0, 1), 0))
            r = self._act(0, self._gate(xw, self._hr(h, 1, 2), 1))
            if self.lbr:
                hr = self._hr(h, 2, 3)
                if self.rb:
                    hr = b.op("Add", hr, self._slice(self.rb, 2 * hidden, 3 * hidden, 0))
                pre = b.op("Add", b.op("Slice", *self._bounds(xw, 2 * hidden, 3 * hidden)), b.op("Mul", r, hr))
                if self.wb:
                    pre = b.op("Add", pre, self._slice(self.wb, 2 * hidden, 3 * hidden, 0))
            else:
                pre = self._gate(xw, self._hr(b.op("Mul", r, h), 2, 3), 2)
            candidate = self._act(1, pre)
            one = b.const("one_f", np.array(1, np.float32))
            return b.op("Add", b.op("Mul", b.op("Sub", one, z), candidate), b.op("Mul", z, h)), ""
        # LSTM: W's gates are i, o, f, c; P's are i, o, f.
        i_pre = self._gate(xw, self._hr(h, 0, 1), 0)
        f_pre = self._gate(xw, self._hr(h, 2, 3), 2)
        if self.p:
            i_pre = b.op("Add", i_pre, b.op("Mul", self._slice(self.p, 0, hidden, 0), c))
            f_pre = b.op("Add", f_pre, b.op("Mul", self._slice(self.p, 2 * hidden, 3 * hidden, 0), c))
        i = self._act(0, i_pre)
        one = b.const("one_f", np.array(1, np.float32))
        f = b.op("Sub", one, i) if self.input_forget else self._act(0, f_pre)
        candidate = self._act(1, self._gate(xw, self._hr(h, 3, 4), 3))
        c_new = b.op("Add", b.op("Mul", f, c), b.op("Mul", i, candidate))
        o_pre = self._gate(xw, self._hr(h, 1, 2), 1)
        if self.p:
            o_pre = b.op("Add", o_pre, b.op("Mul", self._slice(self.p, hidden, 2 * hidden, 0), c_new))
        o = self._act(0, o_pre)
        return b.op("Mul", o, self._act(2, c_new, clipped=False)), c_new
