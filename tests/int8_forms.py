"""A seeded generator of small QDQ int8 graphs over the forms ireegen's int8
match spec accepts (docs/kernels-int8.md): convolutions (kernel 1, 3 or 5,
stride 1 or 2, symmetric and one-sided pads, depthwise, with and without
bias, a fused Relu or Clip), average pools (windowed, whole-map and
global) and max pools, Gemm and MatMul with and without bias, the Add of
two tensors with their own scales, and Softmax after a fully connected
layer.

One model holds several branches, each from its own graph input to its own
output, so that one emit checks several forms and ONNX Runtime fuses every
branch (a DequantizeLinear read by two nodes stays float in ORT,
docs/kernels-int8.md, Limits).  The float model is quantized by
onnxruntime's quantize_static (QDQ, QInt8 activations and weights, per
tensor, MinMax over seeded calibration inputs).

    python tests/int8_forms.py SEED[:END] OUTDIR   # emits cases SEED..END-1, prints each mismatch
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from mlperf_tiny_models import quantize_qdq  # noqa: E402

OPSET = 17
BRANCHES = 6  # forms per model
KINDS = ("conv", "conv", "dwconv", "avgpool", "kerasavgpool", "maxpool", "fc", "add", "softmax")


@dataclass
class Branch:
    """One form: its description, its graph input's shape and the nodes from
    input `x{i}` to output `y{i}`."""

    text: str
    x_shape: tuple
    y_shape: tuple
    nodes: list
    inits: list
    second_input: bool = False  # a second graph input `x{i}b` of x_shape (the Add's)


class _Builder:
    def __init__(self, rng, index: int):
        self.rng, self.index, self.nodes, self.inits = rng, index, [], []
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"b{self.index}_{prefix}{self.count}"

    def const(self, prefix: str, array) -> str:
        from onnx import numpy_helper

        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type: str, inputs, out=None, **attrs) -> str:
        from onnx import helper

        out = out or self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out


def _pads(rng, k: int) -> tuple:
    """Symmetric "same", none, or one-sided (each side 0 to k - 1)."""
    choice = rng.integers(3)
    if choice == 0:
        return (k // 2,) * 4
    if choice == 1:
        return (0, 0, 0, 0)
    return tuple(int(v) for v in rng.integers(0, k, 4))


def _activation(b: _Builder, rng, y: str, out: str) -> tuple:
    act = ("none", "relu", "clip")[rng.integers(3)]
    if act == "relu":
        return b.op("Relu", [y], out), act
    if act == "clip":
        return b.op("Clip", [y, b.const("lo", np.float32(0)), b.const("hi", np.float32(6))], out), act
    b.nodes[-1].output[0] = out
    return out, act


def _conv(b: _Builder, rng, x: str, out: str, depthwise: bool) -> Branch:
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 9)) * (2 if depthwise else 1)
    k = int(rng.choice([1, 3, 5]))
    stride = int(rng.integers(1, 3))
    pads = _pads(rng, k)
    h, w = (int(v) for v in rng.integers(k, k + 9, 2))
    f = c if depthwise else int(rng.integers(1, 17))
    group = c if depthwise else 1
    weight = (rng.standard_normal((f, c // group, k, k)) * np.sqrt(2.0 / (c // group * k * k))).astype(np.float32)
    inputs = [x, b.const("w", weight)]
    bias = bool(rng.integers(4))  # mostly with: a Conv without a bias keeps IREE's code
    if bias:
        inputs.append(b.const("b", (rng.standard_normal(f) * 0.2).astype(np.float32)))
    b.op("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride], pads=list(pads), group=group)
    _, act = _activation(b, rng, b.nodes[-1].output[0], out)
    oh, ow = (h + pads[0] + pads[2] - k) // stride + 1, (w + pads[1] + pads[3] - k) // stride + 1
    kind = "depthwise" if depthwise else "conv"
    text = f"{kind} {n}x{c}x{h}x{w} f{f} k{k} s{stride} pads{pads} bias={bias} act={act}"
    return Branch(text, (n, c, h, w), (n, f, oh, ow), b.nodes, b.inits)


def _pool(b: _Builder, rng, x: str, out: str, op: str, shape: str | None = None) -> Branch:
    """A pool: global, a window covering the map (`whole`; "keras": strided
    by its height, as Keras's AveragePooling2D(pool_size) writes it) or a
    smaller window."""
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 9))
    h, w = (int(v) for v in rng.integers(2, 11, 2))
    shape = shape or ("global", "whole", "window")[rng.integers(3)]
    # quantize_static leaves a pool of a float graph input unquantized: a
    # 1x1 convolution before it gives it a quantized input.
    weight = (rng.standard_normal((c, c, 1, 1)) * np.sqrt(2.0 / c)).astype(np.float32)
    bias = (rng.standard_normal(c) * 0.2).astype(np.float32)
    x = b.op("Conv", [x, b.const("w", weight), b.const("b", bias)], kernel_shape=[1, 1])
    if shape == "global":
        b.op("Global" + op, [x], out)
        return Branch(f"1x1 conv, global {op} {n}x{c}x{h}x{w}", (n, c, h, w), (n, c, 1, 1), b.nodes, b.inits)
    if shape == "keras":
        w = h
        kh, kw, stride = h, w, h
    elif shape == "whole":
        kh, kw, stride = h, w, int(rng.choice([1, 2, h]))
    elif op == "MaxPool":
        # IREE 3.13 fails to compile a MaxPool whose strided windows leave a
        # row or column unread (4x4, stride 2, on 5x7; in float too).
        kh, kw = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1))
        stride = 2 if (h - kh) % 2 == 0 and (w - kw) % 2 == 0 and rng.integers(2) else 1
    else:
        kh, kw, stride = int(rng.integers(1, h + 1)), int(rng.integers(1, w + 1)), int(rng.integers(1, 3))
    b.op(op, [x], out, kernel_shape=[kh, kw], strides=[stride, stride])
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    text = f"1x1 conv, {op} {n}x{c}x{h}x{w} k{kh}x{kw} s{stride}"
    return Branch(text, (n, c, h, w), (n, c, oh, ow), b.nodes, b.inits)


def _fully_connected(b: _Builder, rng, x: str, out: str, softmax: bool = False) -> Branch:
    m, k, n = int(rng.integers(1, 4)), int(rng.integers(1, 70)), int(rng.integers(2, 24))
    op = "Gemm" if softmax else ("Gemm", "Gemm", "MatMul")[rng.integers(3)]
    scale = np.sqrt(2.0 / k) * (3 if softmax else 1)
    bias = op == "Gemm" and bool(rng.integers(2))
    trans_b = op == "Gemm" and bool(rng.integers(2))
    weight = (rng.standard_normal((n, k) if trans_b else (k, n)) * scale).astype(np.float32)
    inputs = [x, b.const("w", weight)]
    if bias:
        inputs.append(b.const("b", (rng.standard_normal(n) * 0.2).astype(np.float32)))
    attrs = {"transB": 1} if trans_b else {}
    y = b.op(op, inputs, None if softmax else out, **attrs)
    text = f"{op} {m}x{k} -> {n} bias={bias} transB={trans_b}"
    if softmax:
        b.op("Softmax", [y], out, axis=-1)
        text += " softmax"
    return Branch(text, (m, k), (m, n), b.nodes, b.inits)


def _add(b: _Builder, rng, x: str, out: str) -> Branch:
    """Add of two graph inputs of one shape (each quantized with its own
    scale and zero point), optionally followed by a Relu."""
    rank = int(rng.integers(1, 5))
    shape = tuple(int(v) for v in rng.integers(1, 7, rank))
    y = b.op("Add", [x, x + "b"])
    _, act = _activation(b, rng, y, out)
    return Branch(f"Add {shape} act={act}", shape, shape, b.nodes, b.inits, second_input=True)


def branch(rng, index: int, kind: str) -> Branch:
    b = _Builder(rng, index)
    x, out = f"x{index}", f"y{index}"
    if kind in ("conv", "dwconv"):
        return _conv(b, rng, x, out, kind == "dwconv")
    if kind in ("avgpool", "maxpool"):
        return _pool(b, rng, x, out, "AveragePool" if kind == "avgpool" else "MaxPool")
    if kind == "kerasavgpool":
        return _pool(b, rng, x, out, "AveragePool", "keras")
    if kind in ("fc", "softmax"):
        return _fully_connected(b, rng, x, out, kind == "softmax")
    return _add(b, rng, x, out)


def case(seed: int, kinds=None):
    """(float model, branches) of case `seed`: BRANCHES forms drawn from
    KINDS (or `kinds`, one branch each)."""
    from onnx import TensorProto, checker, helper

    rng = np.random.default_rng(seed)
    kinds = kinds or [KINDS[i] for i in rng.integers(0, len(KINDS), BRANCHES)]
    branches = [branch(rng, i, kind) for i, kind in enumerate(kinds)]
    graph = helper.make_graph(
        [node for br in branches for node in br.nodes],
        f"forms{seed}",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in input_shapes(branches)],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, list(br.y_shape)) for i, br in enumerate(branches)],
        [init for br in branches for init in br.inits],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    checker.check_model(model, full_check=True)
    return model, branches


def input_shapes(branches) -> list:
    """(name, shape) of the model's inputs, in order."""
    out = []
    for i, br in enumerate(branches):
        out += [(f"x{i}", br.x_shape)] + ([(f"x{i}b", br.x_shape)] if br.second_input else [])
    return out


def inputs(branches, rng) -> dict:
    """One random array per model input, scaled so that some saturate."""
    return {
        name: (rng.standard_normal(shape) * rng.uniform(0.5, 3)).astype(np.float32)
        for name, shape in input_shapes(branches)
    }


def quantized_case(seed: int, kinds=None):
    """(QDQ model, branches) of case `seed`, calibrated on 4 seeded samples."""
    model, branches = case(seed, kinds)
    rng = np.random.default_rng(10_000 + seed)
    samples = [inputs(branches, rng) for _ in range(4)]
    return quantize_qdq(model, samples), branches


def emit_with_kernels(model_path: Path, outdir: Path):
    """Emits the QDQ model at `model_path` for the host with the int8 kernels
    (the portable C) and the model's own convolution and pool forms, as
    they are on by default on a Cortex-M (cbuild/int8_kernels.py); returns
    the built runner."""
    from ireegen.cbuild.int8_kernels import spec_path, with_model_forms
    from ireegen.cbuild.kernels import kernel_link
    from ireegen.cbuild.native_run import build_runner
    from ireegen.config.modes import make_config
    from ireegen.emit import emit
    from ireegen.frontend.kernel_spec import load_kernel_spec

    link = with_model_forms(kernel_link(load_kernel_spec(spec_path()), require_match=False), model_path)
    emit(model_path, outdir, make_config("runtimeless"), name="m", kernels=link)
    return build_runner(outdir, outdir.parent / (outdir.name + "-build"))


def mismatches(model_path: Path, branches, outdir: Path, runs: int = 3, seed: int = 0) -> list:
    """Emits the QDQ model at `model_path` for the host with the int8 kernels
    (the portable C) and the model's own convolution and pool forms, as
    they are on by default on a Cortex-M (cbuild/int8_kernels.py), runs it on `runs` random inputs and returns, per
    output that differs from ONNX Runtime's anywhere, (branch text, run,
    elements differing, largest difference in quantization steps).  The
    comparison is exact: no tolerance."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    runner = emit_with_kernels(model_path, outdir)
    function = next(iter(runner.functions))
    rng = np.random.default_rng(20_000 + seed)
    found = []
    for run in range(runs):
        feeds = inputs(branches, rng)
        got, _ = runner.call(function, list(feeds.values()))
        expected = session.run(None, feeds)
        for i, (g, e) in enumerate(zip(got, expected)):
            if not np.array_equal(g, e):
                diff = np.abs(g.astype(np.float64) - e)
                step = float(np.min(np.diff(np.unique(e)))) if np.unique(e).size > 1 else 1.0
                found.append((branches[i].text, run, int(np.count_nonzero(diff)), round(float(diff.max()) / step, 2)))
    return found


def dispatched_kernels(outdir: Path) -> list:
    """The kernels the emitted manifest says its dispatches call."""
    import json

    manifest = json.loads((outdir / "manifest.json").read_text())
    return sorted({k for c in manifest["kernels"]["dispatches"] for k in c["kernels"]})


if __name__ == "__main__":
    import onnx

    outdir = Path(sys.argv[2])
    outdir.mkdir(parents=True, exist_ok=True)
    for seed in range(*map(int, sys.argv[1].split(":"))) if ":" in sys.argv[1] else [int(sys.argv[1])]:
        q, branches = quantized_case(seed)
        path = outdir / f"forms_{seed}.onnx"
        onnx.save(q, path)
        print(f"case {seed}: " + "; ".join(br.text for br in branches), flush=True)
        try:
            bad = mismatches(path, branches, outdir / f"out{seed}", seed=seed)
        except Exception as e:  # noqa: BLE001 - a refusal is reported, and the run goes on
            print(f"  REFUSED {str(e).splitlines()[0]}", flush=True)
            continue
        print(f"  kernels {dispatched_kernels(outdir / f'out{seed}')}")
        for text, run, count, steps in bad:
            print(f"  MISMATCH {text}: run {run}, {count} differ, up to {steps} steps", flush=True)
