"""The four MLPerf Tiny architectures as ONNX (opset 17), built with
onnx.helper: seeded random weights, BatchNorm folded into the convolution
or dense layer before it (so a layer is one Conv/Gemm with a bias), float
and QDQ int8 (onnxruntime's quantize_static, per tensor, on a seeded
calibration set).

- `ds_cnn`: keyword spotting, DS-CNN (input 1x49x10x1 MFCC features, 12 classes);
- `mobilenet_v1`: visual wake words, MobileNetV1 with width 0.25 (input 1x3x96x96, 2 classes);
- `resnet8`: image classification on CIFAR-10 (input 1x3x32x32, 10 classes);
- `autoencoder`: anomaly detection, FC autoencoder 640-128x4-8-128x4-640.

The layer shapes follow mlcommons/tiny's training scripts (TensorFlow's
"same" padding written as explicit ONNX pads; images as NCHW).  The weights
are random (He-scaled, so activations stay in range), so compare instruction
counts, memory and agreement with ONNX Runtime, not accuracy.

    from mlperf_tiny_models import MODELS, build, quantized
    model = build("ds_cnn")                  # onnx.ModelProto, float
    q = quantized("ds_cnn")                  # the same, QDQ int8
    python benchmarks/mlperf_tiny_models.py OUTDIR   # writes NAME.onnx and NAME_int8.onnx
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

OPSET = 17
SEED = 22
CALIBRATION_SAMPLES = 16


class _Graph:
    """A small builder: nodes, initializers and fresh names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, prefix: str, array) -> str:
        from onnx import numpy_helper

        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op_type: str, inputs, **attrs) -> str:
        from onnx import helper

        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out + "_node", **attrs))
        return out

    def conv(self, x, cin, cout, kernel, stride=1, pads=None, group=1, relu=True):
        """A convolution with its BatchNorm folded in (weight and bias), then ReLU."""
        kh, kw = kernel if isinstance(kernel, tuple) else (kernel, kernel)
        fan_in = cin // group * kh * kw
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // group, kh, kw)).astype(np.float32)
        b = self.rng.normal(0, 0.05, cout).astype(np.float32)
        if pads is None:
            pads = [kh // 2, kw // 2, kh // 2, kw // 2]
        y = self.op(
            "Conv",
            [x, self.const("w", w), self.const("b", b)],
            kernel_shape=[kh, kw],
            strides=[stride, stride],
            pads=list(pads),
            group=group,
        )
        return self.op("Relu", [y]) if relu else y

    def dense(self, x, cin, cout, relu=True):
        w = self.rng.normal(0, np.sqrt(2.0 / cin), (cin, cout)).astype(np.float32)
        b = self.rng.normal(0, 0.05, cout).astype(np.float32)
        y = self.op("Gemm", [x, self.const("w", w), self.const("b", b)])
        return self.op("Relu", [y]) if relu else y

    def model(self, name, input_name, input_shape, output, output_shape):
        from onnx import TensorProto, helper

        graph = helper.make_graph(
            self.nodes,
            name,
            [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, list(input_shape))],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, list(output_shape))],
            self.inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ireegen")
        model.ir_version = 8
        return model


def _same_pads(size: int, kernel: int, stride: int) -> tuple:
    """TensorFlow's "same" padding of one axis: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def ds_cnn(seed: int = SEED):
    """DS-CNN keyword spotting: a 10x4 stride-2 convolution to 64 channels,
    four depthwise-separable blocks (3x3 depthwise, 1x1 to 64), average
    pooling, a dense layer to 12 classes, softmax."""
    g = _Graph(seed)
    x = g.op("Reshape", ["input", g.const("shape", np.array([1, 1, 49, 10], np.int64))])
    (t, b), (left, r) = _same_pads(49, 10, 2), _same_pads(10, 4, 2)
    x = g.conv(x, 1, 64, (10, 4), stride=2, pads=[t, left, b, r])  # 25x5x64
    for _ in range(4):
        x = g.conv(x, 64, 64, 3, group=64)
        x = g.conv(x, 64, 64, 1)
    x = g.op("AveragePool", [x], kernel_shape=[25, 5])
    x = g.op("Flatten", [x])
    x = g.dense(x, 64, 12, relu=False)
    y = g.op("Softmax", [x], axis=-1)
    return g.model("ds_cnn", "input", (1, 49, 10, 1), y, (1, 12))


def mobilenet_v1(seed: int = SEED):
    """MobileNetV1, width 0.25, 96x96x3 (visual wake words): a 3x3 stride-2
    convolution to 8 channels, thirteen depthwise-separable blocks, 3x3
    average pooling, a dense layer to 2 classes, softmax."""
    g = _Graph(seed)
    blocks = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2)] + [(128, 1)] * 5 + [(256, 2), (256, 1)]
    size = 96
    t, b = _same_pads(size, 3, 2)
    x = g.conv("input", 3, 8, 3, stride=2, pads=[t, t, b, b])
    size, channels = 48, 8
    for cout, stride in blocks:
        t, b = _same_pads(size, 3, stride)
        x = g.conv(x, channels, channels, 3, stride=stride, pads=[t, t, b, b], group=channels)
        size = -(-size // stride)
        x = g.conv(x, channels, cout, 1)
        channels = cout
    x = g.op("AveragePool", [x], kernel_shape=[size, size])
    x = g.op("Flatten", [x])
    x = g.dense(x, channels, 2, relu=False)
    y = g.op("Softmax", [x], axis=-1)
    return g.model("mobilenet_v1", "input", (1, 3, 96, 96), y, (1, 2))


def resnet8(seed: int = SEED):
    """ResNet-8 for CIFAR-10: a 3x3 convolution to 16 channels, three
    residual stacks (16, 32, 64 channels; the last two stride 2 with a 1x1
    stride-2 shortcut), 8x8 average pooling, a dense layer to 10, softmax."""
    g = _Graph(seed)
    x = g.conv("input", 3, 16, 3)
    channels, size = 16, 32
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        t, b = _same_pads(size, 3, stride)
        y = g.conv(x, channels, cout, 3, stride=stride, pads=[t, t, b, b])
        y = g.conv(y, cout, cout, 3, relu=False)
        shortcut = x if stride == 1 else g.conv(x, channels, cout, 1, stride=stride, pads=[0, 0, 0, 0], relu=False)
        x = g.op("Relu", [g.op("Add", [y, shortcut])])
        channels, size = cout, size // stride
    x = g.op("AveragePool", [x], kernel_shape=[size, size])
    x = g.op("Flatten", [x])
    x = g.dense(x, channels, 10, relu=False)
    y = g.op("Softmax", [x], axis=-1)
    return g.model("resnet8", "input", (1, 3, 32, 32), y, (1, 10))


def autoencoder(seed: int = SEED):
    """The anomaly-detection autoencoder: 640 -> 128 x4 -> 8 -> 128 x4 -> 640,
    dense layers with ReLU (BatchNorm folded), the last one linear."""
    g = _Graph(seed)
    x, width = "input", 640
    for cout in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = g.dense(x, width, cout)
        width = cout
    y = g.dense(x, width, 640, relu=False)
    return g.model("autoencoder", "input", (1, 640), y, (1, 640))


@dataclass(frozen=True)
class Arch:
    build: object
    input_shape: tuple
    task: str


MODELS = {
    "ds_cnn": Arch(ds_cnn, (1, 49, 10, 1), "keyword spotting"),
    "resnet8": Arch(resnet8, (1, 3, 32, 32), "image classification (CIFAR-10)"),
    "mobilenet_v1": Arch(mobilenet_v1, (1, 3, 96, 96), "visual wake words"),
    "autoencoder": Arch(autoencoder, (1, 640), "anomaly detection"),
}


def sample_input(name: str, seed: int = 0) -> np.ndarray:
    """One seeded input of the model's shape: features in [-1, 1)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, MODELS[name].input_shape).astype(np.float32)


def build(name: str, seed: int = SEED):
    """The float model, checked by onnx.checker."""
    import onnx

    model = MODELS[name].build(seed)
    onnx.checker.check_model(model, full_check=True)
    return model


def quantize_qdq(model, samples, per_channel=False):
    """onnxruntime's quantize_static of `model` (an onnx ModelProto): QDQ,
    per tensor (or `per_channel` weights), int8 activations and weights, MinMax over `samples` (a list
    of {input name: array} feeds).  The tests' and benchmarks' int8 models."""
    import logging

    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.samples = iter(samples)

        def get_next(self):
            return next(self.samples, None)

    with tempfile.TemporaryDirectory(prefix="ireegen-qdq-") as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, src)
        logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process first
        quantize_static(
            str(src),
            str(dst),
            Reader(),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QInt8,
            weight_type=QuantType.QInt8,
            per_channel=per_channel,
        )
        return onnx.load(dst)


def quantized(name: str, seed: int = SEED, per_channel: bool = False):
    """The QDQ int8 model, calibrated on CALIBRATION_SAMPLES seeded inputs."""
    samples = [{"input": sample_input(name, 1000 + i)} for i in range(CALIBRATION_SAMPLES)]
    return quantize_qdq(build(name, seed), samples, per_channel=per_channel)


def write(outdir: Path, names=tuple(MODELS), per_channel: bool = False) -> dict:
    """Writes NAME.onnx and NAME_int8.onnx for each model (and, with
    `per_channel`, NAME_int8_pc.onnx: weights quantized per channel):
    {label: path}."""
    import onnx

    outdir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in names:
        models = [(name, build(name)), (f"{name}_int8", quantized(name))]
        if per_channel:
            models.append((f"{name}_int8_pc", quantized(name, per_channel=True)))
        for label, model in models:
            paths[label] = outdir / f"{label}.onnx"
            onnx.save(model, paths[label])
    return paths


if __name__ == "__main__":
    for label, path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "mlperf-tiny")).items():
        print(f"{label:20} {path} {path.stat().st_size:,} B")
