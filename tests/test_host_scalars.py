"""The C that runtimeless emits for host scalars only known at run time
(ireegen/runtimeless/host_scalars.py) computes what the interpreter folds at emit time.

Every integer op, comparison and cast is compiled with gcc, under
-Wall -Wextra -Werror and UBSan (no recovery), on edge values and seeded
random ones, at every width, with the second operand both a run-time value
and a literal, and compared with the fold of the same op in Python.
"""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from ireegen.runtimeless.lower import host_scalars as hs

CC = shutil.which("gcc") or shutil.which("cc")
pytestmark = pytest.mark.skipif(CC is None, reason="needs a C compiler")

WIDTHS = (1, 8, 16, 32, 64)


def _values(bits: int, rng: random.Random) -> list:
    top = (1 << bits) - 1
    edges = {0, 1, 3, top, 1 << (bits - 1), (1 << (bits - 1)) - 1}
    return sorted({v & top for v in edges} | {rng.getrandbits(bits) for _ in range(2)})


def _variable(bits: int) -> str:
    return hs.c_type(f"i{bits}")


def _run_c(cases: list, tmp_path) -> list:
    """cases: (declarations, expression of an unsigned integer) -> printed values."""
    lines = ["#include <inttypes.h>", "#include <stdint.h>", "#include <stdio.h>", "#include <string.h>"]
    for k, (decls, expr) in enumerate(cases):  # a function each: gcc is slow on one huge main
        lines.append(f"static void case{k}(void) {{")
        lines += [f"  {d}" for d in decls]
        lines.append(f'  printf("%" PRIu64 "\\n", (uint64_t)({expr}));')
        lines.append("}")
    lines.append("int main(void) {")
    lines += [f"  case{k}();" for k in range(len(cases))]
    lines += ["  return 0;", "}"]
    source = tmp_path / "scalars.c"
    source.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "scalars"
    subprocess.run(
        [
            CC,
            "-std=c11",
            "-O0",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsanitize=undefined",
            "-fno-sanitize-recover=all",
            str(source),
            "-o",
            str(exe),
        ],
        check=True,
    )
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    return [int(x) for x in out]


def _expected_binary(name: str, x: int, y: int, bits: int) -> int:
    try:
        return hs.fold_int(name, x, y, bits)
    except ZeroDivisionError:
        return 0  # documented: C gives 0 where MLIR is undefined


def _c_ops() -> list:
    return sorted(set(hs.FOLD_INT) & hs.C_BINARY)


@pytest.mark.parametrize("bits", WIDTHS)
def test_integer_ops_compute_what_the_interpreter_folds(bits, tmp_path):
    rng = random.Random(bits)
    values = _values(bits, rng)
    ctype = _variable(bits)
    cases, expected = [], []
    for name in _c_ops():
        for x in values:
            for y in values:
                if (
                    name in ("arith.divsi", "arith.floordivsi", "arith.ceildivsi")
                    and bits > 1
                    and hs.signed(x, bits) == -(1 << (bits - 1))
                    and hs.signed(y, bits) == -1
                ):
                    want = hs.wrap(-hs.signed(x, bits), bits)  # MLIR: undefined; C: the wrapped negation
                else:
                    want = _expected_binary(name, x, y, bits)
                decls = [
                    f"volatile {ctype} a = {x}u;" if x < 1 << 32 else f"volatile {ctype} a = UINT64_C({x});",
                    f"volatile {ctype} b = {y}u;" if y < 1 << 32 else f"volatile {ctype} b = UINT64_C({y});",
                ]
                # b at run time, then b known at emit time (a literal).
                cases.append((decls + ["(void)a;", "(void)b;"], hs.c_binary(name, "a", "b", f"i{bits}")))
                expected.append(want)
                cases.append((decls + ["(void)a;", "(void)b;"], hs.c_binary(name, "a", y, f"i{bits}")))
                expected.append(want)
    got = _run_c(cases, tmp_path)
    wrong = [(cases[i][1], e, g) for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[:3]}"


@pytest.mark.parametrize("bits", WIDTHS)
def test_comparisons_and_casts(bits, tmp_path):
    rng = random.Random(100 + bits)
    values = _values(bits, rng)
    ctype = _variable(bits)
    cases, expected = [], []
    for x in values:
        for y in values:
            decls = [
                f"volatile {ctype} a = {x}u;" if x < 1 << 32 else f"volatile {ctype} a = UINT64_C({x});",
                f"volatile {ctype} b = {y}u;" if y < 1 << 32 else f"volatile {ctype} b = UINT64_C({y});",
                "(void)a;",
                "(void)b;",
            ]
            for predicate in ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"):
                cases.append((decls, hs.c_cmpi(predicate, "a", "b", bits)))
                expected.append(hs.fold_cmpi(predicate, x, y, bits))
                cases.append((decls, hs.c_cmpi(predicate, "a", y, bits)))
                expected.append(hs.fold_cmpi(predicate, x, y, bits))
        for out_bits in WIDTHS:
            decls = [f"volatile {ctype} a = {x}u;" if x < 1 << 32 else f"volatile {ctype} a = UINT64_C({x});"]
            for name in ("arith.trunci", "arith.extui", "arith.extsi"):
                if (name == "arith.trunci") != (out_bits < bits):
                    continue
                cases.append((decls, hs.c_cast(name, "a", f"i{bits}", f"i{out_bits}")))
                expected.append(hs.wrap(hs.signed(x, bits) if name == "arith.extsi" else x, out_bits))
    got = _run_c(cases, tmp_path)
    wrong = [(cases[i][1], e, g) for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[:3]}"


def test_float_comparisons_follow_ordered_and_unordered_predicates(tmp_path):
    values = ["0.0f", "1.5f", "-2.0f", "(0.0f / zero)"]  # the last is a NaN
    python = {"0.0f": 0.0, "1.5f": 1.5, "-2.0f": -2.0, "(0.0f / zero)": float("nan")}
    cases, expected = [], []
    predicates = [p for p, _ in hs._CMPF]
    for x in values:
        for y in values:
            decls = [
                "volatile float zero = 0.0f;",
                f"volatile float a = {x};",
                f"volatile float b = {y};",
                "(void)zero;",
                "(void)a;",
                "(void)b;",
            ]
            for predicate in predicates:
                cases.append((decls, hs.c_cmpf(predicate, "a", "b", "f32")))
                expected.append(hs.fold_cmpf(predicate, python[x], python[y]))
    got = _run_c(cases, tmp_path)
    wrong = [(cases[i][1], e, g) for i, (e, g) in enumerate(zip(expected, got)) if e != g]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ, first: {wrong[:3]}"


@pytest.mark.parametrize("bits", [8, 32, 64])
def test_bounds_contain_every_result_that_does_not_wrap(bits):
    """The bounds that size run-time buffers hold every value the op can
    give on operands inside their bounds (where no arithmetic wraps; the C
    checks the bound at run time for the rest)."""
    rng = random.Random(bits)
    names = [
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.minsi",
        "arith.maxsi",
        "arith.minui",
        "arith.maxui",
        "arith.divsi",
        "arith.floordivsi",
        "arith.ceildivsi",
        "arith.divui",
        "arith.andi",
        "arith.shrui",
    ]
    for _ in range(300):
        name = rng.choice(names)
        a = sorted(rng.randint(-50, 50) for _ in range(2))
        b = sorted(rng.randint(-50, 50) for _ in range(2))
        if rng.random() < 0.5:
            b = [b[0], b[0]]  # a constant, as divisors and masks usually are
        lo, hi = hs.bounds_binary(name, tuple(a), tuple(b), bits)
        for _ in range(20):
            x, y = rng.randint(*a), rng.randint(*b)
            try:
                exact = hs.fold_int(name, hs.wrap(x, bits), hs.wrap(y, bits), bits)
            except ZeroDivisionError:
                continue
            value = hs.signed(exact, bits)
            wide = hs.signed(hs.fold_int(name, hs.wrap(x, 128), hs.wrap(y, 128), 128), 128)
            if wide == value:  # it did not wrap
                assert lo <= value <= hi, (name, a, b, x, y, value, (lo, hi))
    assert hs.bounds_select((0, 3), (-2, 1)) == (-2, 3)
    assert hs.bounds_align((1, 70), (64, 64)) == (64, 128)
    assert hs.bounds_binary("arith.minsi", hs.UNKNOWN, (20, 20), bits)[1] == 20
