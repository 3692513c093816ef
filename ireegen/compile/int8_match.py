"""The match spec of ireegen's int8 kernels (ireegen/kernels/int8/).

IREE's ONNX import turns a QDQ int8 operator into float linalg between
`iree_linalg_ext.dequantize_affine` and `quantize_affine` ops (docs/kernels-int8.md).
The spec matches those DAGs at preprocessing, from the int8 input to the
int8 output, and replaces each with a dispatch that calls a C kernel.  The
transform dialect matches attributes exactly, so every form IREE writes
needs its own matcher: the tables below list the forms (a zero point of 0 is
dropped by the import, padding and strides are attributes), and `spec()`
renders one matcher and one call per form from templates/mlir/ (one
template per kind of operator; int8_spec.mlir.jinja puts them together).

Each call is inlined where the DAG was (`cast_and_call inline_call`): a
shared `util.func` called from several places crashes IREE 3.13's
`iree-util-ipo` on ResNet-8 (a segfault at dispatch creation).

The spec is committed as ireegen/kernels/int8/int8.match.mlir; regenerate it
with `python -m ireegen.compile.int8_match > ireegen/kernels/int8/int8.match.mlir`
(tests/test_int8_kernels.py checks that the two agree).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ireegen.compile import int8_match_ops, int8_match_softmax
from ireegen.compile.mlir_templates import render

# The convolutions matched: padding (top, left, bottom, right) none, "same" for 3x3 and 5x5, "same"
# of a stride-2 3x3 (TensorFlow style, one-sided) and of DS-CNN's 10x4
# stride-2 first layer.
CONV_PADS = ((0, 0, 0, 0), (1, 1, 1, 1), (0, 0, 1, 1), (1, 1, 0, 0), (2, 2, 2, 2), (4, 1, 5, 1))
# and stride 1 or 2.
CONV_STRIDES = (1, 2)


@dataclass(frozen=True)
class Form:
    op: str  # "fc" (weights N x K), "fckn" (weights K x N), "conv" or "dwconv"
    x_zero: bool  # the input's zero point is an operand (not 0)
    y_zero: bool  # the output's zero point is an operand (not 0)
    pads: tuple = (0, 0, 0, 0)
    stride: int = 1
    # A weight scale per output channel (quantize_static(per_channel=True)):
    # the weight's and the bias's scales are tensors, and the kernel takes a
    # table of multipliers computed at compile time.
    per_channel: bool = False
    # TFLite Micro's requantization (a .tflite source): per channel, the
    # kernel takes a table of TFLM's (multiplier, shift) pairs computed at
    # compile time in double, as TFLM's QuantizeMultiplier.
    tflm: bool = False

    @property
    def is_fc(self) -> bool:
        return self.op in ("fc", "fckn")

    @property
    def name(self) -> str:
        shape = "" if self.is_fc else "_p" + "".join(map(str, self.pads)) + f"_s{self.stride}"
        zeros = int8_match_ops.zero_points(x=self.x_zero, y=self.y_zero)
        return f"{self.op}{shape}_{zeros}" + self.suffix

    @property
    def suffix(self) -> str:
        """Of the form's name and its executable's: TFLM, per channel or per tensor."""
        return "_tflm" if self.tflm else "_pc" if self.per_channel else ""

    @property
    def rank(self) -> int:
        return 2 if self.is_fc else 4

    @property
    def channel_dim(self) -> int:
        """The weight's output-channel axis: the first of (F, C, KH, KW) and
        Gemm's (N, K), the second of a (K, N) weight."""
        return 1 if self.op == "fckn" else 0

    @property
    def executable(self) -> str:
        """The executable its call dispatches: both fully connected forms
        call the (N, K) kernel; per channel, its _pc twin."""
        return "ireegen_i8_" + ("fc" if self.is_fc else self.op) + self.suffix

    @property
    def padded(self) -> bool:
        return any(self.pads)

    @property
    def pad_mark(self) -> str:
        return pad_mark(self.pads)


def pad_mark(pads: tuple) -> str:
    """The attribute the spec puts on a convolution whose input is padded
    with 0.0 by `pads` (its matcher compares it)."""
    return "ireegen_i8_padded_" + "_".join(map(str, pads))


def forms() -> list:
    zeros = list(itertools.product((True, False), repeat=2))
    out = []
    for pc in (False, True):
        out += [Form(op, zx, zy, per_channel=pc) for op in ("fc", "fckn") for zx, zy in zeros]
        for op in ("conv", "dwconv"):
            for (zx, zy), pads, stride in itertools.product(zeros, CONV_PADS, CONV_STRIDES):
                out.append(Form(op, zx, zy, pads, stride, pc))
    return out


def tflm_forms(geometries=()) -> list:
    """The TFLM forms (frontend/tflite_import.py writes every int8
    convolution and fully connected it gives the kernels per channel): the
    common convolution geometries and those of `geometries`."""
    zeros = list(itertools.product((True, False), repeat=2))
    shapes = sorted(set(itertools.product(CONV_PADS, CONV_STRIDES)) | {(tuple(p), s) for p, s in geometries})
    out = [Form(op, zx, zy, per_channel=True, tflm=True) for op in ("fc", "fckn") for zx, zy in zeros]
    for op, (zx, zy), (pads, stride) in itertools.product(("conv", "dwconv"), zeros, shapes):
        out.append(Form(op, zx, zy, pads, stride, True, True))
    return out


def geometry_forms(geometries) -> list:
    """The convolution forms of `geometries` ((pads, stride) pairs, as
    frontend/conv_geometry.py reads them off a model) that forms() lacks:
    each in every zero-point and scale variant, convolution and depthwise."""
    common = set(itertools.product(CONV_PADS, CONV_STRIDES))
    zeros = list(itertools.product((True, False), repeat=2))
    out = []
    for pads, stride in sorted(set(geometries) - common):
        for pc, op, (zx, zy) in itertools.product((False, True), ("conv", "dwconv"), zeros):
            out.append(Form(op, zx, zy, tuple(pads), stride, pc))
    return out


@dataclass(frozen=True)
class Executable:
    """A weighted kernel's stream.executable: its operands' ranks, the dims
    (SSA names of index operands) of its bindings' shapes, and the index
    operands the kernel takes."""

    name: str
    kernel: str
    rank_x: int
    rank_w: int
    x_dims: tuple
    w_dims: tuple
    y_dims: tuple
    b_dim: str
    index: tuple
    per_channel: bool
    packed_weight: bool = False  # the weight binding is the fully connected call's packed N * K4 bytes
    tflm: bool = False  # the table is TFLM's int32 (multiplier, shift) pairs, 2 per channel


_CONV_INDEX = ("n", "c", "h", "w", "f", "kh", "kw", "oh", "ow", "s", "pt", "pl")
_NCHW, _NFHW = ("n", "c", "h", "w"), ("n", "f", "oh", "ow")
# (executable, kernel, rank_x, rank_w, x_dims, w_dims, y_dims, b_dim, index, packed weight): a
# depthwise weight is (C, 1, KH, KW), a convolution's (F, C, KH, KW).
_WEIGHTED = (
    ("fc", "fully_connected", 2, 1, ("m", "k"), ("nk4",), ("m", "n"), "n", ("m", "n", "k"), True),
    ("conv", "convolution", 4, 4, _NCHW, ("f", "c", "kh", "kw"), _NFHW, "f", _CONV_INDEX, False),
    ("dwconv", "depthwise_conv", 4, 4, _NCHW, ("c", "c1", "kh", "kw"), _NFHW, "f", _CONV_INDEX, False),
)


# (per channel, TFLM, executable suffix, kernel suffix) of each kind of table.
_TABLES = {
    "tensor": (False, False, "", ""),
    "channel": (True, False, "_pc", "_per_channel"),
    "tflm": (True, True, "_tflm", "_tflm"),
}


def _executables(tables=("tensor", "channel")) -> list:
    """The fully connected, convolution and depthwise executables of each
    kind of table in `tables`."""
    out = []
    for table in tables:
        per_channel, tflm, suffix, kernel_suffix = _TABLES[table]
        for exe, kernel, *shapes, packed in _WEIGHTED:
            out.append(
                Executable(
                    f"ireegen_i8_{exe}{suffix}",
                    f"ireegen_i8_{kernel}{kernel_suffix}",
                    *shapes,
                    per_channel,
                    packed,
                    tflm,
                )
            )
    return out


# The input's quantization (QuantizeLinear on a function input, float to
# int8): IREE divides and calls libm's roundf per element.  Only where the
# float comes straight from the caller (or through a reshape, as DS-CNN's):
# after an op of IREE's, IREE fuses the quantization into that op's
# dispatch, which is better than a float buffer and a kernel call.
QUANTIZE_RANKS = (2, 3, 4)


@dataclass(frozen=True)
class QuantizeForm:
    rank: int
    zero: bool  # the zero point is an operand (not 0)
    reshaped: bool  # of a reshape (expand_shape or collapse_shape) of a function input

    @property
    def name(self) -> str:
        return f"quantize_r{self.rank}_z{'y' if self.zero else 'none'}{'_reshaped' if self.reshaped else ''}"

    @property
    def dims(self) -> tuple:
        return int8_match_ops.dim_names(self.rank)


def quantize_forms() -> list:
    return [QuantizeForm(*f) for f in itertools.product(QUANTIZE_RANKS, (True, False), (False, True))]


def tflm_spec(geometries=()) -> str:
    """The match spec of a .tflite source: the TFLM forms alone, the
    weighted ones and the same-shape ADD (its other int8 ops are TFLM's
    integer arithmetic, which no matcher takes)."""
    fs = tflm_forms(geometries)
    adds = int8_match_ops.add_forms(tflm=True)
    return render(
        "int8_spec.mlir.jinja",
        executables=_executables(("tflm",)),
        forms=fs,
        quantize_forms=[],
        add_executables=[(rank, int8_match_ops.dim_names(rank)) for rank in int8_match_ops.ADD_RANKS],
        tflm_adds=True,
        add_forms=adds,
        pool_forms=[],
        softmax_forms=[],
        ops_executables=False,
        pad_marks=[(pads, pad_mark(pads)) for pads in sorted({f.pads for f in fs if f.padded})],
        patterns=[*fs, *adds],
    )


def spec(fs: list | None = None, pool_strides=()) -> str:
    """The match spec of the forms `fs` (by default forms(): the committed
    spec) with the quantize, add, pool (also of `pool_strides`) and softmax
    matchers."""
    fs = forms() if fs is None else fs
    quantizes = quantize_forms()
    adds, pools = int8_match_ops.add_forms(), int8_match_ops.pool_forms(pool_strides)
    softmaxes = int8_match_softmax.forms()
    return render(
        "int8_spec.mlir.jinja",
        executables=_executables(),
        forms=fs,
        quantize_forms=quantizes,
        add_executables=[(rank, int8_match_ops.dim_names(rank)) for rank in int8_match_ops.ADD_RANKS],
        add_forms=adds,
        pool_forms=pools,
        softmax_forms=softmaxes,
        tflm_adds=False,
        ops_executables=True,
        pad_marks=[(pads, pad_mark(pads)) for pads in sorted({f.pads for f in fs if f.padded})],
        patterns=[*fs, *quantizes, *adds, *pools, *softmaxes],
    )


if __name__ == "__main__":
    print(spec(), end="")
