"""Benchmark: one f32 matmul [M, K] x [K, N] compiled by IREE with its own
tiles and with ireegen's matmul tile spec (config/matmul_tiles.py), next to
ONNX Runtime's MatMul, on one thread.

    python benchmarks/matmul_tiles.py [--target-cpu host] [--rounds 3] [--shapes 49x960x160 ...]

- IREE: iree-compile of the matmul alone (llvm-cpu, the --target-cpu), then
  iree-benchmark-module --device=local-sync, its cpu_time per call;
- ONNX Runtime: a MatMul node with the [K, N] weight as an initializer,
  intra_op = inter_op = 1, process CPU time of a loop of calls over their
  count (the Python loop's few microseconds included).
The measurements alternate between the three, --rounds times; each figure
is the median round.  The shapes default to the pointwise convolutions of
MobileNetV2 and RegNetY that ireegen makes matmuls (M = pixels, K = input
channels, N = output channels).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ireegen.check.runners import find_runtime_tools  # noqa: E402
from ireegen.compile.compiler import find_compiler  # noqa: E402
from ireegen.compile.tile_spec import stage  # noqa: E402
from ireegen.config.matmul_tiles import FLAG  # noqa: E402
from ireegen.config.modes import default_target, host_triple  # noqa: E402
from ireegen.config.targets import resolve_host  # noqa: E402

SHAPES = (
    "49x960x160",
    "49x576x160",
    "49x960x320",
    "49x320x1280",
    "49x440x440",
    "196x384x64",
    "196x576x96",
    "196x208x104",
    "784x144x32",
    "784x192x40",
    "3136x144x24",
    "12544x16x96",
)

_MATMUL = """func.func @mm(%a: tensor<{M}x{K}xf32>, %b: tensor<{K}x{N}xf32>) -> tensor<{M}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{M}x{N}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>) outs(%f : tensor<{M}x{N}xf32>)
      -> tensor<{M}x{N}xf32>
  return %r : tensor<{M}x{N}xf32>
}}
"""


def compile_matmul(shape, target, workdir: Path, flags) -> Path:
    m, k, n = shape
    (workdir / "mm.mlir").write_text(_MATMUL.format(M=m, K=k, N=n))
    out = workdir / ("tiled.vmfb" if flags else "default.vmfb")
    stage(flags, target, workdir)
    cmd = [find_compiler().path, "mm.mlir", "-o", out.name, "--iree-hal-target-device=local"]
    cmd += ["--iree-hal-local-target-device-backends=llvm-cpu", f"--iree-llvmcpu-target-triple={target.triple}"]
    cmd += [f"--iree-llvmcpu-target-cpu={target.cpu}"]
    cmd += [f"--iree-llvmcpu-target-cpu-features={target.cpu_features}"] if target.cpu_features else []
    subprocess.run([*cmd, *flags], cwd=workdir, check=True)
    return out


def iree_ms(module: Path, shape, seconds: float) -> float:
    m, k, n = shape
    tool = find_runtime_tools().benchmark_module
    cmd = [tool, f"--module={module}", "--device=local-sync", "--function=mm", f"--input={m}x{k}xf32=1"]
    cmd += [f"--input={k}x{n}xf32=1", f"--benchmark_min_time={seconds}s", "--benchmark_format=json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    bench = json.loads(out)["benchmarks"][0]
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[bench["time_unit"]]
    return bench["cpu_time"] * scale


class OrtMatMul:
    def __init__(self, shape):
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        m, k, n = shape
        rng = np.random.default_rng(0)
        weight = numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "w")
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["a", "w"], ["y"])],
            "mm",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
            [weight],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        self.feed = {"a": rng.standard_normal((m, k)).astype(np.float32)}

    def ms(self, seconds: float) -> float:
        calls, start = 0, time.process_time()
        while time.process_time() - start < seconds or calls < 10:
            self.session.run(None, self.feed)
            calls += 1
        return (time.process_time() - start) / calls * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target-cpu", default="host")
    parser.add_argument("--shapes", nargs="+", default=SHAPES, help="MxKxN")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    target = resolve_host(default_target(host_triple(), args.target_cpu, None), find_compiler())
    rows = []
    for text in args.shapes:
        shape = tuple(int(d) for d in text.split("x"))
        with tempfile.TemporaryDirectory(prefix="ireegen-matmul-tiles-") as tmp:
            workdir = Path(tmp)
            modules = {
                "IREE": compile_matmul(shape, target, workdir, []),
                "tiles": compile_matmul(shape, target, workdir, [FLAG]),
            }
            ort = OrtMatMul(shape)
            samples = {"IREE": [], "tiles": [], "ORT": []}
            for _ in range(args.rounds):
                for name, module in modules.items():
                    samples[name].append(iree_ms(module, shape, args.seconds))
                samples["ORT"].append(ort.ms(args.seconds))
        row = {"shape": text, **{name: statistics.median(s) for name, s in samples.items()}}
        rows.append(row)
        print(
            f"| {text} | {row['ORT']:.3f} | {row['IREE']:.3f} ({row['IREE'] / row['ORT']:.2f}x) "
            f"| {row['tiles']:.3f} ({row['tiles'] / row['ORT']:.2f}x) | {row['IREE'] / row['tiles']:.2f}x |",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"target_cpu": target.cpu, "rounds": args.rounds, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
