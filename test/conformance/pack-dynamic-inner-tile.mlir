// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/pack-dynamic-inner-tile.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// linalg.pack with a padding value and a dynamic inner tile size (upstream
// tiles, decomposes and vectorizes it with a transform script; mode ref here
// decomposes it with Inputs/decompose-pack.transform.mlir).
// stc lowers the pack/unpack ops itself before bufferizing
// (passes/lower_pack_unpack.c, stc-lower-pack-unpack).
// REF-PIPELINE: builtin.module(transform-preload-library{transform-library-paths=%inputs/decompose-pack.transform.mlir},transform-interpreter,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,convert-linalg-to-loops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefI32(%t: tensor<*xi32>)

func.func private @pack(%a: tensor<7x16xi32>) {
  %one = arith.constant 1 : index
  %tile = arith.constant 8 : index
  %pad = arith.constant 123 : i32
  %e = tensor.empty(%one, %tile) : tensor<?x16x?x1xi32>
  %p = linalg.pack %a padding_value(%pad : i32) inner_dims_pos = [0, 1] inner_tiles = [%tile, 1]
      into %e : tensor<7x16xi32> -> tensor<?x16x?x1xi32>
  %u = tensor.cast %p : tensor<?x16x?x1xi32> to tensor<*xi32>
  call @printMemrefI32(%u) : (tensor<*xi32>) -> ()
  return
}

func.func @main() {
  %a = arith.constant dense<[
    [ 1,  8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, 85, 92,  99, 106],
    [ 2,  9, 16, 23, 30, 37, 44, 51, 58, 65, 72, 79, 86, 93, 100, 107],
    [ 3, 10, 17, 24, 31, 38, 45, 52, 59, 66, 73, 80, 87, 94, 101, 108],
    [ 4, 11, 18, 25, 32, 39, 46, 53, 60, 67, 74, 81, 88, 95, 102, 109],
    [ 5, 12, 19, 26, 33, 40, 47, 54, 61, 68, 75, 82, 89, 96, 103, 110],
    [ 6, 13, 20, 27, 34, 41, 48, 55, 62, 69, 76, 83, 90, 97, 104, 111],
    [ 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91, 98, 105, 112]]> : tensor<7x16xi32>
  call @pack(%a) : (tensor<7x16xi32>) -> ()
  return
}

// CHECK: Unranked Memref base@ = 0x{{.*}} rank = 4 offset = 0 sizes = [1, 16, 8, 1] strides = [128, 8, 1, 1] data =
// Tile 1: (8 x 1)
// CHECK-NEXT:  1
// CHECK-NEXT:  2
// CHECK-NEXT:  3
// CHECK-NEXT:  4
// CHECK-NEXT:  5
// CHECK-NEXT:  6
// CHECK-NEXT:  7
// Expect pad value after 7 elements
// CHECK-NEXT:  123
// Tile 2: (8 x 1)
// CHECK-NEXT:  8
// CHECK-NEXT:  9
// CHECK-NEXT:  10
// CHECK-NEXT:  11
// CHECK-NEXT:  12
// CHECK-NEXT:  13
// CHECK-NEXT:  14
// Expect pad value after further 7 elements
// CHECK-NEXT:  123
// Tile 3: (8 x 1)
// CHECK-NEXT:  15
// CHECK-NEXT:  16
