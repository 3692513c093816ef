"""The int8 kernels' matchers for the operators without weights: the
residual Add and the average pools, beside the
convolution and fully connected ones of int8_match.py, which puts these in
the same spec.

IREE's ONNX import turns DequantizeLinear -> Add -> QuantizeLinear into two
`dequantize_affine`, a `linalg.generic` whose body is one `arith.addf`, and a
`quantize_affine`.  Only the same-shape Add (identity maps, any rank 1 to 4,
any sizes) is matched; a broadcast Add keeps IREE's code.
"""

from __future__ import annotations

import itertools

ADD_RANKS = (1, 2, 3, 4)
_I8 = "quant_min = -128, quant_max = 127"


def _loops(rank: int) -> str:
    return ", ".join(f"d{i}" for i in range(rank))


def _maps(rank: int) -> tuple:
    """The identity and the scalar affine maps of this rank."""
    loops = _loops(rank)
    return f"affine_map<({loops}) -> ({loops})>", f"affine_map<({loops}) -> ()>"


def _tensor(rank: int, element: str) -> str:
    return "tensor<" + "?x" * rank + element + ">"


def _dequantize(value, scale, zero, rank, out):
    ident, scalar = _maps(rank)
    ti, tf = _tensor(rank, "i8"), _tensor(rank, "f32")
    if zero is None:
        return (
            f"iree_linalg_ext.dequantize_affine <indexing_maps = [{ident}, {scalar}, {ident}], {_I8}> "
            f"ins({value}, {scale} : {ti}, f32) outs({out} : {tf}) -> {tf}"
        )
    return (
        f"iree_linalg_ext.dequantize_affine <indexing_maps = [{ident}, {scalar}, {scalar}, {ident}], {_I8}> "
        f"ins({value}, {scale}, {zero} : {ti}, f32, i64) outs({out} : {tf}) -> {tf}"
    )


def _quantize(value, scale, zero, rank, out):
    ident, scalar = _maps(rank)
    ti, tf = _tensor(rank, "i8"), _tensor(rank, "f32")
    if zero is None:
        return (
            f"iree_linalg_ext.quantize_affine <indexing_maps = [{ident}, {scalar}, {ident}], {_I8}> "
            f"ins({value}, {scale} : {tf}, f32) outs({out} : {ti}) -> {ti}"
        )
    return (
        f"iree_linalg_ext.quantize_affine <indexing_maps = [{ident}, {scalar}, {scalar}, {ident}], {_I8}> "
        f"ins({value}, {scale}, {zero} : {tf}, f32, i64) outs({out} : {ti}) -> {ti}"
    )


def call_sequence(name: str, executable: str, inputs=("%ins",)) -> str:
    """`@call_NAME`: imports the kernel's stream executable and
    `@ireegen_call_NAME` into the matched op's module and inlines the call
    where the matched DAG was.  Several `inputs` handles (a DAG matched in
    two parts) are merged into %ins first."""
    params = ", ".join(f"{i}: !transform.any_value {{transform.readonly}}" for i in inputs)
    merge = (
        f"    %ins = transform.merge_handles {', '.join(inputs)} : !transform.any_value\n" if len(inputs) > 1 else ""
    )
    return f"""\
  transform.named_sequence @call_{name}({params}, %out: !transform.any_value {{transform.readonly}}) {{
{merge}    %root = transform.get_defining_op %out : (!transform.any_value) -> !transform.any_op
    %module = transform.util.get_nearest_symbol_table %root : (!transform.any_op) -> !transform.any_op
    %exe = transform.util.import_symbol @{executable} into %module if undefined : (!transform.any_op) -> !transform.any_op
    %func = transform.util.import_symbol @ireegen_call_{name} into %module if undefined : (!transform.any_op) -> !transform.any_op
    transform.util.cast_and_call inline_call %func(%ins) -> %out after %root {{
      transform.type_conversion.tensor.cast_shape_dynamic_dims
    }} : (!transform.any_op, !transform.any_value, !transform.any_value, !transform.any_op) -> ()
    transform.yield
  }}
"""


def add_forms() -> list:
    """(rank, a's zero point, b's, y's): a zero point of 0 is dropped by the
    import, so each present-or-absent combination is its own form."""
    return [(rank, *zeros) for rank in ADD_RANKS for zeros in itertools.product((True, False), repeat=3)]


def _add_name(rank: int, za: bool, zb: bool, zy: bool) -> str:
    zp = ("a" if za else "") + ("b" if zb else "") + ("y" if zy else "")
    return f"add_r{rank}_z{zp or 'none'}"


def _add_args(za: bool, zb: bool, zy: bool, rank: int) -> str:
    ti = _tensor(rank, "i8")
    return (
        f"%a: {ti}, %sa: f32"
        + (", %za: i64" if za else "")
        + f", %b: {ti}, %sb: f32"
        + (", %zb: i64" if zb else "")
        + ", %sy: f32"
        + (", %zy: i64" if zy else "")
    )


def _add_executable(rank: int) -> str:
    """One stream.executable per rank: the kernel takes the element count."""
    exe = f"ireegen_i8_add_r{rank}"
    mi = "memref<" + "?x" * rank + "i8>"
    dims = [f"%d{i}" for i in range(rank)]
    shape = "{" + ", ".join(dims) + "}"
    meta = ", ".join(["index"] * (1 + 2 * rank))
    count = []
    for i in range(1, rank):
        prev = "%d0" if i == 1 else f"%n{i - 1}"
        count.append(f"        %n{i} = arith.muli {prev}, %d{i} : index\n")
    total = f"%n{rank - 1}" if rank > 1 else "%d0"
    index_params = ", ".join(f"{d}: index" for d in dims)
    scalars = "i32, i32, i32, i32, i32, i32"
    return f"""\
  stream.executable private @{exe} {{
    stream.executable.export public @{exe} workgroups() -> (index, index, index) {{
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }}
    builtin.module {{
      func.func private @ireegen_i8_add(memref<i8>, index, memref<i8>, index, memref<i8>, index, index, {scalars}) attributes {{hal.import.static, llvm.bareptr = true}}
      func.func @{exe}(%ba: !stream.binding, %bb: !stream.binding, %by: !stream.binding, {index_params}, %sa: i32, %za: i32, %sb: i32, %zb: i32, %sy: i32, %zy: i32) {{
        %c0 = arith.constant 0 : index
        %ma = stream.binding.subspan %ba[%c0] : !stream.binding -> {mi}{shape}
        %mb = stream.binding.subspan %bb[%c0] : !stream.binding -> {mi}{shape}
        %my = stream.binding.subspan %by[%c0] : !stream.binding -> {mi}{shape}
        %base_a, %off_a, %mda:{2 * rank} = iree_codegen.extract_strided_metadata %ma : {mi} -> memref<i8>, {meta}
        %base_b, %off_b, %mdb:{2 * rank} = iree_codegen.extract_strided_metadata %mb : {mi} -> memref<i8>, {meta}
        %base_y, %off_y, %mdy:{2 * rank} = iree_codegen.extract_strided_metadata %my : {mi} -> memref<i8>, {meta}
{"".join(count)}        func.call @ireegen_i8_add(%base_a, %off_a, %base_b, %off_b, %base_y, %off_y, {total}, %sa, %za, %sb, %zb, %sy, %zy) : (memref<i8>, index, memref<i8>, index, memref<i8>, index, index, {scalars}) -> ()
        return
      }}
    }}
  }}
"""


def _add(rank: int, za: bool, zb: bool, zy: bool) -> str:
    """The call, matcher and rewrite of one Add form."""
    name = _add_name(rank, za, zb, zy)
    exe = f"ireegen_i8_add_r{rank}"
    ti, tf = _tensor(rank, "i8"), _tensor(rank, "f32")
    ident, _ = _maps(rank)
    dims = [f"%d{i}" for i in range(rank)]
    shape = "{" + ", ".join(dims) + "}"
    dim_ops = "".join(
        f"    %c{i} = arith.constant {i} : index\n    %d{i} = tensor.dim %a, %c{i} : {ti}\n" for i in range(rank)
    )
    zero = {True: "arith.trunci %{} : i64 to i32", False: "arith.constant 0 : i32"}
    parallel = ", ".join(['"parallel"'] * rank)
    empties = ", ".join(["%d"] * rank)
    return f"""\
  util.func private @ireegen_call_{name}({_add_args(za, zb, zy, rank)}) -> {ti} {{
{dim_ops}    %sai = arith.bitcast %sa : f32 to i32
    %sbi = arith.bitcast %sb : f32 to i32
    %syi = arith.bitcast %sy : f32 to i32
    %zai = {zero[za].format("za")}
    %zbi = {zero[zb].format("zb")}
    %zyi = {zero[zy].format("zy")}
    %y = flow.dispatch @{exe}::@{exe}(%a, %b, {", ".join(dims)}, %sai, %zai, %sbi, %zbi, %syi, %zyi)
      : ({ti}{shape}, {ti}{shape}, {", ".join(["index"] * rank)}, i32, i32, i32, i32, i32, i32) -> {ti}{shape}
    util.return %y : {ti}
  }}
  transform.named_sequence @match_{name}(%root: !transform.any_op {{transform.readonly}}) -> (!transform.any_value, !transform.any_value) {{
    %ins, %outs = transform.iree.match.cast_compatible_dag_from_root %root {{
      ^bb0({_add_args(za, zb, zy, rank)}):
        %c0 = arith.constant 0 : index
        %d = tensor.dim %a, %c0 : {ti}
        %ef = tensor.empty({empties}) {{"match.operation_name_only"}} : {tf}
        %af = {_dequantize("%a", "%sa", "%za" if za else None, rank, "%ef")}
        %bf = {_dequantize("%b", "%sb", "%zb" if zb else None, rank, "%ef")}
        %sum = linalg.generic {{indexing_maps = [{ident}, {ident}, {ident}], iterator_types = [{parallel}]}} ins(%af, %bf : {tf}, {tf}) outs(%ef : {tf}) {{
        ^bb1(%in_a: f32, %in_b: f32, %out: f32):
          %s = arith.addf %in_a, %in_b : f32
          linalg.yield %s : f32
        }} -> {tf}
        %ei = tensor.empty({empties}) {{"match.operation_name_only"}} : {ti}
        %q = {_quantize("%sum", "%sy", "%zy" if zy else None, rank, "%ei")}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    transform.yield %ins, %outs : !transform.any_value, !transform.any_value
  }}
""" + call_sequence(name, exe)


# The average pools: AveragePool (no padding) and GlobalAveragePool import as
# a `linalg.fill` of 0.0, a `linalg.pooling_nchw_sum` of the dequantized
# input over an empty (KH, KW) window, a `linalg.generic` dividing by the
# window's size (an `arith.constant` captured by its body) and a
# `quantize_affine`.  The DAG matcher cannot compare a body that uses a value
# from outside it, so the generic is matched by name, between the
# quantize_affine (one DAG) and the pooling_nchw_sum of the dequantized input
# (a second DAG rooted at the generic's input).  A quantized
# pooling_nchw_sum followed by one generic is what IREE's import makes of an
# ONNX AveragePool or GlobalAveragePool, nothing else; the kernel divides by
# the window's size as that generic does, and emit's verification checks it.
POOL_STRIDES = (1, 2)


def pool_forms() -> list:
    """(stride, x's zero point present, y's)."""
    return [(s, zx, zy) for s in POOL_STRIDES for zx, zy in itertools.product((True, False), repeat=2)]


def _pool_name(stride: int, zx: bool, zy: bool) -> str:
    zp = ("x" if zx else "") + ("y" if zy else "")
    return f"avgpool_s{stride}_z{zp or 'none'}"


def _x_args(zx: bool) -> str:
    """The pool's DAG's inputs: the int8 input, its quantization, the window."""
    return "%x: tensor<?x?x?x?xi8>, %sx: f32" + (", %zx: i64" if zx else "") + ", %win: tensor<?x?xf32>"


def _q_args(zy: bool) -> str:
    """The output quantization's."""
    return "%sy: f32" + (", %zy: i64" if zy else "")


def _pool_args(zx: bool, zy: bool) -> str:
    """The call's arguments: both, in that order."""
    return f"{_x_args(zx)}, {_q_args(zy)}"


# The window covering the image (every MLPerf Tiny pool) calls the global
# kernel alone: the choice folds where the shapes are constants, and the
# other kernel stays out of the binary.
_POOL_EXECUTABLE = """\
  stream.executable private @ireegen_i8_avgpool {
    stream.executable.export public @ireegen_i8_avgpool workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func private @ireegen_i8_average_pool(memref<i8>, index, memref<i8>, index, index, index, index, index, index, index, index, index, index, i32, i32, i32, i32) attributes {hal.import.static, llvm.bareptr = true}
      func.func private @ireegen_i8_global_average_pool(memref<i8>, index, memref<i8>, index, index, index, index, index, index, index, index, index, index, i32, i32, i32, i32) attributes {hal.import.static, llvm.bareptr = true}
      func.func @ireegen_i8_avgpool(%bx: !stream.binding, %by: !stream.binding, %n: index, %c: index, %h: index, %w: index, %kh: index, %kw: index, %oh: index, %ow: index, %s: index, %sx: i32, %zx: i32, %sy: i32, %zy: i32) {
        %c0 = arith.constant 0 : index
        %mx = stream.binding.subspan %bx[%c0] : !stream.binding -> memref<?x?x?x?xi8>{%n, %c, %h, %w}
        %my = stream.binding.subspan %by[%c0] : !stream.binding -> memref<?x?x?x?xi8>{%n, %c, %oh, %ow}
        %base_x, %off_x, %mdx:8 = iree_codegen.extract_strided_metadata %mx : memref<?x?x?x?xi8> -> memref<i8>, index, index, index, index, index, index, index, index, index
        %base_y, %off_y, %mdy:8 = iree_codegen.extract_strided_metadata %my : memref<?x?x?x?xi8> -> memref<i8>, index, index, index, index, index, index, index, index, index
        %whole_h = arith.cmpi eq, %h, %kh : index
        %whole_w = arith.cmpi eq, %w, %kw : index
        %whole = arith.andi %whole_h, %whole_w : i1
        scf.if %whole {
          func.call @ireegen_i8_global_average_pool(%base_x, %off_x, %base_y, %off_y, %n, %c, %h, %w, %kh, %kw, %oh, %ow, %s, %sx, %zx, %sy, %zy) : (memref<i8>, index, memref<i8>, index, index, index, index, index, index, index, index, index, index, i32, i32, i32, i32) -> ()
        } else {
          func.call @ireegen_i8_average_pool(%base_x, %off_x, %base_y, %off_y, %n, %c, %h, %w, %kh, %kw, %oh, %ow, %s, %sx, %zx, %sy, %zy) : (memref<i8>, index, memref<i8>, index, index, index, index, index, index, index, index, index, index, i32, i32, i32, i32) -> ()
        }
        return
      }
    }
  }
"""


def _pool(stride: int, zx: bool, zy: bool) -> str:
    name = _pool_name(stride, zx, zy)
    t4f, t4i = _tensor(4, "f32"), _tensor(4, "i8")
    ident, _ = _maps(4)
    zero = {True: "arith.trunci %{} : i64 to i32", False: "arith.constant 0 : i32"}
    return f"""\
  util.func private @ireegen_call_{name}({_pool_args(zx, zy)}) -> {t4i} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %n = tensor.dim %x, %c0 : {t4i}
    %ch = tensor.dim %x, %c1 : {t4i}
    %h = tensor.dim %x, %c2 : {t4i}
    %w = tensor.dim %x, %c3 : {t4i}
    %kh = tensor.dim %win, %c0 : tensor<?x?xf32>
    %kw = tensor.dim %win, %c1 : tensor<?x?xf32>
    %s = arith.constant {stride} : index
    %hk = arith.subi %h, %kh : index
    %hs = arith.divui %hk, %s : index
    %oh = arith.addi %hs, %c1 : index
    %wk = arith.subi %w, %kw : index
    %ws = arith.divui %wk, %s : index
    %ow = arith.addi %ws, %c1 : index
    %sxi = arith.bitcast %sx : f32 to i32
    %syi = arith.bitcast %sy : f32 to i32
    %zxi = {zero[zx].format("zx")}
    %zyi = {zero[zy].format("zy")}
    %y = flow.dispatch @ireegen_i8_avgpool::@ireegen_i8_avgpool(%x, %n, %ch, %h, %w, %kh, %kw, %oh, %ow, %s, %sxi, %zxi, %syi, %zyi)
      : ({t4i}{{%n, %ch, %h, %w}}, index, index, index, index, index, index, index, index, index, i32, i32, i32, i32) -> {t4i}{{%n, %ch, %oh, %ow}}
    util.return %y : {t4i}
  }}
  transform.named_sequence @match_{name}(%root: !transform.any_op {{transform.readonly}}) -> (!transform.any_value, !transform.any_value, !transform.any_value) {{
    %q_ins, %outs = transform.iree.match.cast_compatible_dag_from_root %root {{
      ^bb0({_q_args(zy)}):
        %c0 = arith.constant 0 : index
        %d = arith.constant 1 : index
        %e4 = tensor.empty(%d, %d, %d, %d) {{"match.operation_name_only"}} : {t4f}
        %avg = linalg.generic {{indexing_maps = [{ident}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} outs(%e4 : {t4f}) attrs = {{"match.operation_name_only"}} {{
        ^bb1(%out: f32):
          linalg.yield %out : f32
        }} -> {t4f}
        %e8 = tensor.empty(%d, %d, %d, %d) {{"match.operation_name_only"}} : {t4i}
        %q = {_quantize("%avg", "%sy", "%zy" if zy else None, 4, "%e8")}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    %avg = transform.get_producer_of_operand %root[0] : (!transform.any_op) -> !transform.any_op
    %pool = transform.get_producer_of_operand %avg[0] : (!transform.any_op) -> !transform.any_op
    %x_ins, %x_outs = transform.iree.match.cast_compatible_dag_from_root %pool {{
      ^bb0({_x_args(zx)}):
        %c0 = arith.constant 0 : index
        %zero = arith.constant 0.000000e+00 : f32
        %d = tensor.dim %x, %c0 : {t4i}
        %e4 = tensor.empty(%d, %d, %d, %d) {{"match.operation_name_only"}} : {t4f}
        %xf = {_dequantize("%x", "%sx", "%zx" if zx else None, 4, "%e4")}
        %eo = tensor.empty(%d, %d, %d, %d) {{"match.operation_name_only"}} : {t4f}
        %fill = linalg.fill ins(%zero : f32) outs(%eo : {t4f}) -> {t4f}
        %sum = linalg.pooling_nchw_sum {{dilations = dense<1> : vector<2xi64>, strides = dense<{stride}> : vector<2xi64>}} ins(%xf, %win : {t4f}, tensor<?x?xf32>) outs(%fill : {t4f}) -> {t4f}
    }} : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    transform.yield %x_ins, %q_ins, %outs : !transform.any_value, !transform.any_value, !transform.any_value
  }}
""" + call_sequence(name, "ireegen_i8_avgpool", ("%x_ins", "%q_ins"))


def spec_parts() -> tuple:
    """(the spec's text for these operators, their `@match -> @call` pairs)."""
    parts = [_add_executable(rank) for rank in ADD_RANKS] + [_POOL_EXECUTABLE]
    parts += [_add(*form) for form in add_forms()]
    parts += [_pool(*form) for form in pool_forms()]
    pairs = [f"@match_{_add_name(*f)} -> @call_{_add_name(*f)}" for f in add_forms()]
    pairs += [f"@match_{_pool_name(*f)} -> @call_{_pool_name(*f)}" for f in pool_forms()]
    return "".join(parts), pairs
