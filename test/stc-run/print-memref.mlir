// A linalg module lowered with the upstream pipeline (NOTES-mlir-c-api.md),
// printing through printMemrefF32 from the default runner utils, returning
// an i32 and an f32.
// RUN: mlir-opt %s --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,convert-linalg-to-loops,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)' > %t.ll.mlir
// RUN: stc-run %t.ll.mlir -e main --entry-point-result=i32 | FileCheck %s
// RUN: stc-run %t.ll.mlir -e trace --entry-point-result=f32 | FileCheck %s --check-prefix=TRACE
// Without the runner utils, printMemrefF32 cannot be resolved:
// RUN: not stc-run %t.ll.mlir -e main --entry-point-result=i32 --no-default-shared-libs 2>&1 | FileCheck %s --check-prefix=NOLIBS

func.func private @printMemrefF32(tensor<*xf32>) attributes { llvm.emit_c_interface }

func.func @main() -> i32 {
  %a = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[2.0, 0.0], [0.0, 2.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  %u = tensor.cast %r : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %k = arith.constant 7 : i32
  return %k : i32
}

// CHECK: Unranked Memref base@ = {{.*}} rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT: {{\[}}[2,   4],
// CHECK-NEXT: [6,   8]]
// CHECK-NEXT: {{^}}7{{$}}

func.func @trace() -> f32 {
  %a = arith.constant dense<[[1.5, 2.0], [3.0, 4.25]]> : tensor<2x2xf32>
  %init = arith.constant dense<0.0> : tensor<f32>
  %s = linalg.reduce ins(%a : tensor<2x2xf32>) outs(%init : tensor<f32>) dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %y = arith.addf %x, %acc : f32
      linalg.yield %y : f32
    }
  %v = tensor.extract %s[] : tensor<f32>
  return %v : f32
}

// TRACE: {{^}}1.075000e+01{{$}}
// NOLIBS: Symbols not found: [ _mlir_ciface_printMemrefF32 ]
// NOLIBS: stc-run: error: entry point '@main' could not be compiled or resolved by the JIT (an undefined symbol: missing --shared-libs?)
