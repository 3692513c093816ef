"""Threads in the generated C (docs/runtimeless.md#threads, docs/c-api.md#threads):
a matmul whose dispatch has several workgroups, run on one thread and on
several, must give the same bits, and numpy's numbers.

Runtimeless: the CMake package's PARALLEL_FOR with its pthreads pool.
Async: the task executor, on the session's IREE runtime (the
iree_runtime_dir fixture, as tests/test_runtime_c.py).
"""

import subprocess

import numpy as np
import pytest
from conftest import configure_with_ireegen, run_cli

from ireegen.config.modes import make_config
from ireegen.output.layout import runtime_targets

M, K, N = 64, 256, 384

WIDE_MLIR = f"""\
func.func @main(%x: tensor<{M}x{K}xf32>, %w: tensor<{K}x{N}xf32>) -> tensor<{M}x{N}xf32> {{
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<{M}x{N}xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<{M}x{K}xf32>, tensor<{K}x{N}xf32>)
                      outs(%init : tensor<{M}x{N}xf32>) -> tensor<{M}x{N}xf32>
  %t = math.tanh %mm : tensor<{M}x{N}xf32>
  return %t : tensor<{M}x{N}xf32>
}}
"""

# The inputs main.c makes, and writes nothing else: x[i] and w[i] from i.
INPUTS_C = """\
static void fill_inputs(float* x, float* w) {
  for (int i = 0; i < WIDE_MAIN_INPUT0_ELEMENT_COUNT; ++i) x[i] = (float)(i % 17) * 0.0625f - 0.5f;
  for (int i = 0; i < WIDE_MAIN_INPUT1_ELEMENT_COUNT; ++i) w[i] = (float)(i % 13) * 0.015625f - 0.09375f;
}
"""

# Runtimeless: serial, then through the pool at 2 and 3 threads (a counting
# wrapper shows the workgroups really went through the hook); the outputs
# are compared bit for bit, and the serial one is written for numpy.
RUNTIMELESS_MAIN = (
    """\
#include <stdio.h>
#include <string.h>

#include "ireegen_thread_pool.h"
#include "wide.h"

"""
    + INPUTS_C
    + """
static unsigned spread;  // calls with more than one workgroup

static void counting_parallel_for(void* pool, uint32_t count, wide_workgroup_fn* body, void* arg) {
  if (count > 1) ++spread;
  ireegen_thread_pool_parallel_for(pool, count, body, arg);
}

static float x[WIDE_MAIN_INPUT0_ELEMENT_COUNT], w[WIDE_MAIN_INPUT1_ELEMENT_COUNT];
static float serial[WIDE_MAIN_OUTPUT0_ELEMENT_COUNT], threaded[WIDE_MAIN_OUTPUT0_ELEMENT_COUNT];

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  fill_inputs(x, w);
  wide_t* model = NULL;
  if (wide_create(iree_allocator_system(), &model) != NULL) return 3;
  if (wide_main(model, x, w, serial) != 0) return 4;
  for (uint32_t threads = 2; threads <= 3; ++threads) {
    ireegen_thread_pool_t* pool = NULL;
    if (ireegen_thread_pool_create(threads, &pool) != 0) return 5;
    wide_set_parallel_for(model, counting_parallel_for, pool);
    memset(threaded, 0, sizeof(threaded));
    int failed = wide_main(model, x, w, threaded);
    wide_set_parallel_for(model, NULL, NULL);
    ireegen_thread_pool_destroy(pool);
    if (failed) return 6;
    if (memcmp(serial, threaded, sizeof(serial)) != 0) {
      fprintf(stderr, "%u threads: the output differs from one thread's\\n", threads);
      return 7;
    }
  }
  FILE* f = fopen(argv[1], "wb");
  if (!f || fwrite(serial, sizeof(serial), 1, f) != 1 || fclose(f) != 0) return 8;
  printf("spread dispatches: %u\\n", spread);
  wide_destroy(model);
  return 0;
}
"""
)

# Async: worker counts 1 (local-sync), 2 and 0 (local-task), bit for bit.
ASYNC_MAIN = (
    """\
#include <stdio.h>
#include <string.h>

#include "plain.h"
#include "wide.h"

"""
    + INPUTS_C
    + """
static float x[WIDE_MAIN_INPUT0_ELEMENT_COUNT], w[WIDE_MAIN_INPUT1_ELEMENT_COUNT];
static float first[WIDE_MAIN_OUTPUT0_ELEMENT_COUNT], other[WIDE_MAIN_OUTPUT0_ELEMENT_COUNT];

// The same model emitted without --threads: no task executor, 2 is refused.
static int plain_refuses_two_workers(void) {
  plain_options_t options;
  plain_options_initialize(&options);
  if (options.worker_count != 1) return 0;
  options.worker_count = 2;
  plain_t* model = NULL;
  iree_status_t status = plain_create_with_options(&options, iree_allocator_system(), &model);
  int refused = iree_status_code(status) == IREE_STATUS_UNAVAILABLE && model == NULL;
  iree_status_free(status);
  return refused;
}

static int run(iree_host_size_t worker_count, float* out) {
  wide_options_t options;
  wide_options_initialize(&options);
  options.worker_count = worker_count;
  wide_t* model = NULL;
  iree_status_t status = wide_create_with_options(&options, iree_allocator_system(), &model);
  if (!iree_status_is_ok(status)) {
    iree_status_fprint(stderr, status);
    iree_status_free(status);
    return 1;
  }
  int failed = wide_main(model, x, w, out);
  if (failed) fprintf(stderr, "%s\\n", wide_last_error(model));
  wide_destroy(model);
  return failed;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  fill_inputs(x, w);
  if (WIDE_DEFAULT_WORKER_COUNT != 2 || !plain_refuses_two_workers()) return 3;
  if (run(1, first) != 0) return 4;
  const iree_host_size_t counts[] = {2, 0, WIDE_DEFAULT_WORKER_COUNT};
  for (int i = 0; i < 3; ++i) {
    memset(other, 0, sizeof(other));
    if (run(counts[i], other) != 0) return 5;
    if (memcmp(first, other, sizeof(first)) != 0) {
      fprintf(stderr, "worker_count %d: the output differs from one thread's\\n", (int)counts[i]);
      return 6;
    }
  }
  FILE* f = fopen(argv[1], "wb");
  if (!f || fwrite(first, sizeof(first), 1, f) != 1 || fclose(f) != 0) return 7;
  return 0;
}
"""
)


def _inputs():
    x = (np.arange(M * K) % 17).astype(np.float32) * np.float32(0.0625) - np.float32(0.5)
    w = (np.arange(K * N) % 13).astype(np.float32) * np.float32(0.015625) - np.float32(0.09375)
    return x.reshape(M, K), w.reshape(K, N)


def _expected():
    x, w = _inputs()
    return np.tanh(x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)


def _project(tmp_path, model_line: str, main_c: str):
    src = tmp_path / "src"
    src.mkdir()
    (src / "wide.mlir").write_text(WIDE_MLIR)
    (src / "main.c").write_text(main_c)
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.21)\nproject(t C)\nfind_package(ireegen CONFIG REQUIRED)\n"
        f"{model_line}\nadd_executable(demo main.c)\ntarget_link_libraries(demo PRIVATE wide)\n"
        "target_compile_options(wide PRIVATE -Wall -Wextra -Werror)\n"
        "target_compile_options(demo PRIVATE -Wall -Wextra -Werror)\n"
    )
    return src


def _build_and_run(src, build, *options):
    configure = configure_with_ireegen(src, build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", *options)
    assert configure.returncode == 0, configure.stdout
    made = subprocess.run(["cmake", "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert made.returncode == 0, made.stdout
    out = build / "out.bin"
    ran = subprocess.run([build / "demo", out], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"exit {ran.returncode}: {ran.stderr}"
    got = np.fromfile(out, np.float32).reshape(M, N)
    np.testing.assert_allclose(got, _expected(), rtol=1e-5, atol=1e-5)
    return ran.stdout


def test_runtimeless_parallel_for_is_bit_identical(tmp_path):
    src = _project(tmp_path, "ireegen_add_model(wide SRC wide.mlir EXECUTION_MODEL runtimeless PARALLEL_FOR)", "")
    (src / "main.c").write_text(RUNTIMELESS_MAIN)
    stdout = _build_and_run(src, tmp_path / "build")
    spread = int(stdout.split("spread dispatches:")[1])
    assert spread >= 2, stdout  # the matmul's workgroups went through the hook, at 2 and at 3 threads


def test_parallel_for_is_refused_outside_runtimeless(tmp_path):
    src = _project(tmp_path, "ireegen_add_model(wide SRC wide.mlir EXECUTION_MODEL async PARALLEL_FOR)", "")
    configure = configure_with_ireegen(src, tmp_path / "build", "-G", "Ninja")
    assert configure.returncode != 0
    assert "PARALLEL_FOR is for EXECUTION_MODEL runtimeless; async takes THREADS <n>" in " ".join(
        configure.stdout.split()
    )


def test_threads_refused_where_nothing_runs_it(tmp_path):
    (tmp_path / "wide.mlir").write_text(WIDE_MLIR)
    for args, message in (
        (["--execution-model", "runtimeless", "--threads", "2"], "--execution-model runtimeless runs on the calling"),
        (["--threads", "-1"], "--threads -1: a worker count from 0"),
        (["--threads", "257"], "--threads 257: a worker count from 0"),
    ):
        run = run_cli("emit", tmp_path / "wide.mlir", "-o", tmp_path / "out", "--no-verify", *args)
        assert run.returncode == 2 and message in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.runtime
def test_async_task_executor_is_bit_identical(tmp_path, iree_runtime_dir):
    models = "ireegen_add_model(wide SRC wide.mlir THREADS 2)\nireegen_add_model(plain SRC wide.mlir NAME plain)"
    src = _project(tmp_path, models, ASYNC_MAIN)
    with (src / "CMakeLists.txt").open("a") as f:
        f.write("target_link_libraries(demo PRIVATE plain)\n")
    _build_and_run(src, tmp_path / "build", f"-DIREERuntime_DIR={iree_runtime_dir}")


def test_task_executor_is_linked_only_when_emitted_with_threads():
    task = {"iree_hal_drivers_local_task_task_driver", "iree_task_task"}
    assert not task & set(runtime_targets(make_config("async")))
    assert task <= set(runtime_targets(make_config("async", threads=0)))
    assert task <= set(runtime_targets(make_config("async", threads=2)))
