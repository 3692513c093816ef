"""The int8 kernels' forms for the operators without weights: the residual
Add and the average pools, beside the convolution and fully connected ones
of int8_match.py, whose spec() renders them with templates/mlir/int8_add.mlir.jinja
and int8_avgpool.mlir.jinja.

IREE's ONNX import turns DequantizeLinear -> Add -> QuantizeLinear into two
`dequantize_affine`, a `linalg.generic` whose body is one `arith.addf`, and a
`quantize_affine`.  Only the same-shape Add (identity maps, any rank 1 to 4,
any sizes) is matched; a broadcast Add keeps IREE's code.

AveragePool (no padding) and GlobalAveragePool import as a `linalg.fill`
of 0.0, a `linalg.pooling_nchw_sum` of the dequantized input over an empty
(KH, KW) window, a `linalg.generic` dividing by the window's size (an
`arith.constant` captured by its body) and a `quantize_affine`.  A
quantized pooling_nchw_sum followed by one generic is what IREE's import
makes of an ONNX AveragePool or GlobalAveragePool, nothing else; the
kernel divides by the window's size as that generic does, and emit's
verification checks it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass


def zero_points(**operands: bool) -> str:
    """A form's name part for the operands whose zero point is an operand
    (not 0), in the order given: `zero_points(x=True, y=False)` is "zx";
    "znone" when none is."""
    return "z" + ("".join(name for name, given in operands.items() if given) or "none")


ADD_RANKS = (1, 2, 3, 4)
POOL_STRIDES = (1, 2)


def dim_names(rank: int) -> tuple:
    """The index operands of a tensor's dims: d0, d1, ..."""
    return tuple(f"d{i}" for i in range(rank))


@dataclass(frozen=True)
class AddForm:
    rank: int
    za: bool  # a's zero point is an operand (not 0)
    zb: bool  # b's
    zy: bool  # the output's
    # TFLite Micro's ADD arithmetic (a .tflite source): the _tflm kernel.
    tflm: bool = False

    @property
    def name(self) -> str:
        return f"add_r{self.rank}_{zero_points(a=self.za, b=self.zb, y=self.zy)}" + ("_tflm" if self.tflm else "")

    @property
    def dims(self) -> tuple:
        return dim_names(self.rank)


def add_forms(tflm: bool = False) -> list:
    """A zero point of 0 is dropped by the import, so each
    present-or-absent combination is its own form."""
    zeros = itertools.product((True, False), repeat=3)
    return [AddForm(rank, *z, tflm=tflm) for rank, z in itertools.product(ADD_RANKS, zeros)]


@dataclass(frozen=True)
class PoolForm:
    stride: int
    zx: bool  # the input's zero point is an operand (not 0)
    zy: bool  # the output's

    @property
    def name(self) -> str:
        return f"avgpool_s{self.stride}_{zero_points(x=self.zx, y=self.zy)}"


def pool_forms(strides=()) -> list:
    """The committed strides' forms, and those of `strides` (a model's own,
    frontend/conv_geometry.pool_strides) that they lack: the kernel takes
    any stride, the matcher compares it exactly."""
    every = sorted(set(POOL_STRIDES) | set(strides))
    return [PoolForm(s, zx, zy) for s in every for zx, zy in itertools.product((True, False), repeat=2)]
