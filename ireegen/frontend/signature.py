"""The typed signature of a model's exported functions.

A `Signature` is what the C API, the manifest and the parity harness agree
on: each public function with its inputs and outputs (numpy dtype, shape with
None for a dynamic dimension).  It is read from the model's MLIR before
compilation and can be checked against the `iree.abi.declaration` that the
compiled module reflects.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ireegen.common.errors import UsageError

# MLIR element type -> numpy dtype string.  Order matters for nothing; the
# table is the single place that says which element types the C API knows.
MLIR_TO_NUMPY = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "si8": "int8",
    "si16": "int16",
    "si32": "int32",
    "si64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
    "index": "int64",
}

# numpy dtype string -> (C element type, IREE HAL element type enum, byte size)
NUMPY_TO_C = {
    "float16": ("uint16_t", "IREE_HAL_ELEMENT_TYPE_FLOAT_16", 2),
    "bfloat16": ("uint16_t", "IREE_HAL_ELEMENT_TYPE_BFLOAT_16", 2),
    "float32": ("float", "IREE_HAL_ELEMENT_TYPE_FLOAT_32", 4),
    "float64": ("double", "IREE_HAL_ELEMENT_TYPE_FLOAT_64", 8),
    "bool": ("uint8_t", "IREE_HAL_ELEMENT_TYPE_BOOL_8", 1),
    "int8": ("int8_t", "IREE_HAL_ELEMENT_TYPE_INT_8", 1),
    "int16": ("int16_t", "IREE_HAL_ELEMENT_TYPE_INT_16", 2),
    "int32": ("int32_t", "IREE_HAL_ELEMENT_TYPE_INT_32", 4),
    "int64": ("int64_t", "IREE_HAL_ELEMENT_TYPE_INT_64", 8),
    "uint8": ("uint8_t", "IREE_HAL_ELEMENT_TYPE_UINT_8", 1),
    "uint16": ("uint16_t", "IREE_HAL_ELEMENT_TYPE_UINT_16", 2),
    "uint32": ("uint32_t", "IREE_HAL_ELEMENT_TYPE_UINT_32", 4),
    "uint64": ("uint64_t", "IREE_HAL_ELEMENT_TYPE_UINT_64", 8),
}

_TENSOR_RE = re.compile(r"^tensor<(?P<body>.*)>$")


@dataclass(frozen=True)
class Quantization:
    """A quantized tensor's meaning: real value = scale * (q - zero_point),
    per tensor (frontend/quantized_io.py)."""

    scale: float  # a float32's value
    zero_point: int
    dtype: str  # int8 or uint8: the quantized element type

    def to_json(self) -> dict:
        return {"scale": self.scale, "zero_point": self.zero_point, "dtype": self.dtype}

    @staticmethod
    def from_json(d: dict) -> Quantization:
        return Quantization(float(d["scale"]), int(d["zero_point"]), str(d["dtype"]))


@dataclass(frozen=True)
class Value:
    """One input or output: a tensor, or a scalar when `shape == ()` and not `is_tensor`."""

    name: str  # the model's own name (ONNX name, iree.abi.name) or input<i>/output<i>
    dtype: str  # what the caller passes and gets: uint8 for an ONNX uint8 input
    shape: tuple  # ints, None for a dynamic dim
    is_tensor: bool = True
    # The element type of the compiled module's ABI when it differs from
    # `dtype`: lowering makes integers signless, so an ONNX uint8 input is an
    # int8 buffer view to IREE (same bytes).  None: the same as `dtype`.
    abi_dtype: str | None = None
    # An int8/uint8 value of a quantized interface (--quantized-io): what its
    # integers mean.  A float output: the quantization of the
    # DequantizeLinear that computes it (verification's one-step tolerance).
    quantization: Quantization | None = None

    @property
    def step(self) -> float | None:
        """One quantization step of this value in its own units (1 for an
        integer, the scale for a float output of a DequantizeLinear)."""
        if self.quantization is None:
            return None
        return 1.0 if self.dtype == self.quantization.dtype else self.quantization.scale

    @property
    def module_dtype(self) -> str:
        """The element type the compiled module's buffer views carry."""
        return self.abi_dtype or self.dtype

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def element_count(self) -> int:
        if not self.is_static:
            raise ValueError(f"{self.name} has a dynamic shape")
        return math.prod(self.shape)

    @property
    def element_size(self) -> int:
        return NUMPY_TO_C[self.dtype][2]

    @property
    def byte_size(self) -> int:
        return self.element_count * self.element_size

    @property
    def mlir_type(self) -> str:
        elem = {v: k for k, v in reversed(MLIR_TO_NUMPY.items())}[self.dtype]
        if not self.is_tensor:
            return elem
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{elem}>"

    def to_json(self) -> dict:
        out = {
            "name": self.name,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "kind": "tensor" if self.is_tensor else "scalar",
        }
        if self.abi_dtype:
            out["module_dtype"] = self.abi_dtype
        if self.quantization is not None:
            out["quantization"] = self.quantization.to_json()
        return out

    @staticmethod
    def from_json(d: dict) -> Value:
        q = d.get("quantization")
        return Value(
            d["name"],
            d["dtype"],
            tuple(d["shape"]),
            d.get("kind", "tensor") == "tensor",
            d.get("module_dtype"),
            Quantization.from_json(q) if q else None,
        )


@dataclass(frozen=True)
class Function:
    name: str
    inputs: tuple = field(default_factory=tuple)
    outputs: tuple = field(default_factory=tuple)

    @property
    def is_static(self) -> bool:
        return all(v.is_static for v in self.inputs + self.outputs)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "inputs": [v.to_json() for v in self.inputs],
            "outputs": [v.to_json() for v in self.outputs],
        }

    @staticmethod
    def from_json(d: dict) -> Function:
        return Function(
            d["name"],
            tuple(Value.from_json(v) for v in d["inputs"]),
            tuple(Value.from_json(v) for v in d["outputs"]),
        )


def parse_type(text: str, name: str, where: str) -> Value:
    """Parses an MLIR builtin type (`tensor<2x?xf32>`, `i32`, ...) into a Value."""
    text = text.strip()
    m = _TENSOR_RE.match(text)
    if m:
        # Dimensions, then the element type (which may itself hold an x:
        # complex<f32>).
        dm = re.match(r"^((?:(?:\d+|\?)x)*)(.*)$", m.group("body"))
        dims, elem = [d for d in dm.group(1).split("x") if d], dm.group(2)
        if elem not in MLIR_TO_NUMPY:
            raise UsageError(f"{where}: {name} has element type {elem}, which ireegen does not support")
        shape = tuple(None if d == "?" else int(d) for d in dims)
        return Value(name, MLIR_TO_NUMPY[elem], shape, True)
    if text in MLIR_TO_NUMPY:
        return Value(name, MLIR_TO_NUMPY[text], (), False)
    raise UsageError(f"{where}: {name} has type {text}, which ireegen does not support")


def function_from_types(name: str, input_types, result_types, where: str, input_names=(), output_names=()) -> Function:
    """A Function from MLIR types; a value without a name (None, or past the
    end of the names given) is called input<i>/output<i>."""

    def names(given, count, kind):
        given = list(given or ())[:count]
        given += [None] * (count - len(given))
        return [n if n else f"{kind}{i}" for i, n in enumerate(given)]

    ins = names(input_names, len(input_types), "input")
    outs = names(output_names, len(result_types), "output")
    return Function(
        name,
        tuple(parse_type(str(t), n, f"{where}: function @{name}") for n, t in zip(ins, input_types)),
        tuple(parse_type(str(t), n, f"{where}: function @{name}") for n, t in zip(outs, result_types)),
    )


def with_source_types(value: Value, name: str, dtype: str | None, quantization: Quantization | None = None) -> Value:
    """`value` as the source model declares it: its own name, and its dtype
    where lowering only dropped the signedness (ui8 -> i8: same bytes);
    `quantization` what its values mean (Value.quantization)."""
    if dtype and dtype != value.dtype:
        same_bytes = (
            dtype in NUMPY_TO_C
            and NUMPY_TO_C[dtype][2] == NUMPY_TO_C[value.dtype][2]
            and dtype.lstrip("u") == value.dtype.lstrip("u")
        )
        if same_bytes:
            return Value(name, dtype, value.shape, value.is_tensor, value.dtype, quantization)
    return Value(name, value.dtype, value.shape, value.is_tensor, value.abi_dtype, quantization)


_DECL_RE = re.compile(r"func @(?P<name>[\w.$-]+)\((?P<ins>.*)\) -> \((?P<outs>.*)\)$")
_ARG_RE = re.compile(r"%(?P<name>\w+): (?P<type>[^,]+(?:<[^>]*>)?)")


def function_from_declaration(decl: str) -> Function:
    """Parses the `iree.abi.declaration` reflection string of a compiled function."""
    m = _DECL_RE.search(decl)
    if not m:
        raise ValueError(f"unrecognised iree.abi.declaration: {decl!r}")

    def values(text):
        return tuple(parse_type(a.group("type"), a.group("name"), decl) for a in _ARG_RE.finditer(text))

    return Function(m.group("name"), values(m.group("ins")), values(m.group("outs")))
