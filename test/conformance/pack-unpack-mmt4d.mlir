// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/pack-unpack-mmt4d.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// A matmul computed twice: by packing A, B and C (linalg.pack), linalg.mmt4d
// and unpacking (linalg.unpack), and by linalg.matmul (upstream lowers the
// packs with a transform script; here each pipeline lowers them its own way).
// (mode ref: Inputs/lower-pack-unpack.transform.mlir lowers the packs first)
// stc lowers the pack/unpack ops itself before bufferizing
// (passes/lower_pack_unpack.c, stc-lower-pack-unpack).
// REF-PIPELINE: builtin.module(transform-preload-library{transform-library-paths=%inputs/lower-pack-unpack.transform.mlir},transform-interpreter,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,convert-linalg-to-loops,expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefI32(%t: tensor<*xi32>)

func.func private @by_matmul(%a: tensor<7x16xi32>, %b: tensor<16x13xi32>, %c: tensor<7x13xi32>) -> tensor<7x13xi32> {
  %r = linalg.matmul ins(%a, %b : tensor<7x16xi32>, tensor<16x13xi32>) outs(%c : tensor<7x13xi32>) -> tensor<7x13xi32>
  return %r : tensor<7x13xi32>
}

func.func private @by_mmt4d(%a: tensor<7x16xi32>, %b: tensor<16x13xi32>, %c: tensor<7x13xi32>) -> tensor<7x13xi32> {
  %pad = arith.constant 0 : i32
  %ea = tensor.empty() : tensor<1x16x8x1xi32>
  %eb = tensor.empty() : tensor<2x16x8x1xi32>
  %ec = tensor.empty() : tensor<1x2x8x8xi32>
  %pa = linalg.pack %a padding_value(%pad : i32) inner_dims_pos = [0, 1] inner_tiles = [8, 1]
      into %ea : tensor<7x16xi32> -> tensor<1x16x8x1xi32>
  %pb = linalg.pack %b padding_value(%pad : i32) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 1]
      into %eb : tensor<16x13xi32> -> tensor<2x16x8x1xi32>
  %pc = linalg.pack %c padding_value(%pad : i32) outer_dims_perm = [0, 1] inner_dims_pos = [0, 1] inner_tiles = [8, 8]
      into %ec : tensor<7x13xi32> -> tensor<1x2x8x8xi32>
  %m = linalg.mmt4d ins(%pa, %pb : tensor<1x16x8x1xi32>, tensor<2x16x8x1xi32>) outs(%pc : tensor<1x2x8x8xi32>) -> tensor<1x2x8x8xi32>
  %eo = tensor.empty() : tensor<7x13xi32>
  %r = linalg.unpack %m outer_dims_perm = [0, 1] inner_dims_pos = [0, 1] inner_tiles = [8, 8]
      into %eo : tensor<1x2x8x8xi32> -> tensor<7x13xi32>
  return %r : tensor<7x13xi32>
}

func.func @main() {
  %three = arith.constant 3 : i32
  %four = arith.constant 4 : i32
  %ea = tensor.empty() : tensor<7x16xi32>
  %eb = tensor.empty() : tensor<16x13xi32>
  %a = linalg.fill ins(%three : i32) outs(%ea : tensor<7x16xi32>) -> tensor<7x16xi32>
  %b = linalg.fill ins(%four : i32) outs(%eb : tensor<16x13xi32>) -> tensor<16x13xi32>
  %c = arith.constant dense<[
    [ 1,  8, 15, 22, 29, 36, 43, 50, 57, 64, 71, 78, 85],
    [ 2,  9, 16, 23, 30, 37, 44, 51, 58, 65, 72, 79, 86],
    [ 3, 10, 17, 24, 31, 38, 45, 52, 59, 66, 73, 80, 87],
    [ 4, 11, 18, 25, 32, 39, 46, 53, 60, 67, 74, 81, 88],
    [ 5, 12, 19, 26, 33, 40, 47, 54, 61, 68, 75, 82, 89],
    [ 6, 13, 20, 27, 34, 41, 48, 55, 62, 69, 76, 83, 90],
    [ 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 77, 84, 91]]> : tensor<7x13xi32>
  %r1 = call @by_mmt4d(%a, %b, %c) : (tensor<7x16xi32>, tensor<16x13xi32>, tensor<7x13xi32>) -> tensor<7x13xi32>
  %u1 = tensor.cast %r1 : tensor<7x13xi32> to tensor<*xi32>
  call @printMemrefI32(%u1) : (tensor<*xi32>) -> ()
  %r2 = call @by_matmul(%a, %b, %c) : (tensor<7x16xi32>, tensor<16x13xi32>, tensor<7x13xi32>) -> tensor<7x13xi32>
  %u2 = tensor.cast %r2 : tensor<7x13xi32> to tensor<*xi32>
  call @printMemrefI32(%u2) : (tensor<*xi32>) -> ()
  return
}

// CHECK: Unranked Memref
// CHECK:  [193,   200,   207,   214,   221,   228,   235,   242,   249,   256,   263,   270,   277]
// CHECK:  [194,   201,   208,   215,   222,   229,   236,   243,   250,   257,   264,   271,   278]
// CHECK:  [195,   202,   209,   216,   223,   230,   237,   244,   251,   258,   265,   272,   279]
// CHECK:  [196,   203,   210,   217,   224,   231,   238,   245,   252,   259,   266,   273,   280]
// CHECK:  [197,   204,   211,   218,   225,   232,   239,   246,   253,   260,   267,   274,   281]
// CHECK:  [198,   205,   212,   219,   226,   233,   240,   247,   254,   261,   268,   275,   282]
// CHECK:  [199,   206,   213,   220,   227,   234,   241,   248,   255,   262,   269,   276,   283]
// CHECK: Unranked Memref
// CHECK:  [193,   200,   207,   214,   221,   228,   235,   242,   249,   256,   263,   270,   277]
// CHECK:  [194,   201,   208,   215,   222,   229,   236,   243,   250,   257,   264,   271,   278]
// CHECK:  [195,   202,   209,   216,   223,   230,   237,   244,   251,   258,   265,   272,   279]
// CHECK:  [196,   203,   210,   217,   224,   231,   238,   245,   252,   259,   266,   273,   280]
// CHECK:  [197,   204,   211,   218,   225,   232,   239,   246,   253,   260,   267,   274,   281]
// CHECK:  [198,   205,   212,   219,   226,   233,   240,   247,   254,   261,   268,   275,   282]
// CHECK:  [199,   206,   213,   220,   227,   234,   241,   248,   255,   262,   269,   276,   283]
