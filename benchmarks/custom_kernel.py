"""Benchmark: samples/custom_kernel with and without its C kernel
(--kernels), runtimeless on Cortex-M cores under qemu-system-arm: flash and
RAM (`ireegen size`), instructions per inference (counted as
benchmarks/firmware.py counts them), and the CPU time of `emit` itself
(ireegen and every tool it runs, verification included).  Prints figures;
asserts nothing.

    python benchmarks/custom_kernel.py [--cpus cortex-m4 cortex-m0] [--repeat 20]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "models"))

from firmware import instructions, plugin  # noqa: E402

from ireegen.cbuild.footprint import measure  # noqa: E402
from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

SAMPLE = ROOT / "samples" / "custom_kernel"


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpus", nargs="*", default=["cortex-m4", "cortex-m0"])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(64).astype(np.float32)]
    with tempfile.TemporaryDirectory(prefix="kernel-bench-") as tmp:
        lib = plugin(Path(tmp))
        for kernels in (None, SAMPLE / "kernels.json"):
            label = "with --kernels" if kernels else "IREE's code"
            start = cpu_seconds()
            emit(SAMPLE / "scale.mlir", Path(tmp) / "host", make_config("runtimeless"), kernels=kernels)
            print(f"emit, host runtimeless, {label:15}: {cpu_seconds() - start:5.2f} s CPU (verification included)")
        for cpu in args.cpus:
            for kernels in (None, SAMPLE / "kernels.json"):
                label = "with --kernels" if kernels else "IREE's code"
                work = Path(tmp) / f"{cpu}-{'k' if kernels else 'iree'}"
                emit(SAMPLE / "scale.mlir", work / "out", make_config("runtimeless", target_cpu=cpu), kernels=kernels)
                size = measure(work / "out")
                runner = build_runner(work / "out", work / "build", cflags=("-std=c11", "-Os"))
                insns = instructions(runner, "predict", inputs, args.repeat, lib)
                print(
                    f"{cpu:10} {label:15} flash {size['flash']['total']:6,} B "
                    f"(executables {size['flash']['executables']:5,})  RAM {size['ram']['total']:6,} B  "
                    f"{insns:8,.0f} instructions/inference",
                    flush=True,
                )
    print(
        f"objects at -Os (kernels at the spec's flags); instructions counted by benchmarks/qemu_insn_count.c "
        f"((repeat {args.repeat}+1) - (repeat 1)) / {args.repeat}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
