// stc-lower-pack-unpack: linalg.pack / linalg.unpack, which MLIR 22 cannot
// bufferize, become ops that do; a static pack through lower_pack, a pack
// with a dynamic inner tile by tiling and decomposition, an unpack through
// lower_unpack. A module without them is left as it is.
// RUN: stc-opt --split-input-file --stc-lower-pack-unpack %s | FileCheck %s
// RUN: stc-opt --split-input-file --stc-lower-pack-unpack %s | FileCheck %s --check-prefix=NONE

// NONE-NOT: linalg.pack
// NONE-NOT: linalg.unpack

// CHECK-LABEL: func.func @static_pack
// CHECK: tensor.pad
// CHECK: tensor.expand_shape
// CHECK: linalg.transpose
func.func @static_pack(%a: tensor<7x16xf32>) -> tensor<1x16x8x1xf32> {
  %pad = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x8x1xf32>
  %p = linalg.pack %a padding_value(%pad : f32) inner_dims_pos = [0, 1] inner_tiles = [8, 1]
      into %e : tensor<7x16xf32> -> tensor<1x16x8x1xf32>
  return %p : tensor<1x16x8x1xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_tile_pack
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.insert_slice
func.func @dynamic_tile_pack(%a: tensor<7x16xi32>, %tile: index) -> tensor<?x16x?x1xi32> {
  %one = arith.constant 1 : index
  %pad = arith.constant 123 : i32
  %e = tensor.empty(%one, %tile) : tensor<?x16x?x1xi32>
  %p = linalg.pack %a padding_value(%pad : i32) inner_dims_pos = [0, 1] inner_tiles = [%tile, 1]
      into %e : tensor<7x16xi32> -> tensor<?x16x?x1xi32>
  return %p : tensor<?x16x?x1xi32>
}

// -----

// CHECK-LABEL: func.func @unpack
// CHECK: linalg.transpose
// CHECK: tensor.collapse_shape
// CHECK: tensor.extract_slice
func.func @unpack(%a: tensor<1x2x8x8xf32>) -> tensor<7x13xf32> {
  %e = tensor.empty() : tensor<7x13xf32>
  %r = linalg.unpack %a outer_dims_perm = [0, 1] inner_dims_pos = [0, 1] inner_tiles = [8, 8]
      into %e : tensor<1x2x8x8xf32> -> tensor<7x13xf32>
  return %r : tensor<7x13xf32>
}

// -----

// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: linalg.matmul
func.func @untouched(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
