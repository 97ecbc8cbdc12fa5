// A small conv net on one 32x32 image with 8 channels (NHWC):
// conv 3x3 8->16 + bias + ReLU, conv 3x3 16->32 + bias + ReLU (both
// linalg.conv_2d_nhwc_hwcf, stride 1, no padding), 2x2/2 max pooling
// (linalg.pooling_nhwc_max) -> 1x14x14x32. In: nothing (main builds
// deterministic inputs). Out, printed with printMemrefF32: the pooled output
// summed over its rows (H), a 14x32 (W x C) table, and its first pooled row.
//
// @convnet is public so that a compiler finds the convolutions and the pooling
// op (the tunable ones) there.

#id2 = affine_map<(i, j) -> (i, j)>
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#chan = affine_map<(n, h, w, c) -> (c)>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @convnet(%img: tensor<1x32x32x8xf32>,
                   %f1: tensor<3x3x8x16xf32>, %b1: tensor<16xf32>,
                   %f2: tensor<3x3x16x32xf32>, %b2: tensor<32xf32>) -> tensor<1x14x14x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  // Conv 1.
  %e1 = tensor.empty() : tensor<1x30x30x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x30x30x16xf32>) -> tensor<1x30x30x16xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %f1 : tensor<1x32x32x8xf32>, tensor<3x3x8x16xf32>)
      outs(%z1 : tensor<1x30x30x16xf32>) -> tensor<1x30x30x16xf32>
  %r1 = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1, %b1 : tensor<1x30x30x16xf32>, tensor<16xf32>) outs(%e1 : tensor<1x30x30x16xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x30x30x16xf32>
  // Conv 2.
  %e2 = tensor.empty() : tensor<1x28x28x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x28x28x32xf32>) -> tensor<1x28x28x32xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%r1, %f2 : tensor<1x30x30x16xf32>, tensor<3x3x16x32xf32>)
      outs(%z2 : tensor<1x28x28x32xf32>) -> tensor<1x28x28x32xf32>
  %r2 = linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %b2 : tensor<1x28x28x32xf32>, tensor<32xf32>) outs(%e2 : tensor<1x28x28x32xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x28x28x32xf32>
  // 2x2 max pooling, stride 2.
  %win = tensor.empty() : tensor<2x2xf32>
  %ep = tensor.empty() : tensor<1x14x14x32xf32>
  %zp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r2, %win : tensor<1x28x28x32xf32>, tensor<2x2xf32>)
      outs(%zp : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  return %p : tensor<1x14x14x32xf32>
}

// Deterministic pseudo-random fill: t[i][j] = scale * sin((131 i + 71 j + 7 i j + seed) mod 1009).
func.func private @input2d(%rows: index, %cols: index, %seed: index, %scale: f32) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c131 = arith.constant 131 : index
    %c71 = arith.constant 71 : index
    %c7 = arith.constant 7 : index
    %c1009 = arith.constant 1009 : index
    %a = arith.muli %i, %c131 : index
    %b = arith.muli %j, %c71 : index
    %ij = arith.muli %i, %j : index
    %c = arith.muli %ij, %c7 : index
    %s1 = arith.addi %a, %b : index
    %s2 = arith.addi %s1, %c : index
    %s3 = arith.addi %s2, %seed : index
    %m = arith.remui %s3, %c1009 : index
    %mi = arith.index_cast %m : index to i64
    %f = arith.uitofp %mi : i64 to f32
    %sn = math.sin %f : f32
    %v = arith.mulf %sn, %scale : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c72 = arith.constant 72 : index
  %c144 = arith.constant 144 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  // About 2/sqrt(fan-in) (72 and 144).
  %k1 = arith.constant 0.24 : f32
  %k2 = arith.constant 0.17 : f32
  %kb = arith.constant 0.1 : f32
  %s0 = arith.constant 0 : index
  %s1 = arith.constant 123 : index
  %s2 = arith.constant 234 : index
  %s3 = arith.constant 345 : index
  %s4 = arith.constant 456 : index
  // Flat 2-D patterns reshaped to NHWC / HWCF.
  %imgd = call @input2d(%c1024, %c8, %s0, %one) : (index, index, index, f32) -> tensor<?x?xf32>
  %imgs = tensor.cast %imgd : tensor<?x?xf32> to tensor<1024x8xf32>
  %img = tensor.expand_shape %imgs [[0, 1, 2], [3]] output_shape [1, 32, 32, 8]
      : tensor<1024x8xf32> into tensor<1x32x32x8xf32>
  %f1d = call @input2d(%c72, %c16, %s1, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %f1s = tensor.cast %f1d : tensor<?x?xf32> to tensor<72x16xf32>
  %f1 = tensor.expand_shape %f1s [[0, 1, 2], [3]] output_shape [3, 3, 8, 16]
      : tensor<72x16xf32> into tensor<3x3x8x16xf32>
  %f2d = call @input2d(%c144, %c32, %s2, %k2) : (index, index, index, f32) -> tensor<?x?xf32>
  %f2s = tensor.cast %f2d : tensor<?x?xf32> to tensor<144x32xf32>
  %f2 = tensor.expand_shape %f2s [[0, 1, 2], [3]] output_shape [3, 3, 16, 32]
      : tensor<144x32xf32> into tensor<3x3x16x32xf32>
  %b1d = call @input2d(%c1, %c16, %s3, %kb) : (index, index, index, f32) -> tensor<?x?xf32>
  %b1s = tensor.cast %b1d : tensor<?x?xf32> to tensor<1x16xf32>
  %b1 = tensor.collapse_shape %b1s [[0, 1]] : tensor<1x16xf32> into tensor<16xf32>
  %b2d = call @input2d(%c1, %c32, %s4, %kb) : (index, index, index, f32) -> tensor<?x?xf32>
  %b2s = tensor.cast %b2d : tensor<?x?xf32> to tensor<1x32xf32>
  %b2 = tensor.collapse_shape %b2s [[0, 1]] : tensor<1x32xf32> into tensor<32xf32>

  %y = call @convnet(%img, %f1, %b1, %f2, %b2)
      : (tensor<1x32x32x8xf32>, tensor<3x3x8x16xf32>, tensor<16xf32>, tensor<3x3x16x32xf32>,
         tensor<32xf32>) -> tensor<1x14x14x32xf32>

  // Sum over H: a 14x32 table; every (w, c) of the output contributes.
  %et = tensor.empty() : tensor<14x32xf32>
  %zt = linalg.fill ins(%zero : f32) outs(%et : tensor<14x32xf32>) -> tensor<14x32xf32>
  %table = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>,
                                            affine_map<(n, h, w, c) -> (w, c)>],
                           iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%y : tensor<1x14x14x32xf32>) outs(%zt : tensor<14x32xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<14x32xf32>
  %ut = tensor.cast %table : tensor<14x32xf32> to tensor<*xf32>
  call @printMemrefF32(%ut) : (tensor<*xf32>) -> ()
  %row = tensor.extract_slice %y[0, 0, 0, 0] [1, 1, 14, 32] [1, 1, 1, 1]
      : tensor<1x14x14x32xf32> to tensor<14x32xf32>
  %ur = tensor.cast %row : tensor<14x32xf32> to tensor<*xf32>
  call @printMemrefF32(%ur) : (tensor<*xf32>) -> ()
  return
}
