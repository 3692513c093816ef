// integer_arith: i32 addi/subi/muli/shli/shrsi/andi/xori/divsi/remsi by
// constants, maxsi/minsi and a compare+select, on 2x8 tensors with values in
// [-1000, 1000] (no overflow, no division by zero); three outputs.
func.func @integer_arith(%a: tensor<2x8xi32>, %b: tensor<2x8xi32>) -> (tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi32>) {
  %c3 = arith.constant dense<3> : tensor<2x8xi32>
  %c2 = arith.constant dense<2> : tensor<2x8xi32>
  %c255 = arith.constant dense<255> : tensor<2x8xi32>
  %c7 = arith.constant dense<7> : tensor<2x8xi32>
  %c5 = arith.constant dense<5> : tensor<2x8xi32>
  %c100 = arith.constant dense<100> : tensor<2x8xi32>
  %s = arith.addi %a, %b : tensor<2x8xi32>
  %s3 = arith.muli %s, %c3 : tensor<2x8xi32>
  %sh = arith.shli %a, %c3 : tensor<2x8xi32>
  %o1 = arith.subi %s3, %sh : tensor<2x8xi32>
  %p = arith.muli %a, %b : tensor<2x8xi32>
  %sr = arith.shrsi %p, %c2 : tensor<2x8xi32>
  %an = arith.andi %b, %c255 : tensor<2x8xi32>
  %d = arith.divsi %p, %c7 : tensor<2x8xi32>
  %t = arith.addi %sr, %an : tensor<2x8xi32>
  %o2 = arith.subi %t, %d : tensor<2x8xi32>
  %r = arith.remsi %a, %c5 : tensor<2x8xi32>
  %x = arith.xori %a, %b : tensor<2x8xi32>
  %mx = arith.maxsi %a, %b : tensor<2x8xi32>
  %mn = arith.minsi %a, %b : tensor<2x8xi32>
  %gt = arith.cmpi sgt, %a, %c100 : tensor<2x8xi32>
  %sel = arith.select %gt, %mx, %mn : tensor<2x8xi1>, tensor<2x8xi32>
  %u = arith.addi %r, %x : tensor<2x8xi32>
  %o3 = arith.addi %u, %sel : tensor<2x8xi32>
  return %o1, %o2, %o3 : tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xi32>
}
