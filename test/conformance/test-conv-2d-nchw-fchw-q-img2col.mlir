// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-conv-2d-nchw-fchw-q-img2col.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// linalg.conv_2d_nchw_fchw_q on i8 tensors with scalar zero points (upstream
// also rewrites it with img2col by a transform script; same answer).
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefI32(%t: tensor<*xi32>)

func.func @conv(%x: tensor<2x2x3x3xi8>, %w: tensor<3x2x2x2xi8>, %acc: tensor<2x3x2x2xi32>,
                %xzp: i32, %wzp: i32) -> tensor<2x3x2x2xi32> {
  %r = linalg.conv_2d_nchw_fchw_q {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
      ins(%x, %w, %xzp, %wzp : tensor<2x2x3x3xi8>, tensor<3x2x2x2xi8>, i32, i32)
      outs(%acc : tensor<2x3x2x2xi32>) -> tensor<2x3x2x2xi32>
  return %r : tensor<2x3x2x2xi32>
}

func.func @main() {
  %x = arith.constant dense<[
    [[[-4, -3, -2], [-1, 0, 1], [2, 3, 4]],
     [[5, 4, 3], [2, 1, 0], [-1, -2, -3]]],
    [[[6, -5, 4], [-3, 2, -1], [0, 1, -2]],
     [[-7, 6, -5], [4, -3, 2], [-1, 0, 1]]]]> : tensor<2x2x3x3xi8>
  %w = arith.constant dense<[
    [[[1, -2], [3, 0]], [[-1, 2], [-3, 4]]],
    [[[-4, 1], [2, -1]], [[3, -2], [0, 1]]],
    [[[2, 0], [-1, -3]], [[-2, 4], [1, -4]]]]> : tensor<3x2x2x2xi8>
  %acc = arith.constant dense<7> : tensor<2x3x2x2xi32>
  %xzp = arith.constant 3 : i32
  %wzp = arith.constant -2 : i32
  %r = call @conv(%x, %w, %acc, %xzp, %wzp)
      : (tensor<2x2x3x3xi8>, tensor<3x2x2x2xi8>, tensor<2x3x2x2xi32>, i32, i32) -> tensor<2x3x2x2xi32>
  %flat = tensor.collapse_shape %r [[0], [1, 2, 3]] : tensor<2x3x2x2xi32> into tensor<2x12xi32>
  %u = tensor.cast %flat : tensor<2x12xi32> to tensor<*xi32>
  call @printMemrefI32(%u) : (tensor<*xi32>) -> ()
  return
}

// CHECK: Unranked Memref
// CHECK-SAME: rank = 2 offset = 0 sizes = [2, 12] strides = [12, 1] data =
// CHECK-NEXT: [-45, -45, -45, -45, -14, -18, -26, -30, -27, -28, -30, -31]
// CHECK-NEXT: [-51, -59, -67, -35, -114, 18, -10, -58, 31, -84, -62, -13]
