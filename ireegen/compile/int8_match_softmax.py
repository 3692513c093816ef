"""The int8 softmax kernel's forms (softmax.c: ONNX Runtime's QLinearSoftmax),
rendered by int8_match.spec() with templates/mlir/int8_softmax.mlir.jinja.

IREE's ONNX import turns DequantizeLinear -> Softmax (last axis) ->
QuantizeLinear of a 2-D tensor into a `dequantize_affine`, a max
reduction (torch's `max.dim`: the max and its index), a subtract of the
max, an `exp`, a sum reduction, a divide and a `quantize_affine`.  The
matcher takes that DAG from the int8 input to the int8 output, in each of
the four forms the zero points give (a zero point of 0 is dropped by the
import), and the call hands the kernel the rows, the row length, both
scales and the output's zero point (the input's cancels in x - max(x)).

Its results are ONNX Runtime's, which can differ from IREE's float softmax
by one quantization step where a probability lies on a rounding boundary:
emit's verification allows one step on a quantized output
(docs/kernels-int8.md says why), and no more.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ireegen.compile.int8_match_ops import zero_points


@dataclass(frozen=True)
class SoftmaxForm:
    zx: bool  # the input's zero point is an operand (not 0)
    zy: bool  # the output's

    @property
    def name(self) -> str:
        return f"softmax_{zero_points(x=self.zx, y=self.zy)}"


def forms() -> list:
    return [SoftmaxForm(zx, zy) for zx, zy in itertools.product((True, False), repeat=2)]
