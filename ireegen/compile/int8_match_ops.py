"""The int8 kernels' matchers for the operators without weights: the
residual Add (and the average pools, int8_match_pool.py), beside the
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
  transform.named_sequence @call_{name}(%ins: !transform.any_value {{transform.readonly}}, %out: !transform.any_value {{transform.readonly}}) {{
    %root = transform.get_defining_op %out : (!transform.any_value) -> !transform.any_op
    %module = transform.util.get_nearest_symbol_table %root : (!transform.any_op) -> !transform.any_op
    %exe = transform.util.import_symbol @{exe} into %module if undefined : (!transform.any_op) -> !transform.any_op
    %func = transform.util.import_symbol @ireegen_call_{name} into %module if undefined : (!transform.any_op) -> !transform.any_op
    transform.util.cast_and_call inline_call %func(%ins) -> %out after %root {{
      transform.type_conversion.tensor.cast_shape_dynamic_dims
    }} : (!transform.any_op, !transform.any_value, !transform.any_value, !transform.any_op) -> ()
    transform.yield
  }}
"""


def spec_parts() -> tuple:
    """(the spec's text for these operators, their `@match -> @call` pairs)."""
    parts = [_add_executable(rank) for rank in ADD_RANKS]
    parts += [_add(*form) for form in add_forms()]
    pairs = [f"@match_{_add_name(*f)} -> @call_{_add_name(*f)}" for f in add_forms()]
    return "".join(parts), pairs
