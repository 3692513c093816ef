"""Benchmark: an MLP with megabytes of weights (samples/mlp/make_mlp.py at
512 -> 2048 -> 512, 8.4 MB of f32 weights by default), emitted with each
--data-format, runtimeless (NAME_constants) and async/vmfb (NAME_module_data).
For each, it prints emit's wall time, the time to write the data file alone,
the data source's size, and the C toolchain's wall time and peak RSS to
compile that one source (`cc -O2 -c`; wait4 on the compiler driver reports
the largest of it, cc1 and as; the measuring process adds a floor of ~11 MB).
Goal for the asm form: under 2 s and under 100 MB.  It also builds and runs
the runtimeless asm library on one input against numpy.  Ratios are from
this one run; it asserts nothing.

    python benchmarks/weights.py [--sizes 512 2048 512] [--cc cc] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "samples" / "mlp"))

import make_mlp  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.cgen.data_source import DataSource, write_data_source  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402
from ireegen.output.layout import output_files  # noqa: E402

GOAL_SECONDS = 2.0
GOAL_RSS_MB = 100.0
MODES = {"runtimeless": "constants-source", "async": "module-data-source"}
FORMS = ("asm", "c")


# Runs a command and prints "<wall seconds> <peak RSS KiB>" of it.  A small
# process of its own does the fork: a child's peak RSS counts the pages of
# the process it was forked from (this one holds the IREE compiler, ~400 MB).
_MEASURE = """
import os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(proc.pid, 0)
print(time.perf_counter() - start, usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def compile_one(cc: str, source: Path, include: Path, obj: Path, flags=("-O2",)) -> tuple:
    """(wall seconds, peak RSS in MB) of `cc -c source`, the compiler driver
    with cc1/as (wait4 reports the largest of the process and its children)."""
    cmd = [cc, *flags, f"-I{include}", "-c", str(source), "-o", str(obj)]
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *cmd], stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{cc} failed on {source}")
    seconds, kib = proc.stdout.split()
    return float(seconds), int(kib) / 1024.0


def write_time(blob: bytes, form: str, work: Path) -> float:
    """Seconds to write a data file of `blob` in `form` (what emit does)."""
    work.mkdir(parents=True, exist_ok=True)
    context = {"banner": "// benchmark", "name": "w", "size": len(blob)}
    start = time.perf_counter()
    spec = DataSource(
        symbol="w_module_data",
        size_symbol="w_module_size",
        alignment=64,
        description=["benchmark"],
        section_macro="W_MODULE_DATA_SECTION",
        macro="W",
        c_template="module_data.c.j2",
    )
    write_data_source(work, form, f"w_module_data.{'S' if form == 'asm' else 'c'}", "w.bin", blob, spec, context)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=3, default=[512, 2048, 512], metavar=("IN", "HIDDEN", "OUT"))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)

    sizes = tuple(args.sizes)
    weights_bytes = sum(w.nbytes for w in make_mlp.weights(sizes))
    rows, runs = [], {}
    with tempfile.TemporaryDirectory(prefix="ireegen-weights-") as tmp:
        tmp = Path(tmp)
        model = tmp / "wmlp.mlir"
        model.write_text(make_mlp.mlir(sizes, args.batch, hex_weights=True))
        print(
            f"MLP {sizes[0]} -> {sizes[1]} -> {sizes[2]}, batch {args.batch}: {weights_bytes / 1e6:.2f} MB of "
            f"weights; compiler: {args.cc} -O2 -c; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
        )
        for mode, role in MODES.items():
            for form in FORMS:
                out = tmp / f"{mode}-{form}"
                config = make_config(mode, data_format=form)
                start = time.perf_counter()
                emit(model, out, config, name="wmlp")
                emit_s = time.perf_counter() - start
                source = out / output_files("wmlp", config)[role]
                seconds, rss = compile_one(args.cc, source, out, tmp / f"{mode}-{form}.o")
                rows.append(
                    dict(
                        mode=mode,
                        form=form,
                        source=source.name,
                        source_bytes=source.stat().st_size,
                        emit_s=emit_s,
                        compile_s=seconds,
                        compile_rss_mb=rss,
                    )
                )
                runs[mode, form] = out
        blob = (runs["runtimeless", "asm"] / "wmlp_constants.bin").read_bytes()
        writes = {form: write_time(blob, form, tmp / f"write-{form}") for form in FORMS}

        # The asm library, built by `ireegen run`'s builder, on one input.
        runner = build_runner(runs["runtimeless", "asm"], tmp / "runner")
        x = np.random.default_rng(0).standard_normal((args.batch, sizes[0])).astype(np.float32)
        got, _ = runner.call("predict", [x])
        want = make_mlp.reference(x, sizes)
        error = float(np.abs(got[0] - want).max())
        scale = float(np.abs(want).max())

    print(
        f"\n{'mode':12} {'form':5} {'source':22} {'source MB':>10} {'emit s':>8} {'compile s':>10} {'peak RSS MB':>12}"
    )
    for r in rows:
        print(
            f"{r['mode']:12} {r['form']:5} {r['source']:22} {r['source_bytes'] / 1e6:10.2f} {r['emit_s']:8.2f} "
            f"{r['compile_s']:10.2f} {r['compile_rss_mb']:12.1f}"
        )
    print(f"\nwriting the data file alone ({len(blob) / 1e6:.2f} MB): asm {writes['asm']:.3f} s, c {writes['c']:.3f} s")
    goal_met = True
    for mode in MODES:
        a, c = (next(r for r in rows if r["mode"] == mode and r["form"] == f) for f in FORMS)
        met = a["compile_s"] < GOAL_SECONDS and a["compile_rss_mb"] < GOAL_RSS_MB
        goal_met &= met
        print(
            f"{mode}: c/asm compile time {c['compile_s'] / a['compile_s']:.0f}x, peak RSS "
            f"{c['compile_rss_mb'] / a['compile_rss_mb']:.0f}x, source size "
            f"{c['source_bytes'] / a['source_bytes']:.0f}x; goal (asm < {GOAL_SECONDS:g} s and < {GOAL_RSS_MB:g} MB) "
            f"{'met' if met else 'NOT met'}"
        )
    print(f"runtimeless asm library on one input: max |error| vs numpy {error:.2e} (max |output| {scale:.1f})")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                dict(
                    sizes=sizes,
                    weights_bytes=weights_bytes,
                    rows=rows,
                    writes=writes,
                    max_error=error,
                    goal_met=goal_met,
                ),
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
