// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-tensor-matmul.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// linalg.matmul on tensors accumulating into a constant (upstream also tiles
// it with a transform script in a second RUN line; same answer).
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @main() {
  %a = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %acc = arith.constant dense<1000.0> : tensor<2x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %u = tensor.cast %r : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

//      CHECK: Unranked Memref base@ = {{0x[-9a-f]*}}
// CHECK-SAME: rank = 2 offset = 0 sizes = [2, 4] strides = [4, 1] data =
// CHECK-NEXT: [1038,   1044,   1050,   1056]
// CHECK-NEXT: [1083,   1098,   1113,   1128]
