"""The issue's list of user errors: each a one-line message naming the flag
or file, exit status 2, no traceback, checked before compiling."""

import json

import pytest
from conftest import SAMPLES

from ireegen.cli import main

SIMPLE = SAMPLES / "simple_mul" / "simple_mul.mlir"


def run(capsys, *argv):
    try:
        status = main([str(a) for a in argv])
    except SystemExit as e:
        status = e.code
    err = capsys.readouterr().err
    return status, err


@pytest.mark.parametrize(
    "flags,words",
    [
        (["--target-triple", "aarch64"], ["--target-triple aarch64: not an LLVM triple", "aarch64-unknown-linux-gnu"]),
        (["--target-triple", "mips-unknown-linux-gnu"], ["iree-compile's LLVM has no target for mips"]),
        (["--target-cpu", "skylak"], ["--target-cpu skylak: not a CPU of", "similar: skylake"]),
        (["--iree-flag", "--output-format=vm-c"], ["ireegen sets --output-format itself; use --module-format"]),
        (["--name", "n" * 300], ["300 characters; at most 64"]),
    ],
)
def test_bad_flags(tmp_path, capsys, flags, words):
    status, err = run(capsys, "emit", SIMPLE, "-o", tmp_path / "out", *flags)
    assert status == 2 and err.count("\n") == 1 and all(w in err for w in words), err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "flags,similar,foreign",
    [
        # A Cortex-M name on the host triple: ireegen's bare-metal cores, not x86's core2.
        (["--target-cpu", "cortex-m99"], "a bare-metal core? ireegen knows cortex-m0, cortex-m0plus,", "core2"),
        (["--target-cpu", "znver9"], "similar: znver1, znver2", "cortex"),
        (
            ["--target-triple", "aarch64-unknown-linux-gnu", "--target-cpu", "cortex-a99"],
            "similar: cortex-a",
            "cortex-m",
        ),
        # A family the triple lacks: no look-alike of another family.
        (["--target-cpu", "cortex-r99"], "it knows", "similar"),
    ],
)
def test_cpu_typo_is_answered_from_its_own_family(tmp_path, capsys, flags, similar, foreign):
    status, err = run(capsys, "emit", SIMPLE, "-o", tmp_path / "out", *flags)
    assert status == 2 and err.count("\n") == 1 and similar in err and foreign not in err.split("; ", 1)[1], err


def test_separated_iree_flag_value_is_passed(tmp_path, capsys):
    status, err = run(capsys, "emit", SIMPLE, "-o", tmp_path / "out", "--iree-flag", "--iree-opt-level=O2")
    assert status == 0, err
    assert "--iree-opt-level=O2" in (tmp_path / "out" / "manifest.json").read_text()


def test_not_executable_iree_compile(tmp_path, capsys):
    fake = tmp_path / "iree-compile"
    fake.write_text("#!/bin/sh\n")
    status, err = run(capsys, "emit", SIMPLE, "-o", tmp_path / "out", "--iree-compile", fake)
    assert status == 2 and "is not executable" in err, err


def test_empty_model(tmp_path, capsys):
    model = tmp_path / "empty.mlir"
    model.write_text("\n \n")
    status, err = run(capsys, "emit", model, "-o", tmp_path / "out")
    assert status == 2 and "empty.mlir: the model file is empty" in err, err


def test_runtimeless_without_a_kernel(tmp_path, capsys):
    # A program that dispatches nothing is plain copies in runtimeless C (and verified like any other).
    model = tmp_path / "ident.mlir"
    model.write_text("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n")
    status, err = run(capsys, "emit", model, "-o", tmp_path / "out", "--execution-model", "runtimeless")
    assert status == 0 and "Traceback" not in err, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["runtimeless"]["abi"]["library_queries"] == [] and manifest["verification"]["verified"]


def test_info_shows_target_and_run_checks_output_dir(tmp_path, capsys):
    out = tmp_path / "out"
    assert run(capsys, "emit", SIMPLE, "-o", out, "--execution-model", "runtimeless")[0] == 0
    assert main(["info", str(out)]) == 0
    from ireegen.config.modes import host_triple

    assert f"{host_triple()} (cpu " in capsys.readouterr().out
    x = tmp_path / "x.npy"
    import numpy as np

    np.save(x, np.ones(4, np.float32))
    status, err = run(
        capsys,
        "run",
        out,
        "--function",
        "simple_mul",
        "--input",
        f"@{x}",
        "--input",
        f"@{x}",
        "--output",
        "@/missing/dir/y.npy",
    )
    assert status == 2 and "directory /missing/dir does not exist" in err, err
