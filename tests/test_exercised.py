"""Verification says "verified" only when it proved something: a function
whose outputs never moved across the inputs tried is "not exercised" (a
warning; an error with --verify-strict / CMake VERIFY STRICT), and the input
search tries small non-negative integers and each input alone before giving
up.  Real compiles and runs; the input search also with plain numpy models."""

import json
import shutil

import numpy as np
import pytest
from conftest import build_generate_only, run_cli

from ireegen.check.inputs import choose_inputs
from ireegen.frontend.signature import Function, Value

# Zero for every input: nothing the emitted code computes is checked.
ZEROS = """func.func @zeros(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %r = arith.mulf %x, %z : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_lengths_that_must_be_small_non_negative_integers_are_found():
    """Like an LSTM's sequence lengths: a float input whose values must be
    whole and in 1..5, or the output is all zero."""
    fn = Function(
        "seq",
        (Value("lengths", "float32", (1, 5)), Value("x", "float32", (1, 5, 2))),
        (Value("y", "float32", (1, 5, 2)),),
    )

    def reference(inputs):
        lengths, x = inputs
        valid = (lengths == np.floor(lengths)) & (lengths >= 1) & (lengths <= 5)
        return [np.where(valid[..., None], np.tanh(x + lengths[..., None]), 0).astype(np.float32)]

    choice = choose_inputs(fn, 0, reference)
    assert not choice.degenerate, choice
    assert "counts(0..5)" in choice.distribution
    assert np.asarray(reference(choice.inputs)[0]).any()


def test_each_input_varied_alone():
    """No one distribution suits both inputs (a must be in [0.5, 2], b must
    have a negative value): redrawing one input alone finds it."""
    fn = Function("f", (Value("a", "float32", (4,)), Value("b", "float32", (4,))), (Value("y", "float32", (4,)),))

    def reference(inputs):
        a, b = inputs
        ok = np.all((a >= 0.5) & (a <= 2)) and np.any(b < 0)
        return [b if ok else np.zeros(4, np.float32)]

    choice = choose_inputs(fn, 0, reference)
    assert not choice.degenerate, choice
    assert choice.distribution == "normal, a from uniform(0.5,2)"
    assert choice.tried[-1] == "normal"


def test_emit_says_not_exercised_and_strict_refuses(tmp_path):
    model = tmp_path / "zeros.mlir"
    model.write_text(ZEROS)
    proc = run_cli("emit", model, "-o", tmp_path / "out", "--execution-model", "inline-static")
    assert proc.returncode == 0, proc.stderr
    assert "verified" not in proc.stdout
    assert "(not exercised: @zeros output0 all zero for every input tried)" in proc.stdout
    assert "ireegen: warning: " in proc.stderr and "@zeros was not exercised by verification" in proc.stderr
    assert "--verify-inputs" in proc.stderr and "--verify-strict" in proc.stderr
    section = json.loads((tmp_path / "out" / "manifest.json").read_text())["verification"]
    assert section["verified"] is False and section["reason"] == "not exercised"
    assert section["not_exercised"] == {"zeros": "output0 all zero for every input tried"}

    strict = run_cli("emit", model, "-o", tmp_path / "strict", "--execution-model", "inline-static", "--verify-strict")
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
    assert "verification proved nothing about @zeros: output0 all zero" in strict.stderr
    assert not (tmp_path / "strict").exists()

    both = run_cli("emit", model, "-o", tmp_path / "both", "--verify-strict", "--no-verify")
    assert both.returncode == 2 and "--verify-strict" in both.stderr


def test_emit_on_a_model_that_moves_still_says_verified(tmp_path, samples):
    mlp = samples / "mlp" / "mlp.mlir"
    proc = run_cli("emit", mlp, "-o", tmp_path / "out", "--execution-model", "inline-static", "--verify-strict")
    assert proc.returncode == 0, proc.stderr
    assert "verified against async" in proc.stdout and "warning" not in proc.stderr


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("cmake"), reason="cmake not installed")
def test_cmake_warns_and_verify_strict_fails(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "zeros.mlir").write_text(ZEROS)

    def build(verify):
        line = f"ireegen_add_model(zeros SRC zeros.mlir EXECUTION_MODEL inline-static GENERATE_ONLY {verify})"
        return build_generate_only(src, tmp_path / "build", line)

    warned = build("")
    assert warned.returncode == 0, warned.stdout
    assert "ireegen: warning: " in warned.stdout and "was not exercised" in warned.stdout
    strict = build("VERIFY STRICT")
    assert strict.returncode != 0 and "verification proved nothing about @zeros" in strict.stdout


def test_a_loop_between_zero_lengths_is_found():
    """Like IREE's unidirectional_lstm e2e model: the loop runs from after the
    first zero length to the last one, so only length vectors with a zero
    after a non-zero value make the output move."""
    fn = Function("lstm", (Value("lengths", "float32", (1, 5)),), (Value("y", "float32", (5, 2)),))

    def reference(inputs):
        lengths = inputs[0].ravel()
        y = np.zeros((5, 2), np.float32)
        zeros = [i for i, v in enumerate(lengths) if v == 0]
        for i in range(zeros[0] + 1 if zeros else 0, zeros[-1] if zeros else 0):
            y[i] = lengths[i] + np.arange(2)
        return [y]

    choice = choose_inputs(fn, 0, reference)
    assert not choice.degenerate and choice.distribution == "counts(0..5)", choice
