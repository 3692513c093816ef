"""Benchmark: .tflite models as runtimeless C on a Cortex-M core: flash and
RAM (`ireegen size`, objects at -Os) and instructions per inference under
qemu-system-arm (benchmarks/firmware.py's count: (repeat R+1) - (repeat 1),
divided by R), on an input over the whole int8 range.  Prints figures;
asserts nothing.  The models are the user's (e.g. TFLM's examples from a
tensorflow/tflite-micro checkout); nothing is downloaded.

    python benchmarks/tflite_firmware.py MODEL.tflite... [--cpu cortex-m4] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from firmware import instructions, plugin  # noqa: E402

from ireegen.cbuild.footprint import measure  # noqa: E402
from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.check.tflm import draw_inputs  # noqa: E402
from ireegen.config.cores import CORES  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402


def _io_bytes(out: Path) -> int:
    """The bytes of the first function's inputs and outputs, which the
    caller holds (TFLM's arena holds them)."""
    function = json.loads((out / "manifest.json").read_text())["functions"][0]
    return sum(math.prod(v["shape"]) * np.dtype(v["dtype"]).itemsize for v in function["inputs"] + function["outputs"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="+", type=Path)
    p.add_argument("--cpu", default="cortex-m4", choices=sorted(CORES))
    p.add_argument("--optimize-for", default="speed", choices=("speed", "size"))
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tflite-bench-") as tmp:
        lib = plugin(Path(tmp))
        for model in args.models:
            work = Path(tmp) / model.stem
            emit(
                model,
                work / "out",
                make_config("runtimeless", target_cpu=args.cpu, optimize_for=args.optimize_for),
                name="model",
            )
            size = measure(work / "out")
            runner = build_runner(work / "out", work / "build", cflags=("-std=c11", "-Os"))
            name, function = next(iter(runner.functions.items()))
            inputs = [np.asarray(x) for x in draw_inputs(function, 0)]
            insns = instructions(runner, name, inputs, args.repeat, lib)
            print(
                f"{model.name:32} {args.cpu} {args.optimize_for}: flash {size['flash']['total']:,} B "
                f"(constants {size['flash']['constants']:,}; C library {size['c_library_flash']:,} more), "
                f"RAM {size['ram']['total']:,} B (arena {size['ram']['arena']:,}, "
                f"inputs and outputs {_io_bytes(work / 'out'):,}), {insns:,.0f} instructions/inference",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
