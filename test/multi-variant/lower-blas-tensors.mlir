// stc-lower-blas before bufferization: nothing to call with, so the marked
// op keeps its default lowering and a remark says to run the pass later.
// RUN: stc-opt --verify-diagnostics --stc-lower-blas %s | FileCheck %s
// CHECK: linalg.matmul ins(
// CHECK-NOT: call

func.func @t(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-remark @below {{stc-lower-blas: op marked stc.blas keeps its default lowering: it is not bufferized (run stc-lower-blas after bufferization)}}
  %r = linalg.matmul {stc.blas} ins(%a, %b : tensor<8x4xf32>, tensor<4x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
