"""`emit --quantized-io`: a QDQ model's int8 interface, and verification's
one-step tolerance on quantized outputs (docs/kernels-int8.md).

Random QDQ graphs (onnxruntime's quantize_static of random float models)
go through emit with the int8 interface; the caller quantizes its float
input with the header's scale and zero point, and the int8 output is
compared with ONNX Runtime running the original QDQ model on the float
input, its float output quantized back (exact: it is a DequantizeLinear's).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from ireegen.check.compare import compare
from ireegen.cli import main
from ireegen.frontend.onnx_import import _effective_inputs
from ireegen.frontend.quantized_io import cut_quantized_io, dequantized_outputs

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from mlperf_tiny_models import quantize_qdq  # noqa: E402


def _random_float_model(rng, softmax: bool, reshape: bool):
    """A small random CNN: [Reshape] Conv (3x3 same or 1x1, stride 1 or 2)
    -> Relu -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm
    [-> Softmax]; random batch, channels and size."""
    n, c, h, w = int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(4, 9)), int(rng.integers(4, 9))
    f1, f2, classes = int(rng.integers(2, 9)), int(rng.integers(2, 9)), int(rng.integers(2, 12))
    k1 = int(rng.choice([1, 3]))
    s1 = int(rng.choice([1, 2])) if k1 == 3 else 1
    pads1 = [1, 1, 1, 1] if (k1, s1) == (3, 1) else ([0, 0, 1, 1] if k1 == 3 else [0, 0, 0, 0])

    def init(name, shape, scale):
        return onnx.numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        init("w1", (f1, c, k1, k1), 0.4),
        init("b1", (f1,), 0.2),
        init("w2", (f2, f1, 3, 3), 0.3),
        init("b2", (f2,), 0.2),
        init("fw", (classes, f2), 0.5),
        init("fb", (classes,), 0.2),
    ]
    nodes, first = [], "x"
    x_shape = [n, c, h, w]
    if reshape:  # the DS-CNN form: the graph input is reshaped before it is quantized
        x_shape = [n, c * h * w]
        inits.append(onnx.numpy_helper.from_array(np.array([n, c, h, w], np.int64), "shape"))
        nodes.append(helper.make_node("Reshape", ["x", "shape"], ["x4"]))
        first = "x4"
    nodes += [
        helper.make_node("Conv", [first, "w1", "b1"], ["c1"], pads=pads1, strides=[s1, s1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
        helper.make_node("Flatten", ["p"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fw", "fb"], ["logits" if softmax else "y"], transB=1),
    ]
    if softmax:
        nodes.append(helper.make_node("Softmax", ["logits"], ["y"], axis=-1))
    graph = helper.make_graph(
        nodes,
        "net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, classes])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    samples = [{"x": rng.standard_normal(x_shape).astype(np.float32)} for _ in range(4)]
    return quantize_qdq(model, samples), x_shape


def _quantize(x, q: dict):
    """What the caller does with the header's SCALE and ZERO_POINT (round half to even, saturate)."""
    info = np.iinfo(q["dtype"])
    return np.clip(np.rint(x / np.float32(q["scale"])) + q["zero_point"], info.min, info.max).astype(q["dtype"])


# (seed, softmax, reshape, target): the host runs the kernels' portable C
# (--kernels, the builtin spec); the M4 under qemu (on by default) the DSP path.
CASES = [(1, True, False, "host"), (2, False, True, "host"), (3, True, True, "cortex-m4")]


@pytest.mark.parametrize("seed,softmax,reshape,target", CASES)
def test_random_qdq_graph_int8_interface_equals_onnxruntime(tmp_path, seed, softmax, reshape, target):
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.cbuild.native_run import build_runner
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    if target != "host":
        missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
        if missing:
            pytest.skip(f"{', '.join(missing)} not installed")
    rng = np.random.default_rng(seed)
    model, x_shape = _random_float_model(rng, softmax, reshape)
    path = tmp_path / "net.onnx"
    onnx.save(model, path)
    if target == "host":
        config, kernels = make_config("runtimeless"), spec_path()
    else:
        config, kernels = make_config("runtimeless", target_cpu=target), None
    result = emit(path, tmp_path / "out", config, name="net", kernels=kernels, quantized_io=True)

    (fn,) = result.manifest["functions"]
    (x,), (y,) = fn["inputs"], fn["outputs"]
    assert x["dtype"] == y["dtype"] == "int8" and x["quantization"] and y["quantization"]
    assert result.manifest["quantized_io"] is True
    assert result.manifest["verification"]["functions"]["net"]["outputs"]["y"]["tolerance"]["atol"] == 1.0
    header = (tmp_path / "out" / "net.h").read_text()
    assert re.search(r"int net_net\(net_t\* model, const int8_t\* x,\s+int8_t\* y\);", header), header
    for v in (x, y):
        macro = v["c_macro_prefix"]
        scale = re.search(rf"#define {macro}_SCALE (\S+)f\n", header).group(1)
        zero = re.search(rf"#define {macro}_ZERO_POINT \(?(-?\d+)\)?\n", header).group(1)
        assert np.float32(float(scale)) == np.float32(v["quantization"]["scale"])
        assert int(zero) == v["quantization"]["zero_point"]
    if softmax:
        kernels = {k for c in result.manifest["kernels"]["dispatches"] for k in c["kernels"]}
        assert "ireegen_i8_softmax" in kernels, kernels

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    runner = build_runner(tmp_path / "out", tmp_path / "build")
    for run in range(3):
        real = (rng.standard_normal(x_shape) * rng.uniform(0.5, 2)).astype(np.float32)
        got = runner.call("net", [_quantize(real, x["quantization"])])[0][0]
        want = _quantize(session.run(None, {"x": real})[0], y["quantization"])
        assert np.array_equal(got, want), f"run {run}: {np.count_nonzero(got != want)} of {got.size} differ"


def _qdq_chain(extra_reader: bool = False, float_tail: bool = False, i8=TensorProto.INT8):
    """x -> Q -> DQ -> Relu -> Q -> DQ -> y, by hand; `extra_reader`: x also
    feeds an Add; `float_tail`: y is the Relu's float output; `i8`: the
    quantized type (INT8 or UINT8)."""
    f = TensorProto.FLOAT
    inits = [
        helper.make_tensor("s", f, [], [0.05]),
        helper.make_tensor("z", i8, [], [3]),
        helper.make_tensor("s2", f, [], [0.1]),
        helper.make_tensor("z2", i8, [], [-7 if i8 == TensorProto.INT8 else 7]),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
        helper.make_node("Relu", ["xd"], ["r"] if not float_tail else ["y"]),
    ]
    if not float_tail:
        nodes += [
            helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["rq"]),
            helper.make_node("DequantizeLinear", ["rq", "s2", "z2"], ["y"]),
        ]
    outputs = [helper.make_tensor_value_info("y", f, [2, 3])]
    if extra_reader:
        nodes.append(helper.make_node("Add", ["x", "x"], ["twice"]))
        outputs.append(helper.make_tensor_value_info("twice", f, [2, 3]))
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", f, [2, 3])], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_cut_of_a_uint8_model_gives_uint8():
    model = _qdq_chain(i8=TensorProto.UINT8)
    cut = cut_quantized_io(model, "chain.onnx", _effective_inputs(model))
    assert {k: (q.zero_point, q.dtype) for k, q in cut.items()} == {"x": (3, "uint8"), "y": (7, "uint8")}
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.UINT8
    assert model.graph.output[0].type.tensor_type.elem_type == TensorProto.UINT8


def test_cut_gives_the_quantized_tensors_and_keeps_the_rest():
    model = _qdq_chain()
    assert {k: (q.scale, q.zero_point) for k, q in dequantized_outputs(model).items()} == {"y": (np.float32(0.1), -7)}
    cut = cut_quantized_io(model, "chain.onnx", _effective_inputs(model))
    assert {k: (np.float32(q.scale), q.zero_point, q.dtype) for k, q in cut.items()} == {
        "x": (np.float32(0.05), 3, "int8"),
        "y": (np.float32(0.1), -7, "int8"),
    }
    assert [n.op_type for n in model.graph.node] == [
        "Identity",
        "DequantizeLinear",
        "Relu",
        "QuantizeLinear",
        "Identity",
    ]
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.INT8
    assert model.graph.output[0].type.tensor_type.elem_type == TensorProto.INT8
    # The cut graph in ONNX Runtime: the caller's int8 in, the int8 out.
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    xq = np.array([[-128, 0, 3], [50, 100, 127]], np.int8)
    expected = np.clip(np.rint(np.maximum((xq.astype(np.float32) - 3) * 0.05, 0) / 0.1) - 7, -128, 127)
    assert np.array_equal(session.run(None, {"x": xq})[0], expected.astype(np.int8))


@pytest.mark.parametrize(
    "model,words",
    [
        (_qdq_chain(extra_reader=True), ["input x is read by an unnamed Add node", "cannot take int8"]),
        (_qdq_chain(float_tail=True), ["output y is computed by an unnamed Relu node, not by a DequantizeLinear"]),
    ],
    ids=["input-read-by-add", "float-output"],
)
def test_a_tensor_that_cannot_be_cut_is_refused_in_one_line(tmp_path, capsys, model, words):
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    try:
        status = main(["emit", str(path), "-o", str(tmp_path / "out"), "--quantized-io"])
    except SystemExit as e:
        status = e.code
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "--quantized-io" in err and all(w in err for w in words), err
    assert not (tmp_path / "out").exists()


def test_one_quantization_step_is_accepted_and_two_are_refused():
    """Verification's rule for quantized outputs (check/compare.py): one
    step in the output's units, no more; other outputs as before."""
    want_q = np.array([-128, -3, 0, 17, 127], np.int8)
    one = want_q.astype(np.int16) + np.array([0, 1, -1, 0, 0])
    two = want_q.astype(np.int16) + np.array([0, 0, 2, 0, 0])
    assert compare("f", "y", "m", one.astype(np.int8), want_q, 1e-4, 1e-5, step=1.0).verdict == "ok"
    assert compare("f", "y", "m", two.astype(np.int8), want_q, 1e-4, 1e-5, step=1.0).verdict == "mismatch"
    # A float output of a DequantizeLinear: steps of its scale.
    scale, zero = np.float32(0.00392157), -128
    want_f = (want_q.astype(np.float32) - zero) * scale
    one_f = (one.astype(np.float32) - zero) * scale
    two_f = (two.astype(np.float32) - zero) * scale
    assert compare("f", "y", "m", one_f, want_f, 1e-4, 1e-5, scale_atol=True, step=float(scale)).verdict == "ok"
    assert compare("f", "y", "m", two_f, want_f, 1e-4, 1e-5, scale_atol=True, step=float(scale)).verdict == "mismatch"
    # Without a step (not a quantized output), one step is a mismatch, as before.
    assert compare("f", "y", "m", one_f, want_f, 1e-4, 1e-5, scale_atol=True).verdict == "mismatch"
    assert compare("f", "y", "m", one.astype(np.int8), want_q, 1e-4, 1e-5).verdict == "mismatch"


def test_async_takes_the_int8_interface_too(tmp_path):
    """The cut is made on the ONNX graph, so a VM mode gets it as well: the
    typed call takes and returns int8, with the scale and zero point, and
    the module computes the QDQ chain on the caller's int8 values."""
    from ireegen.check.subjects import module_subject
    from ireegen.config.modes import make_config
    from ireegen.emit import emit
    from ireegen.frontend.signature import Function

    path = tmp_path / "chain.onnx"
    onnx.save(_qdq_chain(), path)
    result = emit(path, tmp_path / "out", make_config("async"), name="chain", quantized_io=True)
    header = (tmp_path / "out" / "chain.h").read_text()
    assert "const int8_t* x" in header and "int8_t* y" in header
    assert "#define CHAIN_CHAIN_X_ZERO_POINT 3\n" in header and "#define CHAIN_CHAIN_Y_ZERO_POINT (-7)\n" in header
    (module,) = [f["path"] for f in result.manifest["files"] if f["path"].endswith(".vmfb")]
    fn = Function.from_json(result.manifest["functions"][0])
    xq = np.array([[-128, 0, 3], [50, 100, 127]], np.int8)
    (got,) = module_subject("async", tmp_path / "out" / module, None).run(fn, [xq])
    expected = np.clip(np.rint(np.maximum((xq.astype(np.float32) - 3) * 0.05, 0) / 0.1) - 7, -128, 127)
    assert np.array_equal(got, expected.astype(np.int8))


def test_a_kernel_two_steps_off_is_refused(tmp_path):
    """End to end: the int8 kernels with a softmax whose outputs are two
    quantization steps off (its output zero point moved by 2) fail emit's
    verification; one step is what the rule allows, not two."""
    from ireegen.cbuild.int8_kernels import spec_path
    from ireegen.check.verify import VerificationError
    from ireegen.config.modes import make_config
    from ireegen.emit import emit

    kernels = tmp_path / "int8"
    shutil.copytree(spec_path().parent, kernels)
    source = (kernels / "softmax.c").read_text()
    wrong = source.replace("y_range / sum, y_zero);", "y_range / sum, y_zero + 2);")
    assert wrong != source
    (kernels / "softmax.c").write_text(wrong)
    model, _ = _random_float_model(np.random.default_rng(4), softmax=True, reshape=False)
    onnx.save(model, tmp_path / "net.onnx")
    with pytest.raises(VerificationError, match="computes different numbers") as refused:
        emit(tmp_path / "net.onnx", tmp_path / "out", make_config("runtimeless"), kernels=kernels / "kernels.json")
    row = next(line for line in str(refused.value).splitlines() if "mismatch" in line)
    step = dequantized_outputs(model)["y"].scale
    assert float(row.split()[4]) == pytest.approx(2 * step, rel=1e-2), row  # max abs error: two steps
    assert not (tmp_path / "out").exists()


def test_cmake_quantized_io(tmp_path):
    """CMake's QUANTIZED_IO is --quantized-io: the generated header takes int8."""
    from conftest import build_generate_only

    path = tmp_path / "chain.onnx"
    onnx.save(_qdq_chain(), path)
    line = f"ireegen_add_model(chain SRC {path} EXECUTION_MODEL runtimeless GENERATE_ONLY QUANTIZED_IO)"
    build = build_generate_only(tmp_path, tmp_path / "build", line)
    assert build.returncode == 0, build.stdout[-3000:]
    (manifest,) = (tmp_path / "build").rglob("manifest.json")
    assert json.loads(manifest.read_text())["quantized_io"] is True
    (header,) = (tmp_path / "build").rglob("chain.h")
    assert "const int8_t* x" in header.read_text()
