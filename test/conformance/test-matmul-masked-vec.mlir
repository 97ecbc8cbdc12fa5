// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-matmul-masked-vec.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// Own equivalent: upstream vectorizes a dynamically shaped 8x2 * 2x4 matmul
// with a transform script (masked, vector sizes [4, 4, 2]) that computes only
// the first 4 rows, so its CHECK lines expect rows 4-7 to stay 0; no
// schedule-free pipeline can reproduce that. Here the LHS is upstream's first
// 4 rows, and the CHECK lines are upstream's first 4 (the computed) rows.
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @main() {
  %i4 = arith.constant 4 : index
  %a = arith.constant dense<[[1.1, 2.1], [1.2, 2.2], [1.3, 2.3], [1.4, 2.4]]> : tensor<4x2xf32>
  %b = arith.constant dense<[[10.1, 11.1, 12.1, 13.1], [10.2, 11.2, 12.2, 13.2]]> : tensor<2x4xf32>
  %c = bufferization.alloc_tensor(%i4, %i4) : tensor<?x?xf32>
  %ad = tensor.cast %a : tensor<4x2xf32> to tensor<?x?xf32>
  %bd = tensor.cast %b : tensor<2x4xf32> to tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%ad, %bd : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = tensor.cast %r : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// CHECK:      {{\[}}[32.53,   35.73,   38.93,   42.13],
// CHECK-NEXT: [34.56,   37.96,   41.36,   44.76],
// CHECK-NEXT: [36.59,   40.19,   43.79,   47.39],
// CHECK-NEXT: [38.62,   42.42,   46.22,   50.02]]
