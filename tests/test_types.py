"""The C type in the API is the type the compiled module takes: f64 stays
f64 (IREE would demote it to f32), f16/bf16 are uint16_t bit patterns with a
note, i1 is uint8_t; complex is refused by name; `ireegen run` takes bf16."""

import shutil

import numpy as np
import pytest

from ireegen.check.runners import run_with_tool
from ireegen.cli import main

F64 = (
    "func.func @f(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {\n"
    "  %0 = arith.addf %a, %b : tensor<4xf64>\n  return %0 : tensor<4xf64>\n}\n"
)
BF16 = (
    "func.func @f(%a: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<4xbf16> {\n"
    "  %0 = arith.mulf %a, %b : tensor<4xbf16>\n  return %0 : tensor<4xbf16>\n}\n"
)


@pytest.mark.parametrize("em,fmt", [("async", "embedded-elf"), ("inline-static", "vmvx")])
def test_f64_is_computed_in_double(tmp_path, capsys, em, fmt):
    model = tmp_path / "d.mlir"
    model.write_text(F64)
    out = tmp_path / "out"
    assert main(["emit", str(model), "-o", str(out), "--execution-model", em, "--executable-format", fmt]) == 0
    assert "double*" in (out / "d.h").read_text() or "double" in (out / "d.c").read_text()
    a = np.array([1.0, 2.0, 1e-12, 3.0])
    b = np.array([1e-12, 0.5, 1.0, -3.0])
    got = run_with_tool(out / "d.vmfb", "f", [a, b], 1)[0]
    assert got.dtype == np.float64 and np.array_equal(got, a + b)  # f32 would lose the 1e-12


def test_demoting_f64_is_refused_as_a_flag(tmp_path, capsys):
    model = tmp_path / "d.mlir"
    model.write_text(F64)
    status = main(["emit", str(model), "-o", str(tmp_path / "o"), "--iree-flag=--iree-input-demote-f64-to-f32=true"])
    assert status == 2 and "f64 stays f64" in capsys.readouterr().err


def test_header_notes_bit_pattern_types(tmp_path, capsys):
    model = tmp_path / "t.mlir"
    model.write_text(
        "func.func @f(%a: tensor<4xbf16>, %b: tensor<4xf16>, %c: tensor<2xi1>) -> tensor<4xbf16> {\n"
        "  return %a : tensor<4xbf16>\n}\n"
    )
    assert main(["emit", str(model), "-o", str(tmp_path / "o")]) == 0
    header = (tmp_path / "o" / "t.h").read_text()
    assert "tensor<4xbf16> (uint16_t holds bfloat16 bit patterns" in header
    assert "tensor<4xf16> (uint16_t holds IEEE 754 binary16 bit patterns)" in header
    assert "tensor<2xi1> (uint8_t, 0 or 1)" in header


def test_complex_is_named_in_the_error(tmp_path, capsys):
    model = tmp_path / "c.mlir"
    model.write_text(
        "func.func @f(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
        "  return %a : tensor<4xcomplex<f32>>\n}\n"
    )
    assert main(["emit", str(model), "-o", str(tmp_path / "o")]) == 2
    assert "element type complex<f32>, which ireegen does not support" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_run_takes_bf16(tmp_path, capsys):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    model = tmp_path / "bf.mlir"
    model.write_text(BF16)
    out = tmp_path / "out"
    assert main(["emit", str(model), "-o", str(out), "--execution-model", "runtimeless"]) == 0
    a = np.array([1.5, 2, 3, -4], ml_dtypes.bfloat16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", np.full(4, 2, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16))  # bits
    status = main(
        [
            "run",
            str(out),
            "--function",
            "f",
            "--input",
            f"@{tmp_path / 'a.npy'}",
            "--input",
            f"@{tmp_path / 'b.npy'}",
            "--output",
            f"@{tmp_path / 'y.npy'}",
        ]
    )
    assert status == 0, capsys.readouterr().err
    y = np.load(tmp_path / "y.npy").view(ml_dtypes.bfloat16)
    assert y.astype(np.float32).tolist() == [3.0, 4.0, 6.0, -8.0]


def test_parity_generates_and_compares_bf16(tmp_path):
    pytest.importorskip("ml_dtypes")
    from ireegen.parity import parity

    model = tmp_path / "bf.mlir"
    model.write_text(BF16)
    report = parity(model, modes=["async", "inline-dynamic", "runtimeless"])
    assert not report.compile_errors, report.table()
    assert [r.verdict for r in report.rows] == ["reference", "ok", "ok"], report.table()
