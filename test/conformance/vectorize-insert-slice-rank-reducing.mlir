// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/vectorize-insert-slice-rank-reducing.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// A rank-reducing tensor.insert_slice (upstream compares it lowered plainly and
// vectorized by a transform script; MLIR 22.1.8 vectorizing it prints a wrong
// answer, so no built-in stc schedule may vectorize it: issue 11).
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefI32(%t: tensor<*xi32>)

func.func @main() {
  %zero = arith.constant 0 : i32
  %src = arith.constant dense<[1, 2, 3, 4, 5]> : tensor<5xi32>
  %e = tensor.empty() : tensor<5x3xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<5x3xi32>) -> tensor<5x3xi32>
  %r = tensor.insert_slice %src into %init[0, 2] [5, 1] [1, 1] : tensor<5xi32> into tensor<5x3xi32>
  %u = tensor.cast %r : tensor<5x3xi32> to tensor<*xi32>
  call @printMemrefI32(%u) : (tensor<*xi32>) -> ()
  return
}

// CHECK: Unranked Memref base@ = 0x{{.*}} rank = 2 offset = 0 sizes = [5, 3] strides = [3, 1] data =
// CHECK-NEXT: [0,   0,   1]
// CHECK-NEXT: [0,   0,   2]
// CHECK-NEXT: [0,   0,   3]
// CHECK-NEXT: [0,   0,   4]
// CHECK-NEXT: [0,   0,   5]
