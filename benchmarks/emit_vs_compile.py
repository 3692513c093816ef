"""Benchmark: wall time of `python -m ireegen emit` against a bare
`iree-compile` of the same model with the same flags, measured alternately in
one run (so machine noise hits both).  Goal: emit under 1.15x.

    python benchmarks/emit_vs_compile.py [--repeat 5] [MODEL ...]
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ireegen.compile.compiler import find_compiler  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402

DEFAULT_MODELS = [ROOT / "samples" / "simple_mul" / "simple_mul.mlir", ROOT / "samples" / "mlp" / "mlp.mlir"]


def write_large_mlp(path: Path, width: int = 256, layers: int = 6) -> Path:
    """A bigger model, so compile time is more than the fixed start-up cost:
    `layers` dense+relu layers of `width`, seeded random weights."""
    import numpy as np

    rng = np.random.default_rng(0)
    lines = [
        f"func.func @predict(%x: tensor<4x{width}xf32>) -> tensor<4x{width}xf32> {{",
        "  %zero = arith.constant 0.0 : f32",
        f"  %e = tensor.empty() : tensor<4x{width}xf32>",
        f"  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x{width}xf32>) -> tensor<4x{width}xf32>",
    ]
    value = "%x"
    for i in range(layers):
        w = rng.standard_normal((width, width)).astype(np.float32) * 0.05
        dense = "[" + ", ".join("[" + ", ".join(f"{v:.6e}" for v in row) + "]" for row in w) + "]"
        lines.append(f"  %w{i} = arith.constant dense<{dense}> : tensor<{width}x{width}xf32>")
        lines.append(
            f"  %m{i} = linalg.matmul ins({value}, %w{i} : tensor<4x{width}xf32>, tensor<{width}x{width}xf32>)"
            f" outs(%f : tensor<4x{width}xf32>) -> tensor<4x{width}xf32>"
        )
        lines.append(f"  %r{i} = arith.maximumf %m{i}, %f : tensor<4x{width}xf32>")
        value = f"%r{i}"
    lines += [f"  return {value} : tensor<4x{width}xf32>", "}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def timed(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "models",
        nargs="*",
        type=Path,
        default=DEFAULT_MODELS,
        help="default: the samples and a generated 6x256x256 MLP",
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--execution-model", default="async")
    args = parser.parse_args()
    compiler = find_compiler()
    config = make_config(args.execution_model)
    print(f"iree-compile {compiler.version}; execution model {args.execution_model}; {args.repeat} runs each")
    print(f"{'model':<16} {'iree-compile s':>15} {'ireegen emit s':>15} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        models = list(args.models)
        if not args.models or args.models == DEFAULT_MODELS:
            models.append(write_large_mlp(Path(tmp) / "mlp_large.mlir"))
        for model in models:
            bare = [compiler.path, str(model), "-o", f"{tmp}/bare.vmfb", *config.compile_flags()]
            emit = [
                sys.executable,
                "-m",
                "ireegen",
                "emit",
                str(model),
                "-o",
                f"{tmp}/out",
                "--execution-model",
                args.execution_model,
            ]
            timed(bare), timed(emit)  # warm the page cache
            t_bare, t_emit = [], []
            for _ in range(args.repeat):
                t_bare.append(timed(bare))
                t_emit.append(timed(emit))
            b, e = statistics.median(t_bare), statistics.median(t_emit)
            print(f"{model.stem:<16} {b:>15.3f} {e:>15.3f} {e / b:>6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
