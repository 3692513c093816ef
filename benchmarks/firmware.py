"""Benchmark: runtimeless models on a Cortex-M core: flash and RAM (`ireegen
size`, objects at -Os) and instructions per inference, counted under
qemu-system-arm by a TCG plugin (qemu_insn_count.c): a run with --repeat
R+1 minus a run with --repeat 1, divided by R, so start-up, file I/O over
semihosting and the runner's own code cancel out.  Each model is built with
--optimize-for speed and size, to show the trade-off.  Prints figures; asserts nothing.

    python benchmarks/firmware.py [--cpu cortex-m4] [--models mlp cnn] [--repeat 20] [--json out.json]

docs/firmware.md's tables are benchmarks/firmware_CPU.json, written with
--json and rendered by benchmarks/render_docs.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "models"))

from corpus import CASES  # noqa: E402

from ireegen.cbuild.baremetal import emulator_command  # noqa: E402
from ireegen.cbuild.footprint import measure  # noqa: E402
from ireegen.cbuild.native_run import build_runner, check_inputs, find_function  # noqa: E402
from ireegen.config.cores import CORES  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

SAMPLES = {
    "sample-mlp": ROOT / "samples" / "mlp" / "mlp.mlir",
    "sample-simple_mul": ROOT / "samples" / "simple_mul" / "simple_mul.mlir",
}
from ireegen.config.modes import OPTIMIZE_FOR  # noqa: E402


def plugin(workdir: Path) -> Path:
    lib = workdir / "libinsn_count.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", str(ROOT / "ireegen" / "cbuild" / "qemu_insn_count.c"), "-o", str(lib)],
        check=True,
    )
    return lib


def instructions(runner, function, inputs, repeat, plugin_lib) -> float:
    fn = find_function(runner.functions, function)
    arrays = check_inputs(fn, inputs)
    work = Path(tempfile.mkdtemp(dir=runner.build_dir))
    names = []
    for i, a in enumerate(arrays):
        (work / f"in{i}.bin").write_bytes(a.tobytes())
        names.append(f"in{i}.bin")
    names += [f"out{i}.bin" for i in range(len(fn.outputs))]
    counts = []
    for r in (1, repeat + 1):
        cmd = runner.toolchain.run_command(runner.program, ["--repeat", str(r), function, *names])
        cmd[1:1] = ["-plugin", str(plugin_lib), "-d", "plugin"]
        out = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        if out.returncode != 0:
            raise RuntimeError(out.stdout)
        counts.append(
            int(next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("instructions ")))
        )
    return (counts[1] - counts[0]) / repeat


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", default="cortex-m4", choices=sorted(CORES))
    p.add_argument("--models", nargs="*", default=["sample-mlp", "sample-simple_mul", "mlp", "cnn", "depthwise_conv"])
    p.add_argument("--optimize-for", nargs="*", default=list(OPTIMIZE_FOR), choices=list(OPTIMIZE_FOR))
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--json")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fw-bench-") as tmp:
        lib = plugin(Path(tmp))
        for model in args.models:
            path = SAMPLES.get(model) or CASES[model].path
            if model in SAMPLES:
                sys.path.insert(0, str(ROOT / "tests"))
                from conftest import sample_cases

                _, function, inputs, _ = sample_cases()[model.split("-", 1)[1]]
            else:
                call = CASES[model].calls[0]
                function, inputs = call.function, call.inputs
            for flags_name in args.optimize_for:
                work = Path(tmp) / f"{model}-{flags_name}"
                emit(
                    path,
                    work / "out",
                    make_config("runtimeless", target_cpu=args.cpu, optimize_for=flags_name),
                    name=model.replace("-", "_"),
                )
                size = measure(work / "out")
                runner = build_runner(work / "out", work / "build", cflags=("-std=c11", "-Os"))
                insns = instructions(runner, function, inputs, args.repeat, lib)
                rows.append(
                    {
                        "model": model,
                        "optimize_for": flags_name,
                        "flash": size["flash"],
                        "ram": size["ram"],
                        "instructions": insns,
                    }
                )
                print(
                    f"{model:18} {flags_name:10} flash {size['flash']['total']:7,} B (exe {size['flash']['executables']:6,}, "
                    f"glue {size['flash']['glue']:5,}, const {size['flash']['constants']:7,})  "
                    f"RAM {size['ram']['total']:7,} B (arena {size['ram']['arena']:7,}, stack {size['ram']['stack']})  "
                    f"{insns:12,.0f} instructions/inference",
                    flush=True,
                )
    print(
        f"\n{args.cpu} on qemu-system-arm {emulator_command(CORES[args.cpu])[2]}; objects at -Os; instructions counted "
        f"by ireegen/cbuild/qemu_insn_count.c ((repeat {args.repeat}+1) - (repeat 1)) / {args.repeat}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
