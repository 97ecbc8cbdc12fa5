// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-expand-tensor.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// tensor.expand_shape of a dynamically shaped tensor, in a callee.
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @expand(%t: tensor<2x?x?xf32>) -> tensor<2x2x?x1x?xf32> {
  %i2 = arith.constant 2 : index
  %dim1 = tensor.dim %t, %i2 : tensor<2x?x?xf32>
  %i1 = arith.constant 1 : index
  %rows = tensor.dim %t, %i1 : tensor<2x?x?xf32>
  %mid = arith.divui %rows, %i2 : index
  %r = tensor.expand_shape %t [[0], [1, 2, 3], [4]] output_shape [2, 2, %mid, 1, %dim1]
      : tensor<2x?x?xf32> into tensor<2x2x?x1x?xf32>
  return %r : tensor<2x2x?x1x?xf32>
}

func.func @main() {
  %k = arith.constant dense<[[[-3.9058, 0.9072], [-2.9470, -2.2055], [18.3946, 8.2997],
                              [3.4700, 5.9006], [-17.2267, 4.9777], [1.0450, -0.8201]],
                             [[17.6996, -11.1763], [26.7775, -3.8823], [-4.2492, -5.8966],
                              [2.1259, 13.1794], [-10.7136, 0.8428], [16.4233, 9.4589]]]> : tensor<2x6x2xf32>
  %d = tensor.cast %k : tensor<2x6x2xf32> to tensor<2x?x?xf32>
  %e = call @expand(%d) : (tensor<2x?x?xf32>) -> tensor<2x2x?x1x?xf32>
  %u = tensor.cast %e : tensor<2x2x?x1x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

//      CHECK: Unranked Memref base@ = {{0x[-9a-f]*}}
// CHECK-SAME: rank = 5 offset = 0 sizes = [2, 2, 3, 1, 2] strides = [12, 6, 2, 2, 1] data =
// CHECK-NEXT{LITERAL}: [[[[[-3.9058,      0.9072]],
// CHECK-NEXT{LITERAL}:   [[-2.947,      -2.2055]],
// CHECK-NEXT{LITERAL}:   [[18.3946,      8.2997]]],
// CHECK-NEXT{LITERAL}:  [[[3.47,      5.9006]],
// CHECK-NEXT{LITERAL}:   [[-17.2267,      4.9777]],
// CHECK-NEXT{LITERAL}:   [[1.045,      -0.8201]]]],
// CHECK-NEXT{LITERAL}: [[[[17.6996,      -11.1763]],
// CHECK-NEXT{LITERAL}:   [[26.7775,      -3.8823]],
// CHECK-NEXT{LITERAL}:   [[-4.2492,      -5.8966]]],
// CHECK-NEXT{LITERAL}:  [[[2.1259,      13.1794]],
// CHECK-NEXT{LITERAL}:   [[-10.7136,      0.8428]],
// CHECK-NEXT{LITERAL}:   [[16.4233,      9.4589]]]]]
