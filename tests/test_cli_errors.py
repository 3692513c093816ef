"""Bad input gets a clear one-line reason, the right exit status, no
traceback and no output directory."""

import pytest
from conftest import SAMPLES, run_cli

SIMPLE = SAMPLES / "simple_mul" / "simple_mul.mlir"


def _assert_clean_error(proc, status, *words):
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr
    for w in words:
        assert w in proc.stderr, proc.stderr


def test_missing_model(tmp_path):
    proc = run_cli("emit", tmp_path / "nope.mlir", "-o", tmp_path / "out")
    _assert_clean_error(proc, 2, "nope.mlir: no such model file")
    assert not (tmp_path / "out").exists()


def test_unsupported_model_format(tmp_path):
    model = tmp_path / "model.pb"
    model.write_bytes(b"\x08\x01")
    proc = run_cli("emit", model, "-o", tmp_path / "out")
    _assert_clean_error(proc, 2, "model.pb: unsupported model format .pb", ".mlir, .mlirbc, .onnx, .tflite")


def test_a_tflite_file_that_is_not_one(tmp_path):
    model = tmp_path / "model.tflite"
    model.write_bytes(b"\x08\x01")
    proc = run_cli("emit", model, "-o", tmp_path / "out")
    _assert_clean_error(proc, 2, "model.tflite: not a TFLite model (no TFL3 file identifier)")
    assert not (tmp_path / "out").exists()


def test_malformed_mlir_names_file_and_line(tmp_path):
    model = tmp_path / "bad.mlir"
    model.write_text(SIMPLE.read_text().replace("%arg0, %arg1 :", "%arg0, %undefined :"))
    proc = run_cli("emit", model, "-o", tmp_path / "out")
    _assert_clean_error(proc, 2, "bad.mlir: malformed MLIR", "bad.mlir:2:", "undeclared SSA value")
    assert not (tmp_path / "out").exists()


def test_compiler_failure_shows_compiler_diagnostics(tmp_path):
    # Parses fine, but iree-compile cannot lower it: an unknown custom call.
    model = tmp_path / "unlowerable.mlir"
    model.write_text(
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        '  %0 = "mystery.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n'
        "  return %0 : tensor<4xf32>\n}\n"
    )
    proc = run_cli("emit", model, "-o", tmp_path / "out")
    assert proc.returncode == 2 or proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "unlowerable.mlir:2" in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["9lives", "has-dash", "int", "iree_model", "a__b", ""])
def test_bad_name(tmp_path, name):
    proc = run_cli("emit", SIMPLE, "-o", tmp_path / "out", "--name", name)
    _assert_clean_error(proc, 2, "--name")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args,words",
    [
        (
            ["--execution-model", "inline-static", "--executable-format", "static-library"],
            ["--execution-model inline-static cannot use --executable-format static-library", "vmvx"],
        ),
        (["--execution-model", "eager"], ["--execution-model 'eager'", "async, inline-static, inline-dynamic"]),
        (["--module-format", "so"], ["--module-format 'so'", "vmfb, emitc"]),
        (["--iree-flag=--iree-execution-model=inline-static"], ["use --execution-model"]),
        (["--iree-flag=nodash"], ["compiler flags start with --"]),
    ],
)
def test_impossible_combination_is_refused_before_compiling(tmp_path, args, words):
    proc = run_cli("emit", SIMPLE, "-o", tmp_path / "out", *args)
    _assert_clean_error(proc, 2, *words)
    assert not (tmp_path / "out").exists()


def test_function_names_that_clash_are_refused(tmp_path):
    model = tmp_path / "clash.mlir"
    body = "(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
    model.write_text(f"func.func @create{body}")
    proc = run_cli("emit", model, "-o", tmp_path / "out")
    _assert_clean_error(proc, 2, "@create", "clash_create", "clashes with the model API")


def test_output_path_is_a_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    proc = run_cli("emit", SIMPLE, "-o", target)
    _assert_clean_error(proc, 2, "exists and is not a directory")


def test_info_on_a_directory_without_manifest(tmp_path):
    proc = run_cli("info", tmp_path)
    _assert_clean_error(proc, 2, "without manifest.json")
