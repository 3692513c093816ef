"""Host scalars, folded at emit time or written as C for run time.

The runtimeless interpreter (interpret/) runs the program's host code at
emit time.  Most host scalars are constants it folds here (`fold_*`).  A
value only known when the C runs, one the program reads from device data
(`hal.buffer.load`: a slice start, a pad width, a quantization zero point)
or a scalar argument, becomes C instead (`c_*`): one expression per op,
which the interpreter binds to a local (`const uint32_t scalar3 = ...;`) in
the call's body, in program order.

Integers are signless in MLIR.  In C an iN value is held in the unsigned
type of its width (uint8_t for i1, uint64_t for index), where wrap-around
is defined; it is read as signed only where the op is signed.  Integer
arithmetic is done in uint64_t or int64_t and truncated to the result's
width, which is exact for every width up to 64.  Division by zero and
oversized shifts, which MLIR leaves undefined, give 0 instead of C's
undefined behaviour.
"""

from __future__ import annotations

import math
import operator

import numpy as np


def width(mlir_type) -> int:
    """Bits of an integer or index type; 0 for anything else."""
    s = str(mlir_type)
    if s == "index":
        return 64
    if s.startswith("i") and s[1:].isdigit():
        return int(s[1:])
    return 0


def is_float(mlir_type) -> bool:
    return str(mlir_type) in _FLOAT_C


_FLOAT_C = {"f32": "float", "f64": "double"}
_UINT_C = {1: "uint8_t", 8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t"}
_INT_C = {8: "int8_t", 16: "int16_t", 32: "int32_t", 64: "int64_t"}


def byte_size(mlir_type) -> int:
    """Bytes of a host scalar in device memory (i1 takes a byte); 0 for other types."""
    s = str(mlir_type)
    bits = width(s) or {"f32": 32, "f64": 64}.get(s, 0)
    return 1 if bits == 1 else bits // 8


def c_type(mlir_type) -> str | None:
    """The C type that holds a host scalar of `mlir_type` (None: none does)."""
    s = str(mlir_type)
    return _FLOAT_C.get(s) or _UINT_C.get(width(s))


# ---------------------------------------------------------------------------
# Folding known values (Python ints hold the bits, unsigned; floats are floats)


def wrap(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1) if bits else value


def signed(value: int, bits: int) -> int:
    value = wrap(value, bits)
    return value - (1 << bits) if bits and value >> (bits - 1) else value


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _floor_div(a: int, b: int) -> int:
    return a // b


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# op -> (signedness, function of the operands): "u" unsigned bits, "s" signed values
FOLD_INT = {
    "arith.addi": ("u", operator.add),
    "arith.subi": ("u", operator.sub),
    "arith.muli": ("u", operator.mul),
    "arith.andi": ("u", operator.and_),
    "arith.ori": ("u", operator.or_),
    "arith.xori": ("u", operator.xor),
    "arith.shli": ("u", operator.lshift),
    "arith.shrui": ("u", operator.rshift),
    "arith.shrsi": ("s", None),
    "arith.minui": ("u", min),
    "arith.maxui": ("u", max),
    "arith.minsi": ("s", min),
    "arith.maxsi": ("s", max),
    "arith.divui": ("u", operator.floordiv),
    "arith.remui": ("u", operator.mod),
    "arith.ceildivui": ("u", _ceil_div),
    "arith.divsi": ("s", _trunc_div),
    "arith.remsi": ("s", lambda a, b: a - _trunc_div(a, b) * b),
    "arith.floordivsi": ("s", _floor_div),
    "arith.ceildivsi": ("s", _ceil_div),
}
_DIVISIONS = {
    "arith.divui",
    "arith.remui",
    "arith.ceildivui",
    "arith.divsi",
    "arith.remsi",
    "arith.floordivsi",
    "arith.ceildivsi",
}


def fold_int(name: str, x: int, y: int, bits: int) -> int:
    """`name` on two known iN values; raises ZeroDivisionError on a division by zero."""
    kind, function = FOLD_INT[name]
    if name in _DIVISIONS and wrap(y, bits) == 0:
        raise ZeroDivisionError(name)
    if name in ("arith.shli", "arith.shrui", "arith.shrsi") and wrap(y, bits) >= bits:
        return 0 if name != "arith.shrsi" else wrap(-1 if signed(x, bits) < 0 else 0, bits)
    if name == "arith.shrsi":
        return wrap(signed(x, bits) >> wrap(y, bits), bits)
    if kind == "s":
        return wrap(function(signed(x, bits), signed(y, bits)), bits)
    return wrap(function(wrap(x, bits), wrap(y, bits)), bits)


_CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMP_OPERATOR = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_CMP_PYTHON = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def cmpi_predicate(attribute) -> str:
    return _CMPI[int(str(attribute).split(":")[0])]


def fold_cmpi(predicate: str, x: int, y: int, bits: int) -> int:
    if predicate[0] == "s":
        x, y = signed(x, bits), signed(y, bits)
    return int(_CMP_PYTHON[_CMP_OPERATOR[predicate.lstrip("su")]](x, y))


# arith.cmpf predicates, in their enum order: (C template over a and b)
_CMPF = [
    ("false", "0"),
    ("oeq", "{a} == {b}"),
    ("ogt", "{a} > {b}"),
    ("oge", "{a} >= {b}"),
    ("olt", "{a} < {b}"),
    ("ole", "{a} <= {b}"),
    ("one", "({a} < {b} || {a} > {b})"),
    ("ord", "({a} == {a} && {b} == {b})"),
    ("ueq", "!({a} < {b} || {a} > {b})"),
    ("ugt", "!({a} <= {b})"),
    ("uge", "!({a} < {b})"),
    ("ult", "!({a} >= {b})"),
    ("ule", "!({a} > {b})"),
    ("une", "{a} != {b}"),
    ("uno", "({a} != {a} || {b} != {b})"),
    ("true", "1"),
]


def cmpf_predicate(attribute) -> str:
    return _CMPF[int(str(attribute).split(":")[0])][0]


def fold_cmpf(predicate: str, x: float, y: float) -> int:
    unordered = math.isnan(x) or math.isnan(y)
    base = {"eq": x == y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y, "ne": x != y}
    if predicate in ("false", "true"):
        return int(predicate == "true")
    if predicate == "ord":
        return int(not unordered)
    if predicate == "uno":
        return int(unordered)
    if predicate[0] == "o":
        return int(not unordered and base[predicate[1:]])
    return int(unordered or base[predicate[1:]])


_FOLD_FLOAT = {
    "arith.addf": operator.add,
    "arith.subf": operator.sub,
    "arith.mulf": operator.mul,
    "arith.divf": lambda a, b: a / b if b else (math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan),
    "arith.maximumf": max,
    "arith.minimumf": min,
    "arith.maxnumf": max,
    "arith.minnumf": min,
}


def round_float(value: float, mlir_type) -> float:
    return float(np.float32(value)) if str(mlir_type) == "f32" else float(value)


def fold_float(name: str, x: float, y: float, mlir_type) -> float:
    with np.errstate(all="ignore"):
        return round_float(_FOLD_FLOAT[name](x, y), mlir_type)


FLOAT_BINARY = set(_FOLD_FLOAT)

# Unary float ops: (Python, C function of double; its float form ends in f)
_FLOAT_UNARY = {
    "math.floor": (math.floor, "floor"),
    "math.ceil": (math.ceil, "ceil"),
    "math.trunc": (math.trunc, "trunc"),
    "math.round": (lambda x: math.copysign(math.floor(abs(x) + 0.5), x), "round"),
    "math.absf": (abs, "fabs"),
    "math.sqrt": (math.sqrt, "sqrt"),
    "arith.negf": (operator.neg, None),
}
FLOAT_UNARY = set(_FLOAT_UNARY)
MATH_FUNCTIONS = tuple(c for _, c in _FLOAT_UNARY.values() if c)


def fold_float_unary(name: str, x: float, mlir_type) -> float:
    if math.isnan(x) or math.isinf(x):
        return x if name != "arith.negf" else -x
    function = _FLOAT_UNARY[name][0]
    return round_float(float(function(x)) if x >= 0 or name != "math.sqrt" else math.nan, mlir_type)


# Bitcasts between a float and the integer of its width: (C helper, numpy types)
_BITCASTS = {
    ("f32", "i32"): ("f32_bits", np.float32, np.uint32),
    ("i32", "f32"): ("bits_f32", np.uint32, np.float32),
    ("f64", "i64"): ("f64_bits", np.float64, np.uint64),
    ("i64", "f64"): ("bits_f64", np.uint64, np.float64),
}


def fold_cast(name: str, x, source_type, result_type):
    """A cast of a known value; raises ValueError for a float that has no
    integer (NaN, infinity)."""
    source, result = str(source_type), str(result_type)
    in_bits, out_bits = width(source), width(result)
    if name == "arith.bitcast":
        if (source, result) not in _BITCASTS:
            return x
        _, source_np, result_np = _BITCASTS[source, result]
        value = np.array(x, source_np).view(result_np)[()]
        return float(value) if is_float(result) else int(value)
    if name in ("arith.sitofp", "arith.uitofp"):
        return round_float(float(signed(x, in_bits) if name == "arith.sitofp" else x), result)
    if name in ("arith.fptosi", "arith.fptoui"):
        if not math.isfinite(x):
            raise ValueError(f"`{name}` of {x}")
        return wrap(int(x), out_bits)
    if name in ("arith.extf", "arith.truncf"):
        return round_float(x, result)
    if name == "arith.extsi" or (name == "arith.index_cast" and out_bits > in_bits):
        return wrap(signed(x, in_bits), out_bits)
    return wrap(x, out_bits)


def fold_align(x: int, n: int) -> int:
    """util.align: x rounded up to a multiple of n."""
    return -(-x // n) * n if n else x


# ---------------------------------------------------------------------------
# C for run-time values: each function returns the C expression of the
# result, in its C type (see c_type).  An operand is a C expression (str) of
# a run-time value, or a known value (int: its bits; float), which is
# written as a literal, so that `x - 1` reads as such.


def _literal(x: int) -> str:
    return f"{x}u" if x < (1 << 32) else f"UINT64_C({x})"


def _u(x, bits: int) -> str:
    """An unsigned operand, in uint64_t arithmetic."""
    if isinstance(x, int):
        return _literal(x)
    return x if bits == 64 else f"(uint64_t){x}"


def _plain(x, bits: int) -> str:
    """An operand as itself: narrower than int, C promotes it to int, so a
    literal next to it is an int too."""
    if isinstance(x, int):
        return str(x) if bits < 32 else _literal(x)
    return x


def _s(x, bits: int) -> str:
    """A signed operand, as int64_t."""
    if isinstance(x, int):
        value = signed(x, bits)
        if value == -(1 << 63):
            return "INT64_MIN"
        return str(value) if -(1 << 31) < value < (1 << 31) else f"INT64_C({value})"
    if bits == 1:
        return f"(-(int64_t){x})"
    return f"(int64_t){x}" if bits == 64 else f"(int64_t)({_INT_C[bits]}){x}"


def _float(x, mlir_type) -> str:
    if isinstance(x, float):
        return repr(x) + ("f" if str(mlir_type) == "f32" else "")
    return x


_C_INT = {
    "arith.addi": "{ua} + {ub}",
    "arith.subi": "{ua} - {ub}",
    "arith.muli": "{ua} * {ub}",
    "arith.andi": "{a} & {b}",
    "arith.ori": "{a} | {b}",
    "arith.xori": "{a} ^ {b}",
    "arith.shli": "({b} < {n} ? {ua} << {b} : 0u)",
    "arith.shrui": "({b} < {n} ? {ua} >> {b} : 0u)",
    "arith.shrsi": "{sa} >> ({b} < {n} ? {b} : {n} - 1)",
    "arith.minui": "({ua} < {ub} ? {ua} : {ub})",
    "arith.maxui": "({ua} > {ub} ? {ua} : {ub})",
    "arith.minsi": "({sa} < {sb} ? {ua} : {ub})",
    "arith.maxsi": "({sa} > {sb} ? {ua} : {ub})",
    "arith.divui": "{ua} / {ub}",
    "arith.remui": "{ua} % {ub}",
    "arith.ceildivui": "{ua} / {ub} + ({ua} % {ub} != 0)",
    "arith.divsi": "{sa} / {sb}",
    "arith.remsi": "{sa} % {sb}",
    "arith.floordivsi": "{sa} / {sb} - ({sa} % {sb} != 0 && ({sa} < 0) != {b_negative})",
    "arith.ceildivsi": "{sa} / {sb} + ({sa} % {sb} != 0 && ({sa} < 0) == {b_negative})",
}
_C_FLOAT = {
    "arith.addf": "{a} + {b}",
    "arith.subf": "{a} - {b}",
    "arith.mulf": "{a} * {b}",
    "arith.divf": "{a} / {b}",
    "arith.maxnumf": "({a} > {b} || {b} != {b} ? {a} : {b})",
    "arith.minnumf": "({a} < {b} || {b} != {b} ? {a} : {b})",
    "arith.maximumf": "({a} != {a} || {a} > {b} ? {a} : {b})",
    "arith.minimumf": "({a} != {a} || {a} < {b} ? {a} : {b})",
}
C_BINARY = set(_C_INT) | set(_C_FLOAT)


def c_binary(name: str, a, b, mlir_type) -> str:
    if name in _C_FLOAT:
        return _C_FLOAT[name].format(a=_float(a, mlir_type), b=_float(b, mlir_type))
    bits = width(mlir_type)
    if name in _MIN_MAX:
        predicate, first = _MIN_MAX[name]
        settled = _settled(predicate, a, b, bits)
        if settled is not None:  # one side always wins
            return _plain(a if settled == first else b, bits)
    b_negative = str(int(signed(b, bits) < 0)) if isinstance(b, int) else f"({_s(b, bits)} < 0)"
    expr = _C_INT[name].format(
        a=_plain(a, bits),
        b=_plain(b, bits),
        ua=_u(a, bits),
        ub=_u(b, bits),
        sa=_s(a, bits),
        sb=_s(b, bits),
        n=bits,
        b_negative=b_negative,
    )
    if name in _DIVISIONS:
        expr = _guarded_division(name, a, b, bits, expr)
    return truncate(expr, bits)


# min/max as (comparison, which result picks a): for _settled.
_MIN_MAX = {
    "arith.minui": ("ult", True),
    "arith.maxui": ("ugt", True),
    "arith.minsi": ("slt", True),
    "arith.maxsi": ("sgt", True),
}
_SIGNED_DIVISIONS = {"arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi"}


def _guarded_division(name: str, a, b, bits: int, expr: str) -> str:
    """MLIR leaves a zero divisor, and a signed INT_MIN / -1, undefined; in
    C they give 0 and the wrapped negation instead of undefined behaviour."""
    known = isinstance(b, int)
    if known and wrap(b, bits) == 0:
        return "0u"
    if name in _SIGNED_DIVISIONS:
        by_minus_one = "0u" if name == "arith.remsi" else f"0u - {_u(a, bits)}"
        if known and signed(b, bits) == -1:
            return by_minus_one
        if not known:
            expr = f"({_s(b, bits)} == -1 ? {by_minus_one} : (uint64_t)({expr}))"
    return expr if known else f"({_plain(b, bits)} == 0 ? 0u : {expr})"


def truncate(expr: str, bits: int) -> str:
    """`expr` (an integer in C) as iN bits."""
    if bits == 1:
        return f"(uint8_t)(({expr}) & 1u)"
    return f"({_UINT_C[bits]})({expr})"


def _value_range(bits: int, is_signed: bool = True) -> tuple:
    """The values an iN holds, read as signed or as unsigned."""
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if is_signed else (0, (1 << bits) - 1)


def _settled(predicate: str, a, b, bits: int) -> int | None:
    """The result of comparing a run-time value with a literal when it is
    the same for every value of the run-time side (C warns of such
    comparisons: -Wtype-limits), else None."""
    if isinstance(a, int) == isinstance(b, int):
        return None
    low, high = _value_range(bits, predicate[0] == "s")
    literal = a if isinstance(a, int) else b
    literal = signed(literal, bits) if predicate[0] == "s" else wrap(literal, bits)
    compare = _CMP_PYTHON[_CMP_OPERATOR[predicate.lstrip("su")]]
    if isinstance(a, int):
        results = {compare(literal, low), compare(literal, high)}
    else:
        results = {compare(low, literal), compare(high, literal)}
    ordering = predicate.lstrip("su") not in ("eq", "ne")
    return results.pop() if ordering and len(results) == 1 else None


def c_cmpi(predicate: str, a, b, bits: int) -> str:
    settled = _settled(predicate, a, b, bits)
    if settled is not None:
        return f"{int(settled)}u"
    if predicate[0] == "s":
        a, b = _s(a, bits), _s(b, bits)
    else:
        a, b = _plain(a, bits), _plain(b, bits)
    return f"(uint8_t)({a} {_CMP_OPERATOR[predicate.lstrip('su')]} {b})"


def c_cmpf(predicate: str, a, b, mlir_type) -> str:
    template = dict(_CMPF)[predicate]
    return f"(uint8_t)({template.format(a=_float(a, mlir_type), b=_float(b, mlir_type))})"


def c_select(condition: str, a, b, mlir_type) -> str:
    if is_float(mlir_type):
        return f"({condition} ? {_float(a, mlir_type)} : {_float(b, mlir_type)})"
    bits = width(mlir_type)
    return f"({condition} ? {_plain(a, bits)} : {_plain(b, bits)})"


def float_unary_calls(name: str, mlir_type) -> tuple:
    """The <math.h> function that c_float_unary's C calls (none for a negation)."""
    function = _FLOAT_UNARY[name][1]
    return () if function is None else (f"{function}{'f' if str(mlir_type) == 'f32' else ''}",)


def c_float_unary(name: str, a: str, mlir_type) -> str:
    calls = float_unary_calls(name, mlir_type)
    return f"{calls[0]}({a})" if calls else f"-{a}"


def c_align(a, n) -> str:
    """util.align on index values."""
    if isinstance(n, int) and n and not n & (n - 1):
        return f"({_u(a, 64)} + {n - 1}u) & ~(uint64_t){n - 1}u" if n > 1 else _plain(a, 64)
    return f"({_plain(n, 64)} ? ({_u(a, 64)} + {_plain(n, 64)} - 1u) / {_plain(n, 64)} * {_plain(n, 64)} : {_plain(a, 64)})"


# The <math.h> functions the C may call, double and float forms.
LIBM = frozenset(f + suffix for f in MATH_FUNCTIONS for suffix in ("", "f"))


def uses_libm(calls) -> bool:
    """Whether any of `calls` (the functions the expressions call, as their
    builders here record them) is a <math.h> function."""
    return any(c in LIBM for c in calls)


def cast_calls(name: str, source_type, result_type) -> tuple:
    """The helper that c_cast's C calls (a bitcast between a float and an integer)."""
    key = (str(source_type), str(result_type))
    return (_BITCASTS[key][0],) if name == "arith.bitcast" and key in _BITCASTS else ()


def c_cast(name: str, a: str, source_type, result_type) -> str | None:
    """The C of a cast, or None when there is none for these types."""
    source, result = str(source_type), str(result_type)
    in_bits, out_bits = width(source), width(result)
    if name == "arith.bitcast":
        if (source, result) in _BITCASTS:
            return f"{_BITCASTS[source, result][0]}({a})"
        return a if in_bits == out_bits and in_bits else None
    if name in ("arith.trunci", "arith.extui", "arith.index_castui") or (
        name == "arith.index_cast" and out_bits <= in_bits
    ):
        return truncate(a, out_bits) if in_bits and out_bits else None
    if name in ("arith.extsi", "arith.index_cast"):
        return truncate(f"(uint64_t){_s(a, in_bits)}", out_bits) if in_bits and out_bits else None
    if name in ("arith.sitofp", "arith.uitofp") and in_bits and is_float(result):
        value = _s(a, in_bits) if name == "arith.sitofp" else a
        return f"({_FLOAT_C[result]}){value}"
    if name in ("arith.fptosi", "arith.fptoui") and is_float(source) and out_bits:
        c_int = _INT_C.get(out_bits, "int64_t") if name == "arith.fptosi" else _UINT_C[out_bits]
        return truncate(f"({c_int}){a}", out_bits)
    if name in ("arith.extf", "arith.truncf") and is_float(source) and is_float(result):
        return f"({_FLOAT_C[result]}){a}"
    return None


# Helpers the C may call (runtimeless.c.j2 defines the ones a model uses).
HELPERS = tuple(helper for helper, _, _ in _BITCASTS.values())


def helpers_used(calls) -> list:
    """The HELPERS among `calls`, in a fixed order."""
    calls = set(calls)
    return [name for name in HELPERS if name in calls]


# ---------------------------------------------------------------------------
# Bounds of run-time integers: (lo, hi) of the signed value, with -inf/inf for
# an end nothing is known of.  A buffer whose size is a run-time value (a
# crop whose extent is read from an input, then padded back to a static
# shape) gets the upper bound of that size in the arena.  The bounds come
# from the clamps the program itself applies (min/max, select) through +, -,
# *, division by a constant, casts and util.align; they assume that no
# arithmetic wraps, so the C checks each size against its bound at run time
# and fails the call where it does not hold.

UNKNOWN = (-math.inf, math.inf)


def _clamp(bounds, bits: int) -> tuple:
    """`bounds` within what an iN value can hold (an i1 as 0 or 1, as the
    C holds it)."""
    low, high = (0, 1) if bits == 1 else _value_range(bits)
    lo, hi = max(bounds[0], low), min(bounds[1], high)
    return (lo, hi) if lo <= hi else (low, high)


def type_bounds(mlir_type) -> tuple:
    bits = width(mlir_type)
    return _clamp(UNKNOWN, bits) if bits else UNKNOWN


def known_bounds(value: int, mlir_type) -> tuple:
    bits = width(mlir_type)
    v = value if bits == 1 else signed(value, bits)
    return (v, v)


def _product(x, y):
    return 0 if x == 0 or y == 0 else x * y


_MONOTONE_BY_POSITIVE = {
    "arith.divsi": _trunc_div,
    "arith.floordivsi": _floor_div,
    "arith.ceildivsi": _ceil_div,
    "arith.divui": operator.floordiv,
    "arith.ceildivui": _ceil_div,
}


def bounds_binary(name: str, a: tuple, b: tuple, bits: int) -> tuple:
    """Bounds of `name` on operands bounded by `a` and `b`."""
    (alo, ahi), (blo, bhi) = a, b
    if name.endswith("ui") and (alo < 0 or blo < 0):
        return type_bounds(f"i{bits}")
    if name in ("arith.addi", "arith.subi", "arith.muli"):
        function = {"arith.addi": operator.add, "arith.subi": operator.sub, "arith.muli": _product}[name]
        corners = [function(x, y) for x in (alo, ahi) for y in (blo, bhi)]
        corners = [c for c in corners if c == c]  # inf - inf
        if len(corners) < 4:
            return _clamp(UNKNOWN, bits)
        return _clamp((min(corners), max(corners)), bits)
    if name in ("arith.minsi", "arith.minui"):
        return (min(alo, blo), min(ahi, bhi))
    if name in ("arith.maxsi", "arith.maxui"):
        return (max(alo, blo), max(ahi, bhi))
    if name in _MONOTONE_BY_POSITIVE and blo == bhi and blo > 0:
        function = _MONOTONE_BY_POSITIVE[name]

        def at(x):
            return x if math.isinf(x) else function(x, blo)

        return (at(alo), at(ahi))
    if name == "arith.andi" and blo == bhi and blo >= 0:
        return (0, blo if alo < 0 else min(ahi, blo))
    if name == "arith.shrui" and blo == bhi and 0 <= blo < bits and alo >= 0:
        return (alo // (1 << blo), ahi // (1 << blo) if not math.isinf(ahi) else ahi)
    return _clamp(UNKNOWN, bits)


def bounds_cast(name: str, a: tuple, source_type, result_type) -> tuple:
    in_bits, out_bits = width(source_type), width(result_type)
    if not in_bits or not out_bits:
        return UNKNOWN
    if name in ("arith.extui", "arith.index_castui") and a[0] < 0:
        return _clamp((0, (1 << in_bits) - 1), out_bits)
    if name in ("arith.trunci", "arith.extui", "arith.extsi", "arith.index_cast", "arith.index_castui"):
        return _clamp(a, out_bits)
    return _clamp(UNKNOWN, out_bits)


def bounds_select(a: tuple, b: tuple) -> tuple:
    return (min(a[0], b[0]), max(a[1], b[1]))


def bounds_align(a: tuple, n: tuple) -> tuple:
    if n[0] != n[1] or n[0] <= 0 or a[0] < 0:
        return UNKNOWN
    return (fold_align(a[0], n[0]), a[1] if math.isinf(a[1]) else fold_align(a[1], n[0]))
