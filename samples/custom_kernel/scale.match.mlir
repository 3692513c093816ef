// The match spec of kernels.json: IREE's preprocessing runs it on the model
// (--iree-preprocessing-transform-spec-filename).  It finds the multiply of
// two tensor<64xf32> and replaces it with a dispatch of @scale_mul, whose
// function calls the C kernel scale_mul_f32 (hal.import.static: linked from
// the kernels' object).  The executable is a stream.executable without
// targets or objects: it compiles for the model's target, and ireegen links
// the kernels (docs/kernels.md).
module attributes {transform.with_named_sequence} {
  stream.executable private @scale_mul {
    stream.executable.export public @scale_mul workgroups() -> (index, index, index) {
      %c1 = arith.constant 1 : index
      stream.return %c1, %c1, %c1 : index, index, index
    }
    builtin.module {
      func.func private @scale_mul_f32(%a: memref<f32>, %ao: index, %b: memref<f32>, %bo: index,
                                %c: memref<f32>, %co: index, %n: index) attributes {hal.import.static, llvm.bareptr = true}
      func.func @scale_mul(%b0: !stream.binding, %b1: !stream.binding, %b2: !stream.binding) {
        %c0 = arith.constant 0 : index
        %c64 = arith.constant 64 : index
        %m0 = stream.binding.subspan %b0[%c0] : !stream.binding -> memref<64xf32>
        %m1 = stream.binding.subspan %b1[%c0] : !stream.binding -> memref<64xf32>
        %m2 = stream.binding.subspan %b2[%c0] : !stream.binding -> memref<64xf32>
        %p0, %o0, %s0, %t0 = iree_codegen.extract_strided_metadata %m0 : memref<64xf32> -> memref<f32>, index, index, index
        %p1, %o1, %s1, %t1 = iree_codegen.extract_strided_metadata %m1 : memref<64xf32> -> memref<f32>, index, index, index
        %p2, %o2, %s2, %t2 = iree_codegen.extract_strided_metadata %m2 : memref<64xf32> -> memref<f32>, index, index, index
        func.call @scale_mul_f32(%p0, %o0, %p1, %o1, %p2, %o2, %c64) : (memref<f32>, index, memref<f32>, index, memref<f32>, index, index) -> ()
        return
      }
    }
  }
  util.func private @call_scale_mul(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
    %0 = flow.dispatch @scale_mul::@scale_mul(%a, %b) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
    util.return %0 : tensor<64xf32>
  }
  transform.named_sequence @match_mul_64(%root: !transform.any_op {transform.readonly}) -> (!transform.any_value, !transform.any_value) {
    %ins, %outs = transform.iree.match.cast_compatible_dag_from_root %root {
      ^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
        %e = tensor.empty() : tensor<64xf32>
        %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                             iterator_types = ["parallel"]}
             ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
        ^bb0(%x: f32, %y: f32, %o: f32):
          %r = arith.mulf %x, %y : f32
          linalg.yield %r : f32
        } -> tensor<64xf32>
    } : (!transform.any_op) -> (!transform.any_value, !transform.any_value)
    transform.yield %ins, %outs : !transform.any_value, !transform.any_value
  }
  transform.named_sequence @call_it(%ins: !transform.any_value {transform.readonly}, %out: !transform.any_value {transform.readonly}) {
    %root = transform.get_defining_op %out : (!transform.any_value) -> !transform.any_op
    %module = transform.util.get_nearest_symbol_table %root : (!transform.any_op) -> !transform.any_op
    %exe = transform.util.import_symbol @scale_mul into %module if undefined : (!transform.any_op) -> !transform.any_op
    %func = transform.util.import_symbol @call_scale_mul into %module if undefined : (!transform.any_op) -> !transform.any_op
    transform.util.cast_and_call %func(%ins) -> %out after %root {
    } : (!transform.any_op, !transform.any_value, !transform.any_value, !transform.any_op) -> !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%module: !transform.any_op) {
    %funcs = transform.structured.match ops{["util.func"]} in %module : (!transform.any_op) -> !transform.any_op
    transform.foreach %funcs : !transform.any_op {
      ^bb1(%func: !transform.any_op):
        transform.foreach_match in %func @match_mul_64 -> @call_it : (!transform.any_op) -> (!transform.any_op)
    }
    transform.apply_dce to %module : !transform.any_op
    transform.yield
  }
}
