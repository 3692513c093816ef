"""GRU, LSTM and RNN (ireegen/frontend/onnx_rnn_rewrites.py): every
reverse, bidirectional and batch-major form becomes forward, sequence-major
nodes that compute what ONNX Runtime computes on the model as written (run
in ONNX Runtime, over the whole matrix of forms: milliseconds each); a few
forms emit and agree with ONNX Runtime in async and runtimeless; the forms
IREE computes wrongly (sequence_lens, other activations, clip, peepholes,
input_forget) become their cells, one per step, checked the same ways;
what neither row takes is refused in one line naming the node, the
attribute and why it was not unrolled.  benchmarks/rnn_forms.py runs the whole matrix through IREE."""

import itertools
from dataclasses import replace

import numpy as np
import pytest
from conftest import run_cli
from onnx_rnn_models import RnnForm, random_form, reference_outputs, write_rnn_model

from ireegen.frontend.import_options import ImportOptions
from ireegen.frontend.onnx_fold import static_shapes
from ireegen.frontend.onnx_import import prepare_onnx
from ireegen.frontend.onnx_rnn_rewrites import rnn_cells_unrolled, rnn_directions_as_forward, unsupported_rnn_node
from ireegen.parity import parity

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _assert_computes(model, inputs, expected):
    """The rewritten model, run by ONNX Runtime, gives the node's outputs."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for got, want in zip(session.run(None, inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def _rewritable_forms() -> list:
    forms = []
    for op, direction, layout, states, bias in itertools.product(
        ("GRU", "LSTM", "RNN"), ("forward", "reverse", "bidirectional"), (0, 1), (False, True), (True, False)
    ):
        form = RnnForm(op, direction, layout, initial_h=states, initial_c=states and op == "LSTM", bias=bias)
        forms.append(form)
        if op == "GRU":
            forms.append(replace(form, linear_before_reset=1, batch=1, seq=3, hidden=5))
    return forms


@pytest.mark.parametrize("form", _rewritable_forms(), ids=lambda f: f.label)
def test_rewritten_nodes_compute_what_the_node_computes(tmp_path, form):
    path = tmp_path / "rnn.onnx"
    inputs = write_rnn_model(path, form, seed=len(form.label))
    expected = reference_outputs(path, form, inputs)
    model = onnx.load(str(path))
    rewritten = rnn_directions_as_forward(model, static_shapes(model), {t.name: t for t in model.graph.initializer})
    assert rewritten == (0 if form.direction == "forward" and not form.layout else 1)
    assert unsupported_rnn_node(model) is None
    recurrent = [n for n in model.graph.node if n.op_type == form.op]
    assert all(
        onnx.helper.get_attribute_value(a) in (b"forward", 0)
        for n in recurrent
        for a in n.attribute
        if a.name in ("direction", "layout")
    )
    assert len(recurrent) == (2 if form.direction == "bidirectional" else 1)
    onnx.checker.check_model(model)
    _assert_computes(model, inputs, expected)


@pytest.mark.parametrize("seed", range(40))
def test_random_forms_as_ireegen_imports_them_compute_what_the_node_computes(tmp_path, seed):
    """benchmarks/rnn_sweep.py's hand-built nodes (random_form) on a fixed
    seed: the graph prepare_onnx hands IREE's importer, every rewrite
    applied (speed ones too), computes in ONNX Runtime what the node does."""
    form = random_form(np.random.default_rng(seed))
    path = tmp_path / "rnn.onnx"
    inputs = write_rnn_model(path, form, seed=seed)
    expected = reference_outputs(path, form, inputs)
    model = prepare_onnx(path)[0]
    assert unsupported_rnn_node(model) is None
    assert [o.name for o in model.graph.output] == list(form.wired), form.label
    _assert_computes(model, inputs, expected)


# Forms IREE 3.13 computes wrongly or rejects, in every direction: unrolled.
OTHER_ACTIVATIONS = {"GRU": ("HardSigmoid", "Relu"), "LSTM": ("HardSigmoid", "Tanh", "Relu"), "RNN": ("Relu",)}


def _unrolled_forms() -> list:
    forms = []
    for op, direction in itertools.product(("GRU", "LSTM", "RNN"), ("forward", "reverse", "bidirectional")):
        d = 2 if direction == "bidirectional" else 1
        base = RnnForm(op, direction, initial_h=True, initial_c=op == "LSTM")
        forms += [
            replace(base, sequence_lens=(5, 3)),
            replace(base, sequence_lens=(2, 5), layout=1),
            replace(base, sequence_lens=(4, 1, 3), batch=3, bias=False, initial_h=False, initial_c=False),
            replace(base, activations=OTHER_ACTIVATIONS[op] * d),
            replace(base, clip=0.3),
        ]
        if op == "GRU":
            forms.append(replace(base, linear_before_reset=1, sequence_lens=(3, 5)))
        if op == "LSTM":
            forms += [
                replace(base, peepholes=True),
                replace(base, input_forget=1),
                replace(base, peepholes=True, input_forget=1, sequence_lens=(1, 4)),
            ]
    return forms


@pytest.mark.parametrize("form", _unrolled_forms(), ids=lambda f: f.label)
def test_unrolled_cells_compute_what_the_node_computes(tmp_path, form):
    path = tmp_path / "rnn.onnx"
    inputs = write_rnn_model(path, form, seed=len(form.label))
    expected = reference_outputs(path, form, inputs)
    model = onnx.load(str(path))
    assert unsupported_rnn_node(model)  # IREE's own lowering would compute it wrongly
    assert rnn_cells_unrolled(model, static_shapes(model), {t.name: t for t in model.graph.initializer}) == 1
    assert not [n for n in model.graph.node if n.op_type == form.op] and unsupported_rnn_node(model) is None
    _assert_computes(model, inputs, expected)


@pytest.mark.parametrize("op", ["GRU", "LSTM", "RNN"])
def test_unrolled_activations_iree_lacks_are_written_as_the_ops_that_compute_them(tmp_path, op):
    """IREE 3.13's ONNX lowering has no Softsign: an unrolled cell writes
    x / (1 + |x|), and the refusal never names a node ireegen wrote."""
    acts = {"GRU": ("Softsign", "Softsign"), "LSTM": ("Softsign", "Softsign", "Softsign"), "RNN": ("Softsign",)}[op]
    form = RnnForm(op, "bidirectional", activations=acts * 2, initial_h=True)
    path = tmp_path / "rnn.onnx"
    inputs = write_rnn_model(path, form)
    model = prepare_onnx(path)[0]
    assert not [n for n in model.graph.node if n.op_type in ("Softsign", op)]
    _assert_computes(model, inputs, reference_outputs(path, form, inputs))


# Forms neither row takes, and what the refusal names.
REFUSED = {
    RnnForm("GRU", "bidirectional", sequence_lens=(200, 3), seq=200): (
        "GRU 'gru0': sequence_lens: IREE 3.13's lowering ignores the lengths",
        "ireegen cannot unroll its cells instead: a sequence of 200 steps (ireegen unrolls the cells only up to 64)",
    ),
    RnnForm("RNN", "reverse", activations=("ScaledTanh",)): (
        "RNN 'rnn0': activations=ScaledTanh: ",
        "ireegen cannot unroll its cells instead: activations=scaledtanh: not an activation ireegen computes",
    ),
}


@pytest.mark.parametrize("form", list(REFUSED), ids=lambda f: f.label)
def test_what_neither_row_takes_is_named(tmp_path, form):
    path = tmp_path / "rnn.onnx"
    write_rnn_model(path, form)
    model = onnx.load(str(path))
    shapes, values = static_shapes(model), {t.name: t for t in model.graph.initializer}
    assert rnn_cells_unrolled(model, shapes, values) == 0 and rnn_directions_as_forward(model, shapes, values) == 0
    message = unsupported_rnn_node(model)
    assert message and message.startswith(REFUSED[form][0]) and REFUSED[form][1] in message, message


def test_default_activations_given_explicitly_are_no_cause(tmp_path):
    path = tmp_path / "rnn.onnx"
    write_rnn_model(path, RnnForm("GRU", "forward", activations=("sigmoid", "tanh")))
    assert unsupported_rnn_node(onnx.load(str(path))) is None


def test_emit_refuses_in_one_line(tmp_path):
    path = tmp_path / "lens.onnx"
    write_rnn_model(path, RnnForm("LSTM", "bidirectional", sequence_lens=(130, 3), seq=130))
    proc = run_cli("emit", path, "-o", tmp_path / "out")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"{path}: LSTM 'lstm0': sequence_lens: IREE 3.13's lowering ignores the lengths" in proc.stderr
    assert "a sequence of 130 steps" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_state_of_another_hidden_size_is_refused_as_malformed(tmp_path):
    """What the dynamo exporter writes for an LSTM with proj_size: an LSTM
    node with hidden_size the projection's and initial_c the cell's size,
    which ONNX's shape inference lets through and IREE fails on elsewhere."""
    path = tmp_path / "proj.onnx"
    write_rnn_model(path, RnnForm("LSTM", "forward", initial_h=True, initial_c=True))
    model = onnx.load(str(path))
    model.graph.input[2].type.tensor_type.shape.dim[2].dim_value = 7  # initial_c [1, 2, 7], hidden_size 4
    onnx.save(model, str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--tune", "off")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert (
        "LSTM 'lstm0': its input initial_c has the shape 1x2x7, where hidden_size=4, 1 direction(s) and X need 1x2x4"
        in proc.stderr
    )
    assert not (tmp_path / "out").exists()


def test_a_gru_over_symbolic_dimensions_is_refused_with_the_input_shape_hint(tmp_path):
    """IREE 3.13's GRU lowering fails on a symbolic sequence or batch (an
    export with dynamic axes): refused naming the inputs to pin; pinned
    with --input-shape, the rewrites take it."""
    path = tmp_path / "gru.onnx"
    inputs = write_rnn_model(path, RnnForm("GRU", "bidirectional", initial_h=True))
    model = onnx.load(str(path))
    for value in model.graph.input:
        value.type.tensor_type.shape.dim[0 if value.name == "X" else 1].dim_param = "n"
    onnx.save(model, str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--tune", "off")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "GRU 'gru0': its input X has symbolic dimensions, and IREE 3.13's GRU lowering fails on them" in proc.stderr
    assert "give the sizes of 'X', 'initial_h' with --input-shape NAME=DIMS" in proc.stderr
    shapes = {k: list(v.shape) for k, v in inputs.items()}
    assert prepare_onnx(path, ImportOptions(input_shapes=shapes))[1]  # rewritten, not refused


EMITTED = [
    RnnForm("GRU", "bidirectional", initial_h=True),
    RnnForm("LSTM", "reverse", initial_h=True, initial_c=True, sequence_lens=(3, 5), peepholes=True),
    pytest.param(
        RnnForm("RNN", "bidirectional", sequence_lens=(5, 2), activations=("Relu", "Tanh")), marks=pytest.mark.slow
    ),
    pytest.param(RnnForm("LSTM", "reverse", layout=1, initial_h=True, initial_c=True, batch=1), marks=pytest.mark.slow),
    pytest.param(RnnForm("RNN", "bidirectional", layout=1, bias=False), marks=pytest.mark.slow),
    pytest.param(RnnForm("GRU", "reverse", layout=1, linear_before_reset=1), marks=pytest.mark.slow),
    pytest.param(
        RnnForm("GRU", "forward", layout=1, initial_h=True, linear_before_reset=1, activations=("Sigmoid", "Softsign")),
        marks=pytest.mark.full_suite,
    ),
]


@pytest.mark.parametrize("form", EMITTED, ids=lambda f: f.label)
def test_rewritten_forms_agree_with_onnxruntime(tmp_path, form):
    path = tmp_path / f"{form.label}.onnx"
    inputs = write_rnn_model(path, form)
    report = parity(
        path,
        modes=["async", "runtimeless"],
        inputs={form.label: list(inputs.values())},
        expected={form.label: reference_outputs(path, form, inputs)},
        rtol=1e-5,
        atol=1e-5,
    )
    assert report.agrees and not report.compile_errors, report.table()
    assert {r.mode for r in report.rows if r.against == "expected"} == {"async", "runtimeless"}, report.table()
