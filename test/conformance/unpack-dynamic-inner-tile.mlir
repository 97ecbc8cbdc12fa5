// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/unpack-dynamic-inner-tile.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// linalg.unpack with a dynamic inner tile size, dropping the padding (upstream
// tiles, decomposes and vectorizes it with a transform script; mode ref here
// lowers it with Inputs/lower-pack-unpack.transform.mlir).
// stc lowers the pack/unpack ops itself before bufferizing
// (passes/lower_pack_unpack.c, stc-lower-pack-unpack).
// REF-PIPELINE: builtin.module(transform-preload-library{transform-library-paths=%inputs/lower-pack-unpack.transform.mlir},transform-interpreter,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,convert-linalg-to-loops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefI32(%t: tensor<*xi32>)

func.func private @unpack(%a: tensor<?x3x?x1xi32>) {
  %tile = arith.constant 8 : index
  %e = tensor.empty() : tensor<7x3xi32>
  %r = linalg.unpack %a inner_dims_pos = [0, 1] inner_tiles = [%tile, 1]
      into %e : tensor<?x3x?x1xi32> -> tensor<7x3xi32>
  %u = tensor.cast %r : tensor<7x3xi32> to tensor<*xi32>
  call @printMemrefI32(%u) : (tensor<*xi32>) -> ()
  return
}

func.func @main() {
  %a = arith.constant dense<[[
    [[1], [2], [3], [4], [5], [6], [7], [123]],
    [[8], [9], [10], [11], [12], [13], [14], [123]],
    [[15], [16], [17], [18], [19], [20], [21], [123]]]]> : tensor<1x3x8x1xi32>
  %d = tensor.cast %a : tensor<1x3x8x1xi32> to tensor<?x3x?x1xi32>
  call @unpack(%d) : (tensor<?x3x?x1xi32>) -> ()
  return
}

// CHECK: Unranked Memref base@ = 0x{{.*}} rank = 2 offset = 0 sizes = [7, 3] strides = [3, 1] data =
// CHECK-NEXT: [1,   8,   15],
// CHECK-NEXT:  [2,   9,   16],
// CHECK-NEXT:  [3,   10,   17],
// CHECK-NEXT:  [4,   11,   18],
// CHECK-NEXT:  [5,   12,   19],
// CHECK-NEXT:  [6,   13,   20],
// CHECK-NEXT:  [7,   14,   21]
