"""ireegen's int8 kernels on Cortex-M4F (or --cpu): instructions per
inference, flash and equality with ONNX Runtime, with and without the kernels.

Builds small QDQ int8 models of one operator each (onnxruntime's
quantize_static, per tensor, QInt8 activations and weights, a seeded
calibration set), or takes QDQ int8 ONNX files, emits each runtimeless for
--target-cpu cortex-m4 with IREE's own code (--no-builtin-kernels) and with
the int8 kernels (on by default), runs both under qemu-system-arm
(mps2-an386) counting instructions with benchmarks/qemu_insn_count.c,
reports flash and stack from `ireegen size`, and compares the outputs with
ONNX Runtime's on seeded random inputs.

    python benchmarks/int8_kernels.py [--repeat 4] [--inputs 8] [--cpu cortex-m55] [MODEL_int8.onnx ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

# name -> (nodes, input shape, output shape, initializers as (name, shape))
MODELS = {
    "fc 640->128": ("fc", [1, 640], [1, 128], (128, 640), 0),
    "conv 3x3 16->32 on 16x16, pad 1": ("conv", [1, 16, 16, 16], [1, 32, 16, 16], (32, 16, 3, 3), 1),
    "depthwise 3x3 on 32x16x16, pad 1": ("dw", [1, 32, 16, 16], [1, 32, 16, 16], (32, 1, 3, 3), 1),
    "pointwise 32->64 on 8x8": ("conv", [1, 32, 8, 8], [1, 64, 8, 8], (64, 32, 1, 1), 0),
}


def build(kind, x_shape, y_shape, w_shape, pad, path: Path, seed=0) -> Path:
    import onnx
    from mlperf_tiny_models import quantize_qdq
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array((rng.standard_normal(w_shape) * 0.2).astype(np.float32), "w")
    b = numpy_helper.from_array((rng.standard_normal(w_shape[0]) * 0.1).astype(np.float32), "b")
    if kind == "fc":
        node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)
    else:
        group = x_shape[1] if kind == "dw" else 1
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=group, pads=[pad] * 4)
    graph = helper.make_graph(
        [node],
        path.stem,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    samples = [{"x": rng.standard_normal(x_shape).astype(np.float32)} for _ in range(8)]
    onnx.save(quantize_qdq(model, samples), path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--inputs", type=int, default=8, help="random inputs compared with ONNX Runtime")
    parser.add_argument("--cpu", default="cortex-m4", help="the --target-cpu (a Cortex-M with a qemu board)")
    parser.add_argument(
        "models", nargs="*", type=Path, help="QDQ int8 ONNX models to measure instead of the built ones"
    )
    args = parser.parse_args()

    import onnxruntime as ort
    from firmware import instructions, plugin

    from ireegen.cbuild.native_run import build_runner

    work = Path(tempfile.mkdtemp(prefix="int8-kernels-"))
    lib = plugin(work)
    rows = []
    models = {p.stem: p for p in args.models} or {
        label: build(*spec, work / f"m{i}.onnx") for i, (label, spec) in enumerate(MODELS.items())
    }
    for label, model in models.items():
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        x_shape = list(session.get_inputs()[0].shape)
        x_name = session.get_inputs()[0].name
        rng = np.random.default_rng(1)
        inputs = [rng.standard_normal(x_shape).astype(np.float32) * 2 for _ in range(args.inputs)]
        row = {"model": label}
        for variant, extra in (("iree", ["--no-builtin-kernels"]), ("kernels", [])):
            out = work / f"{model.stem}-{variant}"
            cmd = [sys.executable, "-m", "ireegen", "emit", str(model), "-o", str(out), "--name", "m"]
            # --tune off: the kernels' effect alone, on IREE's default configuration.
            cmd += ["--execution-model", "runtimeless", "--target-cpu", args.cpu, "--tune", "off", *extra]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            size_json = work / f"{model.stem}-{variant}-size.json"
            subprocess.run(
                [sys.executable, "-m", "ireegen", "size", str(out), "--json", str(size_json)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            size = json.loads(size_json.read_text())
            runner = build_runner(out, work / f"{model.stem}-{variant}-build")
            function = next(iter(runner.functions))
            mismatched, worst = 0, 0.0
            for x in inputs:
                got, _ = runner.call(function, [x])
                expected = session.run(None, {x_name: x})[0]
                mismatched += int(np.count_nonzero(got[0] != expected))
                worst = max(worst, float(np.max(np.abs(got[0] - expected))))
            row[variant] = {
                "instructions": instructions(runner, function, [inputs[0]], args.repeat, lib),
                "size": size,
                "outputs_differing_from_onnxruntime": mismatched,
                "max_abs_error_vs_onnxruntime": worst,
            }
        rows.append(row)
        iree, ours = row["iree"], row["kernels"]
        print(
            f"{label:28s} insn {iree['instructions']:12,.0f} -> {ours['instructions']:12,.0f} "
            f"({iree['instructions'] / ours['instructions']:.2f}x)  "
            f"differing from ORT: {iree['outputs_differing_from_onnxruntime']} -> {ours['outputs_differing_from_onnxruntime']} "
            f"(max abs {iree['max_abs_error_vs_onnxruntime']:.3g} -> {ours['max_abs_error_vs_onnxruntime']:.3g})  "
            f"flash {iree['size']['flash']['total']:,} -> {ours['size']['flash']['total']:,} B, stack {iree['size']['ram']['stack']:,} -> {ours['size']['ram']['stack']:,} B"
        )
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
