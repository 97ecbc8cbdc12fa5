// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-subtensor-insert-multiple-uses.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// Two tensor.insert_slice ops into the same tensor value: neither may
// write into the buffer the other one reads.
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @main() {
  %dst = arith.constant dense<10.0> : tensor<2xf32>
  %src = arith.constant dense<20.0> : tensor<1xf32>
  %first = tensor.insert_slice %src into %dst[0] [1] [1] : tensor<1xf32> into tensor<2xf32>
  %second = tensor.insert_slice %src into %dst[1] [1] [1] : tensor<1xf32> into tensor<2xf32>
  %u0 = tensor.cast %first : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %second : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}

//      CHECK: Unranked Memref base@ = {{0x[-9a-f]*}}
// CHECK-SAME: rank = 1 offset = 0 sizes = [2] strides = [1] data =
// CHECK-NEXT: [20, 10]
//      CHECK: Unranked Memref base@ = {{0x[-9a-f]*}}
// CHECK-SAME: rank = 1 offset = 0 sizes = [2] strides = [1] data =
// CHECK-NEXT: [10, 20]
