"""Benchmark: runtimeless C against the bare dispatch calls it makes and against
the async VM module under iree-benchmark-module (local-sync), plus binary
sizes and arena sizes, for every corpus model runtimeless accepts (its first
call).  Goals: runtimeless within 5% of the bare dispatch calls, faster than
async local-sync on every small model, under 4 KiB of code beyond the
executables.  Prints figures and whether each goal is met; asserts nothing.

    python benchmarks/runtimeless.py [--repeat 100000] [--rounds 5] [--models mlp cnn] [--json out.json]

Latency: the three measurements of a model alternate, --rounds times, so
machine noise hits all three; the table shows each one's best round.
- runtimeless: the emitted NAME.c through `ireegen run`'s runner (`--repeat N`);
- bare: a generated C program (bare_dispatch.c in the build directory) that
  looks the dispatch functions up once, builds their dispatch states once and
  times only the dispatch-function calls over all workgroups; the schedule's
  fill and copy steps (the manifest gives only their length) are a memset /
  memmove of that length in a scratch buffer, counted in the notes;
- async: `iree-benchmark-module --device=local-sync` on the async
  embedded-elf .vmfb (real time per iteration, N iterations).
All three are compiled for the same CPU (ireegen's default for the host triple).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "models"))

from corpus import CASES  # noqa: E402

from ireegen.cbuild.native_run import build_runner  # noqa: E402
from ireegen.check.runners import find_runtime_tools  # noqa: E402
from ireegen.compile.compiler import find_compiler  # noqa: E402
from ireegen.config.modes import make_config  # noqa: E402
from ireegen.emit import emit  # noqa: E402
from ireegen.frontend.signature import NUMPY_TO_C  # noqa: E402
from ireegen.runtimeless.schedule import RuntimelessError  # noqa: E402

CC = "cc"
BARE_TOLERANCE = 1.05  # goal: runtimeless within 5% of the bare dispatch calls
OVERHEAD_LIMIT = 4096  # goal: code beyond the executables under 4 KiB


# ---------------------------------------------------------------------------
# Results


@dataclass
class Latency:
    """Nanoseconds per inference (best of the rounds), or why not."""

    runtimeless_ns: float | None = None
    bare_ns: float | None = None
    async_ns: float | None = None
    same_outputs: bool | None = None  # the bare program's outputs == runtimeless's (see outputs_to_check)
    scratch_steps: dict = field(default_factory=dict)  # "fill"/"copy" -> count, done in scratch
    errors: dict = field(default_factory=dict)  # "runtimeless"/"bare"/"async" -> message

    @property
    def vs_bare(self):
        return ratio(self.runtimeless_ns, self.bare_ns)

    @property
    def vs_async(self):
        return ratio(self.runtimeless_ns, self.async_ns)


@dataclass
class Sizes:
    """Bytes per section group of (i) the executables' object alone and
    (ii) the runtimeless model library (NAME.c -Os + constants + executables)."""

    executables: dict
    library: dict
    model_c: dict  # NAME.c's object alone

    @property
    def overhead(self) -> int:
        return self.model_c["text"] + self.model_c["rodata"]


@dataclass
class ModelResult:
    model: str
    function: str = ""
    skipped: str = ""  # runtimeless refuses the model: why
    error: str = ""  # the model failed before any measurement
    latency: Latency | None = None
    sizes: Sizes | None = None
    sizes_error: str = ""
    arena: dict = field(default_factory=dict)  # manifest runtimeless.arena


def ratio(a, b):
    return a / b if a is not None and b else None


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:160]


# ---------------------------------------------------------------------------
# Building


def emit_runtimeless(case, workdir: Path) -> Path:
    """The runtimeless C of `case`.  RuntimelessError propagates (a skip)."""
    runtimeless_dir = workdir / "runtimeless"
    emit(case.path, runtimeless_dir, make_config("runtimeless"), name=case.name, tune="off")
    return runtimeless_dir


def emit_async_module(case, workdir: Path) -> Path:
    """The async embedded-elf .vmfb of `case`, for the same (default) CPU."""
    async_dir = workdir / "async"
    emit(case.path, async_dir, make_config("async", "embedded-elf"), name=case.name, tune="off")
    return async_dir / f"{case.name}.vmfb"


def compile_c(args: list) -> None:
    proc = subprocess.run([CC, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:  # the first error first: rows show one line
        errors = [line for line in proc.stdout.splitlines() if "error" in line] or proc.stdout.splitlines() or [""]
        raise RuntimeError(f"{CC} failed: {errors[0]}\n$ {CC} {' '.join(map(str, args))}\n{proc.stdout}")


# ---------------------------------------------------------------------------
# The bare dispatch program

BARE_PROLOGUE = r"""// Generated by benchmarks/runtimeless.py: times only the dispatch-function
// calls of @{function}'s schedule (fill/copy steps: memset/memmove of their
// length in a scratch buffer).
//   {program} REPEAT IN... OUT...
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ireegen_executable_library.h"

{queries}
extern const uint8_t {name}__constants[];

static const ireegen_environment_t environment;

static uint32_t f32_bits(float value) {{
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}}

typedef struct {{
  ireegen_dispatch_fn_t function;
  ireegen_dispatch_state_t state;
}} dispatch_t;

// Finds |export_name| in the library and fills |d| for one dispatch.
static int prepare(dispatch_t* d, ireegen_library_query_fn_t query, const char* export_name,
                   uint32_t count_x, uint32_t count_y, uint32_t count_z, const uint32_t* constants,
                   uint16_t constant_count, void* const* bindings, const size_t* lengths,
                   uint8_t binding_count) {{
  const ireegen_library_header_t** header = query(IREEGEN_EXECUTABLE_LIBRARY_VERSION, &environment);
  if (!header || (*header)->version != IREEGEN_EXECUTABLE_LIBRARY_VERSION) return 1;
  const ireegen_export_table_t* table = &((const ireegen_library_t*)header)->exports;
  uint32_t ordinal = 0;
  while (ordinal < table->count && !(table->names && strcmp(table->names[ordinal], export_name) == 0)) ++ordinal;
  if (ordinal == table->count) return 1;
  const ireegen_dispatch_attrs_t* attrs = table->attrs ? &table->attrs[ordinal] : NULL;
  d->function = table->ptrs[ordinal];
  memset(&d->state, 0, sizeof(d->state));
  d->state.workgroup_size_x = attrs ? attrs->workgroup_size_x : 1;
  d->state.workgroup_size_y = attrs ? attrs->workgroup_size_y : 1;
  d->state.workgroup_size_z = attrs ? attrs->workgroup_size_z : 1;
  d->state.constant_count = constant_count;
  d->state.workgroup_count_x = count_x;
  d->state.workgroup_count_y = count_y;
  d->state.workgroup_count_z = (uint16_t)count_z;
  d->state.max_concurrency = 1;
  d->state.binding_count = binding_count;
  d->state.constants = constants;
  d->state.binding_ptrs = bindings;
  d->state.binding_lengths = lengths;
  return 0;
}}

static dispatch_t dispatches[{dispatch_slots}];

// Every workgroup of one dispatch, in order.
static int run_dispatch(const dispatch_t* d) {{
  ireegen_workgroup_state_t workgroup;
  memset(&workgroup, 0, sizeof(workgroup));
  for (uint32_t z = 0; z < d->state.workgroup_count_z; ++z) {{
      for (uint32_t y = 0; y < d->state.workgroup_count_y; ++y) {{
      for (uint32_t x = 0; x < d->state.workgroup_count_x; ++x) {{
        workgroup.workgroup_id_x = x;
        workgroup.workgroup_id_y = y;
        workgroup.workgroup_id_z = (uint16_t)z;
        if (d->function(&environment, &d->state, &workgroup) != 0) return 1;
      }}
    }}
  }}
  return 0;
}}

static uint8_t* allocate(size_t size) {{
  size_t rounded = (size + 63) / 64 * 64;
  uint8_t* data = aligned_alloc(64, rounded ? rounded : 64);
  if (data) memset(data, 0, rounded ? rounded : 64);
  return data;
}}

static double now_ns(void) {{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}}
"""

BARE_MAIN = r"""
int main(int argc, char** argv) {{
  if (argc != {argc}) {{
    fprintf(stderr, "usage: %s REPEAT IN... OUT...\n", argv[0]);
    return 2;
  }}
  long repeat = strtol(argv[1], NULL, 10);
  arena = allocate({arena_size});
  scratch = allocate(2 * {scratch_half});
  for (int i = 0; i < {input_count}; ++i) {{
    inputs[i] = allocate(input_sizes[i]);
    FILE* f = fopen(argv[2 + i], "rb");
    if (!inputs[i] || !f || fread(inputs[i], 1, input_sizes[i], f) != input_sizes[i]) return 1;
    fclose(f);
  }}
  for (int i = 0; i < {output_count}; ++i) {{
    outputs[i] = allocate(output_sizes[i]);
    if (!outputs[i]) return 1;
  }}
  if (!arena || !scratch) return 1;
{setup}
  if (run_steps() != 0) return 1;  // warm up, and the outputs to check
  double start = now_ns();
  for (long r = 0; r < repeat; ++r) {{
    if (run_steps() != 0) return 1;
  }}
  double elapsed = now_ns() - start;
  printf("ns_per_iteration %.1f\n", elapsed / (double)repeat);
  for (int i = 0; i < {output_count}; ++i) {{
    FILE* f = fopen(argv[2 + {input_count} + i], "wb");
    if (!f || fwrite(outputs[i], 1, output_sizes[i], f) != output_sizes[i]) return 1;
    fclose(f);
  }}
  return 0;
}}
"""


def c_scalar(value, dtype: str) -> str:
    """A C literal of a scalar argument (exact for floats)."""
    if np.dtype(dtype).kind == "f":
        return float(value).hex()
    return str(int(value))


def binding_pointer(binding: dict, name: str, tensor_slot: dict) -> str:
    where, offset = binding["in"], binding["offset"]
    if where == "input":
        return f"inputs[{tensor_slot[binding['index']]}] + {offset}"
    if where == "output":
        return f"outputs[{binding['index']}] + {offset}"
    if where == "constant":
        return f"(void*)({name}__constants + {offset})"
    return f"arena + {offset}"


def c_constant(constant) -> str:
    return f"(uint32_t)({constant['expr']})" if isinstance(constant, dict) else f"{constant}u"


def step_counts(steps: list) -> dict:
    """How many fill and copy steps a schedule has: {"fill": n, "copy": n}."""
    counts = {}
    for step in steps:
        for kind in ("fill", "copy"):
            if kind in step:
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def bare_program_source(manifest: dict, function, inputs) -> str:
    """The bare program's C source for `function` (a signature Function).
    The manifest gives fill/copy steps only their length, so they are done
    as memset/memmove of that length in a scratch buffer."""
    name = manifest["name"]
    section = manifest["runtimeless"]
    if section.get("state", {}).get("size"):
        # Its calls read state that NAME_initialize computes; no bare equivalent.
        raise RuntimeError("the model keeps state across calls; no bare-dispatch program for it")
    steps = section["schedule"][function.name]
    # Tensor inputs go in inputs[]; scalar inputs are compiled in, for the
    # {"expr": ...} push constants that name them.
    tensor_inputs = [v for v in function.inputs if v.is_tensor]
    tensor_slot = {i: tensor_inputs.index(v) for i, v in enumerate(function.inputs) if v.is_tensor}
    globals_ = [
        "static uint8_t* arena;",
        "static uint8_t* scratch;  // fill/copy steps land here",
        f"static uint8_t* inputs[{max(len(tensor_inputs), 1)}];",
        f"static uint8_t* outputs[{max(len(function.outputs), 1)}];",
        "static const size_t input_sizes[] = {" + (", ".join(str(v.byte_size) for v in tensor_inputs) or "0") + "};",
        "static const size_t output_sizes[] = {"
        + (", ".join(str(v.byte_size) for v in function.outputs) or "0")
        + "};",
    ]
    globals_ += [
        f"static const {NUMPY_TO_C[v.dtype][0]} {v.name} = {c_scalar(x, v.dtype)};"
        for v, x in zip(function.inputs, inputs)
        if not v.is_tensor
    ]
    scratch_half = max([s.get("fill", 0) for s in steps] + [s.get("copy", 0) for s in steps] + [64])
    tables, setup, timed = [], [], []
    dispatch_index = 0
    for s in steps:
        if "fill" in s:
            timed.append(f"  memset(scratch, 0, {s['fill']});")
            continue
        if "copy" in s:
            timed.append(f"  memmove(scratch + {scratch_half}, scratch, {s['copy']});")
            continue
        i = dispatch_index
        dispatch_index += 1
        constants, bindings = s["constants"], s["bindings"]
        if constants:
            tables.append(f"static uint32_t constants_{i}[{len(constants)}];")
            setup += [f"  constants_{i}[{j}] = {c_constant(c)};" for j, c in enumerate(constants)]
        tables.append(f"static void* bindings_{i}[{len(bindings)}];")
        tables.append(
            f"static const size_t lengths_{i}[{len(bindings)}] = "
            "{" + ", ".join(str(b["length"]) for b in bindings) + "};"
        )
        setup += [f"  bindings_{i}[{j}] = {binding_pointer(b, name, tensor_slot)};" for j, b in enumerate(bindings)]
        x, y, z = s["workgroups"]
        setup.append(
            f'  if (prepare(&dispatches[{i}], {s["library"]}, "{s["dispatch"]}", {x}, {y}, {z}, '
            f"{f'constants_{i}' if constants else 'NULL'}, {len(constants)}, bindings_{i}, lengths_{i}, "
            f"{len(bindings)}) != 0) {{\n"
            f'    fprintf(stderr, "{s["dispatch"]}: not found in the executables\\n");\n    return 1;\n  }}'
        )
        timed.append(f"  if (run_dispatch(&dispatches[{i}]) != 0) return 1;  // {s['dispatch']}")
    source = BARE_PROLOGUE.format(
        function=function.name,
        program="bare_dispatch",
        name=name,
        queries="\n".join(
            f"const ireegen_library_header_t** {q}(uint32_t, const ireegen_environment_t*);"
            for q in section["abi"]["library_queries"]
        ),
        dispatch_slots=max(dispatch_index, 1),
    )
    source += "\n".join(globals_ + tables) + "\n"
    source += "\n// The timed part: the schedule's steps, in order.\nstatic int run_steps(void) {\n"
    source += "\n".join(timed + ["  return 0;", "}"]) + "\n"
    source += BARE_MAIN.format(
        argc=2 + len(tensor_inputs) + len(function.outputs),
        arena_size=section["arena"]["functions"][function.name]["size"],
        scratch_half=scratch_half,
        input_count=len(tensor_inputs),
        output_count=len(function.outputs),
        setup="\n".join(setup),
    )
    return source


def build_bare_program(runtimeless_dir: Path, build_dir: Path, function, inputs) -> tuple:
    """Writes and compiles the bare program; returns (program, its fill/copy step counts)."""
    manifest = json.loads((runtimeless_dir / "manifest.json").read_text())
    source = bare_program_source(manifest, function, inputs)
    scratch_steps = step_counts(manifest["runtimeless"]["schedule"][function.name])
    build_dir.mkdir(parents=True, exist_ok=True)
    c_file = build_dir / "bare_dispatch.c"
    c_file.write_text(source)
    program = build_dir / "bare_dispatch"
    name = manifest["name"]
    compile_c(
        [
            "-O2",
            f"-I{runtimeless_dir}",
            c_file,
            constants_source(runtimeless_dir, manifest),
            runtimeless_dir / f"{name}_executables.o",
            "-lm",
            "-o",
            program,
        ]
    )
    return program, scratch_steps


def constants_source(runtimeless_dir: Path, manifest: dict) -> Path:
    """NAME_constants.S (it .incbin's NAME_constants.bin: compile with
    -I<dir>) or NAME_constants.c, as --data-format chose."""
    return runtimeless_dir / next(f["path"] for f in manifest["files"] if f["role"] == "constants-source")


# ---------------------------------------------------------------------------
# Measuring


def time_bare(program: Path, function, inputs, repeat: int, workdir: Path) -> tuple:
    """Runs the bare program; returns (ns per iteration, output arrays)."""
    workdir.mkdir(parents=True, exist_ok=True)
    in_files = []
    for i, (v, x) in enumerate(zip(function.inputs, inputs)):
        if v.is_tensor:
            in_files.append(workdir / f"in{i}.bin")
            in_files[-1].write_bytes(np.ascontiguousarray(x, dtype=v.dtype).tobytes())
    out_files = [workdir / f"out{i}.bin" for i in range(len(function.outputs))]
    proc = subprocess.run(
        [program, str(repeat), *in_files, *out_files],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout.strip() or f"bare program exited with {proc.returncode}")
    ns = float(proc.stdout.split("ns_per_iteration")[1].split()[0])
    outputs = [
        np.frombuffer(f.read_bytes(), dtype=v.dtype).reshape(v.shape) for f, v in zip(out_files, function.outputs)
    ]
    return ns, outputs


def benchmark_module_inputs(inputs, workdir: Path) -> list:
    """--input flags: tensors as .npy files, scalar arguments as values."""
    workdir.mkdir(parents=True, exist_ok=True)
    flags = []
    for i, x in enumerate(inputs):
        if isinstance(x, np.generic):  # a scalar argument
            flags.append(f"--input={x.item()!r}" if x.dtype.kind == "f" else f"--input={int(x)}")
            continue
        path = workdir / f"input{i}.npy"
        np.save(path, np.asarray(x))
        flags.append(f"--input=@{path}")
    return flags


TIME_UNITS_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def time_async(
    tool: Path,
    vmfb: Path,
    function: str,
    input_flags: list,
    repeat: int,
    clock: str = "real_time",
    device: tuple = ("--device=local-sync",),
) -> float:
    """iree-benchmark-module, `repeat` iterations on `device` (default
    local-sync; e.g. local-task and its worker count): ns per iteration of
    `clock` (real_time, or cpu_time)."""
    cmd = [
        str(tool),
        f"--module={vmfb}",
        *device,
        f"--function={function}",
        *input_flags,
        f"--benchmark_min_time={repeat}x",
        "--benchmark_format=json",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr or proc.stdout).strip() or f"iree-benchmark-module exited {proc.returncode}")
    runs = [b for b in json.loads(proc.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs:
        raise RuntimeError("iree-benchmark-module reported no iteration run")
    return runs[0][clock] * TIME_UNITS_NS[runs[0]["time_unit"]]


def measure_latency(case, runtimeless_dir: Path, build_dir: Path, tool: Path, repeat: int, rounds: int) -> Latency:
    """The three latencies of the case's first call, alternating; the best
    round of each (the least disturbed by whatever else the machine runs)."""
    call = case.calls[0]
    latency = Latency()
    samples = {"runtimeless": [], "bare": [], "async": []}
    runner = bare = None
    runtimeless_outputs = bare_outputs = None
    try:
        runner = build_runner(runtimeless_dir, build_dir / "runner")
        function = runner.functions[call.function]
    except Exception as e:  # noqa: BLE001 - reported in the row
        latency.errors["runtimeless"] = first_line(e)
        function = None
    if function is not None:
        try:
            bare, latency.scratch_steps = build_bare_program(runtimeless_dir, build_dir / "bare", function, call.inputs)
        except Exception as e:  # noqa: BLE001
            latency.errors["bare"] = first_line(e)
    try:
        vmfb = emit_async_module(case, build_dir)
        input_flags = benchmark_module_inputs(call.inputs, build_dir / "async-inputs")
    except Exception as e:  # noqa: BLE001
        latency.errors["async"] = first_line(e)
    for _ in range(rounds):
        if runner and "runtimeless" not in latency.errors:
            try:
                runtimeless_outputs, ns = runner.call(call.function, call.inputs, repeat=repeat)
                samples["runtimeless"].append(ns)
            except Exception as e:  # noqa: BLE001
                latency.errors["runtimeless"] = first_line(e)
        if bare and "bare" not in latency.errors:
            try:
                ns, bare_outputs = time_bare(bare, function, call.inputs, repeat, build_dir / "bare-io")
                samples["bare"].append(ns)
            except Exception as e:  # noqa: BLE001
                latency.errors["bare"] = first_line(e)
        if "async" not in latency.errors:
            try:
                samples["async"].append(time_async(tool, vmfb, call.function, input_flags, repeat))
            except Exception as e:  # noqa: BLE001
                latency.errors["async"] = first_line(e)
    for key, values in samples.items():
        if values and key not in latency.errors:
            setattr(latency, f"{key}_ns", min(values))
    checked = outputs_to_check(runtimeless_dir, call.function)
    if runtimeless_outputs is not None and bare_outputs is not None and checked and not latency.scratch_steps:
        latency.same_outputs = all(
            np.array_equal(
                np.asarray(runtimeless_outputs[i]).view(np.uint8), np.asarray(bare_outputs[i]).view(np.uint8)
            )
            for i in checked
        )
    return latency


def outputs_to_check(runtimeless_dir: Path, function: str) -> list:
    """The outputs a dispatch writes in place (an "output" binding): the ones
    the bare program computes.  The others are copied out of the arena after
    the schedule, which the manifest does not describe."""
    manifest = json.loads((runtimeless_dir / "manifest.json").read_text())
    steps = manifest["runtimeless"]["schedule"][function]
    return sorted({b["index"] for s in steps for b in s.get("bindings", []) if b["in"] == "output"})


# ---------------------------------------------------------------------------
# Sizes


def section_sizes(obj: Path) -> dict:
    """{"text", "rodata", "data", "bss"} bytes of an object, from `size -A`.
    .rodata counts .rodata.* and .data.rel.ro*; .eh_frame, .comment and debug
    sections are not counted."""
    proc = subprocess.run(
        ["size", "-A", str(obj)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True
    )
    totals = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for line in proc.stdout.splitlines()[2:]:
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        section, size = parts[0], int(parts[1])
        if section == ".text" or section.startswith(".text."):
            totals["text"] += size
        elif section.startswith((".rodata", ".data.rel.ro")):
            totals["rodata"] += size
        elif section == ".data" or section.startswith(".data."):
            totals["data"] += size
        elif section == ".bss" or section.startswith(".bss."):
            totals["bss"] += size
    return totals


def measure_sizes(runtimeless_dir: Path, build_dir: Path, name: str) -> Sizes:
    build_dir.mkdir(parents=True, exist_ok=True)
    model_o, constants_o = build_dir / f"{name}.o", build_dir / f"{name}_constants.o"
    compile_c(["-Os", "-c", f"-I{runtimeless_dir}", runtimeless_dir / f"{name}.c", "-o", model_o])
    manifest = json.loads((runtimeless_dir / "manifest.json").read_text())
    compile_c(["-Os", "-c", f"-I{runtimeless_dir}", constants_source(runtimeless_dir, manifest), "-o", constants_o])
    executables = section_sizes(runtimeless_dir / f"{name}_executables.o")
    model_c = section_sizes(model_o)
    constants = section_sizes(constants_o)
    library = {k: executables[k] + model_c[k] + constants[k] for k in executables}
    return Sizes(executables, library, model_c)


# ---------------------------------------------------------------------------
# One model


def benchmark_model(case, build_root: Path, tool: Path, repeat: int, rounds: int) -> ModelResult:
    result = ModelResult(case.name, case.calls[0].function)
    workdir = build_root / case.name
    try:
        runtimeless_dir = emit_runtimeless(case, workdir)
    except RuntimelessError as e:
        result.skipped = str(e).split(": ", 1)[-1].split(" (at ")[0]
        return result
    except Exception as e:  # noqa: BLE001
        result.error = first_line(e)
        return result
    manifest = json.loads((runtimeless_dir / "manifest.json").read_text())
    result.arena = manifest["runtimeless"]["arena"]
    result.latency = measure_latency(case, runtimeless_dir, workdir / "build", tool, repeat, rounds)
    try:
        result.sizes = measure_sizes(runtimeless_dir, workdir / "sizes", case.name)
    except Exception as e:  # noqa: BLE001
        result.sizes_error = first_line(e)
    return result


# ---------------------------------------------------------------------------
# Printing


def fmt(value, spec: str, width: int) -> str:
    return f"{'-' if value is None else format(value, spec):>{width}}"


def goal(met) -> str:
    return "-" if met is None else ("yes" if met else "NO")


def print_latency(results: list, repeat: int, rounds: int) -> None:
    print(
        f"\n1. Latency, ns per inference (best of {rounds} rounds of {repeat} calls; same = bare program's "
        "in-place outputs equal runtimeless's)"
    )
    print(
        f"{'model':<15} {'function':<12} {'runtimeless':>11} {'bare':>9} {'async':>9} "
        f"{'rl/bare':>7} {'rl/async':>8} {'<=1.05':>6} {'<async':>6} {'same':>4}  notes"
    )
    for r in results:
        if r.error:
            print(f"{r.model:<15} {r.function:<12} error: {r.error}")
        if r.latency is None:
            continue
        lat = r.latency
        notes = [f"bare does {n} {kind} in scratch" for kind, n in sorted(lat.scratch_steps.items())]
        notes += [f"{k} error: {m}" for k, m in sorted(lat.errors.items())]
        same = "-" if lat.same_outputs is None else ("yes" if lat.same_outputs else "no")
        print(
            f"{r.model:<15} {r.function:<12} {fmt(lat.runtimeless_ns, '.1f', 11)} {fmt(lat.bare_ns, '.1f', 9)} "
            f"{fmt(lat.async_ns, '.1f', 9)} {fmt(lat.vs_bare, '.3f', 7)} {fmt(lat.vs_async, '.3f', 8)} "
            f"{goal(None if lat.vs_bare is None else lat.vs_bare <= BARE_TOLERANCE):>6} "
            f"{goal(None if lat.vs_async is None else lat.vs_async < 1.0):>6} {same:>4}  {'; '.join(notes)}"
        )


def print_sizes(results: list) -> None:
    print(
        "\n2. Sizes, bytes (.rodata includes .rodata.* and .data.rel.ro*; library = "
        "NAME.c at -Os + constants + executables; overhead = NAME.c .text+.rodata)"
    )
    print(
        f"{'model':<15} {'exe.text':>8} {'exe.ro':>7} {'exe.bss':>7} {'lib.text':>8} {'lib.ro':>7} "
        f"{'lib.data':>8} {'lib.bss':>7} {'overhead':>8} {'<4KiB':>5}"
    )
    for r in results:
        if r.latency is None:
            continue
        if r.sizes is None:
            print(f"{r.model:<15} error: {r.sizes_error}")
            continue
        e, lib = r.sizes.executables, r.sizes.library
        print(
            f"{r.model:<15} {e['text']:>8} {e['rodata']:>7} {e['bss']:>7} {lib['text']:>8} {lib['rodata']:>7} "
            f"{lib['data']:>8} {lib['bss']:>7} {r.sizes.overhead:>8} {goal(r.sizes.overhead < OVERHEAD_LIMIT):>5}"
        )


def print_arena(results: list) -> None:
    print(
        "\n3. Arena, bytes (model: arena.size / size_aligned_io; per function: size, size_aligned_io, sum_of_buffers)"
    )
    print(
        f"{'model':<15} {'function':<12} {'arena':>7} {'alig.io':>7} {'fn.size':>7} {'fn.alig.io':>10} "
        f"{'sum_bufs':>8} {'alig.io/sum':>11}"
    )
    for r in results:
        if not r.arena:
            continue
        for fn, a in sorted(r.arena["functions"].items()):
            print(
                f"{r.model:<15} {fn:<12} {r.arena['size']:>7} {r.arena['size_aligned_io']:>7} {a['size']:>7} "
                f"{a['size_aligned_io']:>10} {a['sum_of_buffers']:>8} "
                f"{fmt(ratio(a['size_aligned_io'], a['sum_of_buffers']), '.2f', 11)}"
            )


def print_summary(results: list) -> None:
    measured = [r for r in results if r.latency is not None]
    print()
    for r in results:
        if r.skipped:
            print(f"skipped {r.model}: runtimeless refuses it ({r.skipped})")

    def tally(label: str, values: list) -> None:
        known = [v for v in values if v is not None]
        print(
            f"goal {label}: {sum(known)}/{len(known)} models"
            + (f" ({len(values) - len(known)} not measured)" if len(known) < len(values) else "")
        )

    tally(
        "runtimeless within 5% of bare dispatch",
        [None if r.latency.vs_bare is None else r.latency.vs_bare <= BARE_TOLERANCE for r in measured],
    )
    tally(
        "runtimeless faster than async local-sync",
        [None if r.latency.vs_async is None else r.latency.vs_async < 1.0 for r in measured],
    )
    tally(
        "code overhead under 4 KiB", [None if r.sizes is None else r.sizes.overhead < OVERHEAD_LIMIT for r in measured]
    )


# ---------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=100000, help="calls per measurement (default 100000)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating measurements per model (default 5)")
    parser.add_argument("--models", nargs="+", metavar="NAME", help=f"corpus models (default all: {' '.join(CASES)})")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--build-dir", type=Path, help="keep the emitted and built files here (default: a temp dir)")
    args = parser.parse_args()
    if args.repeat < 2 or args.rounds < 1:
        parser.error("--repeat must be at least 2 (the runner times only repeated calls), --rounds at least 1")
    unknown = [m for m in args.models or [] if m not in CASES]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    cases = [CASES[m] for m in CASES if not args.models or m in args.models]

    tool = find_runtime_tools().bin_dir / "iree-benchmark-module"
    config = make_config("runtimeless")
    print(
        f"iree-compile {find_compiler().version}; target {config.target.triple} cpu {config.target.cpu}; "
        f"{CC} -O2; {args.repeat} calls x {args.rounds} rounds"
    )
    build_root = args.build_dir or Path(tempfile.mkdtemp(prefix="ireegen-bench-runtimeless-"))
    build_root.mkdir(parents=True, exist_ok=True)
    try:
        results = [benchmark_model(case, build_root, tool, args.repeat, args.rounds) for case in cases]
    finally:
        if args.build_dir is None:
            shutil.rmtree(build_root, ignore_errors=True)
    print_latency(results, args.repeat, args.rounds)
    print_sizes(results)
    print_arena(results)
    print_summary(results)
    if args.json:
        args.json.write_text(json.dumps([to_json(r) for r in results], indent=1) + "\n")
    return 0


def to_json(r: ModelResult) -> dict:
    d = asdict(r)
    if r.latency is not None:
        d["latency"].update(runtimeless_over_bare=r.latency.vs_bare, runtimeless_over_async=r.latency.vs_async)
    if r.sizes is not None:
        d["sizes"]["overhead"] = r.sizes.overhead
    return d


if __name__ == "__main__":
    sys.exit(main())
