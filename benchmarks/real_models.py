"""Benchmark: ireegen against ONNX Runtime on real models, per IREE
configuration, and the gap to this machine's arithmetic peak.

    python benchmarks/real_models.py [--models resnet18 mobilenet_v2 ocr_cls ocr_det silero_vad]
        [--target-cpu host] [--flag-sets base im2col ...] [--default-target]
        [--rounds 5] [--seconds 0.5] [--threads N] [--json docs/real_models.json]
        [--png docs/real_models.png] [--doc docs/peers.md]

The models: torchvision's ResNet-18 and MobileNetV2 (weights=None, seed 0,
exported with torch.onnx.export at opset 17: `pip install torch
torchvision`), and the shipped models of tests/test_real_models.py (taken
from their PyPI wheels): PaddleOCR's text-direction classifier and text
detector, silero-vad (one 32 ms chunk with its state).

One run per model, the measurements alternating --rounds times; the figure
is the median round, with the spread (lowest and highest round).  One
thread, CPU time per call (the machine is shared: wall time would measure
the others), measured as benchmarks/peers.py does:
- runtimeless: the emitted C through `ireegen run`'s runner, CPU time of
  --repeat N calls minus one call, over N - 1;
- async: iree-benchmark-module --device=local-sync, cpu_time per iteration;
- ONNX Runtime: CPU provider, intra_op = inter_op = 1, all graph
  optimizations, bound inputs and outputs, thread CPU time per call minus
  the Python loop's floor (benchmarks/peers.py).
Threads (--threads, default this machine's core count): async on IREE's task
executor with that many workers against ONNX Runtime with that many
intra-op threads, both in wall time per call (CPU time would add the
threads up).

Thread counts (--thread-counts 1 2 4 8 16: those up to this machine's core
count are timed): the generated C against ONNX Runtime at each count, wall
time per call, for the --async-flag-sets: runtimeless through the runner
built with NAME_PARALLEL_FOR and the pthreads pool of cmake/threads/ (its
--repeat wall clock), async through iree-benchmark-module on the device the
generated glue creates for that worker count (local-sync at 1, local-task
above), ONNX Runtime with that many intra-op threads.  With --thread-counts
the run writes only this table (--doc: the real_models_threads region).

Each ireegen configuration is a CPU (--target-cpu) and a flag set (FLAG_SETS,
--flag-sets): the IREE flags passed with --iree-flag, emitted with --tune off;
--tune quick|full adds what `emit --tune` picks by itself.  Every output is
checked against ONNX Runtime's before it is timed (max abs error within
1e-3 of the output's largest magnitude); a configuration that does not
compile or computes other numbers is reported, not timed.
--default-target adds runtimeless at the portable `generic` CPU and at the
x86-64-v3 default, base flags, for the default-target trade-off.

GFLOP/s: 2 x the multiply-adds of the graph's Conv, ConvTranspose, Gemm and
MatMul nodes (static shapes after shape inference; what else a model does
is not counted) over the median CPU time; the peak is a one-thread FMA loop
(-O2 -march=native, independent accumulators of the widest vectors) timed
here.  Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from peers import OnnxRuntime, _cc_version, _host_cpu, per_call_cpu, python_loop_floor_ns  # noqa: E402
from runtimeless import benchmark_module_inputs, compile_c, first_line, time_async  # noqa: E402

from ireegen.cbuild.native_run import build_runner, manifest_functions  # noqa: E402
from ireegen.check.runners import device_flags, find_runtime_tools  # noqa: E402
from ireegen.common.clock import cpu_seconds  # noqa: E402
from ireegen.config.matmul_tiles import FLAG as MATMUL_TILES_FLAG  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

# The IREE flag sets compared (--iree-flag each).  "base": IREE's defaults.
IM2COL = ("--iree-global-opt-use-im2col-for-convs",)
DATA_TILING = ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all")
CHANNELS_LAST = (
    "--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))",
)
TRANSPOSES = ("--iree-global-opt-propagate-transposes", "--iree-opt-aggressively-propagate-transposes")
CONV_DATA_TILING = (
    "--iree-dispatch-creation-experimental-set-data-tiling-ops=matmul",
    "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution",
)
# Transposes moved through pads and convolutions (IREE 3.13's padding fusion,
# --iree-dispatch-creation-enable-fuse-padding-into-linalg-producer-ops, fails
# to compile ResNet-18: "failed to run translation of source executable").
TRANSPOSES_THROUGH = (
    "--iree-global-opt-enable-sink-transpose-through-pad",
    "--iree-global-opt-propagate-transposes-through-conv",
)
FLAG_SETS = {
    "base": (),
    "im2col": IM2COL,
    "dt-ukernels": DATA_TILING,
    "channels-last": CHANNELS_LAST,
    "im2col+dt": IM2COL + DATA_TILING,
    "im2col+dt-codegen": IM2COL + DATA_TILING[:1],
    "im2col+channels-last": IM2COL + CHANNELS_LAST,
    "channels-last+dt": CHANNELS_LAST + DATA_TILING,
    "channels-last+dt-conv": CHANNELS_LAST + DATA_TILING + CONV_DATA_TILING,
    "dt-conv": DATA_TILING + CONV_DATA_TILING,
    "im2col+channels-last+dt": IM2COL + CHANNELS_LAST + DATA_TILING,
    "channels-last+transposes": CHANNELS_LAST + TRANSPOSES + TRANSPOSES_THROUGH,
    "channels-last+O3": CHANNELS_LAST + ("--iree-opt-level=O3",),
    "all": IM2COL + DATA_TILING + CHANNELS_LAST + TRANSPOSES,
    # ireegen's matmul tile spec (config/matmul_tiles.py), which emit
    # writes where this flag names it: `--tune`'s matmul-tiles candidate.
    "matmul-tiles": (MATMUL_TILES_FLAG,),
}
# What won somewhere (docs/peers.md, "Real models"): each model's best is among these.
DEFAULT_FLAG_SETS = ("base", "im2col", "im2col+dt", "im2col+dt-codegen", "channels-last", "dt-conv")
TOLERANCE = 1e-3  # max abs error / the output's largest magnitude
SEED = 0


# ---------------------------------------------------------------------------
# The models


@dataclass(frozen=True)
class ModelSpec:
    description: str
    input_shapes: dict  # --input-shape
    input_values: dict = field(default_factory=dict)  # --input-value (the ONNX Runtime feed gets them too)


MODELS = {
    "resnet18": ModelSpec("torchvision ResNet-18, 1x3x224x224 (weights=None)", {"image": (1, 3, 224, 224)}),
    "mobilenet_v2": ModelSpec("torchvision MobileNetV2, 1x3x224x224 (weights=None)", {"image": (1, 3, 224, 224)}),
    "regnety": ModelSpec("torchvision RegNetY-400MF, 1x3x224x224 (weights=None)", {"image": (1, 3, 224, 224)}),
    "lraspp": ModelSpec(
        "torchvision LRASPP MobileNetV3-Large, 1x3x224x224 (weights=None, weights_backbone=None)",
        {"image": (1, 3, 224, 224)},
    ),
    "ocr_cls": ModelSpec("PaddleOCR text-direction classifier, 1x3x48x192 (rapidocr 1.4.4)", {"x": (1, 3, 48, 192)}),
    "ocr_det": ModelSpec("PP-OCRv4 text detector, 1x3x320x320 (rapidocr 1.4.4)", {"x": (1, 3, 320, 320)}),
    "silero_vad": ModelSpec(
        "silero-vad 6.2.3, one 32 ms chunk with its state",
        {"input": (1, 576), "state": (2, 1, 128)},
        {"sr": (16000,)},
    ),
}
# name -> (torchvision.models module, constructor); a segmentation model's "out" is its output.
TORCHVISION = {
    "resnet18": ("", "resnet18"),
    "mobilenet_v2": ("", "mobilenet_v2"),
    "regnety": ("", "regnet_y_400mf"),
    "lraspp": ("segmentation", "lraspp_mobilenet_v3_large"),
}


def fetch_shipped(directory: Path) -> dict:
    """{file name: path}: the models tests/test_real_models.py takes from PyPI wheels."""
    from test_real_models import PACKAGES

    found = {}
    for requirement, files in PACKAGES.items():
        if all((directory / n).exists() for n in files):
            found.update({n: directory / n for n in files})
            continue
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", requirement]
            + ["-d", str(directory / "wheels")],
            check=True,
        )
        wheel = next((directory / "wheels").glob(requirement.split("==")[0].replace("-", "_") + "-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            for name, member in files.items():
                (directory / name).write_bytes(z.read(member))
                found[name] = directory / name
    return found


def export_torchvision(name: str, path: Path) -> None:
    import torch
    import torchvision

    torch.manual_seed(SEED)
    package, constructor = TORCHVISION[name]
    if package:
        net = getattr(getattr(torchvision.models, package), constructor)(weights=None, weights_backbone=None).eval()

        class Out(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, image):
                return self.net(image)["out"]

        model = Out().eval()
    else:
        model = getattr(torchvision.models, constructor)(weights=None).eval()
    torch.onnx.export(
        model,
        (torch.randn(1, 3, 224, 224),),
        str(path),
        input_names=["image"],
        output_names=["logits"],
        opset_version=17,
        dynamo=False,
    )


def model_file(name: str, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if name in TORCHVISION:
        path = directory / f"{name}.onnx"
        if not path.exists():
            export_torchvision(name, path)
        return path
    return fetch_shipped(directory)[{"ocr_cls": "ocr_cls.onnx", "ocr_det": "ocr_det.onnx"}.get(name, f"{name}.onnx")]


def model_inputs(name: str) -> dict:
    """{input name: array}: what the model is meant to see."""
    from test_real_models import rendered_text, synthetic_voice

    if name in TORCHVISION:
        return {"image": np.random.default_rng(SEED).standard_normal((1, 3, 224, 224)).astype(np.float32)}
    if name == "ocr_cls":
        return {"x": rendered_text()}
    if name == "ocr_det":
        return {"x": rendered_text("PAPER 27y", height=320, width=320, scale=5)}
    voice = synthetic_voice()
    return {"input": voice[2048 : 2048 + 576].reshape(1, 576), "state": np.zeros((2, 1, 128), np.float32)}


def count_flops(path: Path, spec: ModelSpec) -> int:
    """2 x the multiply-adds of the Conv, ConvTranspose, Gemm and MatMul
    nodes (in an If, of its costlier branch)."""
    import onnx

    model = onnx.load(str(path))
    for value in model.graph.input:
        if value.name in spec.input_shapes:
            dims = value.type.tensor_type.shape.dim
            for d, n in zip(dims, spec.input_shapes[value.name]):
                d.Clear()
                d.dim_value = n
    return _graph_flops(onnx.shape_inference.infer_shapes(model).graph, {})


def _graph_flops(graph, outer: dict) -> int:
    shapes = dict(outer)
    for v in (*graph.input, *graph.value_info, *graph.output):
        if v.type.tensor_type.HasField("shape"):
            shapes[v.name] = [d.dim_value if d.HasField("dim_value") else None for d in v.type.tensor_type.shape.dim]
    shapes.update({t.name: list(t.dims) for t in graph.initializer})
    for n in graph.node:
        for a in n.attribute if n.op_type == "Constant" else ():
            if a.name == "value":
                shapes[n.output[0]] = list(a.t.dims)

    def known(name):
        dims = shapes.get(name)
        return dims if dims and None not in dims else None

    flops = 0
    for n in graph.node:
        if n.op_type == "If":
            flops += max(_graph_flops(a.g, shapes) for a in n.attribute if a.name in ("then_branch", "else_branch"))
        elif n.op_type in ("Conv", "ConvTranspose"):
            # Conv: output elements x (Cin/group x kernel); ConvTranspose: input elements x (Cout/group x kernel).
            w, y = known(n.input[1]), known(n.output[0] if n.op_type == "Conv" else n.input[0])
            if w and y:
                flops += 2 * int(np.prod(y)) * int(np.prod(w[1:]))
        elif n.op_type in ("Gemm", "MatMul"):
            a, y = known(n.input[0]), known(n.output[0])
            if a and y:
                k = a[0] if n.op_type == "Gemm" and any(x.name == "transA" and x.i for x in n.attribute) else a[-1]
                flops += 2 * int(np.prod(y)) * k
    return flops


# ---------------------------------------------------------------------------
# This machine's peak

FMA_PEAK = r"""// One thread of fused multiply-adds on 12 independent accumulators (named,
// so that they stay in registers) of the widest vectors -march=native
// gives: the arithmetic peak of a core.
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__AVX512F__)
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
typedef float vec __attribute__((vector_size(LANES * 4)));
#define STEP(c) c = c * a + b
int main(int argc, char** argv) {
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000000L;
  vec a, b;
  for (int i = 0; i < LANES; ++i) { a[i] = 0.999999f; b[i] = 1e-7f; }
  vec c0 = a, c1 = a * 2, c2 = a * 3, c3 = a * 4, c4 = a * 5, c5 = a * 6;
  vec c6 = a * 7, c7 = a * 8, c8 = a * 9, c9 = a * 10, c10 = a * 11, c11 = a * 12;
  struct timespec t0, t1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  for (long i = 0; i < n; ++i) {
    STEP(c0); STEP(c1); STEP(c2); STEP(c3); STEP(c4); STEP(c5);
    STEP(c6); STEP(c7); STEP(c8); STEP(c9); STEP(c10); STEP(c11);
  }
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  vec all = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11;
  float sink = 0;
  for (int i = 0; i < LANES; ++i) sink += all[i];
  double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  printf("%d %.3f %g\n", LANES, 2.0 * LANES * 12 * n / s / 1e9, sink);
  return 0;
}
"""


def measure_peak(workdir: Path) -> dict:
    """{"lanes", "gflops"}: the best of three runs of the FMA loop."""
    source, program = workdir / "fma_peak.c", workdir / "fma_peak"
    source.write_text(FMA_PEAK)
    compile_c(["-O2", "-march=native", "-ffp-contract=fast", source, "-o", program])
    best, lanes = 0.0, 0
    for _ in range(3):
        out = subprocess.run([str(program), "50000000"], capture_output=True, text=True, check=True).stdout.split()
        lanes, best = int(out[0]), max(best, float(out[1]))
    return {"lanes": lanes, "gflops": round(best, 1), "flags": "-O2 -march=native, 12 FMA chains"}


# ---------------------------------------------------------------------------
# Contenders


@dataclass
class Result:
    model: str
    description: str = ""
    gflop: float = 0.0  # per call
    ns: dict = field(default_factory=dict)  # contender -> median ns per call
    spread: dict = field(default_factory=dict)  # contender -> [lowest, highest] round
    repeat: dict = field(default_factory=dict)  # contender -> calls per measurement
    errors: dict = field(default_factory=dict)  # contender -> why not measured
    max_error: dict = field(default_factory=dict)  # contender -> max abs error / max |ONNX Runtime|
    emit_seconds: dict = field(default_factory=dict)  # contender -> emit wall time
    emit_cpu_seconds: dict = field(default_factory=dict)  # contender -> emit CPU time, its compilers' included
    async_flag_sets: list = field(default_factory=list)  # the flag sets timed in async too


class OnnxRuntimeThreads(OnnxRuntime):
    """ONNX Runtime with `threads` intra-op threads: wall time per call."""

    def __init__(self, path: Path, threads: int):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.binding = None

    def time(self, repeat: int) -> float:
        run, binding = self.session.run_with_iobinding, self.binding
        run(binding)
        start = time.perf_counter_ns()
        for _ in range(repeat):
            run(binding)
        return (time.perf_counter_ns() - start) / repeat


def max_error(got: list, want: list) -> float:
    if len(got) != len(want):
        return float("inf")
    worst = 0.0
    for g, w in zip(got, want):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        if g.shape != w.shape:
            return float("inf")
        worst = max(worst, float(np.abs(g - w).max()) / max(float(np.abs(w).max()), 1e-6))
    return worst


def first_function(outdir: Path) -> str:
    manifest = json.loads((outdir / "manifest.json").read_text())
    return next(iter(manifest_functions(manifest).values())).name


def contender_name(kind: str, cpu: str, flag_set: str) -> str:
    return f"{kind} {cpu} {flag_set}"


def benchmark(name: str, workdir: Path, args, floor_ns: float) -> Result:
    spec = MODELS[name]
    path = model_file(name, args.models_dir)
    result = Result(name, spec.description)
    result.gflop = count_flops(path, spec) / 1e9
    feeds = model_inputs(name)
    ort_feeds = {**feeds, **{k: np.array(v[0] if len(v) == 1 else v, np.int64) for k, v in spec.input_values.items()}}
    ort = OnnxRuntime(path)
    ort_inputs = [ort_feeds[i.name] for i in ort.session.get_inputs()]
    reference = ort.run(ort_inputs)
    ort.bind(ort_inputs)
    timers = {"onnxruntime 1 thread": lambda n: ort.time(n) - floor_ns}
    inputs = list(feeds.values())
    shapes = {k: tuple(v) for k, v in spec.input_shapes.items()}
    values = dict(spec.input_values)
    tool = find_runtime_tools().bin_dir / "iree-benchmark-module"

    configs = [(args.target_cpu, f) for f in args.flag_sets]
    if args.default_target:
        configs += [(cpu, "base") for cpu in ("generic", "x86-64-v3") if cpu != args.target_cpu]
    if args.tune != "off":
        configs.append((args.target_cpu, f"tune-{args.tune}"))
    for cpu, flag_set in configs:
        label = contender_name("runtimeless", cpu, flag_set)
        outdir = workdir / f"rl-{cpu}-{flag_set}"
        tuned = flag_set.startswith("tune-")
        try:
            start, cpu_start = time.perf_counter(), cpu_seconds()
            emit(
                path,
                outdir,
                make_config("runtimeless", target_cpu=cpu),
                name=name,
                extra_flags=[] if tuned else list(FLAG_SETS[flag_set]),
                verify=tuned,  # a tuned emit verifies each candidate anyway
                input_shapes=shapes,
                input_values=values,
                tune=args.tune if tuned else "off",
            )
            result.emit_seconds[label] = round(time.perf_counter() - start, 1)
            result.emit_cpu_seconds[label] = round(cpu_seconds() - cpu_start, 1)
            runner = build_runner(outdir, workdir / f"runner-{cpu}-{flag_set}")
            function = first_function(outdir)
            got, _ = runner.call(function, inputs)
            result.max_error[label] = max_error(got, reference)
            if result.max_error[label] > TOLERANCE:
                raise RuntimeError(f"outputs differ from ONNX Runtime's: max error {result.max_error[label]:.3g}")
            timers[label] = lambda n, runner=runner, function=function: per_call_cpu(
                lambda k: runner.call(function, inputs, repeat=k), n
            )
        except Exception as e:  # noqa: BLE001 - reported in the table
            result.errors[label] = first_line(e)
    # async: the flag sets asked for; "best": runtimeless's fastest in a first probe.
    probe = {}
    for label, timer in timers.items():
        try:
            probe[label] = max(timer(3), 1.0)
        except Exception as e:  # noqa: BLE001
            result.errors[label] = first_line(e)
    fastest = [
        k for k in sorted(probe, key=probe.get) if k.startswith(f"runtimeless {args.target_cpu} ") and "tune-" not in k
    ]
    best = fastest[0].split(" ", 2)[2] if fastest else "base"
    result.async_flag_sets = list(dict.fromkeys(best if f == "best" else f for f in args.async_flag_sets))
    for flag_set in result.async_flag_sets:
        try:
            outdir = workdir / f"async-{flag_set}"
            emit(
                path,
                outdir,
                make_config("async", "embedded-elf", target_cpu=args.target_cpu),
                name=name,
                extra_flags=list(FLAG_SETS[flag_set]),
                verify=False,
                input_shapes=shapes,
                input_values=values,
                tune="off",
            )
            function = first_function(outdir)
            flags = benchmark_module_inputs(inputs, workdir / "async-inputs")
            vmfb = outdir / f"{name}.vmfb"
            one = contender_name("async", args.target_cpu, flag_set)
            timers[one] = lambda n, vmfb=vmfb, function=function, flags=flags: time_async(
                tool, vmfb, function, flags, n, clock="cpu_time"
            )
            if args.threads > 1 and not args.thread_counts:
                many = contender_name(f"async {args.threads} threads", args.target_cpu, flag_set)
                device = ("--device=local-task", f"--task_topology_group_count={args.threads}")
                timers[many] = lambda n, vmfb=vmfb, function=function, flags=flags, device=device: time_async(
                    tool, vmfb, function, flags, n, clock="real_time", device=device
                )
        except Exception as e:  # noqa: BLE001
            result.errors[contender_name("async", args.target_cpu, flag_set)] = first_line(e)
    if args.threads > 1 and not args.thread_counts:
        threaded = OnnxRuntimeThreads(path, args.threads)
        threaded.bind(ort_inputs)
        timers[f"onnxruntime {args.threads} threads"] = threaded.time
    for n in thread_counts(args):
        timers.update(thread_timers(n, name, workdir, args, result, inputs, ort_inputs, path, tool))

    for label, timer in timers.items():
        try:
            probe[label] = probe.get(label) or max(timer(3), 1.0)
        except Exception as e:  # noqa: BLE001
            result.errors[label] = first_line(e)
    timers = {k: t for k, t in timers.items() if k in probe}
    result.repeat = {k: int(min(100000, max(3, args.seconds * 1e9 / probe[k]))) for k in timers}
    samples = {k: [] for k in timers}
    for r in range(args.rounds):
        print(f"  {name}: round {r + 1} of {args.rounds}", flush=True)
        for label, timer in timers.items():
            try:
                samples[label].append(timer(result.repeat[label]))
            except Exception as e:  # noqa: BLE001
                result.errors[label] = first_line(e)
    for label, values_ns in samples.items():
        if values_ns and label not in result.errors:
            result.ns[label] = statistics.median(values_ns)
            result.spread[label] = [min(values_ns), max(values_ns)]
    return result


def thread_counts(args) -> list:
    """--thread-counts that this machine has the cores for."""
    return [n for n in args.thread_counts if n <= (os.cpu_count() or 1)]


def threads_label(kind: str, n: int, flag_set: str, cpu: str) -> str:
    return contender_name(f"{kind} {n} threads", cpu, flag_set)


def thread_timers(n: int, name: str, workdir: Path, args, result: Result, inputs, ort_inputs, path, tool) -> dict:
    """Wall-time timers at `n` threads: ONNX Runtime, and the generated C of
    each --async-flag-sets (runtimeless emitted above; async's module)."""
    ort_n = OnnxRuntimeThreads(path, n)
    ort_n.bind(ort_inputs)
    timers = {f"onnxruntime {n} threads": ort_n.time}
    cpu = args.target_cpu
    for flag_set in result.async_flag_sets:
        label = threads_label("runtimeless", n, flag_set, cpu)
        outdir = workdir / f"rl-{cpu}-{flag_set}"
        try:
            runner = build_runner(outdir, workdir / f"runner-{cpu}-{flag_set}-{n}", threads=n)
            function = first_function(outdir)
            got, _ = runner.call(function, inputs)
            if max_error(got, ort_n.run(ort_inputs)) > TOLERANCE:
                raise RuntimeError("outputs differ from ONNX Runtime's")
            timers[label] = lambda k, runner=runner, function=function: runner.call(function, inputs, repeat=k)[1]
        except Exception as e:  # noqa: BLE001 - reported in the table
            result.errors[label] = first_line(e)
        vmfb = workdir / f"async-{flag_set}" / f"{name}.vmfb"
        if vmfb.exists():
            function = first_function(vmfb.parent)
            flags = benchmark_module_inputs(inputs, workdir / "async-inputs")
            timers[threads_label("async", n, flag_set, cpu)] = lambda k, vmfb=vmfb, function=function, flags=flags: (
                time_async(tool, vmfb, function, flags, k, clock="real_time", device=tuple(device_flags(n)))
            )
    return timers


# ---------------------------------------------------------------------------
# Printing, JSON, the chart and the doc


def is_one_thread(label: str) -> bool:
    return "threads" not in label


def best_ireegen(r: Result, kind: str = "runtimeless") -> tuple:
    found = {k: v for k, v in r.ns.items() if k.startswith(kind + " ") and is_one_thread(k) and "tune-" not in k}
    return min(found.items(), key=lambda kv: kv[1]) if found else (None, None)


def fmt_ms(ns) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e6:.2f} ms" if ns >= 1e6 else f"{ns / 1e3:.0f} µs"


def gflops(r: Result, ns) -> str:
    return f"{r.gflop / (ns / 1e9):.1f}" if r.gflop and ns else "-"


def ratio_text(r: Result, label: str, over: str) -> str:
    v, ref = r.ns.get(label), r.ns.get(over)
    if not v or not ref:
        return "-"
    lo, hi = r.spread[label]
    return f"{v / ref:.2f}x ({lo / ref:.2f}-{hi / ref:.2f})"


def print_results(results: list, peak: dict) -> None:
    print(
        f"\nMedian CPU time per call (one thread) and ratio to ONNX Runtime (1 thread); peak {peak['gflops']} GFLOP/s"
    )
    for r in results:
        ort = r.ns.get("onnxruntime 1 thread")
        print(f"\n{r.model}: {r.description}; {r.gflop:.3f} GFLOP per call")
        for label in sorted(r.ns, key=lambda k: r.ns[k]):
            gflops = r.gflop / (r.ns[label] / 1e9) if r.gflop else 0
            ratio = ratio_text(r, label, "onnxruntime 1 thread") if is_one_thread(label) else "-"
            print(f"  {label:<45} {fmt_ms(r.ns[label]):>11} {ratio:>24} {gflops:8.1f} GFLOP/s")
        for label, message in sorted(r.errors.items()):
            print(f"  {label:<45} not measured: {message}")
        if ort is None:
            print("  (ONNX Runtime not measured)")


def geomean(xs: list) -> float | None:
    xs = [x for x in xs if x]
    return float(np.exp(np.mean(np.log(xs)))) if xs else None


def threads_markdown(results: list, meta: dict, args) -> str:
    """The thread-count table: each count's wall time per call, ONNX Runtime's
    and the generated C's, with the ratio to ONNX Runtime at the same count."""
    cpu = args.target_cpu
    counts = [n for n in args.thread_counts if n <= meta["cores"]]
    lines = [
        f"Measured {meta['date']} with `{meta['command']}`: {meta['host_cpu']}, {meta['cores']} cores, "
        f"IREE {meta['iree_compile']}, onnxruntime {meta['onnxruntime']}, {meta['cc']}. Median of {args.rounds} "
        "alternating rounds, wall time per call; in brackets the time over ONNX Runtime's at the same thread "
        "count. Runtimeless: the generated C with `NAME_PARALLEL_FOR` and the pthreads pool; async: the same "
        "module on the device the generated glue creates for that worker count (local-sync at 1, local-task "
        f"above), through iree-benchmark-module. `--target-cpu {cpu}`. From `docs/real_models_threads.json`.",
        "",
        "| model | flags | threads | ONNX Runtime | runtimeless (generated C) | async |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:
        for flag_set in r.async_flag_sets:
            for n in counts:
                ort = r.ns.get(f"onnxruntime {n} threads")
                cells = []
                for kind in ("runtimeless", "async"):
                    label = threads_label(kind, n, flag_set, cpu)
                    v = r.ns.get(label)
                    cells.append(
                        f"{fmt_ms(v)} ({v / ort:.2f}x)" if v and ort else "fails" if label in r.errors else "-"
                    )
                lines.append(f"| {r.model} | `{flag_set}` | {n} | {fmt_ms(ort)} | " + " | ".join(cells) + " |")
    failures = [(r.model, k, v) for r in results for k, v in sorted(r.errors.items())]
    if failures:
        lines += ["", "Not measured:", ""]
        lines += [f"- {m}, {k}: {v}" for m, k, v in failures]
    return "\n".join(lines) + "\n"


def markdown(results: list, meta: dict, args) -> str:
    if args.thread_counts:
        return threads_markdown(results, meta, args)
    peak = meta["peak"]["gflops"]
    cpu = args.target_cpu
    lines = [
        f"Measured {meta['date']} with `{meta['command']}`: {meta['host_cpu']}, IREE {meta['iree_compile']}, "
        f"onnxruntime {meta['onnxruntime']}, {meta['cc']}. Median of {args.rounds} alternating rounds, "
        "CPU time per call, one thread; in brackets the ratio's spread (lowest and highest round). "
        f"This core's FMA peak: {peak} GFLOP/s ({meta['peak']['lanes']} float lanes, "
        f"{meta['peak']['flags']}). From `docs/real_models.json`.",
        "",
        f"**IREE flag sets, runtimeless, `--target-cpu {cpu}`** (time / ONNX Runtime's; the best per model in bold):",
        "",
    ]
    sets = [*args.flag_sets, *([f"tune-{args.tune}"] if args.tune != "off" else [])]
    lines.append("| model | GFLOP | ONNX Runtime | " + " | ".join(f"`{s}`" for s in sets) + " |")
    lines.append("|---|---:|---:|" + "---:|" * len(sets))
    for r in results:
        ort = r.ns.get("onnxruntime 1 thread")
        cells = []
        best, _ = best_ireegen(r)
        for s in sets:
            label = contender_name("runtimeless", cpu, s)
            if label in r.ns and ort:
                text = f"{fmt_ms(r.ns[label])} ({r.ns[label] / ort:.2f}x)"
                cells.append(f"**{text}**" if label == best else text)
            else:
                cells.append("fails" if label in r.errors else "-")
        gflop = f"{r.gflop:.2f}" if r.gflop else "-"
        lines.append(f"| {r.model} | {gflop} | {fmt_ms(ort)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "**The best configuration against ONNX Runtime**, with the achieved GFLOP/s "
        f"(peak {peak}) and async beside it:",
        "",
        "| model | ONNX Runtime | GFLOP/s | best ireegen (runtimeless) | ratio (spread) | GFLOP/s | async, same flags |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    ratios = []
    for r in results:
        ort = r.ns.get("onnxruntime 1 thread")
        best, v = best_ireegen(r)
        if not best or not ort:
            continue
        ratios.append(v / ort)
        flag_set = best.split(" ", 2)[2]
        async_label = contender_name("async", cpu, flag_set)
        lines.append(
            f"| {r.model} | {fmt_ms(ort)} | {gflops(r, ort)} | `{flag_set}` | {ratio_text(r, best, 'onnxruntime 1 thread')} "
            f"| {gflops(r, v)} | {fmt_ms(r.ns.get(async_label))} |"
        )
    gm = geomean(ratios)
    if gm:
        lines += ["", f"Geometric mean of the best ratios: **{gm:.2f}x**."]
    if args.default_target:
        lines += [
            "",
            "**The default target**: runtimeless, IREE's default flags, per CPU (time / ONNX Runtime's):",
            "",
            "| model | `generic` (SSE2) | `x86-64-v3` (default: AVX2, FMA) | `host` |",
            "|---|---:|---:|---:|",
        ]
        for r in results:
            ort = r.ns.get("onnxruntime 1 thread")
            cells = []
            for c in ("generic", "x86-64-v3", "host"):
                label = contender_name("runtimeless", c, "base")
                cells.append(f"{fmt_ms(r.ns[label])} ({r.ns[label] / ort:.2f}x)" if label in r.ns and ort else "-")
            lines.append(f"| {r.model} | " + " | ".join(cells) + " |")
    if args.threads > 1:
        n = args.threads
        lines += [
            "",
            f"**Threads**: {n} threads (this machine's cores) against one, wall time per call "
            "(async: IREE's task executor, `--device=local-task`; ONNX Runtime: intra-op threads):",
            "",
            f"| model | ONNX Runtime 1 | ONNX Runtime {n} | async 1 (CPU time) | async {n} | flags |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for r in results:
            for flag_set in r.async_flag_sets:
                one = r.ns.get(contender_name("async", cpu, flag_set))
                many = r.ns.get(contender_name(f"async {n} threads", cpu, flag_set))
                if one is None and many is None:
                    continue
                lines.append(
                    f"| {r.model} | {fmt_ms(r.ns.get('onnxruntime 1 thread'))} | "
                    f"{fmt_ms(r.ns.get(f'onnxruntime {n} threads'))} | {fmt_ms(one)} | {fmt_ms(many)} | `{flag_set}` |"
                )
    failures = [(r.model, k, v) for r in results for k, v in sorted(r.errors.items())]
    if failures:
        lines += ["", "Not measured:", ""]
        lines += [f"- {m}, {k}: {v}" for m, k, v in failures]
    return "\n".join(lines) + "\n"


# The sections benchmarks/render_docs.py also renders (its renderers
# real_models and real_models_threads).
BEGIN, END = "<!-- render: real_models -->", "<!-- /render -->"
THREADS_BEGIN = "<!-- render: real_models_threads -->"


def write_doc(path: Path, text: str, begin: str = BEGIN) -> None:
    """Fills the region that opens with `begin`."""
    doc = path.read_text()
    if begin not in doc or END not in doc:
        raise SystemExit(f"{path}: no {begin} ... {END} section to fill")
    head, rest = doc.split(begin, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{begin}\n{text}{END}{tail}")


def write_chart(results: list, args, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["onnxruntime 1 thread"] + [contender_name("runtimeless", args.target_cpu, f) for f in args.flag_sets]
    fig, ax = plt.subplots(figsize=(max(7, 1.9 * len(results)), 4.4))
    width = 0.8 / len(labels)
    x = np.arange(len(results))
    for i, label in enumerate(labels):
        ort = [r.ns.get("onnxruntime 1 thread") for r in results]
        values = [r.ns[label] / o if label in r.ns and o else np.nan for r, o in zip(results, ort)]
        name = "ONNX Runtime" if label.startswith("onnx") else "runtimeless " + label.split(" ", 2)[2]
        ax.bar(x + (i - (len(labels) - 1) / 2) * width, values, width, label=name)
    ax.axhline(1.5, color="grey", linestyle="--", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(x, [r.model for r in results])
    ax.set_ylim(bottom=0.5)
    ax.set_ylabel("CPU time / ONNX Runtime's (log; lower is better)")
    ax.set_title(f"One thread, --target-cpu {args.target_cpu}; dashed: 1.5x")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--target-cpu", default="host", help="CPU of IREE's executables (default host)")
    parser.add_argument(
        "--flag-sets", nargs="+", default=list(DEFAULT_FLAG_SETS), choices=list(FLAG_SETS), help="IREE flag sets"
    )
    parser.add_argument(
        "--async-flag-sets",
        nargs="*",
        default=["base", "best"],
        choices=[*FLAG_SETS, "best"],
        help="flag sets also timed in async, one thread and --threads; best: runtimeless's fastest (default base best)",
    )
    parser.add_argument("--default-target", action="store_true", help="also time the generic and x86-64-v3 CPUs")
    parser.add_argument(
        "--tune",
        choices=("off", "quick", "full"),
        default="off",
        help="also time what `emit --tune LEVEL` picks (runtimeless, --target-cpu); default off",
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5, help="target time of one measurement (default 0.5)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threaded comparison (1: none)")
    parser.add_argument(
        "--thread-counts",
        type=int,
        nargs="+",
        default=[],
        metavar="N",
        help="instead: the generated C and ONNX Runtime at each count this machine has the cores for, wall time "
        "(e.g. 1 2 4 8 16)",
    )
    parser.add_argument("--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "ireegen-real-models")
    parser.add_argument("--build-dir", type=Path, help="keep the generated files here (default: a temp dir)")
    parser.add_argument("--json", type=Path, help="write the figures here (e.g. docs/real_models.json)")
    parser.add_argument("--png", type=Path, help="write the chart here (e.g. docs/real_models.png)")
    parser.add_argument("--doc", type=Path, help="fill the marked section of this file (e.g. docs/peers.md)")
    return parser


def doc_section(record: dict) -> str:
    """The marked section of docs/peers.md from a JSON this script wrote
    (its options read back from the recorded command)."""
    args = build_parser().parse_args(record["command"].split()[2:])
    meta = {k: v for k, v in record.items() if k != "models"}
    return markdown([Result(**r) for r in record["models"]], meta, args)


def main() -> int:
    args = build_parser().parse_args()
    import onnxruntime as ort

    from ireegen.compile.compiler import find_compiler

    build = args.build_dir or Path(tempfile.mkdtemp(prefix="ireegen-real-models-"))
    results = []
    try:
        build.mkdir(parents=True, exist_ok=True)
        peak = measure_peak(build)
        floor_ns = python_loop_floor_ns(build)
        meta = {
            "command": "python benchmarks/real_models.py " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"),
            "iree_compile": find_compiler().version,
            "onnxruntime": ort.__version__,
            "cc": _cc_version(),
            "host_cpu": _host_cpu(),
            "peak": peak,
            "rounds": args.rounds,
            "threads": args.threads,
            "cores": os.cpu_count() or 1,
            "measure": "CPU ns per call (one thread; wall ns with threads), median of the rounds",
            "onnxruntime_python_loop_floor_ns": round(floor_ns, 1),
            "flag_sets": {k: list(FLAG_SETS[k]) for k in args.flag_sets},
        }
        print(
            f"iree-compile {meta['iree_compile']}; onnxruntime {meta['onnxruntime']}; {meta['cc']}; "
            f"{meta['host_cpu']}; one-core FMA peak {peak['gflops']} GFLOP/s ({peak['lanes']} lanes)"
        )
        for name in args.models:
            print(f"benchmarking {name} ...", flush=True)
            results.append(benchmark(name, build / name, args, floor_ns))
    finally:
        if args.build_dir is None:
            shutil.rmtree(build, ignore_errors=True)
    meta["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]  # how shared the machine was
    print_results(results, peak)
    text = markdown(results, meta, args)
    print("\n" + text)
    if args.json:
        args.json.write_text(json.dumps({**meta, "models": [asdict(r) for r in results]}, indent=1) + "\n")
    if args.doc:
        write_doc(args.doc, text, THREADS_BEGIN if args.thread_counts else BEGIN)
    if args.png and not args.thread_counts:
        write_chart(results, args, args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
