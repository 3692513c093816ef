"""Runtimeless C's instance API under misuse: NAME_create called by two
threads at once (ThreadSanitizer, each claim path), NAME_initialize given a
NULL, short, misaligned or wrapping arena, and the claim's fallback paths
built for a core without atomic instructions."""

import shutil
import subprocess

import pytest
from conftest import SAMPLES

from ireegen.cbuild.native_run import STRICT_CFLAGS
from ireegen.config.modes import make_config
from ireegen.emit import emit

ROUNDS = 2000

# Each claim path of NAME_create: C11 <stdatomic.h>, GCC's __atomic builtins
# (a compiler that defines __STDC_NO_ATOMICS__).
CLAIM_PATHS = {"stdatomic": (), "gcc-builtins": ("-D__STDC_NO_ATOMICS__=1",)}

RACE_MAIN = r"""
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include "mlp.h"

static pthread_barrier_t start;
static mlp_t* instances[2];
static iree_status_t statuses[2];

static void* race(void* arg) {
  const int i = (int)(intptr_t)arg;
  pthread_barrier_wait(&start);
  statuses[i] = mlp_create(iree_allocator_system(), &instances[i]);
  return NULL;
}

int main(void) {
  pthread_barrier_init(&start, NULL, 2);
  for (int round = 0; round < ROUNDS; ++round) {
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, race, (void*)(intptr_t)i);
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    const int winners = (instances[0] != NULL) + (instances[1] != NULL);
    const int loser = instances[0] != NULL ? 1 : 0;
    if (winners != 1 || iree_status_code(statuses[loser]) != IREE_STATUS_RESOURCE_EXHAUSTED) {
      printf("round %d: %d winners\n", round, winners);
      return 1;
    }
    mlp_destroy(instances[!loser]);
    instances[0] = instances[1] = NULL;
  }
  printf("%d rounds, one winner each\n", ROUNDS);
  return 0;
}
"""

ARENA_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include "mlp.h"

static _Alignas(MLP_ARENA_ALIGNMENT) uint8_t arena[MLP_ARENA_SIZE + MLP_ARENA_ALIGNMENT];

static void try_arena(const char* what, void* memory, size_t size) {
  mlp_t model;
  iree_status_t status = mlp_initialize(&model, memory, size);
  printf("%s|%d|%s\n", what, (int)iree_status_code(status), mlp_last_error(&model));
}

int main(void) {
  try_arena("null", NULL, MLP_ARENA_SIZE);
  try_arena("null-empty", NULL, 0);
  try_arena("short", arena, MLP_ARENA_SIZE_ALIGNED_IO - 1);
  try_arena("misaligned", arena + 1, MLP_ARENA_SIZE);
  try_arena("wraps", arena, SIZE_MAX);
  try_arena("right", arena, MLP_ARENA_SIZE);
  return 0;
}
"""


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    out = tmp_path_factory.mktemp("mlp") / "out"
    emit(SAMPLES / "mlp" / "mlp.mlir", out, make_config("runtimeless"), name="mlp")
    return out


def _build(out, main_text, program, *flags, cc="cc"):
    main = program.with_suffix(".c")
    main.write_text(main_text)
    cmd = [
        cc,
        *STRICT_CFLAGS,
        *flags,
        f"-I{out}",
        str(main),
        str(out / "mlp.c"),
        str(out / "mlp_constants.S"),
        str(out / "mlp_executables.o"),
        "-lm",
        "-o",
        str(program),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc


@pytest.mark.parametrize("path", sorted(CLAIM_PATHS))
def test_concurrent_create_has_exactly_one_winner_under_tsan(tmp_path, mlp, path):
    program = tmp_path / "race"
    flags = ("-g", "-pthread", "-fsanitize=thread", f"-DROUNDS={ROUNDS}", *CLAIM_PATHS[path])
    proc = _build(mlp, RACE_MAIN, program, *flags)
    if proc.returncode != 0 and "tsan" in proc.stderr and "cannot find" in proc.stderr:
        pytest.skip("the C compiler has no ThreadSanitizer runtime")
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run(
        [str(program)], capture_output=True, text=True, env={"TSAN_OPTIONS": "halt_on_error=1 exitcode=66"}
    )
    assert "ThreadSanitizer" not in run.stderr, run.stderr
    assert run.returncode == 0 and f"{ROUNDS} rounds, one winner each" in run.stdout, run.stdout + run.stderr


def test_initialize_refuses_null_short_misaligned_and_wrapping_arenas(tmp_path, mlp):
    program = tmp_path / "arenas"
    proc = _build(mlp, ARENA_MAIN, program, "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
    if proc.returncode != 0 and "sanitize" in proc.stderr and "cannot find" in proc.stderr:
        pytest.skip("the C compiler has no sanitizer runtimes")
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(program)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = {line.split("|")[0]: tuple(line.split("|")[1:]) for line in run.stdout.splitlines()}
    invalid, exhausted = "3", "8"  # IREE_STATUS_INVALID_ARGUMENT, IREE_STATUS_RESOURCE_EXHAUSTED
    assert got["null"] == (invalid, "arena is NULL")
    assert got["null-empty"] == (invalid, "arena is NULL")
    assert got["short"] == (exhausted, "arena smaller than MLP_ARENA_SIZE_ALIGNED_IO")
    assert got["misaligned"] == (invalid, "arena not aligned to MLP_ARENA_ALIGNMENT")
    assert got["wraps"] == (invalid, "arena_size runs past the end of memory")
    assert got["right"] == ("0", "")


@pytest.mark.parametrize("path", sorted(CLAIM_PATHS))
def test_claim_builds_for_a_core_without_atomic_instructions(tmp_path, path):
    """Cortex-M0+ (ARMv6-M) has no LDREX/STREX: each claim path still builds
    warning-free there."""
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        pytest.skip("arm-none-eabi-gcc is not installed")
    out = tmp_path / "out"
    emit(SAMPLES / "mlp" / "mlp.mlir", out, make_config("runtimeless", target_cpu="cortex-m0plus"), name="mlp")
    proc = subprocess.run(
        [cc, "-mcpu=cortex-m0plus", "-mthumb", *STRICT_CFLAGS, *CLAIM_PATHS[path], f"-I{out}", "-c"]
        + [str(out / "mlp.c"), "-o", str(tmp_path / "mlp.o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
