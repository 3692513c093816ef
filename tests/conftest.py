import importlib.util
import os
import subprocess
import sys
import tempfile
import zlib
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
def iree_runtime_dir():
    """An IREE runtime C SDK's lib/cmake/IREE for the VM modes' C tests,
    built once (tests/iree_runtime.py); skips the test without one, unless
    IREEGEN_REQUIRE_RUNTIME is set (CI), where that is a failure."""
    import iree_runtime

    found = iree_runtime.runtime_dir()
    if found is None:
        if os.environ.get("IREEGEN_REQUIRE_RUNTIME"):
            pytest.fail(iree_runtime.SKIP_REASON)
        pytest.skip(iree_runtime.SKIP_REASON)
    return found


@pytest.fixture(scope="session")
def iree_include_dir(request):
    """A directory with IREE's runtime headers (iree/base/api.h):
    IREEGEN_IREE_INCLUDE, else the sources of the session's runtime."""
    import iree_runtime

    named = os.environ.get("IREEGEN_IREE_INCLUDE")
    if named:
        return Path(named)
    found = iree_runtime.include_dir(Path(request.getfixturevalue("iree_runtime_dir")))
    if found is None:
        pytest.skip("IREERuntime_DIR's runtime has no source tree beside it: set IREEGEN_IREE_INCLUDE")
    return found


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


# Sweeps that CI runs on a fixed subset (`IREEGEN_SUITE=ci`, which .ci/run
# sets): a case runs when the CRC-32 of its id is a multiple of the
# stride, so the same cases run every time and on every worker.  A key is
# a test id's prefix: a function, or a function and its first parameters.
# Tests marked `full_suite` do not run in CI at all.  Any other value of
# IREEGEN_SUITE (`full`, the default) runs every case.
CI_SUBSET_STRIDES = {
    "tests/test_onnx_speed_rewrites.py::test_conv_rewrites_on_random_shapes_match_onnxruntime": 4,
    "tests/test_onnx_speed_rewrites.py::test_conv_transpose_as_matmul_on_random_shapes_matches_onnxruntime": 3,
    "tests/test_nhwc_layout.py::test_random_depthwise_separable_cnns_match_onnxruntime": 3,
    "tests/test_runtimeless.py::test_cross_build_runs_under_qemu": 4,
    "tests/test_runtimeless.py::test_corpus_model_matches_async_and_numpy": 2,
    "tests/test_firmware.py::test_corpus_model_runs_on_the_board": 4,
    "tests/test_parity.py::test_corpus_model_agrees_in_every_execution_model": 4,
    "tests/test_real_models.py::test_sklearn_model": 3,
    # mlp runs in every mode, loader and format; simple_mul on a third.
    "tests/test_runtime_c.py::test_sample_builds_and_runs_in_every_mode[simple_mul-": 3,
    "tests/test_iree_bugs.py::test_onnx_patterns_raw_iree_rejects_are_rewritten": 2,
    "tests/test_emit.py::test_outputs_and_manifest": 2,
    "tests/test_reproducible.py::test_same_bytes_from_other_checkout_and_outdir": 3,
    "tests/test_onnx_rnn_rewrites.py::test_rewritten_forms_agree_with_onnxruntime": 2,
    "tests/test_int8_kernels.py::test_qdq_residual_block_equals_onnxruntime": 2,
    "tests/test_int8_kernels.py::test_qdq_model_on_cortex_m_equals_onnxruntime": 2,
    "tests/test_outputs.py::test_killed_at_every_phase": 2,
    "tests/test_names.py::test_awkward_legal_names_build_warning_free_and_run_in_vm_modes": 2,
    "tests/test_clang_format.py::test_generated_c_is_clang_format_clean": 2,
    "tests/test_onnx_conv1d_rewrites.py::test_conv1d_as_matmul_agrees_with_onnxruntime": 2,
}
# The ONNX node tests of tests/onnx_conformance_status.json's `ci_subset`
# that CI runs: the same CRC-32 rule on the test's name.
CI_CONFORMANCE_STRIDE = 2


def ci_suite() -> bool:
    return os.environ.get("IREEGEN_SUITE", "full") == "ci"


def stride_subset(key: str, stride: int) -> bool:
    return zlib.crc32(key.encode()) % stride == 0


def _subset_key_matches(key: str, nodeid: str) -> bool:
    return nodeid.split("[", 1)[0] == key if "[" not in key else nodeid.startswith(key)


def in_ci_subset(nodeid: str) -> bool:
    strides = [s for key, s in CI_SUBSET_STRIDES.items() if _subset_key_matches(key, nodeid)]
    return not strides or stride_subset(nodeid, strides[0])


def in_ci_suite(item) -> bool:
    """A test CI runs: not marked `full_suite`, and in its sweep's subset."""
    return item.get_closest_marker("full_suite") is None and in_ci_subset(_subset_id(item))


def _shares_a_module_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(d.scope == "module" for defs in info.name2fixturedefs.values() for d in defs)


def pytest_itemcollected(item):
    # Under pytest-xdist's loadgroup, a module whose tests share a
    # module-scoped fixture (a model emitted once, the ONNX node-test run)
    # runs on one worker, so that the fixture is built once, not once per
    # worker.  A test's own xdist_group comes first.  Marked as each item
    # is collected: xdist reads the groups in its own
    # pytest_collection_modifyitems, which runs before this file's.
    if item.get_closest_marker("xdist_group") is None and _shares_a_module_fixture(item):
        item.ireegen_module_group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(item.ireegen_module_group))


def _subset_id(item) -> str:
    """The id the CI subsets hash: the item's id less the `@group` that
    xdist's loadgroup appends for a group pytest_itemcollected gave it."""
    suffix = "@" + getattr(item, "ireegen_module_group", "")
    return item.nodeid[: -len(suffix)] if suffix != "@" and item.nodeid.endswith(suffix) else item.nodeid


def pytest_collection_modifyitems(config, items):
    if not ci_suite():
        return
    dropped = [item for item in items if not in_ci_suite(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if in_ci_suite(item)]


def refused_in_one_line(proc, *needles) -> str:
    """The CLI run `proc` exited 2 with one line on stderr holding every
    needle; returns that line."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def tflite_refused_in_one_line(path, *needles) -> str:
    """The TFLite translation of `path` is refused with a UsageError (the
    CLI's exit status 2): one line, starting with the path, holding every
    needle; returns it."""
    from ireegen.common.errors import UsageError
    from ireegen.frontend.tflite_import import tflite_to_onnx

    with pytest.raises(UsageError) as refusal:
        tflite_to_onnx(path)
    message = str(refusal.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    for needle in needles:
        assert needle in message, message
    return message


def onnxruntime_output(model, x: np.ndarray) -> np.ndarray:
    """ONNX Runtime's (CPU) first output of the in-memory `model` on its
    one input, `x`."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def bare_iree_output(tmp_path: Path, model, x: np.ndarray) -> np.ndarray:
    """IREE's own output of the in-memory `model` on its one input, `x`:
    iree-import-onnx and iree-compile at IREE's defaults (none of ireegen's
    rewrites or flags), run on local-sync; the function is the graph's name."""
    import iree.runtime as rt
    import onnx

    from ireegen.compile.compiler import find_compiler

    stem = tmp_path / model.graph.name
    onnx.save(model, f"{stem}.onnx")
    import_onnx = [sys.executable, "-m", "iree.compiler.tools.import_onnx", f"{stem}.onnx", "-o", f"{stem}.mlir"]
    subprocess.run(import_onnx, check=True, capture_output=True)
    backend = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu"]
    subprocess.run(
        [find_compiler().path, f"{stem}.mlir", *backend, "-o", f"{stem}.vmfb"], check=True, capture_output=True
    )
    context = rt.SystemContext(config=rt.Config("local-sync"))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, Path(f"{stem}.vmfb").read_bytes()))
    return np.asarray(getattr(context.modules.module, model.graph.name)(x))


def pack_fc_weights(w: np.ndarray) -> np.ndarray:
    """An (N, K) int8 weight as the int8 match spec packs it for the fully
    connected kernels (ireegen_int8.h): K padded with zeros to K4, whole
    groups of four rows as (K4/4, 4, 4), the last N % 4 rows as they are."""
    n, k = w.shape
    k4, n4 = -(-k // 4) * 4, n // 4 * 4
    padded = np.zeros((n, k4), np.int8)
    padded[:, :k] = w
    groups = padded[:n4].reshape(n4 // 4, 4, k4 // 4, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(np.concatenate([groups.ravel(), padded[n4:].ravel()]))
