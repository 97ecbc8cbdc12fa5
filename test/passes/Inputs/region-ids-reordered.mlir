// region-ids.mlir's program with its functions in the other order, other SSA
// names, other map names, locations and a generic written with its
// attributes in another order: every region id must stay the same.
#identity_2d = affine_map<(i, j) -> (i, j)>

func.func @helper(%lhs: tensor<8x8xf32> loc("helper.py":1:1), %rhs: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %sum = linalg.add ins(%lhs, %rhs : tensor<8x8xf32>, tensor<8x8xf32>)
                    outs(%rhs : tensor<8x8xf32>) -> tensor<8x8xf32> loc("helper.py":2:5)
  return %sum : tensor<8x8xf32>
}

func.func @main(%arg0: tensor<16x32xf32>, %arg1: tensor<32x8xf32>,
                %arg2: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %first = linalg.matmul ins(%arg0, %arg1 : tensor<16x32xf32>, tensor<32x8xf32>)
                         outs(%arg2 : tensor<16x8xf32>) -> tensor<16x8xf32> loc("model.py":10:3)
  %second = linalg.matmul ins(%arg0, %arg1 : tensor<16x32xf32>, tensor<32x8xf32>)
                          outs(%first : tensor<16x8xf32>) -> tensor<16x8xf32>
  %added = linalg.generic {iterator_types = ["parallel", "parallel"],
                           indexing_maps = [#identity_2d, #identity_2d]}
      ins(%first : tensor<16x8xf32>) outs(%second : tensor<16x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %x, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16x8xf32>
  %scaled = linalg.generic {iterator_types = ["parallel", "parallel"],
                            indexing_maps = [#identity_2d, #identity_2d]}
      ins(%first : tensor<16x8xf32>) outs(%added : tensor<16x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.mulf %x, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16x8xf32>
  %cst = arith.constant 0.0 : f32
  %filled = linalg.fill ins(%cst : f32) outs(%scaled : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %filled : tensor<16x8xf32>
}
