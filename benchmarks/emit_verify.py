"""Benchmark: what emit's verification costs.  For each model and execution
model, the wall time of `python -m ireegen emit` with and without
`--no-verify`, measured alternately in one run (so machine noise hits both),
best of --repeat.

    python benchmarks/emit_verify.py [--repeat 3] [--modes inline-static,...] [MODEL ...]
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from emit_vs_compile import write_large_mlp  # noqa: E402

MODES = ("async", "inline-static", "inline-dynamic", "runtimeless")


def timed_emit(model: Path, outdir: Path, mode: str, verify: bool) -> float:
    cmd = [sys.executable, "-m", "ireegen", "emit", str(model), "-o", str(outdir), "--execution-model", mode]
    if not verify:
        cmd.append("--no-verify")
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        return float("nan")  # refused (a miscompile) or failed: shown as n/a
    return elapsed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", type=Path)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--modes", default=",".join(MODES))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        models = args.models or [
            ROOT / "samples" / "mlp" / "mlp.mlir",
            ROOT / "tests" / "models" / "cnn.mlir",
            write_large_mlp(tmp / "mlp_256x6.mlir", width=256, layers=6),
        ]
        print("| model | mode | emit --no-verify s | emit (verified) s | verification s | ratio |")
        print("|---|---|---|---|---|---|")
        for model in models:
            for mode in args.modes.split(","):
                plain, verified = [], []
                for i in range(args.repeat):
                    plain.append(timed_emit(model, tmp / f"p{i}", mode, False))
                    verified.append(timed_emit(model, tmp / f"v{i}", mode, True))
                a, b = min(plain), min(verified)
                cost = "n/a" if b != b else f"{b - a:.2f}"
                ratio = "n/a" if b != b else f"{b / a:.2f}"
                print(f"| {model.stem} | {mode} | {a:.2f} | {'refused' if b != b else f'{b:.2f}'} | {cost} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
