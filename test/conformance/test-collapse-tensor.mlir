// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-collapse-tensor.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// tensor.collapse_shape of a dynamically shaped tensor, in a callee.
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(%t: tensor<*xf32>)

func.func @collapse(%t: tensor<2x?x?x?xf32>) -> tensor<2x?x?xf32> {
  %r = tensor.collapse_shape %t [[0], [1, 2], [3]] : tensor<2x?x?x?xf32> into tensor<2x?x?xf32>
  return %r : tensor<2x?x?xf32>
}

func.func @main() {
  %k = arith.constant dense<[[[[-3.9058, 0.9072], [-2.9470, -2.2055], [18.3946, 8.2997]],
                              [[3.4700, 5.9006], [-17.2267, 4.9777], [1.0450, -0.8201]]],
                             [[[17.6996, -11.1763], [26.7775, -3.8823], [-4.2492, -5.8966]],
                              [[2.1259, 13.1794], [-10.7136, 0.8428], [16.4233, 9.4589]]]]> : tensor<2x2x3x2xf32>
  %d = tensor.cast %k : tensor<2x2x3x2xf32> to tensor<2x?x?x?xf32>
  %c = call @collapse(%d) : (tensor<2x?x?x?xf32>) -> tensor<2x?x?xf32>
  %u = tensor.cast %c : tensor<2x?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

//      CHECK: Unranked Memref base@ = {{0x[-9a-f]*}}
// CHECK-SAME: rank = 3 offset = 0 sizes = [2, 6, 2] strides = [12, 2, 1] data =
// CHECK-NEXT{LITERAL}: [[[-3.9058,    0.9072],
// CHECK-NEXT: [-2.947,    -2.2055],
// CHECK-NEXT: [18.3946,    8.2997],
// CHECK-NEXT: [3.47,    5.9006],
// CHECK-NEXT: [-17.2267,    4.9777],
// CHECK-NEXT: [1.045,    -0.8201]],
// CHECK-NEXT{LITERAL}: [[17.6996,    -11.1763],
// CHECK-NEXT: [26.7775,    -3.8823],
// CHECK-NEXT: [-4.2492,    -5.8966],
// CHECK-NEXT: [2.1259,    13.1794],
// CHECK-NEXT: [-10.7136,    0.8428],
// CHECK-NEXT: [16.4233,    9.4589]]]
