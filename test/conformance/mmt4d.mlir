// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/mmt4d.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// linalg.mmt4d on i32 tensors accumulating into a constant (upstream tiles and
// vectorizes it with a transform script and enters at @mmt4d; here @main).
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefI32(%t: tensor<*xi32>)

func.func @main() {
  %ea = tensor.empty() : tensor<2x2x3x1xi32>
  %eb = tensor.empty() : tensor<2x2x3x1xi32>
  %acc = arith.constant dense<[
    [[[ 1,  2,  3], [ 4,  5,  6], [ 7,  8,  9]],
     [[11, 12, 13], [14, 15, 16], [17, 18, 19]]],
    [[[21, 22, 23], [24, 25, 26], [27, 28, 29]],
     [[31, 32, 33], [34, 35, 36], [37, 38, 39]]]]> : tensor<2x2x3x3xi32>
  %three = arith.constant 3 : i32
  %four = arith.constant 4 : i32
  %a = linalg.fill ins(%three : i32) outs(%ea : tensor<2x2x3x1xi32>) -> tensor<2x2x3x1xi32>
  %b = linalg.fill ins(%four : i32) outs(%eb : tensor<2x2x3x1xi32>) -> tensor<2x2x3x1xi32>
  %r = linalg.mmt4d ins(%a, %b : tensor<2x2x3x1xi32>, tensor<2x2x3x1xi32>) outs(%acc : tensor<2x2x3x3xi32>) -> tensor<2x2x3x3xi32>
  %u = tensor.cast %r : tensor<2x2x3x3xi32> to tensor<*xi32>
  call @printMemrefI32(%u) : (tensor<*xi32>) -> ()
  return
}

// CHECK:  Unranked Memref {{.*}} rank = 4 offset = 0 sizes = [2, 2, 3, 3] strides = [18, 9, 3, 1] data =
// C[0, 0]
// CHECK-NEXT: [25,  26, 27]
// CHECK-NEXT: [28,  29, 30]
// CHECK-NEXT: [31,  32, 33]
// C[0, 1]
// CHECK-NEXT: [35,  36, 37]
// CHECK-NEXT: [38,  39, 40]
// CHECK-NEXT: [41,  42, 43]
// C[1, 0]
// CHECK-NEXT: [45,  46, 47]
// CHECK-NEXT: [48,  49, 50]
// CHECK-NEXT: [51,  52, 53]
// C[1, 1]
// CHECK-NEXT: [55,  56, 57]
// CHECK-NEXT: [58,  59, 60]
// CHECK-NEXT: [61,  62, 63]
