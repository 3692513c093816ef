"""A trained PyTorch ResNet-8 quantized the way users quantize it, and how
far the int8 kernels' output lands from ONNX Runtime's (docs/kernels-int8.md,
"Trained PyTorch ResNet-8s").

The model: MLPerf Tiny's ResNet-8 shape (the 1x1 stride-2 projection conv
without a bias, BatchNorm folded by the exporter in eval mode, an 8x8
average pool or a global one, Linear 64 -> 10, Softmax), trained with Adam
on a synthetic 10-class task (class templates plus noise) so that its
activations have trained ranges; exported by torch.onnx.export, run through
quant_pre_process, quantized by quantize_static (QInt8, per tensor, QDQ,
MinMax unless told); emitted for the host with the int8 kernels and the
model's own forms (what a Cortex-M's verification twin runs); run on
inputs, half N(0, 1) and half calibration-like images scaled by U(0.3, 2).
Compared with ONNX Runtime twice: a default session (on x86-64 it runs the
ops next to a twice-read QuantizeLinear in float) and emit's reference
(check/subjects.onnxruntime_session, its int8 operators everywhere).
Prints, per input whose output differs from either by more than one step,
the input and the steps, then the count of inputs per step for each.

    python benchmarks/resnet8_torch.py OUTDIR [--reduce-range] [--exporter dynamo] [--inputs 100]

Needs torch (CPU) besides onnxruntime; not run in CI.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

SOFTMAX_STEP = 1 / 256  # quantize_static's softmax output scale
CALIBRATION_NOISE = 0.6  # the calibration images' noise: cleaner than the training's
IMAGES_SHOWN = 8  # the calibration images that, scaled, make half of the inputs


def network(pool: str, nhwc: bool):
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1), nn.BatchNorm2d(cout)
            self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1), nn.BatchNorm2d(cout)
            self.sc = nn.Conv2d(cin, cout, 1, stride, 0, bias=False) if stride != 1 else None

        def forward(self, x):
            y = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
            return F.relu(y + (self.sc(x) if self.sc is not None else x))

    class ResNet8(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.bn = nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16)
            self.blocks = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2))
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = x.permute(0, 3, 1, 2) if nhwc else x  # Keras's layout, through a Transpose
            x = self.blocks(F.relu(self.bn(self.stem(x))))
            x = F.avg_pool2d(x, 8) if pool == "avg8" else F.adaptive_avg_pool2d(x, 1)
            return F.softmax(self.fc(x.reshape(x.shape[0], 64)), dim=1)

    return ResNet8()


def images(n: int, generator, noise: float):
    """n images of 10 classes: a smooth random template per class plus noise, in [-1, 1]."""
    import torch
    import torch.nn.functional as F

    templates = F.interpolate(
        torch.randn(10, 3, 8, 8, generator=torch.Generator().manual_seed(1)), size=32, mode="bilinear"
    )
    labels = torch.randint(0, 10, (n,), generator=generator)
    x = templates[labels] * 0.8 + noise * torch.randn(n, 3, 32, 32, generator=generator)
    return x.clamp(-1, 1), labels


def trained(pool: str, nhwc: bool, steps: int, noise: float):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = network(pool, nhwc)
    optimizer = torch.optim.Adam(model.parameters(), 2e-3)
    generator = torch.Generator().manual_seed(2)
    model.train()
    for _ in range(steps):
        x, y = images(32, generator, noise)
        x = x.permute(0, 2, 3, 1) if nhwc else x
        loss = F.nll_loss(torch.log(model(x) + 1e-9), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def quantized(float_path: Path, out: Path, samples: np.ndarray, reduce_range: bool, method: str) -> None:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    pre = out.with_suffix(".pre.onnx")
    quant_pre_process(str(float_path), str(pre))

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([{"input": samples[i : i + 1]} for i in range(len(samples))])

        def get_next(self):
            return next(self.feeds, None)

    quantize_static(
        str(pre),
        str(out),
        Reader(),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        calibrate_method=getattr(CalibrationMethod, method),
        reduce_range=reduce_range,
    )


def main(argv=None) -> int:
    import onnxruntime as ort
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ireegen.check.subjects import onnxruntime_session
    from tests.int8_forms import emit_with_kernels

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir", type=Path)
    p.add_argument("--pool", choices=("avg8", "global"), default="avg8")
    p.add_argument("--exporter", choices=("torchscript", "dynamo"), default="torchscript")
    p.add_argument("--reduce-range", action="store_true")
    p.add_argument("--calibration", choices=("MinMax", "Entropy", "Percentile"), default="MinMax")
    p.add_argument("--nhwc", action="store_true", help="take NHWC images (a Transpose first)")
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--noise", type=float, default=2.5)
    p.add_argument("--inputs", type=int, default=100)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    args.outdir.mkdir(parents=True, exist_ok=True)
    model = trained(args.pool, args.nhwc, args.steps, args.noise)
    float_path = args.outdir / "resnet8.onnx"
    opset = 18 if args.exporter == "dynamo" else 13
    shape = (1, 32, 32, 3) if args.nhwc else (1, 3, 32, 32)
    example = (torch.zeros(shape),)
    torch.onnx.export(
        model,
        example,
        str(float_path),
        dynamo=args.exporter == "dynamo",
        opset_version=opset,
        input_names=["input"],
        output_names=["probs"],
        external_data=False,
    )
    samples = images(32, torch.Generator().manual_seed(5), CALIBRATION_NOISE)[0]
    samples = (samples.permute(0, 2, 3, 1) if args.nhwc else samples).numpy()
    q_path = args.outdir / "resnet8_int8.onnx"
    quantized(float_path, q_path, samples, args.reduce_range, args.calibration)
    runner = emit_with_kernels(q_path, args.outdir / "out")
    function = next(iter(runner.functions))
    sessions = {
        "ONNX Runtime's default": ort.InferenceSession(str(q_path), providers=["CPUExecutionProvider"]),
        "emit's ONNX Runtime reference": onnxruntime_session(q_path),
    }
    rng = np.random.default_rng(1)
    counts = {label: collections.Counter() for label in sessions}
    for i in range(args.inputs):
        if i % 2:
            x = rng.standard_normal(shape).astype(np.float32)
        else:
            x = (samples[i % IMAGES_SHOWN][None] * rng.uniform(0.3, 2)).astype(np.float32)
        got = runner.call(function, [x])[0][0]
        for label, session in sessions.items():
            steps = int(round(float(np.abs(got - session.run(None, {"input": x})[0]).max()) / SOFTMAX_STEP))
            counts[label][steps] += 1
            if steps > 1:
                print(f"input {i}: {steps} steps from {label}", flush=True)
    for label, count in counts.items():
        print(f"inputs per largest difference from {label} (steps):", dict(sorted(count.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
