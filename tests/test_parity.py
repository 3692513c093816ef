"""The parity harness on the corpus (tests/models/), its exit codes, its
report, and the IREE bug its workaround exists for."""

import importlib.util
import json
import sys

import numpy as np
import pytest
from conftest import ROOT, SAMPLES, run_cli, run_user_pytest

from ireegen.parity import assert_parity, parity


def _load_corpus():
    path = ROOT / "tests" / "models" / "corpus.py"
    spec = importlib.util.spec_from_file_location("corpus", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus"] = module
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
MLP = SAMPLES / "mlp" / "mlp.mlir"


def test_committed_models_are_what_the_corpus_writes(tmp_path):
    written = corpus.write_models(tmp_path)
    assert written
    for path in written:
        assert (ROOT / "tests" / "models" / path.name).read_text() == path.read_text(), path.name


@pytest.mark.parametrize("name", sorted(corpus.CASES))
def test_corpus_model_agrees_in_every_execution_model(name):
    case = corpus.CASES[name]
    first_calls = {}
    for call in case.calls:
        first_calls.setdefault(call.function, call)
    report = parity(case.path, inputs={f: c.inputs for f, c in first_calls.items()}, rtol=case.rtol, atol=case.atol)
    assert report.exit_code == 0, report.table()
    assert set(report.results) == {"async", "inline-static", "inline-dynamic"}
    # async itself computes the numpy reference, so agreement means right numbers.
    for f, call in first_calls.items():
        got = report.results["async"][f]
        assert len(got) == len(call.expected)
        for actual, expected in zip(got, call.expected):
            corpus.compare(actual, expected, case.rtol, case.atol)


def test_raw_compiler_still_loses_inline_constants():
    """IREE 3.11-3.13 drop non-splat constants in inline modules.  When this
    test fails, IREE has fixed it: drop ireegen.compile.workarounds' inline fix for
    the fixed versions and update docs/known-iree-issues.md."""
    report = parity(MLP, apply_workarounds=False)
    inline = [r for r in report.rows if r.mode != "async"]
    assert inline and all(r.verdict == "run-error" for r in inline), report.table()
    messages = " ".join(r.message for r in inline)
    assert "source_buffer is null" in messages  # inline-static
    assert "ref is null" in messages  # inline-dynamic
    assert report.exit_code == 1


def test_cli_divergence_exit_status_table_and_json(tmp_path):
    out = tmp_path / "report.json"
    proc = run_cli("parity", MLP, "--no-workarounds", "--json", out)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert any(
        line.split() == ["predict", "output0", "inline-static", "async", "-", "-", "-", "run-error"] for line in lines
    ), proc.stdout
    report = json.loads(out.read_text())
    assert report["exit_code"] == 1
    verdicts = {r["mode"]: r["verdict"] for r in report["rows"]}
    assert verdicts == {"async": "reference", "inline-static": "run-error", "inline-dynamic": "run-error"}


def test_cli_agreement_exit_status(tmp_path):
    proc = run_cli("parity", MLP, "--execution-models", "inline-static", "--seed", "7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "inline-static" in proc.stdout and "inline-dynamic" not in proc.stdout


def test_cli_compile_error_is_per_mode_and_other_modes_still_run(tmp_path):
    # vmvx-inline cannot compile f16 arithmetic: inline-static fails to compile,
    # async and inline-dynamic run and agree.
    model = tmp_path / "half.mlir"
    model.write_text(
        "func.func @half(%a: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<8xf16> {\n"
        "  %0 = arith.addf %a, %b : tensor<8xf16>\n  return %0 : tensor<8xf16>\n}\n"
    )
    out = tmp_path / "r.json"
    proc = run_cli("parity", model, "--json", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert list(report["compile_errors"]) == ["inline-static"]
    assert "half.mlir" in report["compile_errors"]["inline-static"]
    assert {r["mode"]: r["verdict"] for r in report["rows"]} == {"async": "reference", "inline-dynamic": "ok"}


def test_inputs_from_npz(tmp_path):
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    np.savez(tmp_path / "in.npz", input0=x)
    report = parity(MLP, modes=["async"], inputs_file=tmp_path / "in.npz")
    mlp = importlib.util.spec_from_file_location("make_mlp", SAMPLES / "mlp" / "make_mlp.py")
    module = importlib.util.module_from_spec(mlp)
    mlp.loader.exec_module(module)
    np.testing.assert_allclose(report.results["async"]["predict"][0], module.reference(x), rtol=1e-5, atol=1e-5)


def test_bad_usage(tmp_path):
    proc = run_cli("parity", MLP, "--execution-models", "async,eager")
    assert proc.returncode == 2 and "eager" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("parity", MLP, "--function", "nope")
    assert proc.returncode == 2 and "no exported function @nope" in proc.stderr


def test_assert_parity_api_and_pytest_fixture(ireegen_parity):
    assert ireegen_parity(MLP).agrees
    with pytest.raises(AssertionError) as e:
        assert_parity(MLP, apply_workarounds=False)
    assert "inline-static" in str(e.value) and "run-error" in str(e.value)


def test_pytest_plugin_fails_a_user_test_with_the_report(tmp_path):
    test = tmp_path / "test_user.py"
    test.write_text(f"def test_model(ireegen_parity):\n    ireegen_parity({str(MLP)!r}, apply_workarounds=False)\n")
    proc = run_user_pytest(tmp_path, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "execution models disagree" in proc.stdout and "source_buffer is null" in proc.stdout
