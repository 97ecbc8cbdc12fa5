// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-elementwise.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// An elementwise arith.addf on tensors (upstream converts it with
// -convert-elementwise-to-linalg; the reference pipeline below does too).
// REF-PIPELINE: builtin.module(func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,convert-linalg-to-loops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = arith.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %s = arith.addf %x, %y : tensor<3xf32>
  %u = tensor.cast %s : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// CHECK: Unranked Memref base@ = {{.*}} rank = 1 offset = 0 sizes = [3] strides = [1] data =
// CHECK-NEXT: [11,  22,  33]
