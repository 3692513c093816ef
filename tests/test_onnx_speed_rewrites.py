"""The speed rewrites (ireegen/frontend/onnx_speed_rewrites.py): each one
matches what it should and only that, and the rewritten model computes what
the model as written computes in ONNX Runtime, in async and runtimeless."""

import json

import numpy as np
import pytest
from conftest import onnxruntime_output, run_cli

from ireegen.parity import parity

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def _depthwise_model(path, convs):
    """x [1, 8, 12, 10] through the given depthwise Convs, one after another
    (each: kernel, pads, dilations, strides, bias), then a Relu."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(5)
    nodes, inits, value, dims = [], [], "x", [1, 8, 12, 10]
    for k, (kernel, pads, dilations, strides, bias) in enumerate(convs):
        inits.append(numpy_helper.from_array(rng.standard_normal((8, 1, *kernel)).astype(np.float32), f"w{k}"))
        inputs = [value, f"w{k}"]
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), f"b{k}"))
            inputs.append(f"b{k}")
        nodes.append(
            helper.make_node(
                "Conv",
                inputs,
                [f"c{k}"],
                name=f"dw{k}",
                group=8,
                kernel_shape=list(kernel),
                pads=list(pads),
                dilations=list(dilations),
                strides=list(strides),
            )
        )
        value = f"c{k}"
        for axis in (2, 3):
            span = dilations[axis - 2] * (kernel[axis - 2] - 1) + 1
            dims[axis] = (dims[axis] + pads[axis - 2] + pads[axis] - span) // strides[axis - 2] + 1
    nodes.append(helper.make_node("Relu", [value], ["y"]))
    graph = helper.make_graph(
        nodes,
        "depthwise",
        [helper.make_tensor_value_info("x", 1, [1, 8, 12, 10])],
        [helper.make_tensor_value_info("y", 1, dims)],
        inits,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))


def test_depthwise_conv_as_taps(tmp_path):
    path = tmp_path / "depthwise.onnx"
    _depthwise_model(
        path,
        [
            ((3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True),  # MobileNet's: rewritten
            ((3, 2), (2, 0, 1, 1), (2, 1), (1, 1), False),  # uneven pads, dilation, no bias: rewritten
            ((3, 3), (1, 1, 1, 1), (1, 1), (2, 2), True),  # strided: stride phases, rewritten
        ],
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["onnx_rewrites"] == [{"rewrite": "depthwise-conv-as-taps", "nodes": 3}]
    x = np.random.default_rng(1).standard_normal((1, 8, 12, 10)).astype(np.float32)
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"depthwise": [x]}, reference="onnxruntime", rtol=1e-5, atol=1e-5
    )
    assert report.agrees and not report.compile_errors, report.table()


def _one_conv_model(conv, x, inits):
    """A float model of the one Conv node `conv` on input `x` ("x" -> "y")."""
    from onnx import helper

    graph = helper.make_graph(
        [conv],
        "conv",
        [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [helper.make_tensor_value_info("y", 1, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _random_conv(rng, seed: int, depthwise: bool):
    """A one-Conv model on random shapes: batch, channels, sizes, kernel, pads,
    dilations and strides (per axis, up to 3, including strides that skip
    the input's last rows); a bias on odd seeds.  Returns (model, x)."""
    from onnx import helper, numpy_helper

    n = int(rng.integers(1, 3))
    c = int(rng.integers(2, 7)) if depthwise else int(rng.integers(1, 5))
    m = c if depthwise else int(rng.integers(1, 20))
    kernel = [int(rng.integers(1, 6)) for _ in range(2)]
    if not depthwise and kernel == [1, 1]:
        kernel[seed % 2] = 2
    dilations = [int(rng.integers(1, 3)) for _ in range(2)]
    strides = [int(rng.integers(1, 4)) for _ in range(2)]
    pads = [int(rng.integers(0, k)) for k in kernel * 2]  # a pad below the kernel's size, as ONNX exporters write
    spans = [d * (k - 1) + 1 for d, k in zip(dilations, kernel)]
    size = [int(rng.integers(max(1, s - p - q), s + 9)) for s, p, q in zip(spans, pads[:2], pads[2:])]
    x = rng.standard_normal((n, c, *size)).astype(np.float32)
    inits = [numpy_helper.from_array(rng.standard_normal((m, 1 if depthwise else c, *kernel)).astype(np.float32), "w")]
    inputs = ["x", "w"]
    if seed % 2:
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b"))
        inputs.append("b")
    conv = helper.make_node(
        "Conv",
        inputs,
        ["y"],
        group=c if depthwise else 1,
        kernel_shape=kernel,
        pads=pads,
        dilations=dilations,
        strides=strides,
    )
    return _one_conv_model(conv, x, inits), x


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("rewrite", ["depthwise-conv-as-taps", "conv-as-im2col-matmul"])
def test_conv_rewrites_on_random_shapes_match_onnxruntime(rewrite, seed):
    """The rewritten graph computes what ONNX Runtime computes for the Conv:
    depthwise Convs as taps, Convs over 1 to 4 channels as im2col + MatMul."""
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, x = _random_conv(np.random.default_rng(seed), seed, rewrite == "depthwise-conv-as-taps")
    expected = onnxruntime_output(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert {"rewrite": rewrite, "nodes": 1} in apply_rewrites(rewritten)
    assert "Conv" not in {node.op_type for node in rewritten.graph.node}
    got = onnxruntime_output(rewritten, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def _random_conv_transpose(rng, seed: int, **attrs):
    """A one-ConvTranspose model whose kernel equals its stride (1 to 3 per
    axis), on random batch, channels and sizes, with random pads (crops) and
    a bias on odd seeds.  Returns (model, x)."""
    from onnx import helper, numpy_helper

    n, c, m = int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
    kernel = [int(rng.integers(1, 4)) for _ in range(2)]
    size = [int(rng.integers(1, 9)) for _ in range(2)]
    pads = [int(rng.integers(0, s * k)) // 2 for s, k in zip(size * 2, kernel * 2)]
    x = rng.standard_normal((n, c, *size)).astype(np.float32)
    inits = [numpy_helper.from_array(rng.standard_normal((c, m, *kernel)).astype(np.float32), "w")]
    inputs = ["x", "w"]
    if seed % 2:
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b"))
        inputs.append("b")
    attrs = {"kernel_shape": kernel, "strides": kernel, "pads": pads, **attrs}
    graph = helper.make_graph(
        [helper.make_node("ConvTranspose", inputs, ["y"], **attrs)],
        "conv_transpose",
        [helper.make_tensor_value_info("x", 1, list(x.shape))],
        [helper.make_tensor_value_info("y", 1, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), x


@pytest.mark.parametrize("seed", range(30))
def test_conv_transpose_as_matmul_on_random_shapes_matches_onnxruntime(seed):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, x = _random_conv_transpose(np.random.default_rng(seed), seed)
    expected = onnxruntime_output(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert apply_rewrites(rewritten) == [{"rewrite": "conv-transpose-as-matmul", "nodes": 1}]
    assert "ConvTranspose" not in {node.op_type for node in rewritten.graph.node}
    got = onnxruntime_output(rewritten, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "attrs",
    [{"output_padding": [1, 0]}, {"dilations": [2, 1]}, {"auto_pad": "SAME_UPPER"}],
    ids=["output-padding", "dilations", "auto-pad"],
)
def test_conv_transpose_outside_the_pattern_stays(attrs):
    """Output padding, dilations, auto_pad, a stride other than the kernel:
    left to the compiler."""
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, _ = _random_conv_transpose(np.random.default_rng(7), 7, **attrs)
    if "auto_pad" in attrs:
        node = model.graph.node[0]
        del node.attribute[[a.name for a in node.attribute].index("pads")]
    assert apply_rewrites(model) == []


def test_conv_transpose_with_a_stride_other_than_its_kernel_stays():
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, _ = _random_conv_transpose(np.random.default_rng(8), 8)
    strides = next(a for a in model.graph.node[0].attribute if a.name == "strides")
    strides.ints[:] = [k + 1 for k in strides.ints]  # overlapping no more: gaps between the kernel's copies
    assert apply_rewrites(model) == []


def test_conv_transpose_as_matmul_through_iree(tmp_path):
    """A detector head's 2x2 stride-2 upsampling (bias, batch 2, a crop),
    verified by emit and against ONNX Runtime in async and runtimeless."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(11)
    inits = [
        numpy_helper.from_array(rng.standard_normal((6, 4, 2, 2)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b"),
    ]
    up = helper.make_node(
        "ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 1, 1, 0]
    )
    graph = helper.make_graph(
        [up],
        "up",
        [helper.make_tensor_value_info("x", 1, [2, 6, 5, 7])],
        [helper.make_tensor_value_info("y", 1, [2, 4, 9, 13])],
        inits,
    )
    path = tmp_path / "up.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["onnx_rewrites"] == [{"rewrite": "conv-transpose-as-matmul", "nodes": 1}]
    x = rng.standard_normal((2, 6, 5, 7)).astype(np.float32)
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"up": [x]}, reference="onnxruntime", rtol=1e-4, atol=1e-4
    )
    assert report.agrees and not report.compile_errors, report.table()


def test_conv_on_many_channels_stays_a_conv():
    """Five input channels, or a 1x1 kernel: IREE's own convolution (or
    matmul) codegen, no im2col of ours."""
    from onnx import helper, numpy_helper

    from ireegen.frontend.conv_im2col import conv_as_im2col_matmul

    for channels, kernel in ((5, 3), (3, 1)):
        w = numpy_helper.from_array(np.ones((4, channels, kernel, kernel), np.float32), "w")
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[kernel, kernel])],
            "conv",
            [helper.make_tensor_value_info("x", 1, [1, channels, 6, 6])],
            [helper.make_tensor_value_info("y", 1, None)],
            [w],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        shapes = {"x": [1, channels, 6, 6], "y": [1, 4, 7 - kernel, 7 - kernel]}
        assert conv_as_im2col_matmul(model, shapes, {"w": w}) == 0


def test_stem_conv_as_im2col_matmul(tmp_path):
    """An RGB stem (7x7, stride 2, pads 3, bias, batch 2) through IREE, verified
    by emit and against ONNX Runtime in async and runtimeless."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(rng.standard_normal((16, 3, 7, 7)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b"),
    ]
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3])
    graph = helper.make_graph(
        [conv, helper.make_node("Relu", ["c"], ["y"])],
        "stem",
        [helper.make_tensor_value_info("x", 1, [2, 3, 33, 30])],
        [helper.make_tensor_value_info("y", 1, [2, 16, 17, 15])],
        inits,
    )
    path = tmp_path / "stem.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["onnx_rewrites"] == [{"rewrite": "conv-as-im2col-matmul", "nodes": 1}]
    x = rng.standard_normal((2, 3, 33, 30)).astype(np.float32)
    report = parity(
        path, modes=["async", "runtimeless"], inputs={"stem": [x]}, reference="onnxruntime", rtol=1e-4, atol=1e-4
    )
    assert report.agrees and not report.compile_errors, report.table()


def test_grouped_but_not_depthwise_conv_is_left_alone():
    from onnx import helper, numpy_helper

    from ireegen.frontend.onnx_speed_rewrites import depthwise_conv_as_taps

    w = numpy_helper.from_array(np.ones((8, 2, 3, 3), np.float32), "w")  # group 4: two channels per group
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "grouped",
        [helper.make_tensor_value_info("x", 1, [1, 8, 6, 6])],
        [helper.make_tensor_value_info("y", 1, [1, 8, 6, 6])],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    shapes = {"x": [1, 8, 6, 6], "y": [1, 8, 6, 6]}
    assert depthwise_conv_as_taps(model, shapes, {"w": w}) == 0
    assert [n.op_type for n in model.graph.node] == ["Conv"]


def test_a_microcontroller_keeps_its_memory(tmp_path, monkeypatch):
    """For a Cortex-M the speed rewrites stay off (the taps' slices cost RAM,
    and an int8 model's depthwise Conv would no longer reach ireegen's int8
    kernel), and tuning defaults to off: the search chooses by time alone."""
    monkeypatch.delenv("IREEGEN_TUNE", raising=False)
    path = tmp_path / "depthwise.onnx"
    _depthwise_model(path, [((3, 3), (1, 1, 1, 1), (1, 1), (1, 1), True)])
    proc = run_cli("emit", path, "-o", tmp_path / "m4", "--execution-model", "runtimeless", "--target-cpu", "cortex-m4")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "m4" / "manifest.json").read_text())
    assert not manifest.get("onnx_rewrites") and "tuning" not in manifest


def _random_rnn_form(seed: int):
    """An RnnForm in the forms IREE lowers itself or turns into them
    (rnn-directions-as-forward): random op, direction, layout, sizes,
    initial states, bias and linear_before_reset."""
    from onnx_rnn_models import RnnForm

    rng = np.random.default_rng(seed)
    op = ("GRU", "LSTM", "RNN")[seed % 3]
    return RnnForm(
        op,
        ("forward", "reverse", "bidirectional")[int(rng.integers(0, 3))],
        layout=int(rng.integers(0, 2)),
        initial_h=bool(rng.integers(0, 2)),
        initial_c=op == "LSTM" and bool(rng.integers(0, 2)),
        bias=bool(rng.integers(0, 2)),
        linear_before_reset=int(op == "GRU" and rng.integers(0, 2)),
        seq=int(rng.integers(1, 9)),
        batch=int(rng.integers(1, 4)),
        input_size=int(rng.integers(1, 7)),
        hidden=int(rng.integers(1, 7)),
    )


@pytest.mark.parametrize("seed", range(30))
def test_rnn_steps_unrolled_on_random_forms_match_onnxruntime(tmp_path, seed):
    """The unrolled steps compute what ONNX Runtime computes for the node
    (GRU, LSTM, RNN in every direction and layout, with and without bias
    and initial states), Y, Y_h and Y_c."""
    from onnx_rnn_models import reference_outputs, write_rnn_model

    from ireegen.frontend.onnx_rewrites import apply_rewrites

    form = _random_rnn_form(seed)
    path = tmp_path / "rnn.onnx"
    inputs = write_rnn_model(path, form, seed=seed)
    expected = reference_outputs(path, form, inputs)
    model = onnx.load(str(path))
    assert "rnn-steps-unrolled" in {r["rewrite"] for r in apply_rewrites(model)}, form
    assert not {"GRU", "LSTM", "RNN"} & {node.op_type for node in model.graph.node}
    import onnxruntime as ort

    got = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)
    for g, e in zip(got, expected, strict=True):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_rnn_steps_outside_the_pattern_stay(tmp_path):
    """Left to IREE's loop: a sequence longer than rnn_steps.MAX_STEPS and
    weights that are not constants; sequence_lens is rnn-cells-unrolled's."""
    from onnx_rnn_models import RnnForm, write_rnn_model

    from ireegen.frontend.onnx_fold import static_shapes
    from ireegen.frontend.onnx_speed_rewrites import rnn_steps_unrolled
    from ireegen.frontend.rnn_steps import MAX_STEPS

    forms = [RnnForm("GRU", seq=MAX_STEPS + 1), RnnForm("LSTM", sequence_lens=(5, 3)), RnnForm("RNN")]
    models = []
    for k, form in enumerate(forms):
        write_rnn_model(tmp_path / f"{k}.onnx", form)
        models.append(onnx.load(str(tmp_path / f"{k}.onnx")))
    weights = models[2].graph.initializer[0]  # W as a graph input
    models[2].graph.input.append(onnx.helper.make_tensor_value_info(weights.name, 1, list(weights.dims)))
    del models[2].graph.initializer[0]
    for model in models:
        values = {t.name: t for t in model.graph.initializer}
        assert rnn_steps_unrolled(model, static_shapes(model), values) == 0


@pytest.mark.full_suite  # CI: test_onnx_rnn_rewrites' bidirectional GRU goes through this row in both modes
def test_rnn_steps_unrolled_through_iree(tmp_path):
    """A PyTorch-style GRU (linear_before_reset, an initial state): async
    emit unrolls it and verifies it against IREE's own loop and ONNX
    Runtime."""
    from onnx_rnn_models import RnnForm, write_rnn_model

    path = tmp_path / "gru.onnx"
    write_rnn_model(path, RnnForm("GRU", initial_h=True, linear_before_reset=1, seq=6, batch=1, hidden=8))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "async", "--tune", "off")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["onnx_rewrites"] == [{"rewrite": "rnn-steps-unrolled", "nodes": 1}]
    references = manifest["verification"]["references"]
    assert references["iree_defaults"]["used"] and references["onnxruntime"]["used"], references


def _random_grouped_conv(rng):
    """A one-Conv model of 2 to 4 groups of 2 to 4 input channels each, 1 to
    3 outputs per group, random kernel, pads, dilations and strides; a bias
    on half of them.  Returns (model, x)."""
    from onnx import helper, numpy_helper

    groups, per_group, outputs = (int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(1, 4)))
    kernel = [int(rng.integers(1, 6)) for _ in range(2)]
    dilations = [int(rng.integers(1, 3)) for _ in range(2)]
    strides = [int(rng.integers(1, 4)) for _ in range(2)]
    pads = [int(rng.integers(0, k)) for k in kernel * 2]
    spans = [d * (k - 1) + 1 for d, k in zip(dilations, kernel)]
    size = [int(rng.integers(max(1, s - p - q), s + 9)) for s, p, q in zip(spans, pads[:2], pads[2:])]
    x = rng.standard_normal((int(rng.integers(1, 3)), groups * per_group, *size)).astype(np.float32)
    w = rng.standard_normal((groups * outputs, per_group, *kernel)).astype(np.float32)
    inits, inputs = [numpy_helper.from_array(w, "w")], ["x", "w"]
    if rng.integers(0, 2):
        inits.append(numpy_helper.from_array(rng.standard_normal(groups * outputs).astype(np.float32), "b"))
        inputs.append("b")
    conv = helper.make_node(
        "Conv", inputs, ["y"], group=groups, kernel_shape=kernel, pads=pads, dilations=dilations, strides=strides
    )
    return _one_conv_model(conv, x, inits), x


@pytest.mark.parametrize("seed", range(30))
def test_grouped_conv_as_batched_matmul_on_random_shapes_matches_onnxruntime(seed):
    from ireegen.frontend.onnx_rewrites import apply_rewrites

    model, x = _random_grouped_conv(np.random.default_rng(seed))
    expected = onnxruntime_output(model, x)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    assert {"rewrite": "grouped-conv-as-batched-matmul", "nodes": 1} in apply_rewrites(rewritten)
    assert "Conv" not in {node.op_type for node in rewritten.graph.node}
    got = onnxruntime_output(rewritten, x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.full_suite  # an emit with verification: about 30 s on the shared 2-core machine
def test_grouped_conv_as_batched_matmul_through_iree(tmp_path):
    """A RegNet-style grouped Conv (groups of 4 channels, 3x3, stride 2,
    bias): runtimeless emit rewrites it and verifies it against IREE's own
    convolution and ONNX Runtime."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((16, 4, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b")
    conv = helper.make_node(
        "Conv", ["x", "w", "b"], ["y"], group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]
    )
    graph = helper.make_graph(
        [conv],
        "grouped",
        [helper.make_tensor_value_info("x", 1, [1, 16, 9, 9])],
        [helper.make_tensor_value_info("y", 1, [1, 16, 5, 5])],
        [w, b],
    )
    path = tmp_path / "grouped.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless", "--tune", "off")
    assert proc.returncode == 0 and "verified against " in proc.stdout, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["onnx_rewrites"] == [{"rewrite": "grouped-conv-as-batched-matmul", "nodes": 1}]
