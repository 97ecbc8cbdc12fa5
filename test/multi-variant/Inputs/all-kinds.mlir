// One site of each kind that has built-in schedules, static and dynamic.
func.func @mm(%a: tensor<64x48xf32>, %b: tensor<48x80xf32>, %c: tensor<64x80xf32>) -> tensor<64x80xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x48xf32>, tensor<48x80xf32>) outs(%c : tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}
func.func @mm_dyn(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
func.func @bmm(%a: tensor<2x64x32xf32>, %b: tensor<2x32x64xf32>, %c: tensor<2x64x64xf32>) -> tensor<2x64x64xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x64x32xf32>, tensor<2x32x64xf32>) outs(%c : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  return %r : tensor<2x64x64xf32>
}
func.func @conv(%i: tensor<1x34x34x16xf32>, %f: tensor<3x3x16x32xf32>, %o: tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x34x34x16xf32>, tensor<3x3x16x32xf32>) outs(%o : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  return %r : tensor<1x32x32x32xf32>
}
func.func @red(%x: tensor<64x128xf32>, %r0: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x128xf32>) outs(%r0 : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
