"""Fuzzing the command line: truncated and mutated models, garbage .npy and
.npz files, odd paths, and every flag with a wrong value.  Whatever happens,
the answer is exit status 0, 1 or 2, a message when it is not 0, and never
a Python traceback.  Seeded, a few hundred cases, in-process through
ireegen.cli.main (no interpreter start-up per case) plus a few real
subprocess runs.  IREEGEN_FUZZ_CASES scales the random part."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from onnx import TensorProto, helper, numpy_helper

from ireegen.cli import main
from ireegen.common.errors import IreegenError
from ireegen.frontend.onnx_import import check_onnx

ROOT = Path(__file__).resolve().parent
MODELS = sorted((ROOT / "models").glob("*.mlir")) + [SAMPLES / "simple_mul" / "simple_mul.mlir"]
SCALE = int(os.environ.get("IREEGEN_FUZZ_CASES", "1"))


def check(capsys, argv):
    """Runs the CLI in-process; an exception escaping main is the traceback
    a user would see, and fails the test."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as e:  # argparse
        status = e.code
    out = capsys.readouterr()
    assert status in (0, 1, 2), (argv, status, out.err)
    if status != 0:
        assert out.err.strip(), (argv, "exit status without a message")
    assert "Traceback" not in out.err, (argv, out.err)
    return status, out.err


def _mutate(rng, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 6))):
        op = rng.choice(("flip", "delete", "insert", "dup", "truncate", "digit", "digit", "digit", "word"))
        if not data:
            break
        i = rng.randrange(len(data))
        if op == "flip":
            data[i] = rng.randrange(256)
        elif op == "delete":
            del data[i : i + rng.randint(1, 40)]
        elif op == "insert":
            data[i:i] = rng.choice([b"{", b"}", b"%", b"tensor<", b"\x00", b"\xff\xfe", b"@", b"(", b"?x", b"-1x"])
        elif op == "dup":
            j = rng.randrange(len(data))
            data[i:i] = data[min(i, j) : max(i, j)][:200]
        elif op == "digit":  # shapes, constants, indices: often still parses
            digits = [k for k, c in enumerate(data) if 48 <= c <= 57]
            if digits:
                data[rng.choice(digits)] = rng.choice(b"0123456789")
        elif op == "word":  # another element type or op of the same dialect
            text = bytes(data)
            a, b = rng.choice(
                [
                    (b"f32", b"f16"),
                    (b"f32", b"i32"),
                    (b"f32", b"bf16"),
                    (b"f32", b"f64"),
                    (b"mulf", b"addf"),
                    (b"i32", b"i1"),
                    (b"tensor<", b"tensor<?x"),
                    (b"f32", b"i8"),
                ]
            )
            data = bytearray(text.replace(a, b, rng.randint(1, 3)))
        else:
            del data[i:]
    return bytes(data)


def test_truncated_and_mutated_models_info(tmp_path, capsys):
    rng = random.Random(1234)
    statuses = []
    for n in range(200 * SCALE):
        source = rng.choice(MODELS).read_bytes()
        data = source[: rng.randrange(len(source))] if n % 3 == 0 else _mutate(rng, source)
        model = tmp_path / f"m{n}.mlir"
        model.write_bytes(data)
        statuses.append(check(capsys, ["info", model])[0])
    assert statuses.count(2) > 50 and statuses.count(0) > 5  # the cases really differ


@pytest.mark.parametrize("seed", range(3))
def test_mutated_models_emit(tmp_path, capsys, seed):
    """A few compiles: mutations that still parse reach iree-compile."""
    rng = random.Random(seed)
    mode = [("async", "vmvx"), ("inline-static", "vmvx"), ("runtimeless", "static-library")][seed]
    done = 0
    for n in range(60):
        data = _mutate(rng, rng.choice(MODELS[:4] + MODELS[-1:]).read_bytes())
        model = tmp_path / f"e{n}.mlir"
        model.write_bytes(data)
        if check(capsys, ["info", model])[0] != 0:
            continue  # does not parse: covered above
        check(
            capsys,
            ["emit", model, "-o", tmp_path / f"out{n}", "--execution-model", mode[0], "--executable-format", mode[1]],
        )
        done += 1
        if done == 3:
            break


def _garbage_arrays(tmp_path, rng):
    files = []
    for n in range(12):
        p = tmp_path / f"g{n}.npy"
        kind = n % 6
        if kind == 0:
            p.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 300))))
        elif kind == 1:
            np.save(p, np.zeros((2, 3), np.float32))
            p.write_bytes(p.read_bytes()[: rng.randint(1, 120)])
        elif kind == 2:
            np.save(p, np.array(["a", "b"]))
        elif kind == 3:
            np.save(p, np.arange(rng.randint(0, 9), dtype=rng.choice([np.int8, np.float64, np.complex64, np.bool_])))
        elif kind == 4:
            np.save(p, np.array([{"x": 1}], dtype=object), allow_pickle=True)
        else:
            np.savez(p.with_suffix(".npz"), input0=np.ones(3))
            p = p.with_suffix(".npz")
        files.append(p)
    return files


@pytest.fixture(scope="module")
def runtimeless_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("rl") / "out"
    assert (
        main(
            [
                "emit",
                str(SAMPLES / "simple_mul" / "simple_mul.mlir"),
                "-o",
                str(out),
                "--execution-model",
                "runtimeless",
            ]
        )
        == 0
    )
    return out


def test_garbage_inputs(tmp_path, capsys, runtimeless_out):
    rng = random.Random(7)
    files = _garbage_arrays(tmp_path, rng)
    for a in files:
        for b in rng.sample(files, 3):
            check(capsys, ["run", runtimeless_out, "--function", "simple_mul", "--input", f"@{a}", "--input", f"@{b}"])
    for f in files:
        if f.suffix == ".npz" or rng.random() < 0.3:
            renamed = f.with_suffix(".npz")
            if f != renamed:
                renamed.write_bytes(f.read_bytes())
            check(
                capsys,
                [
                    "parity",
                    SAMPLES / "simple_mul" / "simple_mul.mlir",
                    "--execution-models",
                    "async",
                    "--inputs",
                    renamed,
                ],
            )


ODD_NAMES = [
    "with space.mlir",
    "ünïcödé.mlir",
    "new\nline.mlir",
    "-dash.mlir",
    "x" * 250 + ".mlir",
    ".hidden.mlir",
    "a.b.c.mlir",
    "semi;colon.mlir",
    'quote"d.mlir',
    "back\\slash.mlir",
    "$(echo hi).mlir",
    "*.mlir",
]


def test_odd_paths(tmp_path, capsys):
    source = (SAMPLES / "simple_mul" / "simple_mul.mlir").read_bytes()
    for name in ODD_NAMES:
        try:
            (tmp_path / name).write_bytes(source)
        except OSError:
            continue
        check(capsys, ["info", tmp_path / name])
    for name in ODD_NAMES[:4]:
        check(capsys, ["emit", tmp_path / name, "-o", tmp_path / ("out " + name), "--executable-format", "vmvx"])
    model = tmp_path / ODD_NAMES[0]
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    for outdir in [a_file, a_file / "sub", "/proc/ireegen-out", "/dev/null", tmp_path / ("y" * 300), ""]:
        check(capsys, ["emit", model, "-o", outdir, "--executable-format", "vmvx"])
    for path in [tmp_path, tmp_path / "missing.mlir", "/dev/null", "/proc/self/status", "", "-", a_file]:
        check(capsys, ["info", path])
        check(capsys, ["emit", path, "-o", tmp_path / "o"])


def test_every_flag_with_a_wrong_value(tmp_path, capsys, runtimeless_out):
    model = SAMPLES / "simple_mul" / "simple_mul.mlir"
    not_exec = tmp_path / "iree-compile"
    not_exec.write_text("#!/bin/sh\necho hi\n")
    liar = tmp_path / "liar"
    liar.write_text("#!/bin/sh\necho IREE compiler version 9.9\nexit 0\n")
    liar.chmod(0o755)
    emit_cases = [
        ["--execution-model", "bogus"],
        ["--execution-model", ""],
        ["--executable-format", "elf"],
        ["--module-format", "vm-c"],
        ["--execution-model", "runtimeless", "--module-format", "vmfb"],
        ["--execution-model", "inline-static", "--executable-format", "embedded-elf"],
        ["--target-triple", "aarch64"],
        ["--target-triple", "mips-unknown-linux-gnu"],
        ["--target-triple", ""],
        ["--target-triple", "x86_64-unknown-linux-gnu", "--target-cpu", "cortex-m4"],
        ["--target-cpu", "\x01"],
        ["--executable-format", "vmvx", "--target-cpu", "generic"],
        ["--name", "9x"],
        ["--name", "int"],
        ["--name", "a__b"],
        ["--name", "n" * 65],
        ["--name", ""],
        ["--iree-flag", "nodash"],
        ["--iree-flag", "--output-format=vm-c"],
        ["--iree-flag=-o"],
        ["--iree-flag", "--no-such-flag=1"],
        ["--iree-flag", "--iree-opt-level=O9"],
        ["--iree-compile", not_exec],
        ["--iree-compile", liar],
        ["--iree-compile", tmp_path],
        ["--iree-compile", "no-such-iree-compile"],
        ["--bogus-flag"],
    ]
    for flags in emit_cases:
        check(capsys, ["emit", model, "-o", tmp_path / "out", *flags])
    parity_cases = [
        ["--rtol", "abc"],
        ["--atol", "-"],
        ["--seed", "x"],
        ["--execution-models", "bogus"],
        ["--execution-models", ","],
        ["--function", "nope"],
        ["--inputs", tmp_path / "missing.npz"],
        ["--json", "/missing/dir/r.json"],
        ["--iree-runtime-bin", tmp_path],
        ["--iree-venv", tmp_path],
    ]
    for flags in parity_cases:
        check(capsys, ["parity", model, "--execution-models", "async", *flags])
    x = tmp_path / "x.npy"
    np.save(x, np.ones(4, np.float32))
    run_cases = [
        ["--function", "nope"],
        ["--function", "simple_mul"],
        ["--function", "simple_mul", "--input", "1.5"],
        ["--function", "simple_mul", "--input", f"@{x}", "--input", "@/missing.npy"],
        ["--function", "simple_mul", "--input", f"@{x}", "--input", f"@{x}", "--output", "y.npy"],
        ["--function", "simple_mul", "--input", f"@{x}", "--input", f"@{x}", "--output", "@/missing/dir/y.npy"],
        ["--function", "simple_mul", "--input", f"@{x}", "--input", f"@{x}", "--cc", "/nonexistent/cc"],
        ["--function", "simple_mul", "--input", f"@{x}", "--input", f"@{x}", "--emulator", "/nonexistent/qemu"],
        ["--function", "simple_mul", "--input", f"@{x}", "--input", f"@{x}", "--build-dir", "/proc/nope"],
    ]
    for flags in run_cases:
        check(capsys, ["run", runtimeless_out, *flags])
    check(capsys, ["run", tmp_path, "--function", "f"])
    check(capsys, ["info", "--json", tmp_path / "missing"])
    check(capsys, ["resolve", "--name", "9x", "-o", tmp_path])
    check(capsys, ["nonsense"])
    check(capsys, [])


@pytest.mark.parametrize(
    "argv",
    [
        ["emit", "/nonexistent.mlir", "-o", "/tmp/x"],
        ["emit", str(SAMPLES / "simple_mul" / "simple_mul.mlir"), "-o", "/proc/ireegen", "--executable-format", "vmvx"],
        ["info", "/dev/null"],
    ],
)
def test_real_processes(argv):
    proc = subprocess.run([sys.executable, "-m", "ireegen", *argv], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip() and "Traceback" not in proc.stderr, proc.stderr


def test_parser_crash_is_a_message(tmp_path, capsys):
    """The Python bindings' parser segfaults on this (iree-opt says "expected
    '['"): found by this fuzz test."""
    model = tmp_path / "t.mlir"
    model.write_text(
        "func.func @f(%x: tensor<3x5xi32>) -> tensor<5x3xi32> {\n"
        "  %e = tensor.empty() : tensor<5x3xi32>\n"
        "  %t = linalg.transpose ins(%x : tensor<3x5xi32>) outs(%e : tensor<5x3xi32>) "
        "permutation = ([1, 0]\n  return %t : tensor<5x3xi32>\n}\n"
    )
    status, err = check(capsys, ["info", model])
    assert status == 2 and "t.mlir:3:" in err and "expected '['" in err, err


# --- ONNX bytes ------------------------------------------------------------
#
# Seeded byte mutations of small ONNX models (protobuf: varints, lengths,
# tags, strings, tensors) through every check ireegen makes before IREE's
# importer (frontend/onnx_import.check_onnx), in-process; then the whole
# `info` (IREE's import and lowering) for a few mutants that pass.  Each
# ends in success or one UsageError line, never a traceback nor a hang.

ONNX_MUTANTS = int(os.environ.get("IREEGEN_FUZZ_ONNX_CASES", "300"))
ONNX_SECONDS = 10  # per mutant, in-process: past it the mutant hangs


def _onnx_seeds() -> list:
    rng = np.random.default_rng(7)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    w = numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "b")
    mlp = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
            helper.make_node("Add", ["h", "b"], ["a"], name="add"),
            helper.make_node("Relu", ["a"], ["r"], name="relu"),
            helper.make_node("Softmax", ["r"], ["y"], name="softmax", axis=1),
        ],
        "mlp",
        [x],
        [y],
        [w, b],
    )
    xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 6, 6])
    yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 1, 1])
    k = numpy_helper.from_array(rng.standard_normal((2, 1, 3, 3)).astype(np.float32), "k")
    shape = numpy_helper.from_array(np.array([1, 2, 1, 1], np.int64), "shape")
    conv = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "k"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("ReduceMean", ["p"], ["m"], name="mean", axes=[2, 3], keepdims=1),
            helper.make_node("Reshape", ["m", "shape"], ["y"], name="reshape"),
        ],
        "conv",
        [xi],
        [yo],
        [k, shape],
    )
    opsets = [helper.make_opsetid("", 17)]
    return [helper.make_model(g, opset_imports=opsets).SerializeToString() for g in (mlp, conv)]


def _mutate_bytes(rng, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 8))):
        if not data:
            break
        i = rng.randrange(len(data))
        op = rng.choice(("flip", "flip", "bit", "delete", "insert", "dup", "truncate", "varint"))
        if op == "flip":
            data[i] = rng.randrange(256)
        elif op == "bit":
            data[i] ^= 1 << rng.randrange(8)
        elif op == "delete":
            del data[i : i + rng.randint(1, 16)]
        elif op == "insert":
            data[i:i] = rng.choice([b"\xff", b"\x00", b"\xff\xff\xff\xff\x0f", b"\x80" * 9 + b"\x01", b"\xc3("])
        elif op == "dup":
            j = rng.randrange(len(data))
            data[i:i] = data[min(i, j) : max(i, j)][:64]
        elif op == "varint":  # a length or an attribute value, made huge or negative
            data[i : i + 1] = rng.choice([b"\xff\xff\xff\xff\x07", b"\xff" * 9 + b"\x01", b"\x09", b"\x7f"])
        else:
            del data[i:]
    return bytes(data)


def _on_alarm(signum, frame):
    raise TimeoutError("a mutant ran past its deadline")


def test_onnx_byte_mutations_never_trace_back_or_hang(tmp_path, capsys):
    rng = random.Random(31)
    seeds = _onnx_seeds()
    outcomes = {"ok": 0, "refused": 0}
    passing = []
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        for n in range(ONNX_MUTANTS):
            path = tmp_path / f"m{n}.onnx"
            path.write_bytes(_mutate_bytes(rng, rng.choice(seeds)))
            signal.alarm(ONNX_SECONDS)
            try:
                check_onnx(path)
                outcomes["ok"] += 1
                passing.append(path)
            except IreegenError as e:
                assert "\n" not in str(e).strip(), (path, str(e))
                outcomes["refused"] += 1
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert outcomes["refused"] > ONNX_MUTANTS // 4 and outcomes["ok"] > 5, outcomes  # the mutants really differ
    # The whole `info` (IREE's import and lowering) for a few that pass.
    for path in passing[:: max(1, len(passing) // 4)][:4]:
        start = time.monotonic()
        check(capsys, ["info", path])
        assert time.monotonic() - start < 120, path
