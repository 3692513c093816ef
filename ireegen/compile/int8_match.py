"""The match spec of ireegen's int8 kernels (ireegen/kernels/int8/).

IREE's ONNX import turns a QDQ int8 operator into float linalg between
`iree_linalg_ext.dequantize_affine` and `quantize_affine` ops (docs/kernels-int8.md).
The spec matches those DAGs at preprocessing, from the int8 input to the
int8 output, and replaces each with a dispatch that calls a C kernel.  The
transform dialect matches attributes exactly, so every form IREE writes
needs its own matcher: the table below lists the forms (a zero point of 0 is
dropped by the import, padding and strides are attributes), and `spec()`
writes one matcher and one call per form.

Each call is inlined where the DAG was (`cast_and_call inline_call`): with a
shared `util.func` called from several places, IREE 3.13's `iree-util-ipo`
crashes on ResNet-8 (a segfault at dispatch creation).

The spec is committed as ireegen/kernels/int8/int8.match.mlir; regenerate it
with `python -m ireegen.compile.int8_match > ireegen/kernels/int8/int8.match.mlir`
(tests/test_int8_kernels.py checks that the two agree).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ireegen.compile.int8_match_ops import call_sequence, spec_parts
from ireegen.compile.int8_match_softmax import spec_parts as softmax_parts

# The convolutions matched: padding (top, left, bottom, right) none, "same" for 3x3 and 5x5, "same"
# of a stride-2 3x3 (TensorFlow style, one-sided) and of DS-CNN's 10x4
# stride-2 first layer.
CONV_PADS = ((0, 0, 0, 0), (1, 1, 1, 1), (0, 0, 1, 1), (1, 1, 0, 0), (2, 2, 2, 2), (4, 1, 5, 1))
# and stride 1 or 2.
CONV_STRIDES = (1, 2)

_M4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
_S4 = "affine_map<(d0, d1, d2, d3) -> ()>"
_M2 = "affine_map<(d0, d1) -> (d0, d1)>"
_S2 = "affine_map<(d0, d1) -> ()>"
_I8 = "quant_min = -128, quant_max = 127"
_I32 = "quant_min = -2147483648, quant_max = 2147483647"


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

    @property
    def is_fc(self) -> bool:
        return self.op in ("fc", "fckn")

    @property
    def name(self) -> str:
        zp = ("x" if self.x_zero else "") + ("y" if self.y_zero else "")
        shape = "" if self.is_fc else "_p" + "".join(map(str, self.pads)) + f"_s{self.stride}"
        return f"{self.op}{shape}_z{zp or 'none'}" + ("_pc" if self.per_channel else "")


def forms() -> list:
    zeros = list(itertools.product((True, False), repeat=2))
    out = []
    for pc in (False, True):
        out += [Form(op, zx, zy, per_channel=pc) for op in ("fc", "fckn") for zx, zy in zeros]
        for op in ("conv", "dwconv"):
            for (zx, zy), pads, stride in itertools.product(zeros, CONV_PADS, CONV_STRIDES):
                out.append(Form(op, zx, zy, pads, stride, pc))
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


def _dq(value, scale, zero, tensor, maps, quant, out, scale_type="f32"):
    """A dequantize_affine (zero is None: the zero point 0, dropped); a
    per-channel scale is a tensor (`scale_type`) with its own map."""
    m, s = maps
    if zero is None:
        return (
            f"iree_linalg_ext.dequantize_affine <indexing_maps = [{m}, {s}, {m}], {quant}> "
            f"ins({value}, {scale} : {tensor}, {scale_type}) outs({out}) -> {out.split(' : ')[1]}"
        )
    return (
        f"iree_linalg_ext.dequantize_affine <indexing_maps = [{m}, {s}, {s}, {m}], {quant}> "
        f"ins({value}, {scale}, {zero} : {tensor}, f32, i64) outs({out}) -> {out.split(' : ')[1]}"
    )


def _q(value, scale, zero, out):
    if zero is None:
        return (
            f"iree_linalg_ext.quantize_affine <indexing_maps = [{_M4}, {_S4}, {_M4}], {_I8}> "
            f"ins({value}, {scale} : tensor<?x?x?x?xf32>, f32) outs({out}) -> tensor<?x?x?x?xi8>"
        )
    return (
        f"iree_linalg_ext.quantize_affine <indexing_maps = [{_M4}, {_S4}, {_S4}, {_M4}], {_I8}> "
        f"ins({value}, {scale}, {zero} : tensor<?x?x?x?xf32>, f32, i64) outs({out}) -> tensor<?x?x?x?xi8>"
    )


def _input_args(form: Form) -> str:
    """The input's part of the matched DAG's inputs."""
    x = "tensor<?x?xi8>" if form.is_fc else "tensor<?x?x?x?xi8>"
    return f"%x: {x}, %sx: f32" + (", %zx: i64" if form.x_zero else "")


def _operator_args(form: Form) -> str:
    """The rest: weights, bias and the output's quantization."""
    w = "tensor<?x?xi8>" if form.is_fc else "tensor<?x?x?x?xi8>"
    scale = "tensor<?xf32>" if form.per_channel else "f32"
    return f"%w: {w}, %sw: {scale}, %b: tensor<?xi32>, %sb: {scale}, %sy: f32" + (", %zy: i64" if form.y_zero else "")


_V1 = "affine_map<(d0) -> (d0)>"
# The weight scale's map: one per output channel, the weight's first axis
# ((F, C, KH, KW) and Gemm's (N, K)) or a (K, N) weight's second.
_PER_CHANNEL_MAP = {
    "conv": "affine_map<(d0, d1, d2, d3) -> (d0)>",
    "dwconv": "affine_map<(d0, d1, d2, d3) -> (d0)>",
    "fc": "affine_map<(d0, d1) -> (d0)>",
    "fckn": "affine_map<(d0, d1) -> (d1)>",
}


def _weight_dq(form: Form, tensor: str, maps: tuple, out: str) -> str:
    """The weight's dequantize_affine: a scalar scale, or one per channel."""
    if form.per_channel:
        maps = (maps[0], _PER_CHANNEL_MAP[form.op])
        return _dq("%w", "%sw", None, tensor, maps, _I8, out, "tensor<?xf32>")
    return _dq("%w", "%sw", None, tensor, maps, _I8, out)


def _bias_dq(form: Form, out: str) -> str:
    """The int32 bias's dequantize_affine (its scale x_scale * w_scale)."""
    if form.per_channel:
        return _dq("%b", "%sb", None, "tensor<?xi32>", (_V1, _V1), _I32, out, "tensor<?xf32>")
    return _dq("%b", "%sb", None, "tensor<?xi32>", (_V1, "affine_map<(d0) -> ()>"), _I32, out)


def _args(form: Form) -> str:
    """The matched DAG's inputs, in the order its call takes them."""
    return f"{_input_args(form)}, {_operator_args(form)}"


def _pad_mark(form: Form) -> str:
    """The attribute _mark_pads() puts on a convolution whose input is
    padded with 0.0 by form.pads."""
    return "ireegen_i8_padded_" + "_".join(map(str, form.pads))


def _mark_pads(fs: list) -> str:
    """Transform ops that mark each convolution whose input a tensor.pad
    pads with 0.0, by the pad's amounts.  The DAG matcher cannot match such a
    pad: its region yields a constant defined outside it, and the matcher
    compares regions only through values it reached as operands.  So the
    pad is matched by name only in the DAG, and its amounts and value by
    this mark on the convolution (compared as one of its attributes)."""
    pads = sorted({f.pads for f in fs if any(f.pads)})
    any_op = "(!transform.any_op) -> !transform.any_op"
    # structured.match and get_consumers_of_result take one op: each handle
    # is walked with transform.foreach.
    per_pad = []
    for i, (top, left, bottom, right) in enumerate(pads):
        mark = _pad_mark(Form("conv", False, False, (top, left, bottom, right)))
        per_pad += [
            f'%pad{i} = transform.structured.match ops{{["tensor.pad"]}} attributes {{static_low = array<i64: 0, 0, {top}, {left}>, static_high = array<i64: 0, 0, {bottom}, {right}>}} in %parent : {any_op}',
            f"transform.foreach %pad{i} : !transform.any_op {{",
            "^bb0(%p: !transform.any_op):",
            f"  %consumers = transform.get_consumers_of_result %p[0] : {any_op}",
            "  transform.foreach %consumers : !transform.any_op {",
            "  ^bb0(%consumer: !transform.any_op):",
            f'    %conv = transform.structured.match ops{{["linalg.conv_2d_nchw_fchw", "linalg.depthwise_conv_2d_nchw_chw"]}} in %consumer : {any_op}',
            f'    transform.annotate %conv "{mark}" : !transform.any_op',
            "  }",
            "}",
        ]
    lines = [
        f'%zeros = transform.structured.match ops{{["arith.constant"]}} attributes {{value = 0.000000e+00 : f32}} in %func : {any_op}',
        "transform.foreach %zeros : !transform.any_op {",
        "^bb0(%zero: !transform.any_op):",
        f"  %users = transform.get_consumers_of_result %zero[0] : {any_op}",
        "  transform.foreach %users : !transform.any_op {",
        "  ^bb0(%user: !transform.any_op):",
        f'    %yield = transform.structured.match ops{{["tensor.yield"]}} in %user : {any_op}',
        "    transform.foreach %yield : !transform.any_op {",
        "    ^bb0(%y: !transform.any_op):",
        f"      %parent = transform.get_parent_op %y <{{nth_parent = 1 : i64}}> : {any_op}",
        *(f"      {line}" for line in per_pad),
        "    }",
        "  }",
        "}",
    ]
    return "".join(f"        {line}\n" for line in lines)


def _padded_input(form: Form) -> str:
    """The matcher's second half for a padded convolution: the dequantized
    int8 input under the pad, a DAG of its own."""
    zx = "%zx" if form.x_zero else None
    t4 = "tensor<?x?x?x?xf32>"
    dq = _dq("%x", "%sx", zx, "tensor<?x?x?x?xi8>", (_M4, _S4), _I8, f"%e4 : {t4}")
    return f"""\
    %conv = transform.get_producer_of_operand %root[0] : (!transform.any_op) -> !transform.any_op
    %pad = transform.get_producer_of_operand %conv[0] : (!transform.any_op) -> !transform.any_op
    %dq = transform.get_producer_of_operand %pad[0] : (!transform.any_op) -> !transform.any_op
    %x_ins, %x_outs = transform.iree.match.cast_compatible_dag_from_root %dq {{
      ^bb0({_input_args(form)}):
        %c0 = arith.constant 0 : index
        %d = tensor.dim %x, %c0 : tensor<?x?x?x?xi8>
        %e4 = tensor.empty(%d, %d, %d, %d) {{"match.operation_name_only"}} : {t4}
        %xf = {dq}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
"""


def _fc_dag(form: Form) -> str:
    zx = "%zx" if form.x_zero else None
    zy = "%zy" if form.y_zero else None
    q = _q("%biased", "%sy", zy, "%eq : tensor<?x?xi8>")
    q = q.replace(_M4, _M2).replace(_S4, _S2).replace("?x?x?x?", "?x?")
    # Gemm transB=1 keeps its (N, K) weight and transposes it; a (K, N)
    # weight (transB=0, or a transpose IREE folded) is used as it is.
    transpose = ""
    if form.op == "fc":
        transpose = """\
        %et = tensor.empty(%k, %n) {"match.operation_name_only"} : tensor<?x?xf32>
        %wt = linalg.transpose ins(%wf : tensor<?x?xf32>) outs(%et : tensor<?x?xf32>) permutation = [1, 0]
"""
    return f"""\
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %zero = arith.constant 0.000000e+00 : f32
        %m = tensor.dim %x, %c0 : tensor<?x?xi8>
        %k = tensor.dim %x, %c1 : tensor<?x?xi8>
        %n = tensor.dim %w, %c0 : tensor<?x?xi8>
        %eb = tensor.empty(%n) {{"match.operation_name_only"}} : tensor<?xf32>
        %bf = {_bias_dq(form, "%eb : tensor<?xf32>")}
        %ew = tensor.empty(%n, %k) {{"match.operation_name_only"}} : tensor<?x?xf32>
        %wf = {_weight_dq(form, "tensor<?x?xi8>", (_M2, _S2), "%ew : tensor<?x?xf32>")}
        %ex = tensor.empty(%m, %k) {{"match.operation_name_only"}} : tensor<?x?xf32>
        %xf = {_dq("%x", "%sx", zx, "tensor<?x?xi8>", (_M2, _S2), _I8, "%ex : tensor<?x?xf32>")}
{transpose}        %eo = tensor.empty(%m, %n) {{"match.operation_name_only"}} : tensor<?x?xf32>
        %fill = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x?xf32>) -> tensor<?x?xf32>
        %mm = linalg.matmul ins(%xf, {"%wt" if form.op == "fc" else "%wf"} : tensor<?x?xf32>, tensor<?x?xf32>) outs(%fill : tensor<?x?xf32>) -> tensor<?x?xf32>
        %biased = linalg.generic {{indexing_maps = [{_M2}, affine_map<(d0, d1) -> (d1)>, {_M2}], iterator_types = ["parallel", "parallel"]}} ins(%mm, %bf : tensor<?x?xf32>, tensor<?xf32>) outs(%eo : tensor<?x?xf32>) {{
        ^bb1(%in: f32, %in_b: f32, %out: f32):
          %s = arith.addf %in, %in_b : f32
          linalg.yield %s : f32
        }} -> tensor<?x?xf32>
        %eq = tensor.empty(%m, %n) {{"match.operation_name_only"}} : tensor<?x?xi8>
        %q = {q}
"""


def _conv_dag(form: Form) -> str:
    zx = "%zx" if form.x_zero else None
    zy = "%zy" if form.y_zero else None
    top, left, bottom, right = form.pads
    t4 = "tensor<?x?x?x?xf32>"
    lines = [
        "%c0 = arith.constant 0 : index",
        "%zero = arith.constant 0.000000e+00 : f32",
        "%d = tensor.dim %x, %c0 : tensor<?x?x?x?xi8>",
        '%e1 = tensor.empty(%d) {"match.operation_name_only"} : tensor<?xf32>',
        "%bf = " + _bias_dq(form, "%e1 : tensor<?xf32>"),
        f'%e4 = tensor.empty(%d, %d, %d, %d) {{"match.operation_name_only"}} : {t4}',
        "%wf = " + _weight_dq(form, "tensor<?x?x?x?xi8>", (_M4, _S4), f"%e4 : {t4}"),
    ]
    if any(form.pads):
        # Matched by name only: its operand (the dequantized input) and its
        # amounts are matched by _padded_input().
        lines[2] = "%d = tensor.dim %w, %c0 : tensor<?x?x?x?xi8>"
        lines += [
            f"%padded = tensor.pad %e4 low[0, 0, {top}, {left}] high[0, 0, {bottom}, {right}] {{",
            "^bb1(%i0: index, %i1: index, %i2: index, %i3: index):",
            "  tensor.yield %zero : f32",
            f'}} {{"match.operation_name_only"}} : {t4} to {t4}',
        ]
        source = "%padded"
    else:
        lines.append("%xf = " + _dq("%x", "%sx", zx, "tensor<?x?x?x?xi8>", (_M4, _S4), _I8, f"%e4 : {t4}"))
        source = "%xf"
    lines.append(f"%bcast = linalg.broadcast ins(%bf : tensor<?xf32>) outs(%e4 : {t4}) dimensions = [0, 2, 3]")
    mark = f", {_pad_mark(form)}" if any(form.pads) else ""
    attrs = f"{{dilations = dense<1> : vector<2xi64>, strides = dense<{form.stride}> : vector<2xi64>{mark}}}"
    if form.op == "conv":
        lines.append(
            f"%conv = linalg.conv_2d_nchw_fchw {attrs} ins({source}, %wf : {t4}, {t4}) outs(%bcast : {t4}) -> {t4}"
        )
    else:
        lines += [
            "%wc = tensor.collapse_shape %wf [[0, 1], [2], [3]] : tensor<?x?x?x?xf32> into tensor<?x?x?xf32>",
            f"%conv = linalg.depthwise_conv_2d_nchw_chw {attrs} ins({source}, %wc : {t4}, tensor<?x?x?xf32>) "
            f"outs(%bcast : {t4}) -> {t4}",
        ]
    lines += [
        '%e8 = tensor.empty(%d, %d, %d, %d) {"match.operation_name_only"} : tensor<?x?x?x?xi8>',
        "%q = " + _q("%conv", "%sy", zy, "%e8 : tensor<?x?x?x?xi8>"),
    ]
    return "".join(f"        {line}\n" for line in "\n".join(lines).split("\n"))


def _scale_bits(form: Form) -> str:
    """The scales as the kernel takes them: the bits of the three floats, or
    (per channel) none: the multiplier table of _multipliers() instead."""
    if form.per_channel:
        return ""
    return """\
    %sxi = arith.bitcast %sx : f32 to i32
    %swi = arith.bitcast %sw : f32 to i32
    %syi = arith.bitcast %sy : f32 to i32
"""


def _multipliers(count: str) -> str:
    """The per-channel multiplier table of `count` channels: x_scale *
    w_scale[o] / y_scale in float, the operations in ONNX Runtime's order
    (QLinearConv, QGemm).  The scales are constants: IREE's const-eval folds
    the table into one (IEEE single, as ONNX Runtime's)."""
    return f"""\
    %em = tensor.empty({count}) : tensor<?xf32>
    %mult = linalg.generic {{indexing_maps = [{_V1}, {_V1}], iterator_types = ["parallel"]}} ins(%sw : tensor<?xf32>) outs(%em : tensor<?xf32>) {{
    ^bb0(%swc: f32, %unused: f32):
      %xw = arith.mulf %sx, %swc : f32
      %mc = arith.divf %xw, %sy : f32
      linalg.yield %mc : f32
    }} -> tensor<?xf32>
"""


def _per_channel_call(form: Form, call: str, count: str) -> str:
    """A per-tensor call made per channel: the multiplier table computed
    before the dispatch and passed after the bias."""
    if not form.per_channel:
        return call
    exe, exe_pc = f"ireegen_i8_{_executable_of(form, False)}", f"ireegen_i8_{_executable_of(form)}"
    call = call.replace(f"@{exe}::@{exe}(", f"@{exe_pc}::@{exe_pc}(", 1)
    call = call.replace("    %y = flow.dispatch", _multipliers(count) + "    %y = flow.dispatch", 1)
    call = call.replace(", %b, ", ", %b, %mult, ", 1)
    return call.replace(f"tensor<?xi32>{{{count}}},", f"tensor<?xi32>{{{count}}}, tensor<?xf32>{{{count}}},", 1)


def _call(form: Form) -> str:
    count = "%n" if form.is_fc else "%f"
    return _per_channel_call(form, _call_per_tensor(form), count)


def _call_per_tensor(form: Form) -> str:
    """The util.func a match is replaced with: it dispatches the kernel."""
    zx = "arith.trunci %zx : i64 to i32" if form.x_zero else "arith.constant 0 : i32"
    zy = "arith.trunci %zy : i64 to i32" if form.y_zero else "arith.constant 0 : i32"
    head = f"""\
  util.func private @ireegen_call_{form.name}({_args(form)}) -> {"tensor<?x?xi8>" if form.is_fc else "tensor<?x?x?x?xi8>"} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
{_scale_bits(form)}    %zxi = {zx}
    %zyi = {zy}
"""
    scalars = "%zxi, %zyi" if form.per_channel else "%sxi, %zxi, %swi, %syi, %zyi"
    scalar_types = ", ".join(["i32"] * len(scalars.split(", ")))
    if form.is_fc:
        # The weight packed for the kernel (ireegen_int8.h): a (K, N) weight
        # transposed to (N, K), K padded with zeros to a multiple of four,
        # the rows in whole groups of four laid out (N/4, K/4, 4, 4), the
        # last N % 4 rows after them as they are; one flat tensor of N * K4.
        # All in int8 on the weight alone: IREE's const-eval folds it into a
        # new constant when the weight is one (one copy in flash).
        transpose = ""
        weight = "%w"
        if form.op == "fckn":
            transpose = """\
    %et = tensor.empty(%n, %k) : tensor<?x?xi8>
    %wt = linalg.transpose ins(%w : tensor<?x?xi8>) outs(%et : tensor<?x?xi8>) permutation = [1, 0]
"""
            weight = "%wt"
        return (
            head
            + f"""\
    %c4 = arith.constant 4 : index
    %zero8 = arith.constant 0 : i8
    %m = tensor.dim %x, %c0 : tensor<?x?xi8>
    %k = tensor.dim %x, %c1 : tensor<?x?xi8>
    %n = tensor.dim %w, {"%c0" if form.op == "fc" else "%c1"} : tensor<?x?xi8>
{transpose}    %nq = arith.divui %n, %c4 : index
    %n4 = arith.muli %nq, %c4 : index
    %nr = arith.subi %n, %n4 : index
    %k3 = arith.addi %k, %c3 : index
    %kq = arith.divui %k3, %c4 : index
    %k4 = arith.muli %kq, %c4 : index
    %hk = arith.subi %k4, %k : index
    %nk4 = arith.muli %n, %k4 : index
    %wp = tensor.pad {weight} low[0, 0] high[0, %hk] {{
    ^bb0(%i0: index, %i1: index):
      tensor.yield %zero8 : i8
    }} : tensor<?x?xi8> to tensor<?x?xi8>
    %full = tensor.extract_slice %wp[0, 0] [%n4, %k4] [1, 1] : tensor<?x?xi8> to tensor<?x?xi8>
    %rest = tensor.extract_slice %wp[%n4, 0] [%nr, %k4] [1, 1] : tensor<?x?xi8> to tensor<?x?xi8>
    %we = tensor.expand_shape %full [[0, 1], [2, 3]] output_shape [%nq, 4, %kq, 4] : tensor<?x?xi8> into tensor<?x4x?x4xi8>
    %eg = tensor.empty(%nq, %kq) : tensor<?x?x4x4xi8>
    %wg = linalg.transpose ins(%we : tensor<?x4x?x4xi8>) outs(%eg : tensor<?x?x4x4xi8>) permutation = [0, 2, 1, 3]
    %groups = tensor.collapse_shape %wg [[0, 1, 2, 3]] : tensor<?x?x4x4xi8> into tensor<?xi8>
    %tail = tensor.collapse_shape %rest [[0, 1]] : tensor<?x?xi8> into tensor<?xi8>
    %gsize = arith.muli %n4, %k4 : index
    %tsize = arith.muli %nr, %k4 : index
    %ek = tensor.empty(%nk4) : tensor<?xi8>
    %wg0 = tensor.insert_slice %groups into %ek[0] [%gsize] [1] : tensor<?xi8> into tensor<?xi8>
    %wk = tensor.insert_slice %tail into %wg0[%gsize] [%tsize] [1] : tensor<?xi8> into tensor<?xi8>
    %y = flow.dispatch @ireegen_i8_fc::@ireegen_i8_fc(%x, %wk, %b, %m, %n, %k, {scalars})
      : (tensor<?x?xi8>{{%m, %k}}, tensor<?xi8>{{%nk4}}, tensor<?xi32>{{%n}}, index, index, index, {scalar_types})
      -> tensor<?x?xi8>{{%m, %n}}
    util.return %y : tensor<?x?xi8>
  }}
"""
        )
    top, left, bottom, right = form.pads
    exe = "ireegen_i8_conv" if form.op == "conv" else "ireegen_i8_dwconv"
    return (
        head
        + f"""\
    %n = tensor.dim %x, %c0 : tensor<?x?x?x?xi8>
    %ci = tensor.dim %x, %c1 : tensor<?x?x?x?xi8>
    %h = tensor.dim %x, %c2 : tensor<?x?x?x?xi8>
    %wd = tensor.dim %x, %c3 : tensor<?x?x?x?xi8>
    %f = tensor.dim %w, %c0 : tensor<?x?x?x?xi8>
    %wc = tensor.dim %w, %c1 : tensor<?x?x?x?xi8>
    %kh = tensor.dim %w, %c2 : tensor<?x?x?x?xi8>
    %kw = tensor.dim %w, %c3 : tensor<?x?x?x?xi8>
    %pt = arith.constant {top} : index
    %pl = arith.constant {left} : index
    %pb = arith.constant {bottom} : index
    %pr = arith.constant {right} : index
    %s = arith.constant {form.stride} : index
    %hp0 = arith.addi %h, %pt : index
    %hp = arith.addi %hp0, %pb : index
    %hk = arith.subi %hp, %kh : index
    %hs = arith.divui %hk, %s : index
    %oh = arith.addi %hs, %c1 : index
    %wp0 = arith.addi %wd, %pl : index
    %wp = arith.addi %wp0, %pr : index
    %wk = arith.subi %wp, %kw : index
    %ws = arith.divui %wk, %s : index
    %ow = arith.addi %ws, %c1 : index
    %y = flow.dispatch @{exe}::@{exe}(%x, %w, %b, %n, %ci, %h, %wd, %f, %kh, %kw, %oh, %ow, %s, %pt, %pl, {scalars})
      : (tensor<?x?x?x?xi8>{{%n, %ci, %h, %wd}}, tensor<?x?x?x?xi8>{{%f, %wc, %kh, %kw}}, tensor<?xi32>{{%f}},
         index, index, index, index, index, index, index, index, index, index, index, index, {scalar_types})
      -> tensor<?x?x?x?xi8>{{%n, %f, %oh, %ow}}
    util.return %y : tensor<?x?x?x?xi8>
  }}
"""
    )


def _executable_of(form: Form, per_channel: bool | None = None) -> str:
    """The executable a form's call dispatches: both fully connected forms
    call the (N, K) kernel; per channel, its _pc twin."""
    per_channel = form.per_channel if per_channel is None else per_channel
    return ("fc" if form.is_fc else form.op) + ("_pc" if per_channel else "")


def _executable(exe: str, kernel: str, rank_x: int, rank_w: int, dims: list, per_channel: bool = False) -> str:
    """A stream.executable whose one function calls `kernel` on the bindings
    and the operands `dims` (index) then the five quantization scalars; per
    channel, on a fourth binding, the multiplier table (after the bias), and
    the two zero points."""

    def memref(rank):
        return "memref<" + "?x" * rank + "i8>"

    def shape_of(names):
        return "{" + ", ".join(names) + "}"

    x_dims, w_dims, y_dims, b_dim = dims[0], dims[1], dims[2], dims[3]
    index_args = dims[4]
    params = ", ".join(f"%{a}: index" for a in index_args)
    kernel_index = ", ".join(f"%{a}" for a in index_args)
    meta = lambda r: ", ".join(["index"] * (1 + 2 * r))  # noqa: E731
    scalars = ["zx", "zy"] if per_channel else ["sx", "zx", "sw", "sy", "zy"]
    scalar_params = ", ".join(f"%{a}: i32" for a in scalars)
    scalar_args = ", ".join(f"%{a}" for a in scalars)
    scalar_types = ", ".join(["i32"] * len(scalars))
    index_types = ", ".join(["index"] * len(index_args))
    m_type, m_binding, m_subspan, m_args = "", "", "", ""
    if per_channel:
        m_type = "memref<f32>, index, "
        m_binding = "%bm: !stream.binding, "
        m_subspan = f"""\
        %mm = stream.binding.subspan %bm[%c0] : !stream.binding -> memref<?xf32>{{%{b_dim}}}
        %base_m, %off_m, %mdm:2 = iree_codegen.extract_strided_metadata %mm : memref<?xf32> -> memref<f32>, index, index, index
"""
        m_args = "%base_m, %off_m, "
    return f"""\
  stream.executable private @{exe} {{
    stream.executable.export public @{exe} workgroups() -> (index, index, index) {{
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }}
    builtin.module {{
      func.func private @{kernel}(memref<i8>, index, memref<i8>, index, memref<i32>, index, {m_type}memref<i8>, index,
          {index_types}, {scalar_types}) attributes {{hal.import.static, llvm.bareptr = true}}
      func.func @{exe}(%bx: !stream.binding, %bw: !stream.binding, %bb: !stream.binding, {m_binding}%by: !stream.binding,
          {params}, {scalar_params}) {{
        %c0 = arith.constant 0 : index
        %mx = stream.binding.subspan %bx[%c0] : !stream.binding -> {memref(rank_x)}{shape_of(x_dims)}
        %mw = stream.binding.subspan %bw[%c0] : !stream.binding -> {memref(rank_w)}{shape_of(w_dims)}
        %mb = stream.binding.subspan %bb[%c0] : !stream.binding -> memref<?xi32>{{%{b_dim}}}
        %my = stream.binding.subspan %by[%c0] : !stream.binding -> {memref(rank_x)}{shape_of(y_dims)}
        %base_x, %off_x, %mdx:{2 * rank_x} = iree_codegen.extract_strided_metadata %mx : {memref(rank_x)} -> memref<i8>, {meta(rank_x)}
        %base_w, %off_w, %mdw:{2 * rank_w} = iree_codegen.extract_strided_metadata %mw : {memref(rank_w)} -> memref<i8>, {meta(rank_w)}
        %base_b, %off_b, %mdb:2 = iree_codegen.extract_strided_metadata %mb : memref<?xi32> -> memref<i32>, index, index, index
{m_subspan}        %base_y, %off_y, %mdy:{2 * rank_x} = iree_codegen.extract_strided_metadata %my : {memref(rank_x)} -> memref<i8>, {meta(rank_x)}
        func.call @{kernel}(%base_x, %off_x, %base_w, %off_w, %base_b, %off_b, {m_args}%base_y, %off_y, {kernel_index}, {scalar_args})
          : (memref<i8>, index, memref<i8>, index, memref<i32>, index, {m_type}memref<i8>, index,
             {index_types}, {scalar_types}) -> ()
        return
      }}
    }}
  }}
"""


def _fc_executable(per_channel: bool) -> str:
    """The fully connected executable: its weight binding is the packed
    weight of _call(), N * K4 bytes, K4 computed from K."""
    suffix = "_pc" if per_channel else ""
    exe = _executable(
        f"ireegen_i8_fc{suffix}",
        "ireegen_i8_fully_connected" + ("_per_channel" if per_channel else ""),
        2,
        1,
        (["%m", "%k"], ["%nk4"], ["%m", "%n"], "n", ["m", "n", "k"]),
        per_channel,
    )
    packed_size = """\
        %c3 = arith.constant 3 : index
        %c4 = arith.constant 4 : index
        %k3 = arith.addi %k, %c3 : index
        %kq = arith.divui %k3, %c4 : index
        %k4 = arith.muli %kq, %c4 : index
        %nk4 = arith.muli %n, %k4 : index
"""
    return exe.replace("%c0 = arith.constant 0 : index\n", "%c0 = arith.constant 0 : index\n" + packed_size, 1)


_CONV_INDEX = ["n", "c", "h", "w", "f", "kh", "kw", "oh", "ow", "s", "pt", "pl"]
_CONV_DIMS = (["%n", "%c", "%h", "%w"], ["%f", "%wc", "%kh", "%kw"], ["%n", "%f", "%oh", "%ow"], "f", _CONV_INDEX)


def _weighted_executables(per_channel: bool) -> list:
    """The fully connected, convolution and depthwise executables."""
    suffix, kernel_suffix = ("_pc", "_per_channel") if per_channel else ("", "")
    # The conv executable's binding shapes need the weight's second dim: a
    # depthwise weight is (C, 1, KH, KW), a convolution's (F, C, KH, KW).
    conv = _executable(
        f"ireegen_i8_conv{suffix}", f"ireegen_i8_convolution{kernel_suffix}", 4, 4, _CONV_DIMS, per_channel
    )
    conv = conv.replace("%wc, %kh, %kw}", "%c, %kh, %kw}")
    dw = _executable(
        f"ireegen_i8_dwconv{suffix}", f"ireegen_i8_depthwise_conv{kernel_suffix}", 4, 4, _CONV_DIMS, per_channel
    )
    dw = dw.replace("{%f, %wc, %kh, %kw}", "{%c, %c1, %kh, %kw}").replace(
        "%c0 = arith.constant 0 : index\n",
        "%c0 = arith.constant 0 : index\n        %c1 = arith.constant 1 : index\n",
        1,
    )
    return [_fc_executable(per_channel), conv, dw]


# The input's quantization (QuantizeLinear on a function input, float to
# int8): IREE divides and calls libm's roundf per element.  Only where the
# float comes straight from the caller (or through a reshape, as DS-CNN's):
# after an op of IREE's, IREE fuses the quantization into that op's
# dispatch, which is better than a float buffer and a kernel call.
QUANTIZE_RANKS = (2, 3, 4)


def _quantize_name(rank: int, zero: bool, reshaped: bool) -> str:
    return f"quantize_r{rank}_z{'y' if zero else 'none'}{'_reshaped' if reshaped else ''}"


def _quantize(rank: int, zero: bool, reshaped: bool) -> str:
    """Executable, call, matcher and rewrite of one quantize form: of a
    function input, or (`reshaped`) of a reshape of one."""
    name = _quantize_name(rank, zero, reshaped)
    source = "%source"
    reshape_check = ""
    if reshaped:
        reshape_check = """\
    transform.match.operation_name %source ["tensor.expand_shape", "tensor.collapse_shape"] : !transform.any_op
    %input = transform.get_producer_of_operand %source[0] : (!transform.any_op) -> !transform.any_op
"""
        source = "%input"
    dims = [f"%d{i}" for i in range(rank)]
    tf = "tensor<" + "?x" * rank + "f32>"
    ti = "tensor<" + "?x" * rank + "i8>"
    mf = "memref<" + "?x" * rank + "f32>"
    mi = "memref<" + "?x" * rank + "i8>"
    loops = ", ".join(f"d{i}" for i in range(rank))
    ident = f"affine_map<({loops}) -> ({loops})>"
    scalar = f"affine_map<({loops}) -> ()>"
    shape = "{" + ", ".join(dims) + "}"
    index_params = ", ".join(f"{d}: index" for d in dims)
    count = []
    for i in range(1, rank):
        prev = "%d0" if i == 1 else f"%n{i - 1}"
        count.append(f"%n{i} = arith.muli {prev}, %d{i} : index")
    total = f"%n{rank - 1}" if rank > 1 else "%d0"
    meta = ", ".join(["index"] * (1 + 2 * rank))
    zero_arg = ", %zx: i64" if zero else ""
    zero_value = "arith.trunci %zx : i64 to i32" if zero else "arith.constant 0 : i32"
    if zero:
        q = (
            f"iree_linalg_ext.quantize_affine <indexing_maps = [{ident}, {scalar}, {scalar}, {ident}], {_I8}> "
            f"ins(%x, %sx, %zx : {tf}, f32, i64) outs(%e : {ti}) -> {ti}"
        )
    else:
        q = (
            f"iree_linalg_ext.quantize_affine <indexing_maps = [{ident}, {scalar}, {ident}], {_I8}> "
            f"ins(%x, %sx : {tf}, f32) outs(%e : {ti}) -> {ti}"
        )
    dim_ops = "".join(
        f"    %c{i} = arith.constant {i} : index\n    %d{i} = tensor.dim %x, %c{i} : {tf}\n" for i in range(rank)
    )
    counts = "".join(f"        {line}\n" for line in count)
    return f"""\
  stream.executable private @ireegen_i8_{name} {{
    stream.executable.export public @ireegen_i8_{name} workgroups() -> (index, index, index) {{
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }}
    builtin.module {{
      func.func private @ireegen_i8_quantize(memref<f32>, index, memref<i8>, index, index, i32, i32) attributes {{hal.import.static, llvm.bareptr = true}}
      func.func @ireegen_i8_{name}(%bx: !stream.binding, %by: !stream.binding, {index_params}, %sx: i32, %zx: i32) {{
        %c0 = arith.constant 0 : index
        %mx = stream.binding.subspan %bx[%c0] : !stream.binding -> {mf}{shape}
        %my = stream.binding.subspan %by[%c0] : !stream.binding -> {mi}{shape}
        %base_x, %off_x, %mdx:{2 * rank} = iree_codegen.extract_strided_metadata %mx : {mf} -> memref<f32>, {meta}
        %base_y, %off_y, %mdy:{2 * rank} = iree_codegen.extract_strided_metadata %my : {mi} -> memref<i8>, {meta}
{counts}        func.call @ireegen_i8_quantize(%base_x, %off_x, %base_y, %off_y, {total}, %sx, %zx) : (memref<f32>, index, memref<i8>, index, index, i32, i32) -> ()
        return
      }}
    }}
  }}
  util.func private @ireegen_call_{name}(%x: {tf}, %sx: f32{zero_arg}) -> {ti} {{
{dim_ops}    %sxi = arith.bitcast %sx : f32 to i32
    %zxi = {zero_value}
    %y = flow.dispatch @ireegen_i8_{name}::@ireegen_i8_{name}(%x, {", ".join(dims)}, %sxi, %zxi)
      : ({tf}{shape}, {", ".join(["index"] * rank)}, i32, i32) -> {ti}{shape}
    util.return %y : {ti}
  }}
  transform.named_sequence @match_{name}(%root: !transform.any_op {{transform.readonly}}) -> (!transform.any_value, !transform.any_value) {{
    %source = transform.get_producer_of_operand %root[0] : (!transform.any_op) -> !transform.any_op
{reshape_check}    transform.match.operation_name {source} ["hal.tensor.import"] : !transform.any_op
    %ins, %outs = transform.iree.match.cast_compatible_dag_from_root %root {{
      ^bb0(%x: {tf}, %sx: f32{zero_arg}):
        %c0 = arith.constant 0 : index
        %d = tensor.dim %x, %c0 : {tf}
        %e = tensor.empty({", ".join(["%d"] * rank)}) {{"match.operation_name_only"}} : {ti}
        %q = {q}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    transform.yield %ins, %outs : !transform.any_value, !transform.any_value
  }}
""" + call_sequence(name, f"ireegen_i8_{name}")


def _quantize_forms() -> list:
    return [(rank, zero, reshaped) for rank in QUANTIZE_RANKS for zero in (True, False) for reshaped in (False, True)]


def spec(fs: list | None = None) -> str:
    """The match spec of the forms `fs` (by default forms(): the committed
    spec) with the quantize, add and pool matchers."""
    fs = forms() if fs is None else fs
    parts = [
        "// DO NOT EDIT: generated by `python -m ireegen.compile.int8_match` (ireegen/compile/int8_match.py).\n",
        "// ireegen's int8 kernels: QDQ int8 fully connected, convolution and depthwise\n",
        "// convolution, matched at IREE's preprocessing and replaced with calls to the\n",
        "// C kernels beside this file (docs/kernels-int8.md).\n",
        "module attributes {transform.with_named_sequence} {\n",
        *_weighted_executables(per_channel=False),
        *_weighted_executables(per_channel=True),
    ]
    for form in fs:
        parts.append(_call(form))
    for form in fs:
        dag = _fc_dag(form) if form.is_fc else _conv_dag(form)
        padded = any(form.pads)
        values = ", ".join(["!transform.any_value"] * (3 if padded else 2))
        parts.append(
            f"""\
  transform.named_sequence @match_{form.name}(%root: !transform.any_op {{transform.readonly}}) -> ({values}) {{
    %{"op_ins" if padded else "ins"}, %outs = transform.iree.match.cast_compatible_dag_from_root %root {{
      ^bb0({_operator_args(form) if padded else _args(form)}):
{dag}    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
{_padded_input(form) if padded else ""}    transform.yield {"%x_ins, %op_ins" if padded else "%ins"}, %outs : {values}
  }}
"""
            + call_sequence(
                form.name, f"ireegen_i8_{_executable_of(form)}", ("%x_ins", "%op_ins") if padded else ("%ins",)
            )
        )
    for form in _quantize_forms():
        parts.append(_quantize(*form))
    ops_text, ops_pairs = spec_parts()
    softmax_text, softmax_pairs = softmax_parts()
    parts += [ops_text, softmax_text]
    pairs = ", ".join(
        [f"@match_{f.name} -> @call_{f.name}" for f in fs]
        + [f"@match_{_quantize_name(*q)} -> @call_{_quantize_name(*q)}" for q in _quantize_forms()]
        + ops_pairs
        + softmax_pairs
    )
    parts.append(
        f"""\
  transform.named_sequence @__transform_main(%module: !transform.any_op) {{
    %funcs = transform.structured.match ops{{["util.func"]}} in %module : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {{
      ^bb1(%func: !transform.any_op):
{_mark_pads(fs)}        transform.foreach_match in %func {pairs} : (!transform.any_op) -> (!transform.any_op)
    }}
    transform.apply_dce to %module : !transform.any_op
    transform.yield
  }}
}}
"""
    )
    return "".join(parts)


if __name__ == "__main__":
    print(spec(), end="")
