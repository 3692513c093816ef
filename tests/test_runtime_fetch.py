"""The VM modes with zero set-up: a CMake project outside the checkout, with
no IREE runtime SDK, builds IREE's runtime with FetchContent from the
runtime source archive (as a user of a mirror sets it: a URL and its
sha256) once for two models, async and inline-static, and both programs
print the MLP's numbers.  Builds the runtime from scratch (minutes): runs
where the archive is (CI, tests/iree_runtime.py), skips elsewhere."""

import os
import shutil
import subprocess
import sys

import iree_runtime
import numpy as np
import pytest
from conftest import SAMPLES, run_cli, sample_cases

from ireegen.output.ownership import sha256_of

ARCHIVE = iree_runtime.source_archive()
pytestmark = [
    pytest.mark.runtime,
    pytest.mark.slow,
    pytest.mark.skipif(ARCHIVE is None, reason=iree_runtime.SKIP_REASON),
    pytest.mark.skipif(not shutil.which("ninja"), reason="needs ninja"),
]

PROJECT = """cmake_minimum_required(VERSION 3.21)
project(zero_setup C)
find_package(ireegen CONFIG REQUIRED)
ireegen_add_model(mlp_async SRC mlp.mlir NAME mlp)
ireegen_add_model(mlp_inline SRC mlp.mlir NAME mlp EXECUTION_MODEL inline-static)
foreach(mode async inline)
  add_executable(demo_${mode} main.c)
  target_link_libraries(demo_${mode} PRIVATE mlp_${mode})
  target_compile_options(demo_${mode} PRIVATE -Wall -Wextra -Werror)
  target_compile_options(mlp_${mode} PRIVATE -Wall -Wextra -Werror)
endforeach()
"""


def test_async_and_inline_static_build_with_the_runtime_fetched_from_a_mirror(tmp_path):
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    shutil.copy(SAMPLES / "mlp" / "mlp.mlir", src)
    shutil.copy(SAMPLES / "mlp" / "main.c", src)
    (src / "CMakeLists.txt").write_text(PROJECT)
    env = {k: v for k, v in os.environ.items() if k != "IREERuntime_DIR"}
    configure = subprocess.run(
        [
            "cmake",
            "-G",
            "Ninja",
            "-S",
            src,
            "-B",
            build,
            f"-Direegen_DIR={run_cli('--cmake-dir').stdout.strip()}",
            f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
            f"-DIREEGEN_IREE_SOURCE_URL={ARCHIVE.resolve().as_uri()}",
            f"-DIREEGEN_IREE_SOURCE_SHA256={sha256_of(ARCHIVE)}",
            "-DIREEGEN_IREE_NO_DOWNLOAD=ON",
            "-DCMAKE_BUILD_TYPE=Release",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert configure.returncode == 0, configure.stdout
    # One runtime for the two models.
    assert configure.stdout.count("building IREE's runtime in this build tree") == 1, configure.stdout
    built = subprocess.run(["cmake", "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert built.returncode == 0, built.stdout[-4000:]
    # Only what the models link: no VMVX loader, no IREE tools.
    assert not list(build.glob("_deps/iree-build/**/libiree_hal_local_loaders_vmvx_module_loader.a"))
    assert not list(build.glob("_deps/iree-build/tools/iree-run-module"))
    _, _, _, (want,) = sample_cases()["mlp"]
    printed = {}
    for mode in ("async", "inline"):
        run = subprocess.run([build / f"demo_{mode}"], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        printed[mode] = np.array([float(v) for v in run.stdout.split()], np.float32)
        np.testing.assert_allclose(printed[mode], np.ravel(want), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(printed["inline"], printed["async"], rtol=1e-6, atol=1e-6)
