// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-padtensor.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// tensor.pad of a dynamically shaped tensor with a constant.
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @main() {
  %k = arith.constant dense<[[[1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]]> : tensor<1x2x3xf32>
  %d = tensor.cast %k : tensor<1x2x3xf32> to tensor<1x?x3xf32>
  %two = arith.constant 2 : index
  %zero = arith.constant 0 : index
  %fill = arith.constant 2.3 : f32
  %p = tensor.pad %d low[%zero, %two, %zero] high[%zero, %zero, %two] {
  ^bb0(%a: index, %b: index, %c: index):
    tensor.yield %fill : f32
  } : tensor<1x?x3xf32> to tensor<1x?x?xf32>
  %u = tensor.cast %p : tensor<1x?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

//      CHECK: Unranked Memref base@ = {{0x[-9a-f]*}}
// CHECK-SAME: rank = 3 offset = 0 sizes = [1, 4, 5] strides = [20, 5, 1] data =
// CHECK-NEXT{LITERAL}: [[[2.3,    2.3,    2.3,    2.3,    2.3],
// CHECK-NEXT: [2.3,    2.3,    2.3,    2.3,    2.3],
// CHECK-NEXT: [1,    2,    3,    2.3,    2.3],
// CHECK-NEXT: [2,    3,    4,    2.3,    2.3]]]
