"""The typed C API of a model, as data for the templates.

Python decides every name, type and size here; the templates only lay them
out.  Sizes that the header `#define`s are the same numbers the manifest
records.
"""

from __future__ import annotations

from dataclasses import dataclass

from .naming import function_symbols
from .signature import NUMPY_TO_C, Function, Value

# Scalar arguments pass through the VM as i32/i64/f32/f64 values.
_VM_SCALARS = {
    "int32": ("i32", "int32_t"),
    "int64": ("i64", "int64_t"),
    "float32": ("f32", "float"),
    "float64": ("f64", "double"),
    "uint32": ("i32", "uint32_t"),
    "uint64": ("i64", "uint64_t"),
    "bool": ("i32", "int32_t"),
    "int8": ("i32", "int32_t"),
    "int16": ("i32", "int32_t"),
}


# Element types C has no type for, passed as their bit patterns.
_C_TYPE_NOTES = {
    "float16": "uint16_t holds IEEE 754 binary16 bit patterns",
    "bfloat16": "uint16_t holds bfloat16 bit patterns, the upper half of a float's bits",
    "bool": "uint8_t, 0 or 1",
}


@dataclass
class CValue:
    name: str  # C parameter name
    macro: str  # PREFIX_FN_NAME
    value: Value
    c_type: str  # element type in C
    hal_type: str  # IREE_HAL_ELEMENT_TYPE_*
    vm_scalar: str | None  # "i32" ... for scalars

    @property
    def is_tensor(self):
        return self.value.is_tensor

    @property
    def note(self) -> str:
        """What the C element type holds when C has no such type."""
        return _C_TYPE_NOTES.get(self.value.dtype, "")

    @property
    def defines(self) -> list:
        v = self.value
        if not v.is_tensor:
            return [(f"{self.macro}_SIZE_BYTES", str(v.element_size))]
        out = [(f"{self.macro}_RANK", str(v.rank))]
        out += [(f"{self.macro}_DIM{i}", str(d)) for i, d in enumerate(v.shape) if d is not None]
        if not v.is_static:
            return out
        out += [
            (f"{self.macro}_ELEMENT_COUNT", str(v.element_count)),
            (f"{self.macro}_SIZE_BYTES", str(v.byte_size)),
        ]
        return out


@dataclass
class CFunction:
    function: Function
    prefix: str
    symbol: str  # prefix_suffix
    macro: str  # PREFIX_SUFFIX
    inputs: list
    outputs: list
    typed: bool  # static shapes and supported types: gets the typed call

    @property
    def name(self):
        return self.function.name

    @property
    def c_params(self) -> str:
        return c_params(self.prefix, self)


def _c_value(prefix_macro: str, v: Value, fn_macro: str) -> CValue:
    c_type, hal_type, _ = NUMPY_TO_C[v.dtype]
    vm_scalar = None
    if not v.is_tensor:
        vm_scalar, c_type = _VM_SCALARS.get(v.dtype, (None, c_type))
    return CValue(v.name, f"{fn_macro}_{v.name.upper()}", v, c_type, hal_type, vm_scalar)


def build_functions(prefix: str, functions, source: str) -> list:
    symbols = function_symbols(prefix, functions, source)
    out = []
    for f in functions:
        macro = f"{prefix}_{symbols[f.name]}".upper()
        inputs = [_c_value(prefix, v, macro) for v in f.inputs]
        outputs = [_c_value(prefix, v, macro) for v in f.outputs]
        scalars_ok = all(v.vm_scalar for v in inputs + outputs if not v.is_tensor)
        out.append(CFunction(f, prefix, f"{prefix}_{symbols[f.name]}", macro, inputs, outputs, f.is_static and scalars_ok))
    return out


def c_byte_block(data: bytes, per_row: int = 16, indent: str = "    ") -> str:
    """The module bytes as lines of C hex literals (`0x7f, 0x45, ...,`), one
    string: this runs over megabytes, so it avoids per-byte Python work."""
    rows = (data[i : i + per_row].hex(" ") for i in range(0, len(data), per_row))
    return "\n".join(f"{indent}0x{row.replace(' ', ', 0x')}," for row in rows)


def c_params(prefix: str, fn: CFunction) -> str:
    """The parameter list of a function's C entry point."""
    params = [f"{prefix}_t* model"]
    for v in fn.inputs:
        if not v.is_tensor:
            params.append(f"{v.c_type} {v.name}")
        elif fn.typed:
            params.append(f"const {v.c_type}* {v.name}")
        else:
            params.append(f"iree_hal_buffer_view_t* {v.name}")
    for v in fn.outputs:
        if not v.is_tensor or fn.typed:
            params.append(f"{v.c_type}* {v.name}")
        else:
            params.append(f"iree_hal_buffer_view_t** out_{v.name}")
    return ", ".join(params)
