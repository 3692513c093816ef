"""Tiny ONNX GRU, LSTM and RNN models in every form the ops define, built
with onnx.helper, for tests/test_onnx_rnn_rewrites.py and
benchmarks/rnn_forms.py and rnn_sweep.py.

    form = RnnForm("GRU", "bidirectional", initial_h=True, sequence_lens=(3, 5))
    inputs = write_rnn_model(path, form)  # {graph input name: array}

A form names the op, its direction and which optional inputs and
attributes it has; the model has X, and initial_h (initial_c) when the
form has them, as graph inputs, the weights as initializers, and the
outputs the form wires (by default every output of the op: Y, Y_h, and
for LSTM Y_c) as graph outputs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

GATES = {"GRU": 3, "LSTM": 4, "RNN": 1}
DIRECTIONS = ("forward", "reverse", "bidirectional")


@dataclass(frozen=True)
class RnnForm:
    op: str  # GRU, LSTM or RNN
    direction: str = "forward"
    layout: int = 0
    initial_h: bool = False
    initial_c: bool = False  # LSTM only
    sequence_lens: tuple | None = None  # one length per batch entry, a constant
    bias: bool = True
    peepholes: bool = False  # LSTM only
    input_forget: int = 0  # LSTM only
    linear_before_reset: int = 0  # GRU only
    activations: tuple | None = None  # per direction, as the op lists them
    clip: float | None = None
    seq: int = 5
    batch: int = 2
    input_size: int = 3
    hidden: int = 4
    outputs: tuple | None = None  # the outputs wired to the graph (Y, Y_h, Y_c); None: all of the op's
    alphas: tuple | None = None  # activation_alpha, consumed in order by the activations that take one
    betas: tuple | None = None  # activation_beta, likewise

    @property
    def wired(self) -> tuple:
        return self.outputs or (("Y", "Y_h", "Y_c") if self.op == "LSTM" else ("Y", "Y_h"))

    @property
    def label(self) -> str:
        parts = [self.op.lower(), self.direction]
        parts += [f"layout{self.layout}"] if self.layout else []
        parts += ["h0"] if self.initial_h else []
        parts += ["c0"] if self.initial_c else []
        parts += ["lens" + "-".join(map(str, self.sequence_lens))] if self.sequence_lens else []
        parts += [] if self.bias else ["nobias"]
        parts += ["peepholes"] if self.peepholes else []
        parts += ["input-forget"] if self.input_forget else []
        parts += ["lbr"] if self.linear_before_reset else []
        parts += ["acts-" + "-".join(a.lower() for a in self.activations)] if self.activations else []
        parts += [f"clip{self.clip:g}"] if self.clip is not None else []
        parts += ["out-" + "-".join(self.outputs)] if self.outputs else []
        parts += ["alpha" + "-".join(f"{v:g}" for v in self.alphas)] if self.alphas else []
        parts += ["beta" + "-".join(f"{v:g}" for v in self.betas)] if self.betas else []
        return "_".join(parts)


def reference_outputs(path, form: RnnForm, inputs: dict) -> list:
    """ONNX Runtime's outputs of the model `write_rnn_model` wrote for
    `form`, given `inputs`.  ONNX Runtime has no batch-major (layout 1)
    recurrent ops: a layout-1 form runs as the same model in layout 0 on
    the transposed inputs, its outputs transposed back."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(str(path))
    if form.layout:
        node = model.graph.node[0]
        kept = [a for a in node.attribute if a.name != "layout"]
        del node.attribute[:]
        node.attribute.extend(kept)
        for value in (*model.graph.input, *model.graph.output):
            dims = value.type.tensor_type.shape.dim
            if value.name == "Y":  # [batch, seq, directions, hidden] -> [seq, directions, batch, hidden]
                batch, seq, directions = (d.dim_value for d in dims[:3])
                dims[0].dim_value, dims[1].dim_value, dims[2].dim_value = seq, directions, batch
            else:
                dims[0].dim_value, dims[1].dim_value = dims[1].dim_value, dims[0].dim_value
        inputs = {k: np.ascontiguousarray(np.swapaxes(v, 0, 1)) for k, v in inputs.items()}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = session.run(None, inputs)
    if form.layout:  # Y [seq, directions, batch, hidden] -> [batch, seq, directions, hidden]
        names = [o.name for o in session.get_outputs()]
        outputs = [np.transpose(o, (2, 0, 1, 3)) if n == "Y" else np.swapaxes(o, 0, 1) for n, o in zip(names, outputs)]
    return [np.ascontiguousarray(o) for o in outputs]


def write_rnn_model(path, form: RnnForm, seed: int = 0) -> dict:
    """Writes `form` as a one-node model to `path`; returns its inputs,
    random and reproducible, {name: array}."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    d = 2 if form.direction == "bidirectional" else 1
    g, h, n, t = GATES[form.op], form.hidden, form.batch, form.seq

    def init(name, shape, scale=0.5):
        return numpy_helper.from_array((scale * rng.standard_normal(shape)).astype(np.float32), name)

    inits = [init("W", (d, g * h, form.input_size)), init("R", (d, g * h, h))]
    node_inputs = ["X", "W", "R", "", "", "", "", ""]
    if form.bias:
        inits.append(init("B", (d, 2 * g * h)))
        node_inputs[3] = "B"
    if form.peepholes:
        inits.append(init("P", (d, 3 * h)))
    if form.sequence_lens is not None:
        inits.append(numpy_helper.from_array(np.array(form.sequence_lens, np.int32), "sequence_lens"))
        node_inputs[4] = "sequence_lens"
    x_dims = [t, n, form.input_size] if form.layout == 0 else [n, t, form.input_size]
    state_dims = [d, n, h] if form.layout == 0 else [n, d, h]
    inputs = {"X": rng.standard_normal(x_dims).astype(np.float32)}
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_dims)]
    for flag, name, slot in ((form.initial_h, "initial_h", 5), (form.initial_c, "initial_c", 6)):
        if flag:
            inputs[name] = (0.5 * rng.standard_normal(state_dims)).astype(np.float32)
            graph_inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, state_dims))
            node_inputs[slot] = name
    if form.peepholes:
        node_inputs[7] = "P"
    limit = {"GRU": 7, "RNN": 6, "LSTM": 8}[form.op]
    node_inputs = node_inputs[:limit]
    while node_inputs and not node_inputs[-1]:
        node_inputs.pop()
    attrs = {"hidden_size": h, "direction": form.direction}
    if form.layout:
        attrs["layout"] = form.layout
    if form.linear_before_reset:
        attrs["linear_before_reset"] = form.linear_before_reset
    if form.activations:
        attrs["activations"] = list(form.activations)
    if form.input_forget:
        attrs["input_forget"] = form.input_forget
    if form.clip is not None:
        attrs["clip"] = form.clip
    if form.alphas:
        attrs["activation_alpha"] = list(form.alphas)
    if form.betas:
        attrs["activation_beta"] = list(form.betas)
    outputs = [o if o in form.wired else "" for o in ("Y", "Y_h", "Y_c")[: 3 if form.op == "LSTM" else 2]]
    while not outputs[-1]:
        outputs.pop()
    y_dims = [t, d, n, h] if form.layout == 0 else [n, t, d, h]
    graph_outputs = [
        helper.make_tensor_value_info(o, TensorProto.FLOAT, y_dims if o == "Y" else state_dims) for o in outputs if o
    ]
    node = helper.make_node(form.op, node_inputs, outputs, name=f"{form.op.lower()}0", **attrs)
    graph = helper.make_graph([node], form.label, graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return inputs


# Activation lists per direction, the default first (random_form).
ACTIVATION_LISTS = {
    "GRU": [("Sigmoid", "Tanh"), ("HardSigmoid", "Relu"), ("Sigmoid", "Softsign")],
    "LSTM": [("Sigmoid", "Tanh", "Tanh"), ("HardSigmoid", "Tanh", "Relu"), ("Sigmoid", "Elu", "Tanh")],
    "RNN": [("Tanh",), ("Relu",), ("LeakyRelu",)],
}


def random_form(rng) -> RnnForm:
    """A form drawn from `rng` (numpy Generator), with the attributes
    exporters rarely set: reverse, layout 1, unequal sequence_lens, other
    activations (per direction), clip, linear_before_reset, initial_c,
    peepholes, input_forget, only Y_h or only Y_c wired; one step or more,
    odd and even sizes."""
    op = str(rng.choice(["GRU", "LSTM", "RNN"]))
    direction = str(rng.choice(DIRECTIONS))
    seq, batch = int(rng.choice([1, 2, 5, 7])), int(rng.choice([1, 2, 3]))
    form = RnnForm(
        op,
        direction,
        layout=int(rng.random() < 0.4),
        initial_h=bool(rng.random() < 0.5),
        bias=bool(rng.random() < 0.8),
        seq=seq,
        batch=batch,
        input_size=int(rng.choice([1, 2, 3, 6])),
        hidden=int(rng.choice([1, 3, 4, 5])),
    )
    if rng.random() < 0.3:
        form = replace(form, sequence_lens=tuple(int(v) for v in rng.integers(1, seq + 1, batch)))
    if rng.random() < 0.3:
        lists = ACTIVATION_LISTS[op]
        first, second = (lists[int(rng.integers(len(lists)))] for _ in range(2))
        form = replace(form, activations=first + (second if direction == "bidirectional" else ()))
        takes = [a for a in form.activations if a in ("HardSigmoid", "LeakyRelu", "Elu")]
        if takes and rng.random() < 0.5:  # values for the first activations that take them; the rest default
            form = replace(
                form, alphas=tuple(float(v) for v in rng.choice([0.1, 0.3, 0.7], int(rng.integers(1, len(takes) + 1))))
            )
            if "HardSigmoid" in takes and rng.random() < 0.5:
                form = replace(form, betas=(0.4,))
    if rng.random() < 0.2:
        form = replace(form, clip=float(rng.choice([0.3, 1.0, 2.5])))
    if op == "GRU":
        form = replace(form, linear_before_reset=int(rng.random() < 0.5))
    if op == "LSTM":
        form = replace(
            form,
            initial_c=bool(rng.random() < 0.5),
            peepholes=bool(rng.random() < 0.3),
            input_forget=int(rng.random() < 0.15),
        )
    if rng.random() < 0.3:
        wired = {"GRU": ["Y_h"], "RNN": ["Y_h"], "LSTM": ["Y_h", "Y_c", "Y_h,Y_c"]}[op]
        form = replace(form, outputs=tuple(str(rng.choice(wired)).split(",")))
    return form
