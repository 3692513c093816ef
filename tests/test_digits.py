"""The digits sample (samples/digits): a classifier trained with scikit-learn,
exported to ONNX, built into a C program with CMake.  Its accuracy in C
(runtimeless) and through the Python runtime (async) equals scikit-learn's
and ONNX Runtime's on the held-out split, image for image; and the committed
model is what the training script makes."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import SAMPLES, configure_with_ireegen, load_sample_module

pytest.importorskip("sklearn")
pytest.importorskip("onnx")

DIGITS = SAMPLES / "digits"
CMAKE = shutil.which("cmake")


@pytest.fixture(scope="module")
def accuracy():
    sys.path.insert(0, str(DIGITS))
    return load_sample_module("digits/accuracy.py")


@pytest.fixture(scope="module")
def sklearn_predictions(accuracy):
    return accuracy.sklearn_predictions()


def test_training_reproduces_the_committed_model(tmp_path):
    import onnx
    from onnx import numpy_helper

    make = load_sample_module("digits/make_digits.py")
    figures = make.write_all(tmp_path)
    assert figures["heldout"] == 450 and figures["sklearn_correct"] >= 430
    assert (tmp_path / "heldout.h").read_text() == (DIGITS / "heldout.h").read_text()
    fresh, committed = onnx.load(tmp_path / "digits.onnx"), onnx.load(DIGITS / "digits.onnx")
    assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in committed.graph.node]
    for a, b in zip(fresh.graph.initializer, committed.graph.initializer):
        assert a.name == b.name
        # Training is seeded; a different BLAS may move the last float32 bit.
        np.testing.assert_allclose(numpy_helper.to_array(a), numpy_helper.to_array(b), rtol=1e-5, atol=1e-6)
    # digits.mlir is exactly what IREE's importer makes of the committed digits.onnx.
    sys.path.insert(0, str(SAMPLES.parent / "tests"))
    from onnx_lowering import lower_onnx

    lower_onnx(DIGITS / "digits.onnx", tmp_path / "again.mlir")
    assert (tmp_path / "again.mlir").read_text() == (DIGITS / "digits.mlir").read_text()


def test_onnxruntime_agrees_with_sklearn(accuracy, sklearn_predictions):
    pytest.importorskip("onnxruntime")
    np.testing.assert_array_equal(accuracy.onnxruntime_predictions(), sklearn_predictions)


def test_async_through_the_python_runtime_agrees_with_sklearn(accuracy, sklearn_predictions):
    np.testing.assert_array_equal(accuracy.mode_predictions("async"), sklearn_predictions)


@pytest.mark.skipif(not CMAKE, reason="no cmake")
def test_c_program_runtimeless_prints_sklearns_accuracy(tmp_path, accuracy, sklearn_predictions):
    build = tmp_path / "build"
    configure = configure_with_ireegen(DIGITS, build, "-DEXECUTION_MODEL=runtimeless", "-DCMAKE_BUILD_TYPE=Release")
    assert configure.returncode == 0, configure.stdout
    proc = subprocess.run([CMAKE, "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    out = subprocess.run([build / "digits_demo"], stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()
    _, labels = accuracy.heldout()
    predicted = np.array([int(v) for v in out[1:]])
    np.testing.assert_array_equal(predicted, sklearn_predictions)
    right = int((sklearn_predictions == labels).sum())
    assert out[0] == f"accuracy {right / len(labels):.4f} ({right}/{len(labels)})"


@pytest.mark.runtime
@pytest.mark.skipif(not CMAKE, reason="no cmake")
@pytest.mark.parametrize("execution_model", ["async", "inline-static", "inline-dynamic"])
def test_c_program_in_vm_modes_prints_sklearns_accuracy(
    tmp_path, iree_runtime_dir, accuracy, sklearn_predictions, execution_model
):
    from test_runtime_c import KNOWN_RUNTIME_BUG_REASON, hits_known_runtime_bug

    build = tmp_path / "build"
    configure = configure_with_ireegen(
        DIGITS,
        build,
        "-G",
        "Ninja",
        f"-DEXECUTION_MODEL={execution_model}",
        f"-DIREERuntime_DIR={iree_runtime_dir}",
        "-DCMAKE_BUILD_TYPE=Release",
    )
    assert configure.returncode == 0, configure.stdout
    proc = subprocess.run([CMAKE, "--build", build], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout
    run = subprocess.run([build / "digits_demo"], capture_output=True, text=True, timeout=120)
    if hits_known_runtime_bug(execution_model, run):
        pytest.xfail(KNOWN_RUNTIME_BUG_REASON)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    _, labels = accuracy.heldout()
    np.testing.assert_array_equal(np.array([int(v) for v in out[1:]]), sklearn_predictions)
    right = int((sklearn_predictions == labels).sum())
    assert out[0] == f"accuracy {right / len(labels):.4f} ({right}/{len(labels)})"
