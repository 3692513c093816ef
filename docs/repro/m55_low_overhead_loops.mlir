// IREE 3.13, Cortex-M55 (thumbv8.1m.main, MVE): iree-compile crashes with
// SIGSEGV in LLVM's "ARM Low Overhead Loops pass" on this dispatch, ResNet-8
// int8's stride-2 3x3 convolution (64x8x8 from 32x17x17, int8 x int8 into
// int32, then IREE's float requantization), as IREE's stream phase wrote it
// (the executable source, from --iree-hal-dump-executable-sources-to).
//
//   iree-compile --compile-mode=hal-executable m55_low_overhead_loops.mlir -o d.o                        # SIGSEGV
//   iree-compile --compile-mode=hal-executable m55_low_overhead_loops.mlir -o d.o --disable-arm-loloops  # compiles
//
// docs/known-iree-issues.md, section 11.
hal.executable public @resnet8$async_dispatch_10 {
  hal.executable.variant public @static target(<"llvm-cpu", "static", {cpu = "cortex-m55", cpu_features = "", data_layout = "e-m:e-p:32:32-Fi8-i64:64-v128:64:128-a:0:32-n32-S64", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, link_embedded = false, link_static = true, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_abi = "aapcs", target_triple = "thumbv8.1m.main-unknown-none-eabihf"}>) {
    hal.executable.export public @resnet8$async_dispatch_10_conv_64x8x8x32x3x3_i8xi8xi32 ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      hal.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @resnet8$async_dispatch_10_conv_64x8x8x32x3x3_i8xi8xi32() {
        %c0_i32 = arith.constant 0 : i32
        %cst = arith.constant 0.0326310545 : f32
        %cst_0 = arith.constant 0.00256539369 : f32
        %cst_1 = arith.constant 0.0409682319 : f32
        %cst_2 = arith.constant -1.280000e+02 : f32
        %cst_3 = arith.constant 1.270000e+02 : f32
        %c8192 = arith.constant 8192 : index
        %c40320 = arith.constant 40320 : index
        %c1984 = arith.constant 1984 : index
        %c448 = arith.constant 448 : index
        %c17472 = arith.constant 17472 : index
        %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c8192) flags("ReadOnly|Indirect") : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x17x17xi8>>
        %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c40320) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32x3x3xi8>>
        %2 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c1984) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xi32>>
        %3 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c448) flags(ReadOnly) : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>>
        %4 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(2) alignment(64) offset(%c17472) flags(Indirect) : !iree_tensor_ext.dispatch.tensor<readwrite:tensor<64x10x10xi8>>
        %5 = iree_tensor_ext.dispatch.tensor.load %0, offsets = [0, 0, 0], sizes = [32, 17, 17], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x17x17xi8>> -> tensor<32x17x17xi8>
        %6 = iree_tensor_ext.dispatch.tensor.load %1, offsets = [0, 0, 0, 0], sizes = [64, 32, 3, 3], strides = [1, 1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x32x3x3xi8>> -> tensor<64x32x3x3xi8>
        %7 = iree_tensor_ext.dispatch.tensor.load %2, offsets = [0], sizes = [64], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xi32>> -> tensor<64xi32>
        %8 = iree_tensor_ext.dispatch.tensor.load %3, offsets = [0], sizes = [64], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>> -> tensor<64xf32>
        %9 = tensor.empty() : tensor<64x8x8xi8>
        %10 = tensor.empty() : tensor<64x8x8xi32>
        %11 = linalg.fill ins(%c0_i32 : i32) outs(%10 : tensor<64x8x8xi32>) -> tensor<64x8x8xi32>
        %12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 * 2 + d4, d2 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%5, %6 : tensor<32x17x17xi8>, tensor<64x32x3x3xi8>) outs(%11 : tensor<64x8x8xi32>) {
        ^bb0(%in: i8, %in_4: i8, %out: i32):
          %14 = arith.extsi %in : i8 to i32
          %15 = arith.extsi %in_4 : i8 to i32
          %16 = arith.muli %14, %15 : i32
          %17 = arith.addi %out, %16 : i32
          linalg.yield %17 : i32
        } -> tensor<64x8x8xi32>
        %13 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%12, %7, %8 : tensor<64x8x8xi32>, tensor<64xi32>, tensor<64xf32>) outs(%9 : tensor<64x8x8xi8>) {
        ^bb0(%in: i32, %in_4: i32, %in_5: f32, %out: i8):
          %14 = arith.subi %in, %in_4 : i32
          %15 = arith.sitofp %14 : i32 to f32
          %16 = arith.mulf %15, %cst : f32
          %17 = arith.mulf %16, %cst_0 : f32
          %18 = arith.addf %17, %in_5 : f32
          %19 = arith.divf %18, %cst_1 : f32
          %20 = math.roundeven %19 : f32
          %21 = arith.addf %20, %cst_2 : f32
          %22 = arith.maxnumf %21, %cst_2 : f32
          %23 = arith.minnumf %22, %cst_3 : f32
          %24 = arith.fptosi %23 : f32 to i8
          linalg.yield %24 : i8
        } -> tensor<64x8x8xi8>
        iree_tensor_ext.dispatch.tensor.store %13, %4, offsets = [0, 1, 1], sizes = [64, 8, 8], strides = [1, 1, 1] : tensor<64x8x8xi8> -> !iree_tensor_ext.dispatch.tensor<readwrite:tensor<64x10x10xi8>>
        return
      }
    }
  }
}
