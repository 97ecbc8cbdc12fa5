// region-ids.mlir's program with three changes: a new attribute on the first
// generic, another payload in the second generic, other shapes in @helper.
// Also an stc.* attribute on the first matmul, which must not change its id.
#map = affine_map<(d0, d1) -> (d0, d1)>

func.func @main(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>,
                %c: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = linalg.matmul {stc.note = "ignored by the hash"}
                     ins(%a, %b : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%c : tensor<16x8xf32>) -> tensor<16x8xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<16x8xf32>) outs(%1 : tensor<16x8xf32>)
      attrs = {my.tag = 1 : i64} {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<16x8xf32>) outs(%2 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.subf %in, %out : f32
    linalg.yield %p : f32
  } -> tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %4 = linalg.fill ins(%zero : f32) outs(%3 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

func.func @helper(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = linalg.add ins(%x, %y : tensor<8x4xf32>, tensor<8x4xf32>)
                  outs(%y : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
