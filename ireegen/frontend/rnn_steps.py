"""onnx_speed_rewrites' `rnn-steps-unrolled`: a GRU, LSTM or RNN node in the
form IREE 3.13 lowers itself (forward, sequence-major, the default
activations, no sequence_lens, clip, peepholes or input_forget), over a
short static sequence, as its steps in plain ops.

IREE lowers such a node to a loop whose every step is a command buffer of
small dispatches that the host submits and waits for: in async each step
pays the VM's and the HAL's per-submission cost, which dwarfs its few
thousand multiply-adds (docs/peers.md, "Recurrent layers").  Unrolled, the
whole sequence is one command buffer.  The input projection of every step
is hoisted into one MatMul over the sequence, [T * N, I] x [I, G * H], with
the biases that add to it folded in as one constant; each step is then one
MatMul with R (two for a GRU whose reset gate multiplies the state before
it, linear_before_reset = 0) and the gates' elementwise ops.

The equations are the ONNX operators' (gates: GRU z, r, h; LSTM i, o, f, c;
RNN one); onnx_rnn_unroll.py unrolls the forms IREE computes wrongly.
"""

from __future__ import annotations

import numpy as np

from .onnx_rnn_unroll import GATES, INITIAL_C, INITIAL_H, MAX_UNROLLED_STEPS, B, R, W, X

# Unrolling a longer sequence costs more emit time than it saves (the
# unrolled graph grows with the steps); the same bound as onnx_rnn_unroll.
MAX_STEPS = MAX_UNROLLED_STEPS


def _input(node, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


def weights(node, known: dict):
    """(W, R, bias) of a one-direction node as float32 arrays, W [G*H, I],
    R [G*H, H], bias [2*G*H] (zeros when absent); None when any of them is
    not a constant of those shapes."""
    from onnx import numpy_helper

    arrays = []
    for index in (W, R, B):
        name = _input(node, index)
        if not name:
            arrays.append(None)
            continue
        if name not in known:
            return None
        arrays.append(numpy_helper.to_array(known[name]))
    w, r, bias = arrays
    if w is None or r is None or w.dtype != np.float32 or r.dtype != np.float32:
        return None
    if w.ndim != 3 or r.ndim != 3 or w.shape[0] != 1 or r.shape[0] != 1:
        return None
    w, r = w[0], r[0]
    gates, hidden = w.shape[0], r.shape[1]
    if gates != GATES[node.op_type] * hidden or r.shape[0] != gates:
        return None
    if bias is None:
        bias = np.zeros(2 * gates, np.float32)
    elif bias.dtype != np.float32 or bias.shape != (1, 2 * gates):
        return None
    else:
        bias = bias[0]
    return w, r, bias


def folded_bias(op_type: str, bias, hidden: int, linear_before_reset: int):
    """(the bias added to the hoisted input projection, the bias added to the
    state's product with R inside a step or None): Wb + Rb of every gate but
    a GRU's h gate with linear_before_reset, whose Rb stays with h R^T
    because the reset gate multiplies their sum."""
    gates = GATES[op_type] * hidden
    wb, rb = bias[:gates], bias[gates:].copy()
    if op_type == "GRU" and linear_before_reset:
        inner = np.zeros(gates, np.float32)
        inner[2 * hidden :] = rb[2 * hidden :]
        rb[2 * hidden :] = 0
        return wb + rb, inner
    return wb + rb, None


class _Steps:
    """One node's unrolled steps, built through a NodeBuilder `b`."""

    def __init__(self, b, op_type: str, r, inner_bias, hidden: int, batch: int, lbr: int):
        self.b, self.op_type, self.hidden, self.batch, self.lbr = b, op_type, hidden, batch, lbr
        self.bounds = {}
        if op_type == "GRU" and not lbr:
            self.r_zr_t = b.const("r_zr_t", np.ascontiguousarray(r[: 2 * hidden].T))
            self.r_h_t = b.const("r_h_t", np.ascontiguousarray(r[2 * hidden :].T))
        else:
            self.r_t = b.const("r_t", np.ascontiguousarray(r.T))  # [H, G*H]
        self.inner_bias = b.const("rb_h", inner_bias[2 * hidden :]) if inner_bias is not None else None

    def _bounds(self, lo: int, hi: int) -> tuple:
        """The Slice inputs of gates lo to hi along axis 1, made once."""
        if (lo, hi) not in self.bounds:
            b, hidden = self.b, self.hidden
            self.bounds[lo, hi] = (
                b.const("start", np.array([lo * hidden], np.int64)),
                b.const("end", np.array([hi * hidden], np.int64)),
                b.const("axis", np.array([1], np.int64)),
            )
        return self.bounds[lo, hi]

    def _part(self, value: str, lo: int, hi: int) -> str:
        return self.b.op("Slice", value, *self._bounds(lo, hi))

    def step(self, xw: str, h: str, c: str) -> tuple:
        """(H, C) after one step, from the step's input projection `xw`
        [N, G*H] (biases included) and the state; C is "" but for LSTM."""
        b = self.b
        if self.op_type == "RNN":
            return b.op("Tanh", b.op("Add", xw, b.op("MatMul", h, self.r_t))), ""
        if self.op_type == "LSTM":
            gates = b.op("Add", xw, b.op("MatMul", h, self.r_t))
            i, o, f = (b.op("Sigmoid", self._part(gates, g, g + 1)) for g in range(3))
            candidate = b.op("Tanh", self._part(gates, 3, 4))
            c_new = b.op("Add", b.op("Mul", f, c), b.op("Mul", i, candidate))
            return b.op("Mul", o, b.op("Tanh", c_new)), c_new
        # GRU: h' = (1 - z) * candidate + z * h, written candidate + z * (h - candidate).
        if self.lbr:
            hr = b.op("MatMul", h, self.r_t)
            zr = b.op("Sigmoid", b.op("Add", self._part(xw, 0, 2), self._part(hr, 0, 2)))
            z, r = self._part(zr, 0, 1), self._part(zr, 1, 2)
            inner = b.op("Add", self._part(hr, 2, 3), self.inner_bias) if self.inner_bias else self._part(hr, 2, 3)
            pre = b.op("Add", self._part(xw, 2, 3), b.op("Mul", r, inner))
        else:
            zr = b.op("Sigmoid", b.op("Add", self._part(xw, 0, 2), b.op("MatMul", h, self.r_zr_t)))
            z, r = self._part(zr, 0, 1), self._part(zr, 1, 2)
            pre = b.op("Add", self._part(xw, 2, 3), b.op("MatMul", b.op("Mul", r, h), self.r_h_t))
        candidate = b.op("Tanh", pre)
        return b.op("Add", candidate, b.op("Mul", z, b.op("Sub", h, candidate))), ""


def build(b, node, attrs: dict, w, r, bias, dims) -> None:
    """Appends through NodeBuilder `b` the unrolled steps of `node` (its
    attributes `attrs`, X of static `dims` [T, N, I]) with constant weights
    `w`, `r` and `bias` (weights()); its outputs keep their names."""
    steps, batch, features = dims
    hidden = r.shape[1]
    lbr = int(attrs.get("linear_before_reset", 0))
    outer, inner = folded_bias(node.op_type, bias, hidden, lbr)
    rows = b.op("Reshape", _input(node, X), b.const("rows", np.array([steps * batch, features], np.int64)))
    # [T * N, G * H]: step t's rows are t * N to (t + 1) * N, cut by a Slice
    # (a Gather would be a dispatch of its own in every step).
    projected = b.op("Add", b.op("MatMul", rows, b.const("w_t", np.ascontiguousarray(w.T))), b.const("wb", outer))
    axis0 = b.const("axis0", np.array([0], np.int64))
    cell = _Steps(b, node.op_type, r, inner, hidden, batch, lbr)

    def initial(index: int) -> str:
        name = _input(node, index)
        if name:  # [1, N, H] -> [N, H]
            return b.op("Reshape", name, b.const("state_shape", np.array([batch, hidden], np.int64)))
        return b.const("zero_state", np.zeros((batch, hidden), np.float32))

    h = initial(INITIAL_H)
    c = initial(INITIAL_C) if node.op_type == "LSTM" else ""
    ys = []
    for t in range(steps):
        rows_t = (
            b.const("t", np.array([t * batch], np.int64)),
            b.const("t_end", np.array([(t + 1) * batch], np.int64)),
        )
        h, c = cell.step(b.op("Slice", projected, *rows_t, axis0), h, c)
        ys.append(h)
    outputs = list(node.output) + [""] * 3
    if outputs[0]:
        axes = b.const("axes01", np.array([0, 1], np.int64))
        b.op("Concat", *(b.op("Unsqueeze", y, axes) for y in ys), axis=0, out=outputs[0])  # [T, 1, N, H]
    if outputs[1]:
        b.op("Unsqueeze", h, axis0, out=outputs[1])
    if node.op_type == "LSTM" and outputs[2]:
        b.op("Unsqueeze", c, axis0, out=outputs[2])
