"""Runtimeless C on the classes of model issue #10 found broken: programs
that dispatch nothing, zero-element tensors, inputs a function never reads,
functions without inputs, f64, names the runtimeless API defines,
initializers that dispatch work, and state kept in globals across calls.
Every model is built with cc -std=c11 -Wall -Wextra -Werror (the parity
harness's runner) and compared with async and with numpy."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import run_cli
from test_parity import corpus

from ireegen.cbuild.native_run import STRICT_CFLAGS, build_runner
from ireegen.check.runners import RunError, run_in_process
from ireegen.compile.compile_model import compile_model
from ireegen.compile.compiler import find_compiler
from ireegen.config.modes import make_config
from ireegen.emit import emit
from ireegen.frontend.models import load_model
from ireegen.parity import parity

RNG = np.random.default_rng(10)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _model(tmp_path, name, text):
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    return path


def _check(path, inputs: dict, expected: dict, rtol=1e-5, atol=1e-6, extra_flags=()):
    """Parity of runtimeless against async, then every result against numpy."""
    report = parity(path, modes=["runtimeless"], inputs=inputs, rtol=rtol, atol=atol, extra_flags=extra_flags)
    assert report.exit_code == 0, report.table()
    for fn, want in expected.items():
        got = report.results["runtimeless"][fn]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).shape == np.asarray(w).shape, fn
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return report


# ---------------------------------------------------------------------------
# Programs without a dispatch: ONNX Identity, Reshape/Flatten, Concat on
# axis 0, an unread input.  iree-compile writes no executables object.

NO_DISPATCH = """
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %r = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}
func.func @identity_and_unused(%x: tensor<5xi32>, %unused: tensor<3xf32>) -> tensor<5xi32> {
  return %x : tensor<5xi32>
}
func.func @concat0(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<6x3xf32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  return %c : tensor<6x3xf32>
}
"""


def test_programs_without_dispatches_run(tmp_path):
    path = _model(tmp_path, "no_dispatch", NO_DISPATCH)
    x, i, u, a, b = _f32(2, 3, 4), np.arange(5, dtype=np.int32) - 2, _f32(3), _f32(2, 3), _f32(4, 3)
    _check(
        path,
        {"reshape": [x], "identity_and_unused": [i, u], "concat0": [a, b]},
        {"reshape": [x.reshape(6, 4)], "identity_and_unused": [i], "concat0": [np.concatenate([a, b])]},
    )


@pytest.mark.parametrize("mode", ["runtimeless", "async", "inline-dynamic"])
def test_programs_without_dispatches_emit_an_unused_executables_object(tmp_path, mode):
    """The file set stays what `resolve` promised CMake: the object is there,
    but no generated code refers to a library in it."""
    path = _model(tmp_path, "no_dispatch", NO_DISPATCH)
    fmt = [] if mode == "runtimeless" else ["--executable-format", "static-library"]
    out = tmp_path / "out"
    proc = run_cli("emit", path, "-o", out, "--execution-model", mode, *fmt)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["static_library_queries"] == []
    assert {f["role"] for f in manifest["files"]} >= {"executables-object"}
    assert (out / "no_dispatch_executables.o").stat().st_size > 0
    runtime_c = (out / "no_dispatch.c").read_text()
    assert "_library_query" not in runtime_c
    # The placeholder is deterministic: another directory, the same bytes.  (In
    # the VM modes the module itself still embeds the staging path: issue #13.)
    again = tmp_path / "again"
    assert run_cli("emit", path, "-o", again, "--execution-model", mode, *fmt).returncode == 0
    for f in out.iterdir():
        if mode == "runtimeless" or f.name.startswith("no_dispatch_executables."):
            assert f.read_bytes() == (again / f.name).read_bytes(), f.name
    if mode == "runtimeless":
        assert manifest["runtimeless"]["abi"]["library_queries"] == []
        assert manifest["runtimeless"]["schedule"]["concat0"] and all(
            "copy" in step for step in manifest["runtimeless"]["schedule"]["concat0"]
        )
    else:
        header = (out / "no_dispatch_executables.h").read_text()
        assert "library_query" not in header and header.startswith("// DO NOT EDIT")
        assert "iree_hal_static_library_loader_create(\n      0, NULL" in runtime_c


def test_cmake_outputs_match_what_emit_writes_for_a_program_without_dispatches(tmp_path):
    path = _model(tmp_path, "no_dispatch", NO_DISPATCH)
    out = tmp_path / "out"
    resolved = run_cli("resolve", "--name", "no_dispatch", "-o", out, "--execution-model", "runtimeless")
    assert resolved.returncode == 0, resolved.stderr
    lines = [x for x in resolved.stdout.splitlines() if x.startswith("OUTPUTS+=")]
    promised = {x.rsplit("/", 1)[-1] for x in lines}
    assert run_cli("emit", path, "-o", out, "--execution-model", "runtimeless").returncode == 0
    assert promised == {p.name for p in out.iterdir()}


# ---------------------------------------------------------------------------
# Zero-element tensors (ConstantOfShape with a zero dim, ReduceSum over an
# empty axis) and functions without inputs.

ZERO = """
func.func @empty_fill() -> tensor<0x3xf32> {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<0x3xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<0x3xf32>) -> tensor<0x3xf32>
  return %f : tensor<0x3xf32>
}
func.func @sum_empty(%x: tensor<4x0xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%c0 : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.reduce ins(%x : tensor<4x0xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<4xf32>
}
func.func @mixed(%x: tensor<3xf32>, %z: tensor<0xf32>) -> (tensor<3xf32>, tensor<0xf32>) {
  %y = arith.addf %x, %x : tensor<3xf32>
  %w = arith.addf %z, %z : tensor<0xf32>
  return %y, %w : tensor<3xf32>, tensor<0xf32>
}
"""


def test_zero_element_tensors(tmp_path):
    path = _model(tmp_path, "zero", ZERO)
    x = _f32(3)
    empty = np.zeros((0,), np.float32)
    _check(
        path,
        {"empty_fill": [], "sum_empty": [np.zeros((4, 0), np.float32)], "mixed": [x, empty]},
        {"empty_fill": [np.ones((0, 3), np.float32)], "sum_empty": [np.zeros(4, np.float32)], "mixed": [x + x, empty]},
    )


NO_INPUTS = """
func.func @ramp() -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x8xf32>) {
    ^bb0(%out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %k = arith.muli %i, %j : index
      %n = arith.index_cast %k : index to i32
      %f = arith.sitofp %n : i32 to f32
      %s = math.sqrt %f : f32
      linalg.yield %s : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
func.func @answer() -> tensor<i32> {
  %c = arith.constant dense<42> : tensor<i32>
  return %c : tensor<i32>
}
"""


def test_a_model_without_any_inputs(tmp_path):
    path = _model(tmp_path, "no_inputs", NO_INPUTS)
    ramp = np.sqrt(np.outer(np.arange(2), np.arange(8))).astype(np.float32)
    _check(path, {"ramp": [], "answer": []}, {"ramp": [ramp], "answer": [np.array(42, np.int32)]})
    out = tmp_path / "out"
    assert run_cli("emit", path, "-o", out, "--execution-model", "runtimeless").returncode == 0
    proc = run_cli("run", out, "--function", "ramp", f"--output=@{tmp_path / 'y.npy'}")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), ramp, rtol=1e-6)


# ---------------------------------------------------------------------------
# f64: IREE demotes it to f32 unless told otherwise; ireegen keeps it.

F64 = """
func.func @axpy(%a: tensor<3x4xf64>, %b: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %c = arith.constant dense<1.0000000001> : tensor<3x4xf64>
  %m = arith.mulf %a, %c : tensor<3x4xf64>
  %y = arith.addf %m, %b : tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}
"""


def test_f64_keeps_double_precision(tmp_path):
    path = _model(tmp_path, "f64", F64)
    a = RNG.standard_normal((3, 4)) * 1e8
    b = RNG.standard_normal((3, 4))
    want = a * 1.0000000001 + b
    # A tolerance f32 could never meet: 1e8 * 1e-10 is below f32's resolution.
    _check(path, {"axpy": [a, b]}, {"axpy": [want]}, rtol=1e-15, atol=1e-9)


def test_f64_demotion_is_ireegens_own_flag(tmp_path):
    # f64 stays f64 in every mode, so that the C API's double is what the
    # module takes: the demotion flag is one ireegen sets itself.
    path = _model(tmp_path, "f64", F64)
    proc = run_cli(
        "emit",
        path,
        "-o",
        tmp_path / "out",
        "--execution-model",
        "runtimeless",
        "--iree-flag=--iree-input-demote-f64-to-f32=true",
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "ireegen sets --iree-input-demote-f64-to-f32 itself" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------
# Names and refusals.


@pytest.mark.parametrize("mode", ["runtimeless", "async"])
def test_a_function_named_initialize_is_refused(tmp_path, mode):
    path = _model(
        tmp_path, "m", "func.func @initialize(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n"
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", mode)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "@initialize" in proc.stderr and "clashes" in proc.stderr, proc.stderr


def test_functions_named_after_runtimeless_internals_compile(tmp_path):
    """state, arena, constants, fill, dispatch, fail: names the templates use
    inside the model's namespace."""
    names = ["state", "arena", "constants", "fill", "dispatch", "fail", "status", "environment", "exports"]
    text = "".join(
        f"func.func @{n}(%x: tensor<4xf32>) -> tensor<4xf32> {{\n"
        f"  %y = arith.addf %x, %x : tensor<4xf32>\n  return %y : tensor<4xf32>\n}}\n"
        for n in names
    )
    path = _model(tmp_path, "names", text)
    x = _f32(4)
    _check(path, {n: [x] for n in names}, {n: [x + x] for n in names})


def test_split_with_variable_parts_names_the_dynamic_result_shape(tmp_path):
    path = _model(
        tmp_path,
        "split",
        """
func.func @split(%x: tensor<6xf32>, %n: tensor<1xi64>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n0 = tensor.extract %n[%c0] : tensor<1xi64>
  %k = arith.index_cast %n0 : i64 to index
  %c6 = arith.constant 6 : index
  %r = arith.subi %c6, %k : index
  %a = tensor.extract_slice %x[0] [%k] [1] : tensor<6xf32> to tensor<?xf32>
  %b = tensor.extract_slice %x[%k] [%r] [1] : tensor<6xf32> to tensor<?xf32>
  return %a, %b : tensor<?xf32>, tensor<?xf32>
}
""",
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "result output0 has a dynamic shape" in proc.stderr and "typed C form" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------
# Initializers that dispatch work: with const-eval off (as for a big model
# whose compile time matters), IREE computes W @ W when the model loads.


def _initializer_model(tmp_path):
    w = (RNG.standard_normal((16, 16)) * 0.5).astype(np.float32)
    literal = corpus.dense(w)
    path = _model(
        tmp_path,
        "gram",
        f"""
util.global private @gram : tensor<16x16xf32>
util.initializer {{
  %w = arith.constant {literal}
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %g = linalg.matmul ins(%w, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%f : tensor<16x16xf32>) -> tensor<16x16xf32>
  util.global.store %g, @gram : tensor<16x16xf32>
  util.return
}}
func.func @apply(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {{
  %g = util.global.load @gram : tensor<16x16xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %g : tensor<4x16xf32>, tensor<16x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}}
""",
    )
    return path, w


def test_initializer_dispatches_run_once_into_the_state_region(tmp_path):
    path, w = _initializer_model(tmp_path)
    flags = ["--iree-opt-const-eval=false"]
    x = _f32(4, 16)
    want = x.astype(np.float64) @ (w.astype(np.float64) @ w)
    _check(path, {"apply": [x]}, {"apply": [want.astype(np.float32)]}, rtol=1e-4, atol=1e-4, extra_flags=flags)
    out = tmp_path / "out"
    emit(path, out, make_config("runtimeless"), extra_flags=flags)
    state = json.loads((out / "manifest.json").read_text())["runtimeless"]["state"]
    assert state["size"] == 16 * 16 * 4 and state["versions"] == 1
    assert [s.get("dispatch", "") for s in state["initialize"]][0].endswith("matmul_16x16x16_f32")
    assert "#define GRAM_STATE_SIZE 1024" in (out / "gram.h").read_text()


# ---------------------------------------------------------------------------
# State kept in globals across calls: the corpus `stateful` model.


def _stateful():
    case = corpus.CASES["stateful"]
    call = case.calls[0]
    x = call.inputs[0]
    return case, x, call.expected[0] - x  # the state's initial value


def test_state_persists_across_calls_like_async(tmp_path):
    case, x, initial = _stateful()
    calls = 4
    # async: successive calls on one context.
    config = make_config("async")
    compiled = compile_model(load_model(case.path), "stateful", config, [], find_compiler(), tmp_path)
    import iree.runtime as rt

    rt_config = rt.Config("local-sync")
    module = rt.VmModule.mmap(rt_config.vm_instance, str(tmp_path / compiled.module_file))
    context = rt.SystemContext(vm_modules=[module], config=rt_config)
    fn = context.modules[module.name]["accumulate"]
    async_results = [np.asarray(fn(x).to_host()) for _ in range(calls)]
    # runtimeless: the runner calls N times on one instance.
    out = tmp_path / "out"
    emit(case.path, out, make_config("runtimeless"))
    runner = build_runner(out, tmp_path / "build")
    for n in range(1, calls + 1):
        got, _ = runner.call("accumulate", [x], repeat=n)
        np.testing.assert_allclose(got[0], async_results[n - 1], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got[0], initial + n * x, rtol=1e-5, atol=1e-5)
    staged, _ = runner.call("accumulate", [x], repeat=3, misaligned=True)
    np.testing.assert_allclose(staged[0], async_results[2], rtol=1e-6, atol=1e-6)
    # A fresh async context starts from the initial state again.
    assert run_in_process(tmp_path / compiled.module_file, "accumulate", [x])[0].tobytes() == async_results[0].tobytes()


def test_state_is_per_instance_and_reset_by_initialize(tmp_path):
    case, x, initial = _stateful()
    out = tmp_path / "out"
    emit(case.path, out, make_config("runtimeless"))
    manifest = json.loads((out / "manifest.json").read_text())["runtimeless"]
    assert manifest["state"]["size"] == 64  # the initial value's 32 bytes, padded as IREE packs it
    main = tmp_path / "main.c"
    main.write_text(r"""
#include <stdio.h>
#include "stateful.h"

static _Alignas(STATEFUL_ARENA_ALIGNMENT) uint8_t arena_a[STATEFUL_ARENA_SIZE];
static _Alignas(STATEFUL_ARENA_ALIGNMENT) uint8_t arena_b[STATEFUL_ARENA_SIZE];
static stateful_t a, b;

static void print(const float* y) {
  for (int i = 0; i < 8; ++i) printf("%.9g ", y[i]);
  printf("\n");
}

int main(void) {
  float x[8], y[8];
  if (fread(x, sizeof(float), 8, stdin) != 8) return 1;
  if (stateful_initialize(&a, arena_a, sizeof(arena_a)) || stateful_initialize(&b, arena_b, sizeof(arena_b))) return 2;
  for (int i = 0; i < 3; ++i) if (stateful_accumulate(&a, x, y)) return 3;
  print(y);  /* a after 3 calls */
  if (stateful_accumulate(&b, x, y)) return 3;
  print(y);  /* b after 1 call: a's calls did not touch it */
  if (stateful_initialize(&a, arena_a, sizeof(arena_a)) || stateful_accumulate(&a, x, y)) return 4;
  print(y);  /* a again from its initial state */
  return 0;
}
""")
    program = tmp_path / "program"
    subprocess.run(
        [
            "cc",
            *STRICT_CFLAGS,
            f"-I{out}",
            str(main),
            str(out / "stateful.c"),
            str(out / "stateful_constants.S"),
            str(out / "stateful_executables.o"),
            "-lm",
            "-o",
            str(program),
        ],
        check=True,
    )
    text = subprocess.run(
        [str(program)], input=x.astype(np.float32).tobytes(), stdout=subprocess.PIPE, check=True
    ).stdout.decode()
    rows = [np.array(line.split(), np.float32).reshape(2, 4) for line in text.splitlines()]
    for row, n in zip(rows, (3, 1, 1)):
        np.testing.assert_allclose(row, initial + n * x, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not shutil.which("cmake") or not shutil.which("ninja"), reason="cmake/ninja not installed")
def test_cmake_builds_a_program_without_dispatches_and_a_stateful_one(tmp_path):
    """ireegen_add_model() for both, linked into one program with -Werror."""
    from test_cmake import cmake_dir

    src = tmp_path / "src"
    src.mkdir()
    (src / "no_dispatch.mlir").write_text(NO_DISPATCH)
    (src / "stateful.mlir").write_text(corpus.CASES["stateful"].path.read_text())
    (src / "main.c").write_text(r"""
#include <stdio.h>
#include "no_dispatch.h"
#include "stateful.h"

int main(void) {
  static no_dispatch_t nd;
  static stateful_t st;
  static _Alignas(64) uint8_t nd_arena[NO_DISPATCH_ARENA_SIZE + 1], st_arena[STATEFUL_ARENA_SIZE];
  if (no_dispatch_initialize(&nd, nd_arena, sizeof(nd_arena)) || stateful_initialize(&st, st_arena, sizeof(st_arena)))
    return 1;
  float a[6], b[12], c[18], x[8], y[8];
  for (int i = 0; i < 6; ++i) a[i] = (float)i;
  for (int i = 0; i < 12; ++i) b[i] = (float)(100 + i);
  for (int i = 0; i < 8; ++i) x[i] = 1.0f;
  if (no_dispatch_concat0(&nd, a, b, c)) return 2;
  for (int i = 0; i < 18; ++i) printf("%g ", c[i]);
  printf("\n");
  for (int i = 0; i < 3; ++i) if (stateful_accumulate(&st, x, y)) return 3;
  for (int i = 0; i < 8; ++i) printf("%.9g ", y[i]);
  printf("\n");
  return 0;
}
""")
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t C)\nfind_package(ireegen CONFIG REQUIRED)\n"
        "ireegen_add_model(no_dispatch SRC no_dispatch.mlir EXECUTION_MODEL runtimeless)\n"
        "ireegen_add_model(stateful SRC stateful.mlir EXECUTION_MODEL runtimeless)\n"
        "add_executable(demo main.c)\ntarget_link_libraries(demo PRIVATE no_dispatch stateful)\n"
        "target_compile_options(demo PRIVATE -Wall -Wextra -Werror)\n"
        "target_compile_options(no_dispatch PRIVATE -Wall -Wextra -Werror)\n"
        "target_compile_options(stateful PRIVATE -Wall -Wextra -Werror)\n"
    )
    build = tmp_path / "build"
    for cmd in (
        [
            "cmake",
            "-G",
            "Ninja",
            "-S",
            src,
            "-B",
            build,
            f"-Direegen_DIR={cmake_dir()}",
            f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
        ],
        ["cmake", "--build", build],
    ):
        proc = subprocess.run(list(map(str, cmd)), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.returncode == 0, proc.stdout
    lines = subprocess.run([str(build / "demo")], stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()
    np.testing.assert_array_equal(
        np.array(lines[0].split(), np.float32), np.concatenate([np.arange(6), 100 + np.arange(12)]).astype(np.float32)
    )
    _, _, initial = _stateful()
    np.testing.assert_allclose(np.array(lines[1].split(), np.float32).reshape(2, 4), initial + 3, rtol=1e-6)
    # A second build is a no-op: every declared output was written.
    proc = subprocess.run(["cmake", "--build", str(build)], stdout=subprocess.PIPE, text=True)
    assert "ireegen: generating" not in proc.stdout and "no work to do" in proc.stdout, proc.stdout


COUNTER = """
util.global private mutable @acc = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
util.global private mutable @count = dense<0> : tensor<i32>
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = util.global.load @acc : tensor<4xf32>
  %n = arith.addf %s, %x : tensor<4xf32>
  util.global.store %n, @acc : tensor<4xf32>
  %c = util.global.load @count : tensor<i32>
  %one = arith.constant dense<1> : tensor<i32>
  %c2 = arith.addi %c, %one : tensor<i32>
  util.global.store %c2, @count : tensor<i32>
  return %n : tensor<4xf32>
}
func.func @read() -> (tensor<4xf32>, tensor<i32>) {
  %s = util.global.load @acc : tensor<4xf32>
  %c = util.global.load @count : tensor<i32>
  return %s, %c : tensor<4xf32>, tensor<i32>
}
func.func @reset() -> tensor<i32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  util.global.store %z, @acc : tensor<4xf32>
  %c = util.global.load @count : tensor<i32>
  %zi = arith.constant dense<0> : tensor<i32>
  util.global.store %zi, @count : tensor<i32>
  return %c : tensor<i32>
}
func.func @clear() {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  util.global.store %z, @acc : tensor<4xf32>
  return
}
"""
SEQUENCE = "ssrRrsrRRsssrCrsr"  # step, read, Reset, Clear (takes and returns nothing)


def test_state_shared_by_several_functions_follows_async_call_for_call(tmp_path):
    """Two globals that IREE packs into one buffer (each with an offset
    global), written by @step and @reset and read by @read: the state
    versions must follow every order of calls."""
    path = _model(tmp_path, "counter", COUNTER)
    x = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    # numpy
    acc, count, want = np.array([1, 2, 3, 4], np.float32), 0, []
    for op in SEQUENCE:
        if op == "s":
            acc, count = acc + x, count + 1
            want.append(acc.copy())
        elif op == "r":
            want.append(np.append(acc, count))
        elif op == "R":
            want.append(np.array([count], np.float32))
            acc, count = np.zeros(4, np.float32), 0
        else:
            want.append(np.zeros(0, np.float32))
            acc = np.zeros(4, np.float32)
    # async, one context
    import iree.runtime as rt

    compiled = compile_model(load_model(path), "counter", make_config("async"), [], find_compiler(), tmp_path)
    config = rt.Config("local-sync")
    module = rt.VmModule.mmap(config.vm_instance, str(tmp_path / compiled.module_file))
    fns = rt.SystemContext(vm_modules=[module], config=config).modules[module.name]
    got_async = []
    for op in SEQUENCE:
        if op == "s":
            got_async.append(np.asarray(fns["step"](x).to_host()))
        elif op == "r":
            y, c = fns["read"]()
            got_async.append(np.append(y.to_host(), c.to_host()))
        elif op == "R":
            got_async.append(np.array([fns["reset"]().to_host()], np.float32))
        else:
            assert fns["clear"]() is None
            got_async.append(np.zeros(0, np.float32))
    # runtimeless, one instance
    out = tmp_path / "out"
    emit(path, out, make_config("runtimeless"))
    versions = json.loads((out / "manifest.json").read_text())["runtimeless"]["state"]["versions"]
    assert versions > 1
    main = tmp_path / "main.c"
    main.write_text(r"""
#include <stdio.h>
#include "counter.h"
static _Alignas(COUNTER_ARENA_ALIGNMENT) uint8_t arena[COUNTER_ARENA_SIZE + 1];
static counter_t model;
static void print(const float* v, int n, int32_t extra, int with_extra) {
  for (int i = 0; i < n; ++i) printf("%.9g ", v[i]);
  if (with_extra) printf("%d", (int)extra);
  printf("\n");
}
int main(int argc, char** argv) {
  float x[4] = {0.5f, -1.0f, 2.0f, 0.25f}, y[4];
  int32_t c = 0;
  if (argc != 2 || counter_initialize(&model, arena, sizeof(arena))) return 1;
  for (const char* p = argv[1]; *p; ++p) {
    int r = 0;
    if (*p == 's') { r = counter_step(&model, x, y); print(y, 4, 0, 0); }
    if (*p == 'r') { r = counter_read(&model, y, &c); print(y, 4, c, 1); }
    if (*p == 'R') { r = counter_reset(&model, &c); print(y, 0, c, 1); }
    if (*p == 'C') { r = counter_clear(&model); print(y, 0, 0, 0); }
    if (r) return 2;
  }
  return 0;
}
""")
    program = tmp_path / "program"
    subprocess.run(
        [
            "cc",
            *STRICT_CFLAGS,
            f"-I{out}",
            str(main),
            str(out / "counter.c"),
            str(out / "counter_constants.S"),
            str(out / "counter_executables.o"),
            "-lm",
            "-o",
            str(program),
        ],
        check=True,
    )
    text = subprocess.run([str(program), SEQUENCE], stdout=subprocess.PIPE, text=True, check=True).stdout
    got = [np.array(line.split(), np.float32) for line in text.splitlines()]
    assert len(got) == len(want) == len(got_async)
    for op, g, a, w in zip(SEQUENCE, got, got_async, want):
        np.testing.assert_allclose(a, w, rtol=1e-6, err_msg=f"async at {op}")
        np.testing.assert_allclose(g, a, rtol=1e-6, err_msg=f"runtimeless at {op}")


def test_a_host_counter_in_a_global_is_refused_naming_it(tmp_path):
    """A scalar global that changes on every call has no fixed schedule."""
    path = _model(
        tmp_path,
        "ticks",
        """
util.global private mutable @n = 0 : i32
func.func @tick() -> tensor<i32> {
  %v = util.global.load @n : i32
  %one = arith.constant 1 : i32
  %w = arith.addi %v, %one : i32
  util.global.store %w, @n : i32
  %t = tensor.from_elements %w : tensor<i32>
  return %t : tensor<i32>
}
""",
    )
    proc = run_cli("emit", path, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "keeps changing across calls" in proc.stderr and "@n" in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------
# Host values read from device data (ONNX Slice starts, Pad widths and
# values, Trilu's k, quantization zero points): the program reads a scalar
# from a tensor on the host and passes it to a dispatch, fills with it, or
# checks it.  Runtimeless C reads it at run time (a `scalarN` local).

HOST_VALUES = """
func.func @mask_below(%x: tensor<16xf32>, %k: tensor<i64>) -> tensor<16xf32> {
  %kv = tensor.extract %k[] : tensor<i64>
  %c3 = arith.constant 3 : i64
  %q = arith.floordivsi %kv, %c3 : i64
  %limit = arith.index_cast %q : i64 to index
  %empty = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%empty : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %keep = arith.cmpi slt, %i, %limit : index
    %zero = arith.constant 0.0 : f32
    %v = arith.select %keep, %in, %zero : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}
func.func @pad_with(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<4x7xf32> {
  %pv = tensor.extract %v[] : tensor<f32>
  %p = tensor.pad %x low[1, 2] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<2x3xf32> to tensor<4x7xf32>
  return %p : tensor<4x7xf32>
}
func.func @checked_scale(%x: tensor<8xf32>, %s: tensor<i32>) -> tensor<8xf32> {
  %sv = tensor.extract %s[] : tensor<i32>
  %c1 = arith.constant 1 : i32
  %c100 = arith.constant 100 : i32
  %low = arith.cmpi sge, %sv, %c1 : i32
  %high = arith.cmpi sle, %sv, %c100 : i32
  %ok = arith.andi %low, %high : i1
  cf.assert %ok, "scale must be in [1, 100]"
  %f = arith.sitofp %sv : i32 to f32
  %empty = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%empty : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %f : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
"""


@pytest.mark.parametrize("k", [-7, -1, 0, 5, 30, 48, 1 << 40])
def test_a_value_read_from_an_input_drives_a_dispatch(tmp_path, k):
    path = _model(tmp_path, "host_values", HOST_VALUES)
    x, kk = _f32(16), np.array(k, np.int64)
    limit = k // 3  # floordiv, like arith.floordivsi
    _check(path, {"mask_below": [x, kk]}, {"mask_below": [np.where(np.arange(16) < limit, x, 0).astype(np.float32)]})


def test_a_value_read_from_an_input_is_the_fill_pattern(tmp_path):
    path = _model(tmp_path, "host_values", HOST_VALUES)
    x, v = _f32(2, 3), np.array(-2.5, np.float32)
    _check(path, {"pad_with": [x, v]}, {"pad_with": [np.pad(x, ((1, 1), (2, 2)), constant_values=-2.5)]})


def test_an_assert_on_a_value_read_from_an_input_is_checked_at_run_time(tmp_path):
    path = _model(tmp_path, "host_values", HOST_VALUES)
    x = _f32(8)
    _check(path, {"checked_scale": [x, np.array(7, np.int32)]}, {"checked_scale": [x * 7]})
    out = tmp_path / "out"
    emit(path, out, make_config("runtimeless"), name="hv", verify=False)
    source = (out / "hv.c").read_text()
    assert "IREE_STATUS_FAILED_PRECONDITION" in source and "scale must be in [1, 100]" in source
    runner = build_runner(out, tmp_path / "build")
    outputs, _ = runner.call("checked_scale", [x, np.array(100, np.int32)])
    np.testing.assert_allclose(outputs[0], x * 100, rtol=1e-6)
    with pytest.raises(RunError, match=r"@checked_scale: scale must be in \[1, 100\]"):
        runner.call("checked_scale", [x, np.array(101, np.int32)])
