"""Benchmark: the four MLPerf Tiny architectures (benchmarks/mlperf_tiny_models.py:
seeded weights, float and QDQ int8 per tensor; `--variants int8-pc`: int8
with per-channel weights) on Cortex-M under
qemu-system-arm: flash, RAM, instructions per inference and the largest
error against ONNX Runtime running the same ONNX model, for

- ireegen runtimeless, `--optimize-for speed` and `size` (emitted with the
  defaults otherwise, so it picks up whatever kernels the defaults choose);
- ireegen `speed` with `--iree-flag=--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops`
  (row `speed+padfuse`: IREE pads inside the convolution instead of
  materializing a zero-padded copy; see docs/firmware.md, Memory);
- emx-onnx-cgen (pip), the same ONNX file, weights as const arrays
  (`--large-weight-threshold 0`), every temporary on the stack
  (`--large-temp-threshold 0`), compiled with the same flags (-Os, the
  core's flags) and linked with --gc-sections from `model`.

ireegen's flash and RAM are `ireegen size` (objects at -Os); RAM is arena +
instance + stack.  emx-onnx-cgen's flash is its object linked from `model`
(code and weights), its RAM the stack of `model` (its temporaries) from
gcc's -fstack-usage.  Neither flash counts the C library; `flash_c_library`
is, for both, what the functions each one leaves undefined (memcpy, expf,
roundf, strcmp...) take when linked from the toolchain's newlib-nano
(footprint.c_library_size), the same way for both.  Instructions: a
qemu TCG plugin (benchmarks/qemu_insn_count.c), a run of R+1 inferences
minus a run of 1, over R.  Error: max |output - ONNX Runtime's output|
on one seeded input.  The reference rows (TFLite Micro + CMSIS-NN, X-CUBE-AI)
are quoted from issue 22 and labelled as such.  Asserts nothing.

    pip install emx-onnx-cgen
    python benchmarks/mlperf_tiny.py --json mlperf.json          # measure (long: about an hour)
    python benchmarks/mlperf_tiny.py --render mlperf.json        # markdown table + docs/mlperf_tiny.svg
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import mlperf_tiny_models as mt  # noqa: E402
from firmware import instructions, plugin  # noqa: E402

from ireegen.cbuild import baremetal  # noqa: E402
from ireegen.cbuild.footprint import SIZE_CFLAGS, c_library_size, linked_sizes, measure  # noqa: E402
from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.config.cores import CORES  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

PADFUSE = "--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"
CONCURRENT = "--iree-stream-partitioning-favor=max-concurrency"
# tool -> (--optimize-for, extra iree-compile flags, memory only: no instruction count)
IREEGEN = {
    "ireegen speed": ("speed", [], False),
    "ireegen size": ("size", [], False),
    # Memory of the alternatives (docs/firmware.md, Memory): IREE's default
    # concurrent partitioning (ireegen's before this benchmark), and the
    # padding fused into the convolutions.
    "ireegen speed, concurrent": ("speed", [CONCURRENT], True),
    "ireegen speed+padfuse": ("speed", [PADFUSE], True),
    # IREE's own code for every op: the int8 kernels off (--no-builtin-kernels).
    "ireegen speed, no kernels": ("speed", [], False),
}
NO_KERNELS = {"ireegen speed, no kernels"}
# The model file of each variant: NAME + suffix (mlperf_tiny_models.write).
VARIANT_SUFFIX = {"float": "", "int8": "_int8", "int8-pc": "_int8_pc"}
TOOLS = [*IREEGEN, "emx-onnx-cgen"]
# LLVM's remark on every Arm compile, dropped from the failures recorded.
LLVM_NOTE = (
    "Resolution of CPU to CPU-features is not implemented on this target architecture. "
    "Pass explicit CPU-features, or implement the missing mapping."
)

# Quoted from issue 22 (not measured by this script).  TFLite Micro + CMSIS-NN:
# the MLPerf Tiny int8 reference models (trained, per-channel) on Cortex-M4F
# under the same qemu and plugin, -O2; X-CUBE-AI 8.0 and TFLite Micro's
# reference kernels: published cycles on an STM32L4R5 (M4F).
REFERENCE = {
    "ds_cnn": {"tflm_cmsis_nn": (7.70e6, 22.8e3), "x_cube_ai": 8.7e6, "tflm_reference": 21.8e6},
    "resnet8": {"tflm_cmsis_nn": (29.9e6, 55.0e3), "x_cube_ai": 26.6e6, "tflm_reference": 84.5e6},
    "mobilenet_v1": {"tflm_cmsis_nn": (24.1e6, 100.7e3), "x_cube_ai": 26.5e6, "tflm_reference": 72.1e6},
    "autoencoder": {"tflm_cmsis_nn": (0.58e6, 2.6e3), "x_cube_ai": 0.91e6, "tflm_reference": 1.21e6},
}
LABELS = {"ds_cnn": "keyword spotting", "resnet8": "ResNet-8", "mobilenet_v1": "visual wake words", "autoencoder": "FC autoencoder"}  # fmt: skip


def reference_output(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    return ort.InferenceSession(str(path)).run(None, {"input": x})[0]


def measure_ireegen(
    path, name, cpu, goal, flags, memory_only, x, expected, work: Path, lib, repeat, builtin_kernels=True
) -> dict:
    out = work / "out"
    t0 = time.monotonic()
    config = make_config("runtimeless", target_cpu=cpu, optimize_for=goal)
    emit(path, out, config, name=name, extra_flags=flags, builtin_kernels=builtin_kernels)
    emit_s = time.monotonic() - t0
    size = measure(out)
    arena = json.loads((out / "manifest.json").read_text())["runtimeless"]["arena"]
    memory = {
        "flash": size["flash"]["total"],
        "ram": size["ram"]["total"],
        "arena": size["ram"]["arena"],
        "arena_transients": arena["size_aligned_io"],
        "lower_bound": arena.get("lower_bound"),
    }
    if memory_only:
        return memory
    runner = build_runner(out, work / "build", cflags=("-std=c11", "-Os"))
    function = runner.manifest["functions"][0]["name"]
    (y,), _ = runner.call(function, [x])
    quantized = runner.manifest["functions"][0]["outputs"][0].get("quantization")
    step = float(np.float32(quantized["scale"])) if quantized else None
    return {
        "flash": size["flash"]["total"],
        "flash_kernels": size["flash"]["executables"],
        "flash_constants": size["flash"]["constants"],
        "flash_c_library": size["c_library_flash"],
        # The same objects with NAME_NO_ERROR_MESSAGES (last_error() returns
        # ""; the status codes stay), as emx-onnx-cgen has no messages.
        "flash_quiet": measure(out, cflags=(*SIZE_CFLAGS, f"-D{name.upper()}_NO_ERROR_MESSAGES"))["flash"]["total"],
        "ram": size["ram"]["total"],
        "arena": size["ram"]["arena"],
        "arena_transients": arena["size_aligned_io"],
        "lower_bound": arena.get("lower_bound"),
        "instructions": instructions(runner, function, [x], repeat, lib),
        "max_error": float(np.abs(y.astype(np.float64) - expected).max()),
        "differing": _differing(y, expected, step),
        "outputs": int(y.size),
        "emit_seconds": round(emit_s, 1),
    }


def _differing(y: np.ndarray, expected: np.ndarray, step: float | None) -> int:
    """Outputs more than half a quantization step from ONNX Runtime's (any
    difference for a float output)."""
    diff = np.abs(y.astype(np.float64) - expected)
    return int(np.count_nonzero(diff > (step / 2 if step else 0)))


def measure_int8_io(path, name, cpu, goal, flags, x, expected, work: Path, lib, repeat) -> dict:
    """The QDQ model with `--quantized-io`: the caller quantizes the float
    input with the header's scale and zero point and dequantizes the int8
    output, as with TFLite Micro's int8 models, whose arena this one is
    comparable with.  Error: against ONNX Runtime on the original model."""
    out = work / "out-int8-io"
    config = make_config("runtimeless", target_cpu=cpu, optimize_for=goal)
    emit(path, out, config, name=name, extra_flags=flags, quantized_io=True)
    size = measure(out)
    manifest = json.loads((out / "manifest.json").read_text())
    arena = manifest["runtimeless"]["arena"]
    (fn,) = manifest["functions"]
    qi, qo = fn["inputs"][0]["quantization"], fn["outputs"][0]["quantization"]
    info = np.iinfo(qi["dtype"])
    xq = np.clip(np.rint(x / np.float32(qi["scale"])) + qi["zero_point"], info.min, info.max).astype(qi["dtype"])
    runner = build_runner(out, work / "build-int8-io", cflags=("-std=c11", "-Os"))
    (yq,), _ = runner.call(fn["name"], [xq])
    # Dequantized in float32, as a DequantizeLinear (ONNX Runtime's) does.
    y = ((yq.astype(np.float32) - np.float32(qo["zero_point"])) * np.float32(qo["scale"])).astype(np.float64)
    return {
        "flash": size["flash"]["total"],
        "ram": size["ram"]["total"],
        "arena": size["ram"]["arena"],
        "arena_transients": arena["size_aligned_io"],
        "lower_bound": arena.get("lower_bound"),
        "instructions": instructions(runner, fn["name"], [xq], repeat, lib),
        "max_error": float(np.abs(y - expected).max()),
        "differing": _differing(y, expected, float(np.float32(qo["scale"]))),
        "outputs": int(y.size),
    }


HARNESS = """
#include <stdio.h>
void model(const float input[restrict {dims}], float output[restrict {out_dims}]);
static const float x[{n}] = {{{values}}};
static float y[{m}];
int main(void) {{
  for (int r = 0; r < REPEAT; ++r) model((const void*)x, (void*)y);
  for (int i = 0; i < {m}; ++i) printf("%.9g\\n", (double)y[i]);
  return 0;
}}
"""


def measure_emx(path, cpu, x, expected, work: Path, lib, repeat) -> dict:
    core = CORES[cpu]
    flags = core.gcc_flags(core.default_triple)
    cc = baremetal.FAMILIES[core.family].cc
    work.mkdir(parents=True, exist_ok=True)
    source = work / "model_emx.c"
    subprocess.run(
        ["emx-onnx-cgen", "compile", str(path), str(source), "--large-temp-threshold", "0", "--large-weight-threshold", "0"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    obj = work / "model_emx.o"
    subprocess.run([cc, *flags, *SIZE_CFLAGS, "-fstack-usage", "-c", str(source), "-o", str(obj)], check=True)
    sizes, undefined = linked_sizes(cc, flags, {"emx": obj}, ["model"])
    usage = {}
    for line in (work / "model_emx.su").read_text().splitlines():
        parts = line.split("\t")
        usage[parts[0].rsplit(":", 1)[-1]] = int(parts[1])
    stack = usage.get("model", 0) + max((v for k, v in usage.items() if k != "model"), default=0)
    out_dims = "][".join(str(d) for d in expected.shape)
    harness = work / "harness.c"
    harness.write_text(
        HARNESS.format(
            dims="][".join(str(d) for d in x.shape),
            out_dims=out_dims,
            n=x.size,
            m=expected.size,
            values=",".join(f"{v:.9g}f" for v in x.ravel()),
        )
    )
    counts, numbers = [], None
    for r in (1, repeat + 1):
        elf = work / f"emx{r}.elf"

        def link(support, link_flags, defines, elf=elf, r=r):
            # The weights move to the board's larger memory as ireegen's constants do.
            placed = ('-DEMX_UNUSED=__attribute__((unused,section(".ireegen_constants")))',) if defines else ()
            cmd = [cc, *flags, "-Os", f"-DREPEAT={r}", *placed, str(harness), str(source), *map(str, support)]
            cmd += [*link_flags, "-lm", "-o", str(elf)]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return None if proc.returncode == 0 else proc.stdout

        baremetal.link_placed(core, work, "emx", link)
        cmd = [*baremetal.emulator_command(core), "-plugin", str(lib), "-d", "plugin"]
        cmd += ["-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=3600).stdout
        counts.append(int(re.search(r"^instructions (\d+)", out, re.M).group(1)))
        numbers = [float(w) for w in out.split() if re.fullmatch(r"[-+0-9.eEnaif]+", w)][: expected.size]
    y = np.array(numbers, dtype=np.float64).reshape(expected.shape)
    return {
        "flash": sizes["emx"]["flash"],
        "flash_c_library": c_library_size(cc, flags, undefined),
        "ram": stack,
        "instructions": (counts[1] - counts[0]) / repeat,
        "max_error": float(np.abs(y - expected).max()),
    }


def run(args) -> list:
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlperf-tiny-") as tmp:
        tmp = Path(tmp)
        lib = plugin(tmp)
        models = mt.write(tmp / "models", args.models, per_channel="int8-pc" in args.variants)
        expected = {
            label: reference_output(path, mt.sample_input(label.split("_int8")[0])) for label, path in models.items()
        }
        # The first core for every model first: a cut-short run still has whole tables.
        for cpu in args.cpus:
            for model in args.models:
                x = mt.sample_input(model)
                for variant in args.variants:
                    label = model + VARIANT_SUFFIX[variant]
                    path, reference = models[label], expected[label].astype(np.float64)
                    for tool in args.tools:
                        if tool == "emx-onnx-cgen" and shutil.which("emx-onnx-cgen") is None:
                            continue
                        work = tmp / f"{label}-{cpu}-{re.sub(r'[^a-z0-9]+', '_', tool)}"
                        row = {"model": model, "variant": variant, "cpu": cpu, "tool": tool}
                        try:
                            if tool in IREEGEN:
                                goal, flags, memory_only = IREEGEN[tool]
                                row.update(
                                    measure_ireegen(
                                        path, model, cpu, goal, flags, memory_only, x, reference, work, lib,
                                        args.repeat, builtin_kernels=tool not in NO_KERNELS,
                                    )
                                )  # fmt: skip
                                if variant.startswith("int8") and not memory_only and tool not in NO_KERNELS:
                                    row["int8_io"] = measure_int8_io(
                                        path, model, cpu, goal, flags, x, reference, work, lib, args.repeat
                                    )
                            else:
                                row.update(measure_emx(path, cpu, x, reference, work, lib, args.repeat))
                        except Exception as e:  # a failure is a result too
                            text = str(e).replace(LLVM_NOTE, "")
                            row["failed"] = " ".join(text.split())[:300]
                        rows.append(row)
                        print(json.dumps(row), flush=True)
                        if args.json:
                            Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return rows


def short_failure(text: str) -> str:
    """A failure in a few words: how iree-compile failed, else the start."""
    m = re.search(r"iree-compile failed for \S+ \(exit status (-?\d+)\)", text)
    if not m:
        return f"failed: {text[:80]}"
    status = int(m.group(1))
    return "iree-compile fails (error)" if status > 0 else f"iree-compile crashes (signal {-status})"


def _m(v) -> str:
    return f"{v / 1e6:.2f} M" if v >= 1e5 else f"{v / 1e3:.1f} k"


def _kb(v) -> str:
    return f"{v / 1000:.1f} KB"


def _error(r) -> str:
    """The largest error, and for int8 how many outputs differ from ONNX Runtime's."""
    if "differing" not in r or r.get("variant") == "float":
        return f"{r['max_error']:.3g}"
    return f"{r['max_error']:.3g} ({r['differing']} of {r['outputs']} differ)"


def measured(rows) -> list:
    """The rows of the builds this script measures (TOOLS): a JSON may also
    hold one-off rows of a branch, which docs/firmware.md quotes by hand."""
    return [r for r in rows if r["tool"] in TOOLS]


def table(rows, cpu) -> str:
    """One markdown table of the rows of `cpu`, with the reference rows (M4F only)."""
    lines = [
        "| model | build | flash | RAM (arena; lower bound) | instructions/inference | max error vs ONNX Runtime |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for model in mt.MODELS:
        for r in rows:
            if r["model"] != model or r["cpu"] != cpu:
                continue
            build = f"{r['tool']}, {r['variant']}"
            if r["tool"] in IREEGEN and IREEGEN[r["tool"]][2]:
                continue  # memory only: the Memory table
            if "failed" in r:
                lines.append(f"| {LABELS[model]} | {build} | | | | {short_failure(r['failed'])} |")
                continue
            ram = _kb(r["ram"])
            if "arena" in r:
                bound = f"; {_kb(r['lower_bound'])}" if r.get("lower_bound") else ""
                ram += f" ({_kb(r['arena'])}{bound})"
            lines.append(
                f"| {LABELS[model]} | {build} | {_kb(r['flash'])} | {ram} | {_m(r['instructions'])} | {_error(r)} |"
            )
            io = r.get("int8_io")
            if io:
                bound = f"; {_kb(io['lower_bound'])}" if io.get("lower_bound") else ""
                lines.append(
                    f"| {LABELS[model]} | {build} I/O (`--quantized-io`: comparable with TFLite Micro's arena) | "
                    f"{_kb(io['flash'])} | {_kb(io['ram'])} ({_kb(io['arena'])}{bound}) | {_m(io['instructions'])} | "
                    f"{_error(io)} |"
                )
        if cpu == "cortex-m4":
            ref = REFERENCE[model]
            insns, arena = ref["tflm_cmsis_nn"]
            lines.append(
                f"| {LABELS[model]} | TFLite Micro + CMSIS-NN, int8, its trained model (issue 22) | | arena {_kb(arena)} "
                f"| {_m(insns)} | |"
            )
            lines.append(
                f"| {LABELS[model]} | X-CUBE-AI 8.0 / TFLM reference kernels, int8, published cycles on STM32L4R5 | | | "
                f"{_m(ref['x_cube_ai'])} / {_m(ref['tflm_reference'])} cycles | |"
            )
    return "\n".join(lines)


def memory_table(rows, cpu) -> str:
    """Arena (without staging) / liveness lower bound of each schedule:
    ireegen's default, IREE's concurrent partitioning (ireegen before it
    chose), and the padding fused into the convolutions."""
    head = "| model | ireegen (partitioning chosen) | before: IREE's concurrent partitioning | padding fused into the convolutions |"
    lines = [head, "|---|---:|---:|---:|"]

    def cell(r):
        if r is None:
            return ""
        if "failed" in r:
            return short_failure(r["failed"])
        bound = r.get("lower_bound")
        return f"{_kb(r['arena_transients'])} / {_kb(bound)} = {r['arena_transients'] / bound:.2f}x" if bound else ""

    for model in mt.MODELS:
        for variant in ("float", "int8"):
            found = {r["tool"]: r for r in rows if r["model"] == model and r["variant"] == variant and r["cpu"] == cpu}
            if not found:
                continue
            cells = [
                cell(found.get(t)) for t in ("ireegen speed", "ireegen speed, concurrent", "ireegen speed+padfuse")
            ]
            lines.append(f"| {LABELS[model]}, {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


COLORS = {
    "ireegen speed": "#1f77b4",
    "ireegen size": "#aec7e8",
    "emx-onnx-cgen": "#ff7f0e",
    "TFLite Micro + CMSIS-NN": "#7f7f7f",
    "X-CUBE-AI (cycles)": "#c7c7c7",
}


def chart(rows, cpu: str, path: Path) -> None:
    """A grouped bar chart (log scale) of instructions per inference: per
    model and variant, one bar per build; the reference bars for int8."""
    groups = []
    for model in mt.MODELS:
        for variant in ("float", "int8"):
            bars = [
                (r["tool"], r["instructions"])
                for r in rows
                if r["model"] == model and r["variant"] == variant and r["cpu"] == cpu and "instructions" in r
            ]
            if variant == "int8" and cpu == "cortex-m4":
                bars += [("TFLite Micro + CMSIS-NN", REFERENCE[model]["tflm_cmsis_nn"][0])]
                bars += [("X-CUBE-AI (cycles)", REFERENCE[model]["x_cube_ai"])]
            if bars:
                groups.append((f"{LABELS[model]}, {variant}", bars))
    lo, hi = 1e5, 1e9
    width, bar, gap, left, top, height = 0, 14, 24, 70, 30, 300

    def y(v):
        return top + height * (1 - (np.log10(max(v, lo)) - np.log10(lo)) / (np.log10(hi) - np.log10(lo)))

    parts, x = [], left + gap
    for label, bars in groups:
        start = x
        for tool, v in bars:
            parts.append(
                f'<rect x="{x}" y="{y(v):.1f}" width="{bar}" height="{top + height - y(v):.1f}" '
                f'fill="{COLORS.get(tool, "#000")}"><title>{tool}: {v:,.0f}</title></rect>'
            )
            x += bar
        parts.append(
            f'<text x="{(start + x) / 2:.0f}" y="{top + height + 14}" font-size="10" text-anchor="end" '
            f'transform="rotate(-30 {(start + x) / 2:.0f} {top + height + 14})">{label}</text>'
        )
        x += gap
    width = x + 10
    axis = []
    for e in range(5, 10):
        axis.append(f'<line x1="{left}" x2="{width}" y1="{y(10**e):.1f}" y2="{y(10**e):.1f}" stroke="#ddd"/>')
        axis.append(f'<text x="{left - 4}" y="{y(10**e) + 4:.1f}" font-size="10" text-anchor="end">1e{e}</text>')
    legend = []
    for i, (tool, color) in enumerate(COLORS.items()):
        lx = left + (i % 3) * 190
        ly = top + height + 100 + (i // 3) * 16
        legend.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{color}"/>')
        legend.append(f'<text x="{lx + 14}" y="{ly}" font-size="11">{tool}</text>')
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + height + 140}" '
        f'font-family="sans-serif">\n<text x="{left}" y="18" font-size="13">MLPerf Tiny on {cpu} (qemu): '
        "instructions per inference, log scale (lower is better)</text>\n"
        + "\n".join(axis + parts + legend)
        + "\n</svg>\n"
    )
    path.write_text(svg)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", default=list(mt.MODELS), choices=list(mt.MODELS))
    p.add_argument("--variants", nargs="*", default=["float", "int8"], choices=list(VARIANT_SUFFIX))
    p.add_argument("--cpus", nargs="*", default=["cortex-m4", "cortex-m55"], choices=sorted(CORES))
    p.add_argument("--tools", nargs="*", default=[t for t in TOOLS if t not in NO_KERNELS], choices=TOOLS)
    p.add_argument("--repeat", type=int, default=2, help="R: instructions = (count of R+1 - count of 1) / R")
    p.add_argument("--json", help="write the rows here (rewritten after each row)")
    p.add_argument("--render", metavar="JSON", help="print the tables of a JSON written before, and the charts")
    p.add_argument(
        "--chart-dir",
        help="write mlperf_tiny_CPU.svg here (default: docs/ with --render; no chart for a measuring run without it)",
    )
    args = p.parse_args()
    rows = measured(json.loads(Path(args.render).read_text())) if args.render else run(args)
    for cpu in dict.fromkeys(r["cpu"] for r in rows):
        print(f"\n### {cpu}\n\n{table(rows, cpu)}\n\nArena / lower bound:\n\n{memory_table(rows, cpu)}")
        chart_dir = args.chart_dir or (ROOT / "docs" if args.render else None)
        if chart_dir:
            Path(chart_dir).mkdir(parents=True, exist_ok=True)
            chart(rows, cpu, Path(chart_dir) / f"mlperf_tiny_{cpu}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
