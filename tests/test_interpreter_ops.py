"""The runtimeless interpreter's op table (ireegen/runtimeless/interpret/):
one table per dialect, merged into one, and the walk over blocks that looks
each op up in it, on host code parsed with IREE's own MLIR bindings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ireegen.runtimeless import host_scalars as hs
from ireegen.runtimeless.interpret import ops
from ireegen.runtimeless.interpret.interpreter import Interpreter
from ireegen.runtimeless.schedule import Let, RuntimelessError, Sym

ir = pytest.importorskip("iree.compiler.ir")


def test_each_dialect_table_holds_only_its_own_ops_and_the_merge_loses_none():
    for dialect, table in ops.DIALECTS.items():
        assert table, dialect
        strangers = [name for name in table if not name.startswith(dialect + ".")]
        assert not strangers, f"{dialect}: {strangers}"
    assert len(ops.OPS) == sum(len(t) for t in ops.DIALECTS.values())


def test_every_host_scalar_op_of_host_scalars_has_a_handler():
    known = set(hs.FOLD_INT) | hs.FLOAT_BINARY | hs.FLOAT_UNARY | hs.C_BINARY
    assert not known - set(ops.OPS)


PROGRAM = """
util.func public @unknown(%arg0: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %arg0, %c1 : i32
  %1 = math.ctpop %0 : i32
  util.return %1 : i32
}
util.func public @switch(%arg0: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  cf.switch %c0 : i32, [default: ^bb1, 0: ^bb1]
^bb1:
  util.return %arg0 : i32
}
util.func public @count(%arg0: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  cf.br ^loop(%c0, %arg0 : i32, i32)
^loop(%i: i32, %acc: i32):
  %more = arith.cmpi slt, %i, %c5 : i32
  %next = arith.addi %i, %c1 : i32
  %twice = arith.muli %acc, %c1 : i32
  cf.cond_br %more, ^loop(%next, %twice : i32, i32), ^done(%i : i32)
^done(%n: i32):
  util.return %n : i32
}
util.func public @data_dependent(%arg0: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %pos = arith.cmpi sgt, %arg0, %c0 : i32
  cf.cond_br %pos, ^a, ^b
^a:
  util.return %arg0 : i32
^b:
  util.return %c0 : i32
}
util.func public @calls(%arg0: i32) -> i32 {
  %0 = util.call @count(%arg0) : (i32) -> i32
  util.return %0 : i32
}
"""


def _run(function: str, *args):
    with ir.Context():
        module = ir.Module.parse(PROGRAM)
        interp = Interpreter(module, f"m.mlir: function @{function}")
        return interp.run_region(interp.funcs[function].regions[0], list(args)), interp


def test_an_op_in_no_table_is_refused_naming_the_op_and_where_it_is():
    with pytest.raises(RuntimelessError) as e:
        _run("unknown", Sym("x", "i32"))
    assert str(e.value) == (
        "m.mlir: function @unknown: `math.ctpop` is not supported by runtimeless C (at `%1 = math.ctpop %0 : i32`)"
    )


def test_control_flow_without_a_handler_is_refused_as_control_flow():
    with pytest.raises(RuntimelessError, match=r"control flow `cf\.switch` the schedule cannot follow"):
        _run("switch", 3)


def test_branches_on_known_values_are_followed_and_calls_run_the_callee():
    results, interp = _run("count", 7)
    assert results == [5] and interp.steps == []
    results, _ = _run("calls", 7)
    assert results == [5]


def test_a_run_time_value_becomes_a_line_of_c_and_a_branch_on_it_is_refused():
    with ir.Context():
        module = ir.Module.parse(PROGRAM)
        interp = Interpreter(module, "m.mlir")
        with pytest.raises(RuntimelessError):  # the ctpop after it
            interp.run_region(interp.funcs["unknown"].regions[0], [Sym("x", "i32")])
        assert interp.steps == [Let("scalar1", "uint32_t", "(uint32_t)((uint64_t)x + 1u)")]
    with pytest.raises(RuntimelessError, match="a branch on a value only known at run time"):
        _run("data_dependent", Sym("x", "i32", hs.type_bounds("i32")))


def test_the_handler_counts_in_docs_runtimeless_md_are_the_tables():
    text = (Path(__file__).resolve().parent.parent / "docs" / "runtimeless.md").read_text()
    documented = dict(re.findall(r"^\| `(\w+)\.py` \| (\d+) \|", text, re.M))
    assert documented == {dialect: str(len(table)) for dialect, table in ops.DIALECTS.items()}
