// One transformer encoder block (post-norm), seq 128, d_model 256, 4 heads of
// 64: Q/K/V projections (linalg.matmul), per-head scores and context
// (linalg.batch_matmul), softmax written as linalg.generic (max, sub+exp, sum,
// div), output projection, residual, layer norm. In: nothing (main builds
// deterministic inputs). Out, printed with printMemrefF32: per-row checksums
// of the block output (128x2: weighted sum, sum of squares) and its top-left
// 4x16 corner.
//
// @transformer_block is public so that a compiler finds the tunable ops
// (4 matmuls, 2 batch_matmuls, the softmax/layer-norm reductions) there.

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#red2 = affine_map<(i, j) -> (i)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#red3 = affine_map<(b, i, j) -> (b, i)>

func.func private @printMemrefF32(tensor<*xf32>)

// x * w + b, all 128x256 after the projection.
func.func private @project(%x: tensor<128x256xf32>, %w: tensor<256x256xf32>,
                           %b: tensor<256xf32>) -> tensor<128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<128x256xf32>) -> tensor<128x256xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<128x256xf32>, tensor<256x256xf32>)
                      outs(%acc : tensor<128x256xf32>) -> tensor<128x256xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<128x256xf32>, tensor<256xf32>) outs(%e : tensor<128x256xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<128x256xf32>
  return %y : tensor<128x256xf32>
}

// [seq, heads*dh] -> [heads, seq, dh]
func.func private @split_heads(%x: tensor<128x256xf32>) -> tensor<4x128x64xf32> {
  %x3 = tensor.expand_shape %x [[0], [1, 2]] output_shape [128, 4, 64]
      : tensor<128x256xf32> into tensor<128x4x64xf32>
  %e = tensor.empty() : tensor<4x128x64xf32>
  %t = linalg.transpose ins(%x3 : tensor<128x4x64xf32>) outs(%e : tensor<4x128x64xf32>)
      permutation = [1, 0, 2]
  return %t : tensor<4x128x64xf32>
}

// Row-wise softmax over the last dimension of [heads, seq, seq].
func.func private @softmax(%s: tensor<4x128x128xf32>) -> tensor<4x128x128xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4x128xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x128xf32>) -> tensor<4x128xf32>
  %max = linalg.generic {indexing_maps = [#id3, #red3],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<4x128x128xf32>) outs(%minit : tensor<4x128xf32>) {
  ^bb0(%v: f32, %m: f32):
    %r = arith.maximumf %v, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  %e = tensor.empty() : tensor<4x128x128xf32>
  %ex = linalg.generic {indexing_maps = [#id3, #red3, #id3],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<4x128x128xf32>, tensor<4x128xf32>) outs(%e : tensor<4x128x128xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %x = math.exp %d : f32
    linalg.yield %x : f32
  } -> tensor<4x128x128xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%er : tensor<4x128xf32>) -> tensor<4x128xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #red3],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<4x128x128xf32>) outs(%sinit : tensor<4x128xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  %p = linalg.generic {indexing_maps = [#id3, #red3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<4x128x128xf32>, tensor<4x128xf32>) outs(%e : tensor<4x128x128xf32>) {
  ^bb0(%v: f32, %a: f32, %o: f32):
    %r = arith.divf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x128x128xf32>
  return %p : tensor<4x128x128xf32>
}

// Layer norm over the last dimension (256), eps 1e-5.
func.func private @layer_norm(%x: tensor<128x256xf32>, %gamma: tensor<256xf32>,
                              %beta: tensor<256xf32>) -> tensor<128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 0.00390625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %er = tensor.empty() : tensor<128xf32>
  %z = linalg.fill ins(%zero : f32) outs(%er : tensor<128xf32>) -> tensor<128xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #red2],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<128x256xf32>) outs(%z : tensor<128xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %var = linalg.generic {indexing_maps = [#id2, #red2, #red2],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x, %sum : tensor<128x256xf32>, tensor<128xf32>) outs(%z : tensor<128xf32>) {
  ^bb0(%v: f32, %s: f32, %a: f32):
    %mean = arith.mulf %s, %inv_n : f32
    %d = arith.subf %v, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %r = arith.addf %d2, %a : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %e = tensor.empty() : tensor<128x256xf32>
  %y = linalg.generic {indexing_maps = [#id2, #red2, #red2, #row, #row, #id2],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %var, %gamma, %beta
          : tensor<128x256xf32>, tensor<128xf32>, tensor<128xf32>, tensor<256xf32>, tensor<256xf32>)
      outs(%e : tensor<128x256xf32>) {
  ^bb0(%v: f32, %s: f32, %q: f32, %g: f32, %b: f32, %o: f32):
    %mean = arith.mulf %s, %inv_n : f32
    %varn = arith.mulf %q, %inv_n : f32
    %ve = arith.addf %varn, %eps : f32
    %rs = math.rsqrt %ve : f32
    %d = arith.subf %v, %mean : f32
    %n = arith.mulf %d, %rs : f32
    %gn = arith.mulf %n, %g : f32
    %r = arith.addf %gn, %b : f32
    linalg.yield %r : f32
  } -> tensor<128x256xf32>
  return %y : tensor<128x256xf32>
}

func.func @transformer_block(%x: tensor<128x256xf32>,
    %wq: tensor<256x256xf32>, %bq: tensor<256xf32>,
    %wk: tensor<256x256xf32>, %bk: tensor<256xf32>,
    %wv: tensor<256x256xf32>, %bv: tensor<256xf32>,
    %wo: tensor<256x256xf32>, %bo: tensor<256xf32>,
    %gamma: tensor<256xf32>, %beta: tensor<256xf32>) -> tensor<128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32  // 1/sqrt(64)
  %q = call @project(%x, %wq, %bq) : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %k = call @project(%x, %wk, %bk) : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %v = call @project(%x, %wv, %bv) : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %qh = call @split_heads(%q) : (tensor<128x256xf32>) -> tensor<4x128x64xf32>
  %vh = call @split_heads(%v) : (tensor<128x256xf32>) -> tensor<4x128x64xf32>
  // K^T per head: [seq, heads, dh] -> [heads, dh, seq].
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [128, 4, 64]
      : tensor<128x256xf32> into tensor<128x4x64xf32>
  %ekt = tensor.empty() : tensor<4x64x128xf32>
  %kt = linalg.transpose ins(%k3 : tensor<128x4x64xf32>) outs(%ekt : tensor<4x64x128xf32>)
      permutation = [1, 2, 0]
  // Scores = Q K^T / sqrt(dh).
  %es = tensor.empty() : tensor<4x128x128xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %raw = linalg.batch_matmul ins(%qh, %kt : tensor<4x128x64xf32>, tensor<4x64x128xf32>)
                             outs(%zs : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %scores = linalg.generic {indexing_maps = [#id3, #id3],
                            iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%raw : tensor<4x128x128xf32>) outs(%es : tensor<4x128x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %scale : f32
    linalg.yield %r : f32
  } -> tensor<4x128x128xf32>
  %p = call @softmax(%scores) : (tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  // Context = P V, then back to [seq, heads*dh].
  %ec = tensor.empty() : tensor<4x128x64xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
  %ctx = linalg.batch_matmul ins(%p, %vh : tensor<4x128x128xf32>, tensor<4x128x64xf32>)
                             outs(%zc : tensor<4x128x64xf32>) -> tensor<4x128x64xf32>
  %em = tensor.empty() : tensor<128x4x64xf32>
  %merged3 = linalg.transpose ins(%ctx : tensor<4x128x64xf32>) outs(%em : tensor<128x4x64xf32>)
      permutation = [1, 0, 2]
  %merged = tensor.collapse_shape %merged3 [[0], [1, 2]] : tensor<128x4x64xf32> into tensor<128x256xf32>
  %attn = call @project(%merged, %wo, %bo) : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  // Residual, then layer norm.
  %er = tensor.empty() : tensor<128x256xf32>
  %res = linalg.generic {indexing_maps = [#id2, #id2, #id2],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x, %attn : tensor<128x256xf32>, tensor<128x256xf32>) outs(%er : tensor<128x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<128x256xf32>
  %y = call @layer_norm(%res, %gamma, %beta) : (tensor<128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  return %y : tensor<128x256xf32>
}

// Deterministic pseudo-random fill: t[i][j] = scale * sin((131 i + 71 j + 7 i j + seed) mod 1009) + offset.
func.func private @input2d(%rows: index, %cols: index, %seed: index, %scale: f32,
                           %offset: f32) -> tensor<?x?xf32> {
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
    %w = arith.addf %v, %offset : f32
    linalg.yield %w : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func private @weight(%seed: index, %scale: f32) -> tensor<256x256xf32> {
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = call @input2d(%c256, %c256, %seed, %scale, %zero) : (index, index, index, f32, f32) -> tensor<?x?xf32>
  %r = tensor.cast %t : tensor<?x?xf32> to tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

func.func private @vector(%seed: index, %scale: f32, %offset: f32) -> tensor<256xf32> {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %t = call @input2d(%c1, %c256, %seed, %scale, %offset) : (index, index, index, f32, f32) -> tensor<?x?xf32>
  %c = tensor.collapse_shape %t [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %r = tensor.cast %c : tensor<?xf32> to tensor<256xf32>
  return %r : tensor<256xf32>
}

func.func @main() {
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  // 2/sqrt(256): keeps projections of order one, and scores spread enough
  // that the softmax is neither uniform nor one-hot.
  %kw = arith.constant 0.125 : f32
  %kb = arith.constant 0.1 : f32
  %s0 = arith.constant 0 : index
  %xd = call @input2d(%c128, %c256, %s0, %one, %zero) : (index, index, index, f32, f32) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<128x256xf32>
  %s1 = arith.constant 11 : index
  %s2 = arith.constant 22 : index
  %s3 = arith.constant 33 : index
  %s4 = arith.constant 44 : index
  %s5 = arith.constant 55 : index
  %s6 = arith.constant 66 : index
  %s7 = arith.constant 77 : index
  %s8 = arith.constant 88 : index
  %s9 = arith.constant 99 : index
  %s10 = arith.constant 110 : index
  %wq = call @weight(%s1, %kw) : (index, f32) -> tensor<256x256xf32>
  %wk = call @weight(%s2, %kw) : (index, f32) -> tensor<256x256xf32>
  %wv = call @weight(%s3, %kw) : (index, f32) -> tensor<256x256xf32>
  %wo = call @weight(%s4, %kw) : (index, f32) -> tensor<256x256xf32>
  %bq = call @vector(%s5, %kb, %zero) : (index, f32, f32) -> tensor<256xf32>
  %bk = call @vector(%s6, %kb, %zero) : (index, f32, f32) -> tensor<256xf32>
  %bv = call @vector(%s7, %kb, %zero) : (index, f32, f32) -> tensor<256xf32>
  %bo = call @vector(%s8, %kb, %zero) : (index, f32, f32) -> tensor<256xf32>
  %gamma = call @vector(%s9, %kb, %one) : (index, f32, f32) -> tensor<256xf32>
  %beta = call @vector(%s10, %kb, %zero) : (index, f32, f32) -> tensor<256xf32>
  %y = call @transformer_block(%x, %wq, %bq, %wk, %bk, %wv, %bv, %wo, %bo, %gamma, %beta)
      : (tensor<128x256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<256x256xf32>,
         tensor<256xf32>, tensor<256x256xf32>, tensor<256xf32>, tensor<256x256xf32>,
         tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<128x256xf32>

  // Per-row checksums: sum_j y[i][j] * (1 + j mod 7) and sum_j y[i][j]^2.
  // The weights make a permutation within a row visible.
  %ec = tensor.empty() : tensor<128x2xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<128x2xf32>) -> tensor<128x2xf32>
  %sums = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                           affine_map<(i, j, k) -> (i, j)>],
                          iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y : tensor<128x256xf32>) outs(%zc : tensor<128x2xf32>) {
  ^bb0(%v: f32, %a: f32):
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : index
    %c1 = arith.constant 1 : index
    %km = arith.remui %k, %c7 : index
    %kw1 = arith.addi %km, %c1 : index
    %kwi = arith.index_cast %kw1 : index to i64
    %kwf = arith.uitofp %kwi : i64 to f32
    %weighted = arith.mulf %v, %kwf : f32
    %sq = arith.mulf %v, %v : f32
    %is0 = arith.cmpi eq, %j, %c0 : index
    %t = arith.select %is0, %weighted, %sq : f32
    %r = arith.addf %t, %a : f32
    linalg.yield %r : f32
  } -> tensor<128x2xf32>
  %us = tensor.cast %sums : tensor<128x2xf32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  %corner = tensor.extract_slice %y[0, 0] [4, 16] [1, 1] : tensor<128x256xf32> to tensor<4x16xf32>
  %uc = tensor.cast %corner : tensor<4x16xf32> to tensor<*xf32>
  call @printMemrefF32(%uc) : (tensor<*xf32>) -> ()
  return
}
