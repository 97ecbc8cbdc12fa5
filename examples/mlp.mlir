// A three-layer perceptron, batch 64: 512 -> 384 -> 256 -> 10, bias + ReLU on
// the two hidden layers, plain logits out. In: nothing (main builds
// deterministic inputs). Out: the 64x10 logits printed with printMemrefF32.
//
// @mlp is public so that a compiler finds the three linalg.matmul ops (the
// tunable ones) in a function of their own; @main only builds data and prints.

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @mlp(%x: tensor<64x512xf32>,
               %w1: tensor<512x384xf32>, %b1: tensor<384xf32>,
               %w2: tensor<384x256xf32>, %b2: tensor<256xf32>,
               %w3: tensor<256x10xf32>, %b3: tensor<10xf32>) -> tensor<64x10xf32> {
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  // Layer 1: static shapes so the matmul a tuner sees has static sizes.
  %e1 = tensor.empty() : tensor<64x384xf32>
  %a1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x384xf32>) -> tensor<64x384xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<64x512xf32>, tensor<512x384xf32>)
                      outs(%a1 : tensor<64x384xf32>) -> tensor<64x384xf32>
  %h1 = linalg.generic {indexing_maps = [#id2, #row, #id2],
                        iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<64x384xf32>, tensor<384xf32>) outs(%e1 : tensor<64x384xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x384xf32>
  // Layer 2.
  %e2 = tensor.empty() : tensor<64x256xf32>
  %a2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<64x384xf32>, tensor<384x256xf32>)
                      outs(%a2 : tensor<64x256xf32>) -> tensor<64x256xf32>
  %h2 = linalg.generic {indexing_maps = [#id2, #row, #id2],
                        iterator_types = ["parallel", "parallel"]}
      ins(%m2, %b2 : tensor<64x256xf32>, tensor<256xf32>) outs(%e2 : tensor<64x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x256xf32>
  // Layer 3: logits, no activation.
  %e3 = tensor.empty() : tensor<64x10xf32>
  %a3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<64x10xf32>) -> tensor<64x10xf32>
  %m3 = linalg.matmul ins(%h2, %w3 : tensor<64x256xf32>, tensor<256x10xf32>)
                      outs(%a3 : tensor<64x10xf32>) -> tensor<64x10xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m3, %b3 : tensor<64x10xf32>, tensor<10xf32>) outs(%e3 : tensor<64x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<64x10xf32>
  return %y : tensor<64x10xf32>
}

// Deterministic pseudo-random fill: t[i][j] = scale * sin((131 i + 71 j + 7 i j + seed) mod 1009).
// The i*j term keeps the matrix from being low rank, so index mix-ups change the result.
func.func private @pattern2d(%t: tensor<?x?xf32>, %seed: index, %scale: f32) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%t : tensor<?x?xf32>) {
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

func.func private @input2d(%rows: index, %cols: index, %seed: index, %scale: f32) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = func.call @pattern2d(%e, %seed, %scale) : (tensor<?x?xf32>, index, f32) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @input1d(%n: index, %seed: index, %scale: f32) -> tensor<?xf32> {
  %c1 = arith.constant 1 : index
  %t = func.call @input2d(%c1, %n, %seed, %scale) : (index, index, index, f32) -> tensor<?x?xf32>
  %r = tensor.collapse_shape %t [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @main() {
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %c384 = arith.constant 384 : index
  %c512 = arith.constant 512 : index
  %s0 = arith.constant 0 : index
  %s1 = arith.constant 101 : index
  %s2 = arith.constant 202 : index
  %s3 = arith.constant 303 : index
  %s4 = arith.constant 404 : index
  %s5 = arith.constant 505 : index
  %s6 = arith.constant 606 : index
  // Scales near 2/sqrt(fan-in) keep every layer's activations of order one.
  %one = arith.constant 1.0 : f32
  %k1 = arith.constant 0.088 : f32
  %k2 = arith.constant 0.1 : f32
  %k3 = arith.constant 0.125 : f32
  %kb = arith.constant 0.1 : f32
  %xd = call @input2d(%c64, %c512, %s0, %one) : (index, index, index, f32) -> tensor<?x?xf32>
  %w1d = call @input2d(%c512, %c384, %s1, %k1) : (index, index, index, f32) -> tensor<?x?xf32>
  %b1d = call @input1d(%c384, %s2, %kb) : (index, index, f32) -> tensor<?xf32>
  %w2d = call @input2d(%c384, %c256, %s3, %k2) : (index, index, index, f32) -> tensor<?x?xf32>
  %b2d = call @input1d(%c256, %s4, %kb) : (index, index, f32) -> tensor<?xf32>
  %w3d = call @input2d(%c256, %c10, %s5, %k3) : (index, index, index, f32) -> tensor<?x?xf32>
  %b3d = call @input1d(%c10, %s6, %kb) : (index, index, f32) -> tensor<?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<64x512xf32>
  %w1 = tensor.cast %w1d : tensor<?x?xf32> to tensor<512x384xf32>
  %b1 = tensor.cast %b1d : tensor<?xf32> to tensor<384xf32>
  %w2 = tensor.cast %w2d : tensor<?x?xf32> to tensor<384x256xf32>
  %b2 = tensor.cast %b2d : tensor<?xf32> to tensor<256xf32>
  %w3 = tensor.cast %w3d : tensor<?x?xf32> to tensor<256x10xf32>
  %b3 = tensor.cast %b3d : tensor<?xf32> to tensor<10xf32>
  %y = call @mlp(%x, %w1, %b1, %w2, %b2, %w3, %b3)
      : (tensor<64x512xf32>, tensor<512x384xf32>, tensor<384xf32>, tensor<384x256xf32>,
         tensor<256xf32>, tensor<256x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  %u = tensor.cast %y : tensor<64x10xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
