"""ONNX files as exporters in the wild write them: PaddlePaddle's
`dim_value: -1` for an unknown size, old opsets whose upgrade renames or
resolves unknown dimensions, configuration inputs fixed with
`--input-value`.  Models are built here with onnx.helper in the shapes those
exporters write, and checked against ONNX Runtime."""

import json

import numpy as np
import pytest
from conftest import run_cli

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ORT = pytest.importorskip("onnxruntime")

from ireegen.frontend.onnx_import import _same_value  # noqa: E402


def _save(model, path):
    onnx.checker.check_model(model)
    onnx.save_model(model, str(path))
    return path


def _ort(path, feeds: dict) -> list:
    return ORT.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def paddle_bn_model(opset=12):
    """x [-1, 1, -1, -1] -> BatchNormalization -> Relu -> out [-1, 1, -1, -1]:
    unknown sizes written as PaddlePaddle writes them, and an opset-12
    BatchNormalization that IREE lowers only after the upgrade to 17."""
    inits = [
        numpy_helper.from_array(np.array([v], np.float32), n)
        for n, v in (("scale", 1.5), ("bias", -0.1), ("mean", 0.2), ("var", 0.9))
    ]
    graph = helper.make_graph(
        [
            helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn"),
            helper.make_node("Relu", ["y"], ["out"], name="relu"),
        ],
        "det",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 1, -1, -1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [-1, 1, -1, -1])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def test_negative_dim_value_is_unknown_and_input_shape_pins_it(tmp_path):
    """`dim_value: -1` shows as `?`, --input-shape pins it, and the opset-12
    model's upgrade (needed by BatchNormalization) is taken: the output's
    unknown sizes become the pinned ones, which is no interface change."""
    path = _save(paddle_bn_model(), tmp_path / "det.onnx")
    info = run_cli("info", path)
    assert info.returncode == 0, info.stderr
    assert "in  x: float32 [?x1x?x?]" in info.stdout and "out out: float32 [?x1x?x?]" in info.stdout

    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", "runtimeless", "--input-shape", "x=1x1x6x5")
    assert proc.returncode == 0, proc.stderr
    assert "verified against async" in proc.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["functions"][0]["inputs"][0]["shape"] == [1, 1, 6, 5]
    assert manifest["functions"][0]["outputs"][0]["shape"] == [1, 1, 6, 5]

    from ireegen.parity import parity

    x = np.linspace(-2, 2, 30, dtype=np.float32).reshape(1, 1, 6, 5)
    report = parity(
        path,
        modes=["async", "runtimeless"],
        input_shapes={"x": (1, 1, 6, 5)},
        inputs={"det": [x]},
        reference="onnxruntime",
        rtol=1e-5,
        atol=1e-6,
    )
    assert report.agrees, report.table()
    np.testing.assert_allclose(report.results["runtimeless"]["det"][0], _ort(path, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_negative_dim_value_unpinned_upgrade_renames_unknowns(tmp_path):
    """Unpinned, the converter names the unknown sizes (`?` -> `unk__N`): the same interface."""
    path = _save(paddle_bn_model(), tmp_path / "det.onnx")
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "async")
    assert proc.returncode == 0, proc.stderr


def test_input_shape_still_refuses_a_known_size(tmp_path):
    model = paddle_bn_model()
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 1
    path = _save(model, tmp_path / "det.onnx")
    proc = run_cli("info", path, "--input-shape", "x=1x3x6x5")
    assert proc.returncode == 2 and "dimension 1 of x is fixed at 1" in proc.stderr


@pytest.mark.parametrize(
    "before, after, same",
    [
        (("y", 1, ("?", 1)), ("y", 1, ("unk__54", 1)), True),  # an unknown size renamed
        (("y", 1, ("?", 1, "?", "?")), ("y", 1, (1, 1, 320, 320)), True),  # an unknown size resolved
        (("y", 1, None), ("y", 1, (1, 2)), True),  # an unknown rank resolved
        (("y", 1, (1, 2)), ("y", 1, (2,)), False),  # a dimension dropped
        (("y", 1, (1, 2)), ("y", 1, (1, 3)), False),  # a different static size
        (("y", 1, (1, 2)), ("y", 7, (1, 2)), False),  # a changed dtype
        (("y", 1, (1, 2)), ("y", 1, None), False),  # a shape lost
        (("y", 1, (1, 2)), ("z", 1, (1, 2)), False),  # a renamed value
    ],
)
def test_upgrade_interface_compares_dimensions_by_meaning(before, after, same):
    assert _same_value(before, after) is same


def branching_model():
    """`out = Relu(If(sr == 16000, x * 2, Concat(x, x)))`: a sample-rate input
    that picks a sub-network whose result has another shape, as speech
    models ship; with `sr` unknown the result's shape is dynamic."""
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    wide = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t"])], "at16k", [], [helper.make_tensor_value_info("t", 1, [1, "n"])]
    )
    narrow = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["e"], axis=1)],
        "at8k",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, "n"])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Equal", ["sr", "k16"], ["is16"], name="is16k"),
            helper.make_node("If", ["is16"], ["y"], name="pick", then_branch=wide, else_branch=narrow),
            helper.make_node("Relu", ["y"], ["out"], name="relu"),
        ],
        "vad",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
            helper.make_tensor_value_info("sr", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, "n"])],
        [two, numpy_helper.from_array(np.array(16000, np.int64), "k16")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_input_value_folds_a_branch_for_runtimeless(tmp_path):
    path = _save(branching_model(), tmp_path / "vad.onnx")
    refused = run_cli("emit", path, "-o", tmp_path / "dyn", "--execution-model", "runtimeless")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "result out has a dynamic shape" in refused.stderr and "--input-value" in refused.stderr
    assert not (tmp_path / "dyn").exists()

    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", "runtimeless", "--input-value", "sr=16000")
    assert proc.returncode == 0, proc.stderr
    assert "verified against async" in proc.stdout
    assert "int vad_vad(vad_t* model, const float* x, float* out);" in (out / "vad.h").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["source"]["input_values"] == {"sr": [16000]}
    assert [v["name"] for v in manifest["functions"][0]["inputs"]] == ["x"]
    assert manifest["functions"][0]["outputs"][0]["shape"] == [1, 4]

    from ireegen.parity import parity

    x = np.array([[1.5, -2.0, 3.0, -4.0]], np.float32)
    for rate, width in ((16000, 4), (8000, 8)):
        report = parity(
            path,
            modes=["async", "runtimeless"],
            input_values={"sr": (rate,)},
            inputs={"vad": [x]},
            reference="onnxruntime",
            rtol=1e-6,
            atol=0,
        )
        assert report.agrees and not report.compile_errors, report.table()
        got = report.results["runtimeless"]["vad"][0]
        assert got.shape == (1, width)
        np.testing.assert_array_equal(got, _ort(path, {"x": x, "sr": np.array(rate)})[0])


@pytest.mark.parametrize(
    "flag, message",
    [
        ("rate=16000", "--input-value rate: "),  # an unknown name
        ("sr=1,2", "--input-value sr: sr is int64 [scalar], 1 values; got 2"),  # a wrong count
        ("sr=0.5", "--input-value sr: 0.5 is not a int64 value"),  # a wrong type
        ("sr=abc", "--input-value 'sr=abc': 'abc' is not a finite number"),
        ("sr=nan", "'nan' is not a finite number"),
        ("sr", "--input-value 'sr': expected NAME=V[,V...]"),
        ("x=1,2,3", "--input-value x: x is float32 [1x4], 4 values; got 3"),
    ],
)
def test_input_value_errors(tmp_path, flag, message):
    path = _save(branching_model(), tmp_path / "vad.onnx")
    for command in (["info", path], ["emit", path, "-o", tmp_path / "out"]):
        proc = run_cli(*command, "--input-value", flag)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert not (tmp_path / "out").exists()
    # CMake's INPUT_VALUES is checked at configure time, by `resolve`.
    proc = run_cli("resolve", "--name", "vad", "-o", tmp_path / "out", "--src", path, "--input-value", flag)
    assert proc.returncode == 2 and message in proc.stderr


def test_input_value_needs_known_sizes_and_an_onnx_model(tmp_path, samples):
    model = branching_model()
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "n"
    path = _save(model, tmp_path / "vad.onnx")
    proc = run_cli("info", path, "--input-value", "x=1,2,3,4")
    assert proc.returncode == 2 and "dimension 1 of x is unknown; pin it with --input-shape too" in proc.stderr
    proc = run_cli("info", path, "--input-value", "x=1,2,3,4", "--input-shape", "x=1x4")
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("info", samples / "mlp" / "mlp.mlir", "--input-value", "x=1")
    assert proc.returncode == 2 and "--input-value: applies to .onnx models" in proc.stderr


def shape_guard_model():
    """`If(Shape(x)[0] == 1, x * 2, Concat(x, x))` on a dynamic batch, with
    the Concat's axis size computed at run time as PyTorch computes pads:
    pinned to batch 1 the branch is known, and the result static."""
    two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
    wide = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t"])], "one", [], [helper.make_tensor_value_info("t", 1, ["n", 4])]
    )
    narrow = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["e"], axis=0)],
        "many",
        [],
        [helper.make_tensor_value_info("e", 1, ["m", 4])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["shape"], name="shape"),
            helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch", axis=0),
            helper.make_node("Equal", ["batch", "one"], ["single"], name="single"),
            helper.make_node("If", ["single"], ["y"], name="guard", then_branch=wide, else_branch=narrow),
            helper.make_node("Relu", ["y"], ["out"], name="relu"),
        ],
        "guarded",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["M", 4])],
        [
            two,
            numpy_helper.from_array(np.array(0, np.int64), "zero"),
            numpy_helper.from_array(np.array(1, np.int64), "one"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_an_if_on_a_pinned_shape_folds(tmp_path):
    path = _save(shape_guard_model(), tmp_path / "guarded.onnx")
    refused = run_cli("emit", path, "-o", tmp_path / "dyn", "--execution-model", "runtimeless")
    assert refused.returncode == 2
    from ireegen.parity import parity

    x = np.array([[1.0, -2.0, 3.0, -4.0]], np.float32)
    report = parity(
        path,
        modes=["async", "runtimeless"],
        input_shapes={"x": (1, 4)},
        inputs={"guarded": [x]},
        reference="onnxruntime",
        rtol=1e-6,
        atol=0,
    )
    assert report.agrees and not report.compile_errors, report.table()
    np.testing.assert_array_equal(report.results["runtimeless"]["guarded"][0], _ort(path, {"x": x})[0])


def head_split_model():
    """x [1, 8, 6] split into 2 heads as PyTorch's attention exports it: the
    new shape computed from Shape(x) with a Mod and a Slice (onnx's shape
    inference cannot follow a Mod, so the Reshape's rank is unknown), then a
    5-D Transpose that IREE's lowering takes only on a known rank."""

    def const(name, values):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(values, np.int64), name))

    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        const("minus_one", [-1]),
        const("three", [3]),
        helper.make_node("Mod", ["minus_one", "three"], ["last"]),
        const("zero", [0]),
        helper.make_node("Slice", ["shape", "zero", "last"], ["leading"]),
        const("heads", [2, 3]),
        helper.make_node("Concat", ["leading", "heads"], ["split"], axis=0),
        helper.make_node("Reshape", ["x", "split"], ["heads_x"]),
        const("axis0", [0]),
        helper.make_node("Unsqueeze", ["heads_x", "axis0"], ["five"]),
        helper.make_node("Transpose", ["five"], ["moved"], perm=[3, 1, 2, 0, 4]),
        const("axis3", [3]),
        helper.make_node("Squeeze", ["moved", "axis3"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "heads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1, 8, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_sizes_computed_from_a_static_input_fold_without_input_shape(tmp_path):
    """The input's shape as the model declares it is as known as one pinned
    with --input-shape: the head split's sizes fold, and the 5-D Transpose
    gets its rank (a PyTorch TransformerEncoder exported by TorchScript was
    refused at that Transpose)."""
    path = _save(head_split_model(), tmp_path / "heads.onnx")
    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", "runtimeless")
    assert proc.returncode == 0, proc.stderr
    assert "ONNX Runtime" in proc.stdout, proc.stdout
