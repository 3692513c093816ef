"""The shipped toolchain files (cmake/toolchains/) cross-build the MLP sample
as runtimeless C, and the programs give the host's numbers under qemu-user."""

import shutil
import subprocess

import numpy as np
import pytest
from conftest import SAMPLES, configure_with_ireegen, sample_cases

from ireegen.common.resources import cmake_dir

CMAKE = shutil.which("cmake")


@pytest.mark.parametrize("arch", ["aarch64", "riscv64"])
def test_shipped_toolchain_file_cross_builds_and_runs(tmp_path, arch):
    if not (CMAKE and shutil.which(f"{arch}-linux-gnu-gcc") and shutil.which(f"qemu-{arch}")):
        pytest.skip(f"needs cmake, {arch}-linux-gnu-gcc and qemu-{arch}")
    toolchain = cmake_dir() / "toolchains" / f"{arch}-linux-gnu.cmake"
    build = tmp_path / "build"
    configure = configure_with_ireegen(
        SAMPLES / "mlp",
        build,
        f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
        "-DEXECUTION_MODEL=runtimeless",
        "-DCMAKE_BUILD_TYPE=Release",
    )
    assert configure.returncode == 0, configure.stdout
    proc = subprocess.run([CMAKE, "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    manifest = (build / "ireegen" / "mlp" / "manifest.json").read_text()
    assert f'"triple": "{arch}-unknown-linux-gnu"' in manifest
    emulator = [f"qemu-{arch}", "-L", f"/usr/{arch}-linux-gnu"]
    out = subprocess.run([*emulator, build / "mlp_demo"], stdout=subprocess.PIPE, text=True, check=True).stdout
    expected = sample_cases()["mlp"][3][0]
    np.testing.assert_allclose(np.array(out.split(), np.float32), expected.ravel(), rtol=1e-4, atol=1e-5)
