"""The interpreter's core: its state, the walk over a region's blocks, and
the helpers the op handlers share.

Each op is looked up by name in one table (ops/, grouped by dialect) and
its handler is called as `handler(interp, op, operands)`, with the operands'
abstract values.  A handler returns the op's results (a list, one value per
result), or, for a terminator, a Jump (a branch) or a Return.  An op in no
table is refused, naming the op and where it is.
"""

from __future__ import annotations

import math

from .. import host_scalars as hs
from ..schedule import Alloc, Buf, Check, Copy, Fill, Let, RuntimelessError, Sym, reads_of
from .attrs import symbol_name
from .ops import OPS
from .values import Jump, Return

_MAX_STEPS = 1_000_000  # interpreted ops per function, against runaway loops


class Interpreter:
    def __init__(self, module, where: str):
        self.where = where
        self.globals = {}
        self.constants = []
        self.state = []  # Allocs the initializers make: they persist for the instance's life
        self.executables = []
        self.allocs = 0
        self.funcs = {}
        self.initializing = True
        self.steps = []  # where device work goes: the initializers', then each call's
        self.stored = {}  # buffer globals a call stored to: name -> Buf
        self.slots = set()  # ids of the state Allocs that mutable globals live in
        self.scalars = 0  # run-time host scalars so far (scalarN, per function)
        self.operands = []  # the values of the operands of the op being run
        for op in module.body.operations:
            op = op.operation
            if op.name in ("util.func", "func.func"):
                self.funcs[symbol_name(op)] = op
            elif op.name == "util.global" and "initial_value" in op.attributes:
                # A host scalar with its value inline (`util.global @n = 0 : i32`).
                text = str(op.attributes["initial_value"])
                try:
                    self.globals[symbol_name(op)] = hs.wrap(
                        int(text.split(":")[0].strip()),
                        hs.width(
                            op.attributes["type"].value
                            if hasattr(op.attributes["type"], "value")
                            else op.attributes["type"]
                        ),
                    )
                except ValueError:
                    pass  # not an integer: a load before a store is refused

    # -- running regions
    def run_region(self, region, args):
        """Runs `region` on `args` (its entry block's arguments) and returns
        the values it returns."""
        block = region.blocks[0]
        values = dict(zip(block.arguments, args))
        count = 0
        while True:
            for op in block.operations:
                op = op.operation
                count += 1
                if count > _MAX_STEPS:
                    self.fail(op, "the program does not finish within the interpreter's step limit")
                results = self.run_op(op, [values[v] for v in op.operands])
                if isinstance(results, Return):
                    return results.values
                if isinstance(results, Jump):
                    block = results.block
                    values.update(zip(block.arguments, results.args))
                    break
                if len(results) != len(op.results):
                    raise AssertionError(f"{op.name}: {len(results)} results for {len(op.results)}")
                values.update(zip(op.results, results))
            else:
                raise AssertionError("block without terminator")

    def run_op(self, op, a):
        handler = OPS.get(op.name)
        if handler is not None:
            outer, self.operands = self.operands, a
            try:
                return handler(self, op, a)
            finally:
                self.operands = outer
        if op.name.startswith(("scf.", "cf.")):
            self.fail(op, f"control flow `{op.name}` the schedule cannot follow")
        self.fail(op, f"`{op.name}` is not supported by runtimeless C")

    # -- refusals and operands
    def fail(self, op, message: str):
        raise RuntimelessError(f"{self.where}: {message} (at `{_op_text(op)}`)")

    def known(self, op, value, what: str):
        """`value`, which must be known at emit time."""
        if isinstance(value, Sym):
            self.fail(op, f"{what} depends on a run-time value (data-dependent control flow or shapes)")
        return value

    def buf(self, op, value):
        """`value`, which must be a buffer (a Buf)."""
        if not isinstance(value, Buf):
            self.fail(op, "a buffer operand is not a buffer the schedule knows")
        return value

    # -- allocations and device work
    def new_alloc(self, op, size) -> Alloc:
        """A buffer the program allocates: state when an initializer makes
        it (it outlives every call), else a call's transient."""
        run_size = None
        if isinstance(size, Sym):
            run_size, size = size, self.upper_bound(op, size, "the size of a buffer")
        self.allocs += 1
        alloc = Alloc(self.allocs, "state" if self.initializing else "transient", size, run_size=run_size)
        if self.initializing:
            self.state.append(alloc)
        return alloc

    _MAX_BOUND = 1 << 30  # bytes: a bound above this is no bound for an arena

    def upper_bound(self, op, value: Sym, what: str) -> int:
        """The largest value a run-time size can take, from the bounds the
        interpreter derived (an allocation gets that much); the C checks it
        before the size is used, as the bounds assume no arithmetic wraps."""
        if value.bounds[1] > self._MAX_BOUND:
            self.fail(
                op,
                f"{what} depends on a run-time value with no bound the interpreter can derive "
                "(dynamic shapes are not supported)",
            )
        hi = max(int(value.bounds[1]), 0)
        message = f"a run-time size exceeds its bound of {hi}"
        self.steps.append(Check(f"{value.expr} <= {hi}u", message, value.reads))
        return hi

    def record(self, op, steps):
        """Appends device work (`steps`) to the schedule, refusing a write
        into a constant, an input, or state a call may not change."""
        for step in steps:
            for b in _written(step):
                if b.alloc.kind in ("constant", "input"):
                    self.fail(op, f"the program writes into a {b.alloc.kind} buffer")
                if b.alloc.kind == "state" and not self.initializing and not self.is_state_slot(b.alloc):
                    self.fail(
                        op,
                        "a call writes into a buffer the initializers made that is not a "
                        "mutable global's (shared read-only data)",
                    )
        self.steps.extend(steps)

    def is_state_slot(self, alloc) -> bool:
        return alloc.id in self.slots

    # -- host scalars only known at run time
    def let(self, op, mlir_type: str, expr: str, bounds=hs.UNKNOWN, calls: tuple = ()) -> Sym:
        """A new local of the call, `expr`, computed where the program computes
        it from the op's operands; `bounds` are what the interpreter knows of
        its value, `calls` the C functions `expr` calls."""
        c_type = hs.c_type(mlir_type)
        if c_type is None:
            self.fail(op, f"a run-time host value of type {mlir_type}, which runtimeless C does not compute")
        name = self.new_scalar_name()
        self.steps.append(Let(name, c_type, expr, calls, reads_of(self.operands)))
        return Sym(name, mlir_type, bounds, frozenset({name}))

    def new_scalar_name(self) -> str:
        """The C local of the next run-time scalar: scalar1, scalar2, ... per function."""
        self.scalars += 1
        return f"scalar{self.scalars}"

    def c_operand(self, op, x, index: int):
        """Operand `index` of `op` for host_scalars: a run-time value's C
        expression, or the known value itself (written as a literal)."""
        if isinstance(x, Sym):
            return x.expr
        if isinstance(x, float) and not math.isfinite(x):
            self.fail(op, "a non-finite host constant next to a run-time value")
        if not isinstance(x, (int, float)) or hs.c_type(op.operands[index].type) is None:
            self.fail(op, "an operand that is not a host scalar")
        return x

    def bounds(self, x, mlir_type):
        """What the interpreter knows of an integer: its signed (lo, hi)."""
        if isinstance(x, Sym):
            return x.bounds
        return hs.known_bounds(x, mlir_type) if isinstance(x, int) and hs.width(mlir_type) else hs.UNKNOWN


def _written(step) -> list:
    if isinstance(step, (Fill, Copy)):
        return [step.target]
    return []


def _op_text(op) -> str:
    text = op.get_asm(large_elements_limit=4).strip().splitlines()[0]
    return text if len(text) <= 160 else text[:157] + "..."
