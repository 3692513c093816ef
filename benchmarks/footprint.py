"""Benchmark: the footprint of the sample MLP (samples/mlp, 8 -> 16 -> 4) as
runtimeless firmware, the figures the README and docs/firmware.md quote:
per core (Cortex-M4F, Cortex-M55) and `--optimize-for` goal, what `ireegen
size` prints for the emitted directory (objects at -Os), the flash with
the glue compiled with `MLP_NO_ERROR_MESSAGES`, and the instructions per
inference under qemu-system-arm (benchmarks/firmware.py's count: a run of
21 calls minus a run of 1, over 20).  The peers' rows (emx-onnx-cgen,
onnx2c, ...) are quoted, with their source, from QUOTED below.  Writes
the JSON that benchmarks/render_docs.py renders into the docs;
tests/test_doc_figures.py checks the flash and RAM against `ireegen size`.

    python benchmarks/footprint.py --json benchmarks/footprint.json
    python benchmarks/render_docs.py
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from firmware import instructions, plugin  # noqa: E402

from ireegen.cbuild.footprint import SIZE_CFLAGS  # noqa: E402
from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.cbuild.toolchains import toolchain_for  # noqa: E402

MODEL = "samples/mlp/mlp.mlir"
CPUS = ("cortex-m4", "cortex-m55")
GOALS = ("speed", "size")
REPEAT = 20
# The docs' input (README tour, docs/firmware.md).
X = np.linspace(-2, 2, 16, dtype=np.float32).reshape(2, 8)

# Figures not measured by this script: what each row is and where it is from.
QUOTED = {
    "emx-onnx-cgen": {
        "label": "emx-onnx-cgen 1.4, same MLP as ONNX, Cortex-M4F (measured here)",
        "flash": 1120,
        "instructions": 3433,
        "source": "benchmarks/firmware_vs_emx.py, its first run (emx-onnx-cgen is not installed where this runs)",
    },
    "iree-runtime": {
        "label": "IREE's smallest runtime build, same model (measured here)",
        "flash": 272896,
        "source": "issue #12, developers' guide",
    },
    "onnx2c": {
        "label": "onnx2c, its own model, STM32F411 (onnx2c's README)",
        "flash_text": 8276,
        "time": "20 µs",
        "source": "onnx2c README, as quoted in issue #12",
    },
    "cube-ai": {
        "label": "ST Cube.AI, same model (onnx2c's README)",
        "flash_text": 14372,
        "time": "490 µs",
        "source": "onnx2c README, as quoted in issue #12",
    },
    "executorch": {
        "label": "ExecuTorch on Cortex-M (its docs)",
        "flash_approx": "~100 KiB",
        "source": "issue #12",
    },
}


JSON = ROOT / "benchmarks" / "footprint.json"


def load_json() -> dict:
    """The figures recorded by the last run (benchmarks/footprint.json)."""
    return json.loads(JSON.read_text())


def ireegen(*args: str) -> str:
    """Runs `python -m ireegen ARGS` from the checkout, as the docs do; its stdout."""
    proc = subprocess.run(
        [sys.executable, "-m", "ireegen", *args], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True
    )
    return proc.stdout


def size(outdir: Path, work: Path, objects=()) -> tuple:
    """`ireegen size OUTDIR`: what it prints and its --json figures."""
    report = work / "size.json"
    args = ["--objects", *map(str, objects)] if objects else []
    printed = ireegen("size", str(outdir), *args, "--json", str(report))
    return printed, json.loads(report.read_text())


def quiet_glue(outdir: Path, work: Path, figures: dict) -> Path:
    """The glue object compiled as `size` compiles it, with MLP_NO_ERROR_MESSAGES."""
    target = figures["target"]
    toolchain = toolchain_for(
        target["triple"], cpu=target["cpu"], need_emulator=False, cpu_features=target.get("features", "")
    )
    obj = work / "mlp_quiet.o"
    subprocess.run(
        [toolchain.cc, *toolchain.cflags, *SIZE_CFLAGS, "-DMLP_NO_ERROR_MESSAGES", f"-I{outdir}"]
        + ["-c", str(outdir / "mlp.c"), "-o", str(obj)],
        check=True,
    )
    return obj


def figures(cpu: str, goal: str, work: Path, verify: bool = True) -> dict:
    """The figures of one build that do not vary between runs: `ireegen size`'s."""
    out = work / "out"
    emit = [
        "emit",
        MODEL,
        "-o",
        str(out),
        "--execution-model",
        "runtimeless",
        "--target-cpu",
        cpu,
        "--optimize-for",
        goal,
    ]
    ireegen(*emit, *([] if verify else ["--no-verify"]))
    printed, report = size(out, work)
    _, quiet = size(out, work, [quiet_glue(out, work, report)])
    return {
        "command": " ".join(["python", "-m", "ireegen", *emit]).replace(str(out), "OUT"),
        "flash": report["flash"]["total"],
        "ram": report["ram"]["total"],
        "flash_no_error_messages": quiet["flash"]["total"],
        "flash_of_error_messages": report["flash"]["total"] - quiet["flash"]["total"],
        "printed": printed,
        "size": report,
    }


def measure(cpu: str, goal: str, work: Path, lib: Path) -> dict:
    """figures() and the instructions per inference."""
    row = figures(cpu, goal, work)
    runner = build_runner(work / "out", work / "build", cflags=("-std=c11", "-Os"))
    return {**row, "instructions": round(instructions(runner, "predict", [X], REPEAT, lib))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the figures here (benchmarks/footprint.json)")
    args = p.parse_args()
    builds: dict = {}
    with tempfile.TemporaryDirectory(prefix="footprint-") as tmp:
        lib = plugin(Path(tmp))
        for cpu in CPUS:
            for goal in GOALS:
                work = Path(tmp) / f"{cpu}-{goal}"
                work.mkdir()
                row = measure(cpu, goal, work, lib)
                builds.setdefault(cpu, {})[goal] = row
                print(
                    f"{cpu:11} {goal:6} flash {row['flash']:6,} B (no messages {row['flash_no_error_messages']:6,} B)  "
                    f"RAM {row['ram']:5,} B  {row['instructions']:7,} instructions/inference",
                    flush=True,
                )
    m4, emx = builds["cortex-m4"], QUOTED["emx-onnx-cgen"]
    best_flash = min(row["flash_no_error_messages"] for row in m4.values())
    result = {
        "model": MODEL,
        "mlp": builds,
        "quoted": QUOTED,
        "vs_emx": {
            "flash_ratio_best": best_flash / emx["flash"],
            "speedup_at_speed": emx["instructions"] / m4["speed"]["instructions"],
        },
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
