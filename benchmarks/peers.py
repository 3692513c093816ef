"""Benchmark: ireegen against what people would otherwise use for an ONNX
model, on the digits sample and three ONNX models of different shape.

    python benchmarks/peers.py [--rounds 5] [--seconds 0.2] [--models digits mlp cnn elementwise]
                               [--json docs/peers.json] [--png docs/peers.png]

Per model, one run, the measurements alternating --rounds times (best round
of each, so that machine noise hits all alike).  The figure is CPU time per
call, not wall time: this machine is shared, and wall time there measures
the other processes.  Every contender runs on one thread.
- runtimeless: ireegen's runtimeless C (the emitted NAME.c at -O2 with the
  executables IREE compiled) through `ireegen run`'s runner: CPU time of a
  run with --repeat N minus a run of one call, over N - 1;
- async: the async embedded-elf .vmfb under `iree-benchmark-module
  --device=local-sync`: its CPU time per iteration;
- ONNX Runtime: CPU provider, one thread (intra_op = inter_op = 1,
  sequential, all graph optimizations), `run_with_iobinding` with bound
  inputs and outputs in a tight Python loop (thread CPU time), minus the
  same loop on a one-element Identity model (the Python and per-call
  floor).  That makes ONNX Runtime's figure a lower bound: its own per-call
  overhead is partly subtracted too;
- emx-onnx-cgen: its C (weights inline, temporaries on the stack) at -O2
  with a small timing harness (N calls, a compiler barrier after each):
  CPU time of N calls minus one, as for runtimeless.
--cpu generic (cc's default, and ireegen's before x86-64-v3: baseline
x86-64, SSE2) compiles IREE's executables and all C for the baseline; --cpu host for this
machine (IREE --target-cpu host, cc -march=native).  ONNX Runtime always
picks its kernels for the CPU it runs on (AVX2/AVX-512 where present).

Sizes (`size -A`, bytes; code = .text, data = .rodata + .data; .bss apart):
runtimeless = NAME.c at -Os + constants + IREE's executables object;
emx-onnx-cgen = its C at -Os.  Every result is checked against ONNX Runtime
(rtol 1e-4, atol 1e-5) before it is timed.  Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from onnx_lowering import lower_onnx  # noqa: E402
from runtimeless import benchmark_module_inputs, compile_c, first_line, measure_sizes, section_sizes, time_async  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.check.runners import find_runtime_tools  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402

CC = "cc"
PEERS = ("runtimeless", "async", "onnxruntime", "emx")
LABELS = {
    "runtimeless": "ireegen runtimeless C",
    "async": "ireegen async (iree-benchmark-module)",
    "onnxruntime": "ONNX Runtime (1 thread)",
    "emx": "emx-onnx-cgen C",
}
RTOL, ATOL = 1e-4, 1e-5
SEED = 7
CPU_FLAGS = {"generic": [], "host": ["-march=native"]}  # cc flags per --cpu


def children_cpu_ns() -> int:
    """CPU time of every finished child process so far."""
    import resource

    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int((u.ru_utime + u.ru_stime) * 1e9)


def per_call_cpu(run, repeat: int) -> float:
    """CPU ns per call of a child program: (a run of `repeat` calls - a run
    of one call) / (repeat - 1), so that start-up and I/O cancel out."""
    start = children_cpu_ns()
    run(1)
    one = children_cpu_ns() - start
    start = children_cpu_ns()
    run(repeat)
    many = children_cpu_ns() - start
    return max(many - one, 0) / (repeat - 1)


# ---------------------------------------------------------------------------
# The models


def _onnx_model(name, nodes, inputs, outputs, initializers):
    import onnx
    from onnx import helper

    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=initializers)
    model = helper.make_model(
        graph, producer_name="ireegen benchmarks/peers.py", opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def mlp_model():
    """784 -> 128 -> 64 -> 10, relu: an MNIST-sized MLP, batch 1."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)
    sizes = (784, 128, 64, 10)
    inits, nodes, x = [], [], "x"
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        inits += [
            numpy_helper.from_array((rng.standard_normal((a, b)) * (2 / a) ** 0.5).astype(np.float32), f"w{i}"),
            numpy_helper.from_array((rng.standard_normal(b) * 0.1).astype(np.float32), f"b{i}"),
        ]
        nodes += [
            helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}" if i < 2 else "y"]),
        ]
        if i < 2:
            nodes.append(helper.make_node("Relu", [f"a{i}"], [f"h{i}"]))
            x = f"h{i}"
    return _onnx_model(
        "mlp",
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 784])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )


def cnn_model():
    """1x1x28x28 -> conv 3x3 x8, relu, maxpool 2 -> conv 3x3 x16, relu, maxpool 2 -> flatten -> gemm 10."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)

    def w(name, *shape):
        fan_in = int(np.prod(shape[1:]))
        return numpy_helper.from_array((rng.standard_normal(shape) * (2 / fan_in) ** 0.5).astype(np.float32), name)

    def b(name, n):
        return numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name)

    inits = [
        w("c1w", 8, 1, 3, 3),
        b("c1b", 8),
        w("c2w", 16, 8, 3, 3),
        b("c2b", 16),
        w("fw", 10, 16 * 7 * 7),
        b("fb", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    return _onnx_model(
        "cnn",
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )


def elementwise_model():
    """x [1,64,256]: tanh(x*a+b) * sigmoid(x) + exp(-x*x) - |x| / 2: eight
    elementwise ops over 16384 floats, per-channel constants."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(SEED)
    inits = [
        numpy_helper.from_array(rng.standard_normal(256).astype(np.float32), "a"),
        numpy_helper.from_array(rng.standard_normal(256).astype(np.float32), "b"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    nodes = [
        helper.make_node("Mul", ["x", "a"], ["xa"]),
        helper.make_node("Add", ["xa", "b"], ["xab"]),
        helper.make_node("Tanh", ["xab"], ["t"]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Mul", ["t", "s"], ["ts"]),
        helper.make_node("Mul", ["x", "x"], ["xx"]),
        helper.make_node("Neg", ["xx"], ["nxx"]),
        helper.make_node("Exp", ["nxx"], ["e"]),
        helper.make_node("Add", ["ts", "e"], ["tse"]),
        helper.make_node("Abs", ["x"], ["ax"]),
        helper.make_node("Mul", ["ax", "half"], ["hx"]),
        helper.make_node("Sub", ["tse", "hx"], ["y"]),
    ]
    return _onnx_model(
        "elementwise",
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 256])],
        inits,
    )


def digits_model():
    import onnx

    return onnx.load(ROOT / "samples" / "digits" / "digits.onnx")


MODELS = {"digits": digits_model, "mlp": mlp_model, "cnn": cnn_model, "elementwise": elementwise_model}


def identity_model():
    from onnx import TensorProto, helper

    return _onnx_model(
        "identity",
        [helper.make_node("Identity", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [],
    )


def python_loop_floor_ns(workdir: Path) -> float:
    """Thread CPU ns of a near-empty ONNX Runtime call (an Identity of one
    float) through the timing loop: what each ONNX Runtime figure less it
    leaves is the model's own time.  Saves the model to `workdir`."""
    import onnx

    identity = workdir / "identity.onnx"
    onnx.save(identity_model(), identity)
    floor = OnnxRuntime(identity)
    floor.bind([np.zeros(1, np.float32)])
    return min(floor.time(20000) for _ in range(5))


def alternating_medians(timers: dict, rounds: int, seconds: float) -> dict:
    """{label: median ns per call} of `timers` ({label: timer(repeat) -> ns
    per call}), each repeated about `seconds` per measurement (from a
    3-call probe) and measured in turn, `rounds` times."""
    repeat = {}
    for label, timer in timers.items():
        start = time.perf_counter()
        timer(3)
        repeat[label] = max(3, int(seconds / max((time.perf_counter() - start) / 3, 1e-6)))
    samples = {label: [] for label in timers}
    for _ in range(rounds):
        for label, timer in timers.items():
            samples[label].append(timer(repeat[label]))
    return {label: statistics.median(values) for label, values in samples.items()}


# ---------------------------------------------------------------------------
# Results


@dataclass
class Result:
    model: str
    description: str = ""
    ops: list = field(default_factory=list)
    ns: dict = field(default_factory=dict)  # peer -> best ns per call
    repeat: int = 0
    sizes: dict = field(default_factory=dict)  # peer -> {"code", "data", "bss"}
    details: dict = field(default_factory=dict)  # peer -> extra figures
    errors: dict = field(default_factory=dict)  # peer -> why not measured

    def best_peer(self, exclude=("runtimeless", "async")):
        peers = {p: v for p, v in self.ns.items() if p not in exclude}
        return min(peers.items(), key=lambda kv: kv[1]) if peers else (None, None)


# ---------------------------------------------------------------------------
# Each contender


class OnnxRuntime:
    def __init__(self, path: Path):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.binding = None

    def run(self, inputs: list) -> list:
        feeds = {i.name: x for i, x in zip(self.session.get_inputs(), inputs)}
        return self.session.run(None, feeds)

    def bind(self, inputs: list) -> None:
        import onnxruntime as ort

        self.binding = self.session.io_binding()
        for i, x in zip(self.session.get_inputs(), inputs):
            self.binding.bind_ortvalue_input(i.name, ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(x)))
        for o, ref in zip(self.session.get_outputs(), self.run(inputs)):
            self.binding.bind_ortvalue_output(o.name, ort.OrtValue.ortvalue_from_numpy(np.empty_like(ref)))

    def time(self, repeat: int) -> float:
        """Thread CPU ns per call (one thread: intra_op = inter_op = 1)."""
        run, binding = self.session.run_with_iobinding, self.binding
        run(binding)
        start = time.thread_time_ns()
        for _ in range(repeat):
            run(binding)
        return (time.thread_time_ns() - start) / repeat


EMX_HARNESS = r"""// Times the emx-onnx-cgen model: REPEAT IN... OUT... (raw bytes).
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void model({params});

static const size_t sizes[] = {{{sizes}}};
static unsigned char* buffers[{count}];

static double now_ns(void) {{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}}

int main(int argc, char** argv) {{
  if (argc != 2 + {count}) return 2;
  long repeat = strtol(argv[1], NULL, 10);
  for (int i = 0; i < {count}; ++i) {{
    buffers[i] = aligned_alloc(64, (sizes[i] + 63) / 64 * 64);
    if (!buffers[i]) return 1;
  }}
  for (int i = 0; i < {inputs}; ++i) {{
    FILE* f = fopen(argv[2 + i], "rb");
    if (!f || fread(buffers[i], 1, sizes[i], f) != sizes[i]) return 1;
    fclose(f);
  }}
  model({args});
  double start = now_ns();
  for (long r = 0; r < repeat; ++r) {{
    model({args});
    __asm__ __volatile__("" ::: "memory");
  }}
  printf("ns_per_call %.1f\n", (now_ns() - start) / (double)repeat);
  for (int i = {inputs}; i < {count}; ++i) {{
    FILE* f = fopen(argv[2 + i], "wb");
    if (!f || fwrite(buffers[i], 1, sizes[i], f) != sizes[i]) return 1;
    fclose(f);
  }}
  return 0;
}}
"""


class Emx:
    """emx-onnx-cgen's C for the model, built with a timing harness."""

    def __init__(self, onnx_path: Path, workdir: Path, inputs: list, outputs: list, cflags=()):
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir, self.inputs, self.outputs = workdir, inputs, outputs
        self.c_file = workdir / "model.c"
        tool = Path(sys.executable).parent / "emx-onnx-cgen"
        proc = subprocess.run(
            [
                str(tool if tool.exists() else "emx-onnx-cgen"),
                "compile",
                "--color",
                "never",
                "--large-weight-threshold",
                "0",
                "--large-temp-threshold",
                "0",
                "--model-name",
                "model",
                str(onnx_path),
                str(self.c_file),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if proc.returncode != 0 or not self.c_file.exists():
            raise RuntimeError("emx-onnx-cgen: " + (first_error_line(proc.stdout) or f"exit {proc.returncode}"))
        count = len(inputs) + len(outputs)
        harness = workdir / "harness.c"
        harness.write_text(
            EMX_HARNESS.format(
                params=", ".join(["const void*"] * len(inputs) + ["void*"] * len(outputs)),
                sizes=", ".join(str(a.nbytes) for a in inputs + outputs),
                count=count,
                inputs=len(inputs),
                args=", ".join(f"buffers[{i}]" for i in range(count)),
            )
        )
        self.program = workdir / "emx_model"
        self.cflags = list(cflags)
        compile_c(["-std=c11", "-O2", *self.cflags, harness, self.c_file, "-lm", "-o", self.program])

    def call(self, repeat: int) -> tuple:
        files = []
        for i, x in enumerate(self.inputs):
            files.append(self.workdir / f"in{i}.bin")
            files[-1].write_bytes(np.ascontiguousarray(x).tobytes())
        outs = [self.workdir / f"out{i}.bin" for i in range(len(self.outputs))]
        proc = subprocess.run(
            [self.program, str(repeat), *files, *outs],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"emx harness exited {proc.returncode}: {proc.stdout.strip()[:200]}")
        ns = float(proc.stdout.split("ns_per_call")[1].split()[0])
        got = [np.frombuffer(f.read_bytes(), dtype=ref.dtype).reshape(ref.shape) for f, ref in zip(outs, self.outputs)]
        return got, ns

    def sizes(self) -> dict:
        obj = self.workdir / "model_Os.o"
        compile_c(["-std=c11", "-Os", *self.cflags, "-c", self.c_file, "-o", obj])
        return code_data(section_sizes(obj))


def first_error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[-1] if lines else "")


def code_data(s: dict) -> dict:
    return {"code": s["text"], "data": s["rodata"] + s["data"], "bss": s["bss"]}


def same(got: list, want: list) -> bool:
    return len(got) == len(want) and all(
        np.asarray(g).shape == np.asarray(w).shape and np.allclose(g, w, rtol=RTOL, atol=ATOL)
        for g, w in zip(got, want)
    )


# ---------------------------------------------------------------------------
# One model


def benchmark(name: str, workdir: Path, rounds: int, seconds: float, baseline_ns: float, cpu: str) -> Result:
    import onnx

    model = MODELS[name]()
    result = Result(
        name,
        (MODELS[name].__doc__ or "samples/digits: 64 -> 32 (relu) -> 10, trained").strip().splitlines()[0],
        sorted({n.op_type for n in model.graph.node}),
    )
    workdir.mkdir(parents=True, exist_ok=True)
    onnx_path = workdir / f"{name}.onnx"
    onnx.save(model, onnx_path)
    mlir = lower_onnx(onnx_path, workdir / f"{name}.mlir")
    rng = np.random.default_rng(SEED)
    inputs = [
        rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
        for i in model.graph.input
    ]
    ort_session = OnnxRuntime(onnx_path)
    reference = ort_session.run(inputs)
    function = model.graph.name

    timers = {}
    target_cpu = cpu  # explicit: ireegen's default on x86_64 is x86-64-v3, neither of the two
    # runtimeless
    try:
        outdir = workdir / "runtimeless"
        emit(mlir, outdir, make_config("runtimeless", target_cpu=target_cpu), name=name, tune="off")
        runner = build_runner(outdir, workdir / "runner", extra_cflags=CPU_FLAGS[cpu])
        got, _ = runner.call(function, inputs)
        if not same(got, reference):
            raise RuntimeError("outputs differ from ONNX Runtime's")
        timers["runtimeless"] = lambda n: per_call_cpu(lambda k: runner.call(function, inputs, repeat=k), n)
        result.sizes["runtimeless"] = code_data(measure_sizes(outdir, workdir / "sizes", name).library)
    except Exception as e:  # noqa: BLE001 - reported in the table
        result.errors["runtimeless"] = first_line(e)
    # async
    try:
        emit(
            mlir, workdir / "async", make_config("async", "embedded-elf", target_cpu=target_cpu), name=name, tune="off"
        )
        vmfb = workdir / "async" / f"{name}.vmfb"
        flags = benchmark_module_inputs(inputs, workdir / "async-inputs")
        tool = find_runtime_tools().bin_dir / "iree-benchmark-module"
        timers["async"] = lambda n: time_async(tool, vmfb, function, flags, n, clock="cpu_time")
    except Exception as e:  # noqa: BLE001
        result.errors["async"] = first_line(e)
    # ONNX Runtime
    ort_session.bind(inputs)
    timers["onnxruntime"] = lambda n: ort_session.time(n) - baseline_ns
    result.details["onnxruntime"] = {"python_loop_floor_ns": round(baseline_ns, 1)}
    # emx-onnx-cgen
    try:
        emx = Emx(onnx_path, workdir / "emx", inputs, [np.asarray(r) for r in reference], CPU_FLAGS[cpu])
        got, _ = emx.call(1)
        if not same(got, reference):
            raise RuntimeError("outputs differ from ONNX Runtime's")
        timers["emx"] = lambda n: per_call_cpu(emx.call, n)
        result.sizes["emx"] = emx.sizes()
    except Exception as e:  # noqa: BLE001
        result.errors["emx"] = first_line(e)

    # Enough calls for about `seconds` per measurement, from the slowest contender.
    probe = {}
    for peer, timer in timers.items():
        try:
            probe[peer] = timer(20)
        except Exception as e:  # noqa: BLE001
            result.errors[peer] = first_line(e)
    timers = {p: t for p, t in timers.items() if p in probe}
    slowest = max([v for v in probe.values() if v > 0] or [1000.0])
    result.repeat = int(min(200000, max(20, seconds * 1e9 / slowest)))
    samples = {p: [] for p in timers}
    for _ in range(rounds):
        for peer, timer in timers.items():
            try:
                samples[peer].append(timer(result.repeat))
            except Exception as e:  # noqa: BLE001
                result.errors[peer] = first_line(e)
    result.ns = {p: min(v) for p, v in samples.items() if v and p not in result.errors}
    return result


# ---------------------------------------------------------------------------
# Printing, JSON and the chart


def fmt(v, spec=".0f", width=9) -> str:
    return f"{'-' if v is None else format(v, spec):>{width}}"


def print_table(results: list, rounds: int) -> None:
    print(
        f"\nLatency, CPU ns per call (best of {rounds} rounds); ratio = runtimeless / best peer "
        "(ONNX Runtime or emx-onnx-cgen; < 1: ireegen faster)"
    )
    print(
        f"{'model':<12} {'runtimeless':>11} {'async':>9} {'onnxrt':>9} {'emx':>9} {'best peer':>11} "
        f"{'ratio':>6} {'rl/async':>8} {'calls':>7}"
    )
    for r in results:
        peer, best = r.best_peer()
        rl = r.ns.get("runtimeless")
        print(
            f"{r.model:<12} {fmt(rl, '.0f', 11)} {fmt(r.ns.get('async'))} {fmt(r.ns.get('onnxruntime'))} "
            f"{fmt(r.ns.get('emx'))} {peer or '-':>11} {fmt(rl / best if rl and best else None, '.2f', 6)} "
            f"{fmt(rl / r.ns['async'] if rl and r.ns.get('async') else None, '.2f', 8)} {r.repeat:>7}"
        )
    print(
        "\nSize, bytes (code = .text, data = .rodata + .data, at -Os; runtimeless = NAME.c + constants + "
        "IREE's executables)"
    )
    print(
        f"{'model':<12} {'rl.code':>8} {'rl.data':>8} {'rl.total':>9} {'emx.code':>9} {'emx.data':>9} "
        f"{'emx.total':>9} {'rl/emx':>7}"
    )
    for r in results:
        rl, ex = r.sizes.get("runtimeless"), r.sizes.get("emx")
        tot = lambda s: s["code"] + s["data"] if s else None  # noqa: E731
        print(
            f"{r.model:<12} {fmt(rl and rl['code'], 'd', 8)} {fmt(rl and rl['data'], 'd', 8)} "
            f"{fmt(tot(rl), 'd', 9)} {fmt(ex and ex['code'], 'd', 9)} {fmt(ex and ex['data'], 'd', 9)} "
            f"{fmt(tot(ex), 'd', 9)} {fmt(tot(rl) / tot(ex) if rl and ex else None, '.2f', 7)}"
        )
    for r in results:
        for peer, message in sorted(r.errors.items()):
            print(f"{r.model}: {peer}: {message}")


def to_json(results: list, meta: dict) -> dict:
    out = []
    for r in results:
        d = asdict(r)
        peer, best = r.best_peer()
        rl = r.ns.get("runtimeless")
        d["best_peer"] = peer
        d["runtimeless_over_best_peer"] = rl / best if rl and best else None
        d["runtimeless_over_async"] = rl / r.ns["async"] if rl and r.ns.get("async") else None
        rs, es = r.sizes.get("runtimeless"), r.sizes.get("emx")
        d["runtimeless_size_over_emx"] = (rs["code"] + rs["data"]) / (es["code"] + es["data"]) if rs and es else None
        out.append(d)
    return {**meta, "models": out}


def write_chart(runs: dict, path: Path) -> None:
    """Latency per --cpu (one panel each) and sizes (the last --cpu)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        1, len(runs) + 1, figsize=(5.2 * len(runs) + 4, 4.4), gridspec_kw={"width_ratios": [3] * len(runs) + [2]}
    )
    colors = {"runtimeless": "#1b9e77", "async": "#7570b3", "onnxruntime": "#d95f02", "emx": "#e7298a"}
    width = 0.2
    for ax, (cpu, results) in zip(axes, runs.items()):
        x = np.arange(len(results))
        for i, peer in enumerate(PEERS):
            values = [r.ns.get(peer, np.nan) / 1000 for r in results]
            ax.bar(x + (i - 1.5) * width, values, width, label=LABELS[peer], color=colors[peer])
        ax.set_yscale("log")
        ax.set_xticks(x, [r.model for r in results])
        ax.set_ylabel("CPU µs per call (log scale, lower is better)")
        ax.set_title(f"Latency, one thread; C and IREE for the {cpu} CPU")
        ax.legend(fontsize=7)
    bx = axes[-1]
    cpu, results = list(runs.items())[-1]
    x = np.arange(len(results))
    for i, peer in enumerate(("runtimeless", "emx")):
        values = [
            sum(r.sizes[peer][k] for k in ("code", "data")) / 1024 if peer in r.sizes else np.nan for r in results
        ]
        bx.bar(x + (i - 0.5) * 0.35, values, 0.35, label=LABELS[peer], color=colors[peer])
    bx.set_yscale("log")
    bx.set_xticks(x, [r.model for r in results])
    bx.set_ylabel("KiB code + data (-Os, log scale)")
    bx.set_title(f"Size of the model's C ({cpu} CPU)")
    bx.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.2, help="target time of one measurement (default 0.2)")
    parser.add_argument("--json", type=Path, help="write the figures here (e.g. docs/peers.json)")
    parser.add_argument("--png", type=Path, help="write the bar chart here (e.g. docs/peers.png)")
    parser.add_argument("--build-dir", type=Path, help="keep the generated files here (default: a temp dir)")
    parser.add_argument(
        "--cpu",
        nargs="+",
        choices=tuple(CPU_FLAGS),
        default=list(CPU_FLAGS),
        help="CPU(s) of IREE's executables and of the C (default: generic host, one run each)",
    )
    args = parser.parse_args()
    import onnxruntime as ort

    from ireegen.compile.compiler import find_compiler

    build = args.build_dir or Path(tempfile.mkdtemp(prefix="ireegen-peers-"))
    runs = {}
    try:
        build.mkdir(parents=True, exist_ok=True)
        baseline = python_loop_floor_ns(build)
        meta = {
            "iree_compile": find_compiler().version,
            "onnxruntime": ort.__version__,
            "emx_onnx_cgen": _version("emx-onnx-cgen"),
            "cc": _cc_version(),
            "rounds": args.rounds,
            "measure": "CPU ns per call, best of the rounds",
            "host_cpu": _host_cpu(),
            "onnxruntime_python_loop_floor_ns": round(baseline, 1),
        }
        print(
            f"iree-compile {meta['iree_compile']}; onnxruntime {meta['onnxruntime']}; emx-onnx-cgen "
            f"{meta['emx_onnx_cgen']}; {meta['cc']}; {meta['host_cpu']}; "
            f"ONNX Runtime's Python loop floor {baseline:.0f} ns"
        )
        for cpu in args.cpu:
            runs[cpu] = []
            for name in args.models:
                print(f"benchmarking {name} ({cpu} CPU) ...", flush=True)
                runs[cpu].append(benchmark(name, build / cpu / name, args.rounds, args.seconds, baseline, cpu))
    finally:
        if args.build_dir is None:
            shutil.rmtree(build, ignore_errors=True)
    for cpu, results in runs.items():
        print(f"\n=== IREE's executables and all C for the {cpu} CPU")
        print_table(results, args.rounds)
    if args.json:
        data = {**meta, "runs": {cpu: to_json(results, {})["models"] for cpu, results in runs.items()}}
        args.json.write_text(json.dumps(data, indent=1) + "\n")
    if args.png:
        write_chart(runs, args.png)
    return 0


def _host_cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def _cc_version() -> str:
    proc = subprocess.run([CC, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.stdout.splitlines()[0] if proc.stdout else CC


if __name__ == "__main__":
    sys.exit(main())
