"""Benchmark: flash and instructions of the sample MLP (8 -> 16 -> 4, relu;
samples/mlp/make_mlp.py's weights) on Cortex-M4F, runtimeless (--optimize-for
speed and size, with and without MLP_NO_ERROR_MESSAGES) against the C that
emx-onnx-cgen (pip) writes for the same model as ONNX (Gemm, Relu, Gemm).
Both measured the same way: objects at -Os for the core, linked with
--gc-sections from the model's entry points (the C library not counted;
footprint.linked_sizes), and instructions per inference under
qemu-system-arm with ireegen/cbuild/qemu_insn_count.c.  Prints figures.

    pip install emx-onnx-cgen onnx && python benchmarks/firmware_vs_emx.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "samples" / "mlp"))

import make_mlp  # noqa: E402
from firmware import instructions, plugin  # noqa: E402

from ireegen.cbuild import baremetal  # noqa: E402
from ireegen.cbuild.footprint import SIZE_CFLAGS, linked_sizes, measure  # noqa: E402
from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.config.cores import CORES  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

CPU = "cortex-m4"
CORE = CORES[CPU]
FLAGS = CORE.gcc_flags(CORE.default_triple)
CC = baremetal.FAMILIES[CORE.family].cc
X = (np.arange(16, dtype=np.float32).reshape(2, 8) * 0.25 - 2).astype(np.float32)

HARNESS = r"""
#include <stdio.h>
void model(const float x[2][8], float y[2][4]);
static float x[2][8], y[2][4];
int main(void) {
  for (int i = 0; i < 16; ++i) x[i / 8][i % 8] = i * 0.25f - 2.0f;
  for (int r = 0; r < REPEAT; ++r) model((const float (*)[8])x, y);
  for (int i = 0; i < 8; ++i) printf("%.9g\n", (double)y[i / 4][i % 4]);
  return 0;
}
"""


def onnx_model(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w1, b1, w2, b2 = make_mlp.weights()
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["y"]),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def run_count(elf: Path, lib: Path) -> tuple:
    cmd = [
        *baremetal.emulator_command(CORE),
        "-plugin",
        str(lib),
        "-d",
        "plugin",
        "-semihosting-config",
        "enable=on,target=native",
        "-kernel",
        str(elf),
    ]
    out = subprocess.run(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, check=True
    ).stdout
    numbers = [float(w) for w in out.split() if not w.startswith("instructions")][:-1]
    count = int(next(line.split()[1] for line in out.splitlines() if line.startswith("instructions ")))
    return numbers, count


def emx(work: Path, lib: Path) -> dict:
    work.mkdir(parents=True)
    onnx_model(work / "mlp.onnx")
    subprocess.run(
        ["emx-onnx-cgen", "compile", str(work / "mlp.onnx"), str(work / "mlp_emx.c")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    obj = work / "mlp_emx.o"
    subprocess.run([CC, *FLAGS, *SIZE_CFLAGS, "-c", str(work / "mlp_emx.c"), "-o", str(obj)], check=True)
    sizes, _ = linked_sizes(CC, FLAGS, {"emx": obj}, ["model"])
    sources, link = baremetal.support_files(CORE, work)
    counts = []
    for repeat in (1, 21):
        (work / "harness.c").write_text(HARNESS)
        elf = work / f"emx{repeat}.elf"
        subprocess.run(
            [
                CC,
                *FLAGS,
                "-Os",
                f"-DREPEAT={repeat}",
                str(work / "harness.c"),
                str(obj),
                *map(str, sources),
                *link,
                "-lm",
                "-o",
                str(elf),
            ],
            check=True,
        )
        numbers, count = run_count(elf, lib)
        counts.append(count)
    np.testing.assert_allclose(numbers, make_mlp.reference(X).ravel(), rtol=1e-5, atol=1e-6)
    return {"flash": sizes["emx"]["flash"], "instructions": (counts[1] - counts[0]) / 20}


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="fw-emx-") as tmp:
        tmp = Path(tmp)
        lib = plugin(tmp)
        for goal in ("speed", "size"):
            out = tmp / goal / "out"
            emit(
                ROOT / "samples" / "mlp" / "mlp.mlir",
                out,
                make_config("runtimeless", target_cpu=CPU, optimize_for=goal),
                name="mlp",
            )
            runner = build_runner(out, tmp / goal / "build", cflags=("-std=c11", "-Os"))
            insns = instructions(runner, "predict", [X], 20, lib)
            for messages in (True, False):
                objects = []
                if not messages:
                    obj = tmp / goal / "mlp_quiet.o"
                    subprocess.run(
                        [
                            CC,
                            *FLAGS,
                            *SIZE_CFLAGS,
                            "-DMLP_NO_ERROR_MESSAGES",
                            f"-I{out}",
                            "-c",
                            str(out / "mlp.c"),
                            "-o",
                            str(obj),
                        ],
                        check=True,
                    )
                    objects = [obj]
                report = measure(out, objects)
                label = f"runtimeless, --optimize-for {goal}" + ("" if messages else ", MLP_NO_ERROR_MESSAGES")
                rows.append(
                    (
                        label,
                        report["flash"]["total"],
                        insns,
                        f"kernels {report['flash']['executables']:,} + glue {report['flash']['glue']:,} + "
                        f"constants {report['flash']['constants']:,}",
                    )
                )
        e = emx(tmp / "emx", lib)
        rows.append(("emx-onnx-cgen 1.4 (Gemm, Relu, Gemm)", e["flash"], e["instructions"], "code and weights"))
    print(f"{'sample MLP on ' + CPU:56} {'flash B':>8} {'instr./inference':>17}  detail")
    for label, flash, insns, detail in rows:
        print(f"{label:56} {flash:8,} {insns:17,.0f}  {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
