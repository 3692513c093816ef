import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

# The plugin's fixture for ireegen's own tests (a user's conftest.py says
# `pytest_plugins = ["ireegen.pytest_plugin"]`; imported, it also works
# beside an older install that still autoloads the plugin).
from ireegen.pytest_plugin import ireegen_parity  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"

# emit's default --tune (quick) times candidate configurations of models
# with convolutions; the suite's other tests check everything else, at
# today's speed.  tests/test_tuning.py sets the level it tests.
os.environ.setdefault("IREEGEN_TUNE", "off")
# ireegen's record of the files it wrote (output/ownership.py) lives outside
# OUTDIR; the suite keeps its own, so no test reads or fills the user's.
os.environ.setdefault("IREEGEN_STATE_DIR", tempfile.mkdtemp(prefix="ireegen-state-"))


def load_sample_module(relpath: str):
    """Imports a sample's Python helper (e.g. samples/mlp/make_mlp.py)."""
    path = SAMPLES / relpath
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_user_pytest(tests: Path, cwd: Path) -> subprocess.CompletedProcess:
    """pytest in a user's project whose conftest.py registers ireegen's plugin
    as the docs say.  (`-p no:ireegen` keeps an older install's `pytest11`
    entry point from registering it a second time.)"""
    (tests / "conftest.py").write_text('pytest_plugins = ["ireegen.pytest_plugin"]\n')
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:ireegen", str(tests)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
    )


def run_cli(*args, cwd=None):
    """Runs `python -m ireegen ...` as a user would; returns CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "ireegen", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def configure_with_ireegen(src: Path, build: Path, *options) -> subprocess.CompletedProcess:
    """`cmake -S src -B build` with this ireegen's package and Python found,
    plus `options` (-G, -D...); stderr in stdout."""
    cmake_dir = run_cli("--cmake-dir").stdout.strip()
    return subprocess.run(
        [
            "cmake",
            *map(str, options),
            "-S",
            src,
            "-B",
            build,
            f"-Direegen_DIR={cmake_dir}",
            f"-DIREEGEN_PYTHON_EXECUTABLE={sys.executable}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def build_generate_only(src: Path, build: Path, model_line: str) -> subprocess.CompletedProcess:
    """Writes a CMake project in `src` whose one line is `model_line` (an
    ireegen_add_model call), configures it into `build` and builds it; returns
    the failed configure, else the build (both with stderr in stdout)."""
    (src / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.21)\nproject(t NONE)\nfind_package(ireegen CONFIG REQUIRED)\n{model_line}\n"
    )
    configure = configure_with_ireegen(src, build)
    if configure.returncode != 0:
        return configure
    return subprocess.run(["cmake", "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="session")
def samples():
    return SAMPLES


def sample_cases():
    """(model path, function, inputs, numpy reference outputs) per sample."""
    mlp = load_sample_module("mlp/make_mlp.py")
    x = (np.arange(16, dtype=np.float32).reshape(2, 8) * 0.25 - 2).astype(np.float32)
    a = np.array([1.5, -2.0, 3.25, 4.0], np.float32)
    b = np.array([2.0, 0.5, -1.0, 8.0], np.float32)
    return {
        "simple_mul": (SAMPLES / "simple_mul" / "simple_mul.mlir", "simple_mul", [a, b], [a * b]),
        "mlp": (SAMPLES / "mlp" / "mlp.mlir", "predict", [x], [mlp.reference(x).astype(np.float32)]),
    }
