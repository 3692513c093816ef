"""The typed C API of a model, as data for the templates.

Python decides every name, type and size here; the templates only lay them
out.  Sizes that the header `#define`s are the same numbers the manifest
records.
"""

from __future__ import annotations

from dataclasses import dataclass

from ireegen.frontend.signature import NUMPY_TO_C, Function, Value

from .naming import check_macros, function_symbols, value_identifiers

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


# Macros the headers define per model (runtimeless.h.j2), after PREFIX_.
MODEL_MACRO_SUFFIXES = (
    "ARENA_SIZE",
    "ARENA_SIZE_ALIGNED_IO",
    "ARENA_ALIGNMENT",
    "CONSTANTS_SIZE",
    "EXPORT_COUNT",
    "IREEGEN_H_",
)

# Element types C has no type for, passed as their bit patterns.
_C_TYPE_NOTES = {
    "float16": "uint16_t holds IEEE 754 binary16 bit patterns",
    "bfloat16": "uint16_t holds bfloat16 bit patterns, the upper half of a float's bits",
    "bool": "uint8_t, 0 or 1",
}


@dataclass
class CValue:
    name: str  # C parameter name (naming.value_identifiers of the model's name)
    macro: str  # PREFIX_FN_NAME
    value: Value
    c_type: str  # element type in C
    hal_type: str  # IREE_HAL_ELEMENT_TYPE_*
    vm_scalar: str | None  # "i32" ... for scalars

    @property
    def is_tensor(self):
        return self.value.is_tensor

    @property
    def source_name(self) -> str:
        """The model's own name of the value (ONNX name, iree.abi.name, input<i>)."""
        return self.value.name

    def to_json(self) -> dict:
        return dict(self.value.to_json(), c_name=self.name, c_macro_prefix=self.macro)

    @property
    def note(self) -> str:
        """What the C element type holds when C has no such type, or what a
        quantized interface tensor's integers mean."""
        if self.quantization_defines:
            return "quantized: real value = SCALE * (q - ZERO_POINT)"
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
        return out + self.quantization_defines

    @property
    def quantization_defines(self) -> list:
        """`_SCALE` and `_ZERO_POINT` of a quantized interface tensor
        (--quantized-io): real value = SCALE * (q - ZERO_POINT)."""
        q = self.value.quantization
        if q is None or self.value.dtype != q.dtype:
            return []
        zero = str(q.zero_point) if q.zero_point >= 0 else f"({q.zero_point})"
        return [(f"{self.macro}_SCALE", c_float(q.scale)), (f"{self.macro}_ZERO_POINT", zero)]


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
    def params(self) -> list:
        """The parameters of the function's C entry point."""
        return c_params(self.prefix, self)

    def to_json(self) -> dict:
        """The function as the manifest records it: the model's names and the C ones."""
        return {
            "name": self.name,
            "inputs": [v.to_json() for v in self.inputs],
            "outputs": [v.to_json() for v in self.outputs],
            "c_symbol": self.symbol,
            "c_macro_prefix": self.macro,
            "c_call": "typed" if self.typed else "buffer-view",
        }


def _c_value(c_name: str, v: Value, fn_macro: str) -> CValue:
    # The C type is the caller's (uint8_t for ONNX uint8); the HAL element
    # type is the compiled module's (signless after lowering).
    c_type = NUMPY_TO_C[v.dtype][0]
    hal_type = NUMPY_TO_C[v.module_dtype][1]
    vm_scalar = None
    if not v.is_tensor:
        vm_scalar, c_type = _VM_SCALARS.get(v.dtype, (None, c_type))
    return CValue(c_name, f"{fn_macro}_{c_name.upper()}", v, c_type, hal_type, vm_scalar)


def build_functions(prefix: str, functions, source: str) -> list:
    """The C form of each function: symbols, parameter names and macros,
    every #define checked against every other."""
    symbols = function_symbols(prefix, functions, source)
    out = []
    macros = [(f"{prefix.upper()}_{s}", "the model API") for s in MODEL_MACRO_SUFFIXES]
    for f in functions:
        macro = f"{prefix}_{symbols[f.name]}".upper()
        names = value_identifiers([v.name for v in f.inputs + f.outputs], prefix)
        values = [_c_value(n, v, macro) for n, v in zip(names, f.inputs + f.outputs)]
        inputs, outputs = values[: len(f.inputs)], values[len(f.inputs) :]
        scalars_ok = all(v.vm_scalar for v in inputs + outputs if not v.is_tensor)
        macros += [(m, f"@{f.name} {v.source_name}") for v in values for m, _ in v.defines]
        out.append(
            CFunction(f, prefix, f"{prefix}_{symbols[f.name]}", macro, inputs, outputs, f.is_static and scalars_ok)
        )
    check_macros(macros, source)
    return out


def c_float(value: float) -> str:
    """A float32 value as the shortest C float literal that reads back as it
    (`0.00392156886f`)."""
    import numpy as np

    text = np.format_float_positional(np.float32(value), unique=True, trim="0")
    if "e" not in text and len(text) > 12:
        text = np.format_float_scientific(np.float32(value), unique=True, trim="0")
    return f"{text}f" if any(c in text for c in ".e") else f"{text}.0f"


def c_byte_block(data: bytes, per_row: int = 16, indent: str = "    ") -> str:
    """The bytes as lines of C hex literals (`0x7f, 0x45, ...,`), one string.
    This runs over megabytes, so numpy lays the text out from a table of the
    256 byte texts, a row at a time, instead of Python working per byte."""
    import numpy as np

    cell = 6  # "0x7f, "
    table = np.array([f"0x{b:02x}, ".encode() for b in range(256)], f"S{cell}")
    prefix = np.frombuffer(indent.encode(), np.uint8)
    full = len(data) - len(data) % per_row
    text = []
    # (first byte, bytes per row, rows): the whole rows, then a shorter last one
    for start, width, count in ((0, per_row, full // per_row), (full, len(data) - full, 1)):
        if width == 0 or count == 0:
            continue
        cells = table[np.frombuffer(data, np.uint8, count * width, start)].view(np.uint8).reshape(count, width * cell)
        rows = np.empty((count, len(prefix) + width * cell), np.uint8)
        rows[:, : len(prefix)] = prefix
        rows[:, len(prefix) :] = cells
        rows[:, -1] = ord("\n")  # in place of the row's last space
        text.append(rows.tobytes().decode("ascii"))
    return "".join(text)[:-1]


def c_params(prefix: str, fn: CFunction) -> list:
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
    return params
