"""The int8 softmax kernel's matcher (softmax.c: ONNX Runtime's QLinearSoftmax).

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

from ireegen.compile.int8_match_ops import call_sequence

_I8 = "quant_min = -128, quant_max = 127"
_M2 = "affine_map<(d0, d1) -> (d0, d1)>"
_S2 = "affine_map<(d0, d1) -> ()>"
_ROW = "affine_map<(d0, d1) -> (d0)>"
_COL0 = "affine_map<(d0, d1) -> (d0, 0)>"
_TI, _TF = "tensor<?x?xi8>", "tensor<?x?xf32>"

_EXECUTABLE = """\
  stream.executable private @ireegen_i8_softmax_r2 {
    stream.executable.export public @ireegen_i8_softmax_r2 workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func private @ireegen_i8_softmax(memref<i8>, index, memref<i8>, index, index, index, i32, i32, i32) attributes {hal.import.static, llvm.bareptr = true}
      func.func @ireegen_i8_softmax_r2(%bx: !stream.binding, %by: !stream.binding, %rows: index, %d: index, %sx: i32, %sy: i32, %zy: i32) {
        %c0 = arith.constant 0 : index
        %mx = stream.binding.subspan %bx[%c0] : !stream.binding -> memref<?x?xi8>{%rows, %d}
        %my = stream.binding.subspan %by[%c0] : !stream.binding -> memref<?x?xi8>{%rows, %d}
        %base_x, %off_x, %mdx:4 = iree_codegen.extract_strided_metadata %mx : memref<?x?xi8> -> memref<i8>, index, index, index, index, index
        %base_y, %off_y, %mdy:4 = iree_codegen.extract_strided_metadata %my : memref<?x?xi8> -> memref<i8>, index, index, index, index, index
        func.call @ireegen_i8_softmax(%base_x, %off_x, %base_y, %off_y, %rows, %d, %sx, %sy, %zy) : (memref<i8>, index, memref<i8>, index, index, index, i32, i32, i32) -> ()
        return
      }
    }
  }
"""


def forms() -> list:
    """(x's zero point present, y's)."""
    return list(itertools.product((True, False), repeat=2))


def _name(zx: bool, zy: bool) -> str:
    zp = ("x" if zx else "") + ("y" if zy else "")
    return f"softmax_z{zp or 'none'}"


def _args(zx: bool, zy: bool) -> str:
    return f"%x: {_TI}, %sx: f32" + (", %zx: i64" if zx else "") + ", %sy: f32" + (", %zy: i64" if zy else "")


def _affine(kind: str, value: str, scale: str, zero, source: str, result: str, out: str) -> str:
    maps = f"[{_M2}, {_S2}, {_S2}, {_M2}]" if zero else f"[{_M2}, {_S2}, {_M2}]"
    ins = f"{value}, {scale}, {zero} : {source}, f32, i64" if zero else f"{value}, {scale} : {source}, f32"
    return (
        f"iree_linalg_ext.{kind}_affine <indexing_maps = {maps}, {_I8}> ins({ins}) outs({out} : {result}) -> {result}"
    )


def _softmax(zx: bool, zy: bool) -> str:
    name = _name(zx, zy)
    zero = {True: "arith.trunci %zy : i64 to i32", False: "arith.constant 0 : i32"}
    return f"""\
  util.func private @ireegen_call_{name}({_args(zx, zy)}) -> {_TI} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %rows = tensor.dim %x, %c0 : {_TI}
    %d = tensor.dim %x, %c1 : {_TI}
    %sxi = arith.bitcast %sx : f32 to i32
    %syi = arith.bitcast %sy : f32 to i32
    %zyi = {zero[zy]}
    %y = flow.dispatch @ireegen_i8_softmax_r2::@ireegen_i8_softmax_r2(%x, %rows, %d, %sxi, %syi, %zyi)
      : ({_TI}{{%rows, %d}}, index, index, i32, i32, i32) -> {_TI}{{%rows, %d}}
    util.return %y : {_TI}
  }}
  transform.named_sequence @match_{name}(%root: !transform.any_op {{transform.readonly}}) -> (!transform.any_value, !transform.any_value) {{
    %ins, %outs = transform.iree.match.cast_compatible_dag_from_root %root {{
      ^bb0({_args(zx, zy)}):
        %c0 = arith.constant 0 : index
        %d = tensor.dim %x, %c0 : {_TI}
        %ninf = arith.constant 0xFF800000 : f32
        %fzero = arith.constant 0.000000e+00 : f32
        %izero = arith.constant 0 : i64
        %ef = tensor.empty(%d, %d) {{"match.operation_name_only"}} : {_TF}
        %xf = {_affine("dequantize", "%x", "%sx", "%zx" if zx else None, _TI, _TF, "%ef")}
        %ei = tensor.empty(%d) {{"match.operation_name_only"}} : tensor<?xi64>
        %fi = linalg.fill ins(%izero : i64) outs(%ei : tensor<?xi64>) -> tensor<?xi64>
        %em = tensor.empty(%d) {{"match.operation_name_only"}} : tensor<?xf32>
        %fm = linalg.fill ins(%ninf : f32) outs(%em : tensor<?xf32>) -> tensor<?xf32>
        %max:2 = linalg.generic {{indexing_maps = [{_M2}, {_ROW}, {_ROW}], iterator_types = ["parallel", "reduction"]}} ins(%xf : {_TF}) outs(%fm, %fi : tensor<?xf32>, tensor<?xi64>) {{
        ^bb1(%in: f32, %out: f32, %out_i: i64):
          %j = linalg.index 1 : index
          %ji = arith.index_cast %j : index to i64
          %m = arith.maximumf %in, %out : f32
          %gt = arith.cmpf ogt, %in, %out : f32
          %arg = arith.select %gt, %ji, %out_i : i64
          linalg.yield %m, %arg : f32, i64
        }} -> (tensor<?xf32>, tensor<?xi64>)
        %mx = tensor.expand_shape %max#0 [[0, 1]] output_shape [%d, 1] {{"match.operation_name_only"}} : tensor<?xf32> into tensor<?x1xf32>
        %sub = linalg.generic {{indexing_maps = [{_M2}, {_COL0}, {_M2}], iterator_types = ["parallel", "parallel"]}} ins(%xf, %mx : {_TF}, tensor<?x1xf32>) outs(%ef : {_TF}) {{
        ^bb1(%in: f32, %in_m: f32, %out: f32):
          %s = arith.subf %in, %in_m : f32
          linalg.yield %s : f32
        }} -> {_TF}
        %exp = linalg.generic {{indexing_maps = [{_M2}, {_M2}], iterator_types = ["parallel", "parallel"]}} ins(%sub : {_TF}) outs(%ef : {_TF}) {{
        ^bb1(%in: f32, %out: f32):
          %e = math.exp %in : f32
          linalg.yield %e : f32
        }} -> {_TF}
        %es = tensor.empty(%d) {{"match.operation_name_only"}} : tensor<?x1xf32>
        %fs = linalg.fill ins(%fzero : f32) outs(%es : tensor<?x1xf32>) -> tensor<?x1xf32>
        %sum = linalg.generic {{indexing_maps = [{_M2}, {_COL0}], iterator_types = ["parallel", "reduction"]}} ins(%exp : {_TF}) outs(%fs : tensor<?x1xf32>) {{
        ^bb1(%in: f32, %out: f32):
          %a = arith.addf %in, %out : f32
          linalg.yield %a : f32
        }} -> tensor<?x1xf32>
        %div = linalg.generic {{indexing_maps = [{_M2}, {_COL0}, {_M2}], iterator_types = ["parallel", "parallel"]}} ins(%exp, %sum : {_TF}, tensor<?x1xf32>) outs(%ef : {_TF}) {{
        ^bb1(%in: f32, %in_s: f32, %out: f32):
          %q = arith.divf %in, %in_s : f32
          linalg.yield %q : f32
        }} -> {_TF}
        %eo = tensor.empty(%d, %d) {{"match.operation_name_only"}} : {_TI}
        %y = {_affine("quantize", "%div", "%sy", "%zy" if zy else None, _TF, _TI, "%eo")}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    transform.yield %ins, %outs : !transform.any_value, !transform.any_value
  }}
""" + call_sequence(name, "ireegen_i8_softmax_r2")


def spec_parts() -> tuple:
    """(the spec's text for the softmax, its `@match -> @call` pairs)."""
    text = _EXECUTABLE + "".join(_softmax(*f) for f in forms())
    return text, [f"@match_{_name(*f)} -> @call_{_name(*f)}" for f in forms()]
