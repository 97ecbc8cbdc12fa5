// Every op kind the default lowering (stc-default-lowering) has a schedule
// for, on odd static sizes (no tile divides them), dynamic sizes and
// transposed operands, each result printed. test/e2e/default-lowering.test
// runs it through --tune-hot-paths (default lowering, and scalar loops) and
// through upstream mlir-opt + mlir-runner, and compares the three.
func.func private @printMemrefF32(tensor<*xf32>)

#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>

// t[i][j] = ((7 i + 13 j + seed) mod 17) / 8 - 1
func.func @fill2d(%rows: index, %cols: index, %seed: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c13 = arith.constant 13 : index
    %c17 = arith.constant 17 : index
    %t0 = arith.muli %i, %c7 : index
    %t1 = arith.muli %j, %c13 : index
    %t2 = arith.addi %t0, %t1 : index
    %t3 = arith.addi %t2, %seed : index
    %t4 = arith.remui %t3, %c17 : index
    %t5 = arith.index_cast %t4 : index to i64
    %f = arith.sitofp %t5 : i64 to f32
    %s = arith.constant 0.125 : f32
    %one = arith.constant 1.0 : f32
    %v = arith.mulf %f, %s : f32
    %w = arith.subf %v, %one : f32
    linalg.yield %w : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @print2d(%t: tensor<?x?xf32>) {
  %u = tensor.cast %t : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @matmul_odd(%a: tensor<37x29xf32>, %b: tensor<29x53xf32>, %c: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<37x29xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
}

// Fewer rows than a register tile (a decode step), odd columns.
func.func @matmul_few_rows(%a: tensor<3x29xf32>, %b: tensor<29x53xf32>, %c: tensor<3x53xf32>) -> tensor<3x53xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<3x29xf32>, tensor<29x53xf32>) outs(%c : tensor<3x53xf32>) -> tensor<3x53xf32>
  return %r : tensor<3x53xf32>
}

func.func @matmul_dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @matmul_at_b(%a: tensor<29x37xf32>, %b: tensor<29x53xf32>, %c: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %r = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%a, %b : tensor<29x37xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
}

func.func @batch_a_bt(%a: tensor<3x19x13xf32>, %b: tensor<3x21x13xf32>, %c: tensor<3x19x21xf32>) -> tensor<3x19x21xf32> {
  %r = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn]
      ins(%a, %b : tensor<3x19x13xf32>, tensor<3x21x13xf32>) outs(%c : tensor<3x19x21xf32>) -> tensor<3x19x21xf32>
  return %r : tensor<3x19x21xf32>
}

func.func @batch_matmul(%a: tensor<2x19x13xf32>, %b: tensor<2x13x21xf32>, %c: tensor<2x19x21xf32>) -> tensor<2x19x21xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x19x13xf32>, tensor<2x13x21xf32>) outs(%c : tensor<2x19x21xf32>) -> tensor<2x19x21xf32>
  return %r : tensor<2x19x21xf32>
}

// relu(x * 0.5 + bias[j]): an elementwise chain with a broadcast operand
// (fused into one generic by the default lowering), on dynamic sizes.
func.func @bias_relu(%x: tensor<?x?xf32>, %bias: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %p = arith.mulf %a, %half : f32
    %q = arith.addf %p, %b : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %q = arith.maximumf %a, %zero : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Softmax over rows: max, exp(x - max), sum, divide (reductions along the
// contiguous dimension, and broadcasts back).
func.func @softmax(%x: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %ninf = arith.constant -1.0e30 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<37xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<37xf32>) -> tensor<37xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<37x53xf32>) outs(%m0 : tensor<37xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.maximumf %a, %o : f32
    linalg.yield %q : f32
  } -> tensor<37xf32>
  %e2 = tensor.empty() : tensor<37x53xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<37x53xf32>, tensor<37xf32>) outs(%e2 : tensor<37x53xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %q = math.exp %d : f32
    linalg.yield %q : f32
  } -> tensor<37x53xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<37xf32>) -> tensor<37xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<37x53xf32>) outs(%s0 : tensor<37xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %o : f32
    linalg.yield %q : f32
  } -> tensor<37xf32>
  %r = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %s : tensor<37x53xf32>, tensor<37xf32>) outs(%e2 : tensor<37x53xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
}

// Column sums: the reduction runs along the non-contiguous dimension.
func.func @colsum(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %o : f32
    linalg.yield %q : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Row sums of squares on dynamic sizes (a row reduction whose payload
// squares before it adds), and an elementwise chain whose results may be
// written over their inputs' buffers: %t must not overwrite %y, which %u
// still reads; %u may overwrite %y or %t.
func.func @rows_dynamic(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e1 = tensor.empty(%n) : tensor<?xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
  %ss = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%s0 : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %q = arith.addf %sq, %o : f32
    linalg.yield %q : f32
  } -> tensor<?xf32>
  %e2 = tensor.empty(%n, %m) : tensor<?x?xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %two : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %q = arith.addf %sq, %one : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  %u = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %t : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.subf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  return %ss, %u : tensor<?xf32>, tensor<?x?xf32>
}

// exp at its edges: gradual underflow (-100: a subnormal), underflow to 0,
// the largest finite results (88.7), overflow to inf (89, 100), and tiny
// arguments; the default lowering computes a vector exp without libm.
#id1 = affine_map<(i) -> (i)>
func.func @exp_edges() -> tensor<20xf32> {
  %x = arith.constant dense<[-110.0, -103.0, -100.0, -87.5, -20.0, -1.0, -0.5, -1.0e-8, 0.0, 1.0e-8,
                              0.3, 0.5, 1.0, 2.5, 10.0, 50.0, 88.0, 88.7, 89.0, 100.0]> : tensor<20xf32>
  %e = tensor.empty() : tensor<20xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<20xf32>) outs(%e : tensor<20xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.exp %a : f32
    linalg.yield %q : f32
  } -> tensor<20xf32>
  return %r : tensor<20xf32>
}

func.func @transpose(%x: tensor<37x53xf32>) -> tensor<53x37xf32> {
  %e = tensor.empty() : tensor<53x37xf32>
  %r = linalg.transpose ins(%x : tensor<37x53xf32>) outs(%e : tensor<53x37xf32>) permutation = [1, 0]
  return %r : tensor<53x37xf32>
}

func.func @matvec(%a: tensor<37x53xf32>, %x: tensor<53xf32>, %y: tensor<37xf32>) -> tensor<37xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<37x53xf32>, tensor<53xf32>) outs(%y : tensor<37xf32>) -> tensor<37xf32>
  return %r : tensor<37xf32>
}

func.func @vecmat(%x: tensor<37xf32>, %a: tensor<37x53xf32>, %y: tensor<53xf32>) -> tensor<53xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<37xf32>, tensor<37x53xf32>) outs(%y : tensor<53xf32>) -> tensor<53xf32>
  return %r : tensor<53xf32>
}

func.func @conv_strided(%in: tensor<1x11x13x5xf32>, %f: tensor<3x3x5x7xf32>, %o: tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %f : tensor<1x11x13x5xf32>, tensor<3x3x5x7xf32>) outs(%o : tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32>
  return %r : tensor<1x5x6x7xf32>
}

// By rows: 8 input channels, stride 2 and dilation 2 at once, 6 output
// columns and 7 filters (no power of two divides them).
func.func @conv_rows(%in: tensor<1x11x15x8xf32>, %f: tensor<3x3x8x7xf32>, %o: tensor<1x3x6x7xf32>) -> tensor<1x3x6x7xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %f : tensor<1x11x15x8xf32>, tensor<3x3x8x7xf32>) outs(%o : tensor<1x3x6x7xf32>) -> tensor<1x3x6x7xf32>
  return %r : tensor<1x3x6x7xf32>
}

func.func @depthwise(%in: tensor<1x9x10x6xf32>, %f: tensor<3x3x6xf32>, %o: tensor<1x7x8x6xf32>) -> tensor<1x7x8x6xf32> {
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<1x9x10x6xf32>, tensor<3x3x6xf32>) outs(%o : tensor<1x7x8x6xf32>) -> tensor<1x7x8x6xf32>
  return %r : tensor<1x7x8x6xf32>
}

// Dynamic sizes, odd at run time. The convolution (11 input channels, 37
// filters, 4x11 outputs) runs by rows with peeled tile loops: full tiles of
// 8 columns x 32 filters x 8 channels and a partial tile along each; the
// depthwise convolution (dilation 2, 5x6 outputs) keeps the scalar loops.
func.func @conv_dynamic(%in: tensor<?x?x?x?xf32>, %f: tensor<?x?x?x?xf32>, %o: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) outs(%o : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

func.func @depthwise_dynamic(%in: tensor<?x?x?x?xf32>, %f: tensor<?x?x?xf32>, %o: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) outs(%o : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

func.func @maxpool(%in: tensor<1x9x11x6xf32>) -> tensor<1x4x5x6xf32> {
  %ninf = arith.constant -1.0e30 : f32
  %e = tensor.empty() : tensor<1x4x5x6xf32>
  %o = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x4x5x6xf32>) -> tensor<1x4x5x6xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %w : tensor<1x9x11x6xf32>, tensor<2x2xf32>) outs(%o : tensor<1x4x5x6xf32>) -> tensor<1x4x5x6xf32>
  return %r : tensor<1x4x5x6xf32>
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c13 = arith.constant 13 : index
  %c19 = arith.constant 19 : index
  %c21 = arith.constant 21 : index
  %c26 = arith.constant 26 : index
  %c29 = arith.constant 29 : index
  %c37 = arith.constant 37 : index
  %c38 = arith.constant 38 : index
  %c42 = arith.constant 42 : index
  %c45 = arith.constant 45 : index
  %c53 = arith.constant 53 : index
  %c54 = arith.constant 54 : index
  %c57 = arith.constant 57 : index
  %c63 = arith.constant 63 : index
  %c99 = arith.constant 99 : index
  %c143 = arith.constant 143 : index
  %c165 = arith.constant 165 : index
  %c72 = arith.constant 72 : index

  // Contractions: odd static sizes, dynamic sizes, A^T B, batched A B^T.
  %a0 = call @fill2d(%c37, %c29, %c1) : (index, index, index) -> tensor<?x?xf32>
  %b0 = call @fill2d(%c29, %c53, %c2) : (index, index, index) -> tensor<?x?xf32>
  %d0 = call @fill2d(%c37, %c53, %c3) : (index, index, index) -> tensor<?x?xf32>
  %a = tensor.cast %a0 : tensor<?x?xf32> to tensor<37x29xf32>
  %b = tensor.cast %b0 : tensor<?x?xf32> to tensor<29x53xf32>
  %d = tensor.cast %d0 : tensor<?x?xf32> to tensor<37x53xf32>
  %r1 = call @matmul_odd(%a, %b, %d) : (tensor<37x29xf32>, tensor<29x53xf32>, tensor<37x53xf32>) -> tensor<37x53xf32>
  %r1d = tensor.cast %r1 : tensor<37x53xf32> to tensor<?x?xf32>
  call @print2d(%r1d) : (tensor<?x?xf32>) -> ()
  %fa0 = call @fill2d(%c3, %c29, %c5) : (index, index, index) -> tensor<?x?xf32>
  %fc0 = call @fill2d(%c3, %c53, %c6) : (index, index, index) -> tensor<?x?xf32>
  %fa = tensor.cast %fa0 : tensor<?x?xf32> to tensor<3x29xf32>
  %fc = tensor.cast %fc0 : tensor<?x?xf32> to tensor<3x53xf32>
  %rf = call @matmul_few_rows(%fa, %b, %fc) : (tensor<3x29xf32>, tensor<29x53xf32>, tensor<3x53xf32>) -> tensor<3x53xf32>
  %rfd = tensor.cast %rf : tensor<3x53xf32> to tensor<?x?xf32>
  call @print2d(%rfd) : (tensor<?x?xf32>) -> ()
  %r2 = call @matmul_dynamic(%a0, %b0, %d0) : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  call @print2d(%r2) : (tensor<?x?xf32>) -> ()
  %at0 = call @fill2d(%c29, %c37, %c4) : (index, index, index) -> tensor<?x?xf32>
  %at = tensor.cast %at0 : tensor<?x?xf32> to tensor<29x37xf32>
  %r3 = call @matmul_at_b(%at, %b, %d) : (tensor<29x37xf32>, tensor<29x53xf32>, tensor<37x53xf32>) -> tensor<37x53xf32>
  %r3d = tensor.cast %r3 : tensor<37x53xf32> to tensor<?x?xf32>
  call @print2d(%r3d) : (tensor<?x?xf32>) -> ()
  %g0 = call @fill2d(%c57, %c13, %c5) : (index, index, index) -> tensor<?x?xf32>
  %h0 = call @fill2d(%c63, %c13, %c6) : (index, index, index) -> tensor<?x?xf32>
  %k0 = call @fill2d(%c57, %c21, %c7) : (index, index, index) -> tensor<?x?xf32>
  %g2 = tensor.cast %g0 : tensor<?x?xf32> to tensor<57x13xf32>
  %h2 = tensor.cast %h0 : tensor<?x?xf32> to tensor<63x13xf32>
  %k2 = tensor.cast %k0 : tensor<?x?xf32> to tensor<57x21xf32>
  %g = tensor.expand_shape %g2 [[0, 1], [2]] output_shape [3, 19, 13] : tensor<57x13xf32> into tensor<3x19x13xf32>
  %h = tensor.expand_shape %h2 [[0, 1], [2]] output_shape [3, 21, 13] : tensor<63x13xf32> into tensor<3x21x13xf32>
  %k = tensor.expand_shape %k2 [[0, 1], [2]] output_shape [3, 19, 21] : tensor<57x21xf32> into tensor<3x19x21xf32>
  %r4 = call @batch_a_bt(%g, %h, %k) : (tensor<3x19x13xf32>, tensor<3x21x13xf32>, tensor<3x19x21xf32>) -> tensor<3x19x21xf32>
  %u4 = tensor.cast %r4 : tensor<3x19x21xf32> to tensor<*xf32>
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  %p0 = call @fill2d(%c38, %c13, %c8) : (index, index, index) -> tensor<?x?xf32>
  %q0 = call @fill2d(%c26, %c21, %c9) : (index, index, index) -> tensor<?x?xf32>
  %s0 = call @fill2d(%c38, %c21, %c1) : (index, index, index) -> tensor<?x?xf32>
  %p2 = tensor.cast %p0 : tensor<?x?xf32> to tensor<38x13xf32>
  %q2 = tensor.cast %q0 : tensor<?x?xf32> to tensor<26x21xf32>
  %s2 = tensor.cast %s0 : tensor<?x?xf32> to tensor<38x21xf32>
  %p = tensor.expand_shape %p2 [[0, 1], [2]] output_shape [2, 19, 13] : tensor<38x13xf32> into tensor<2x19x13xf32>
  %q = tensor.expand_shape %q2 [[0, 1], [2]] output_shape [2, 13, 21] : tensor<26x21xf32> into tensor<2x13x21xf32>
  %s = tensor.expand_shape %s2 [[0, 1], [2]] output_shape [2, 19, 21] : tensor<38x21xf32> into tensor<2x19x21xf32>
  %r5 = call @batch_matmul(%p, %q, %s) : (tensor<2x19x13xf32>, tensor<2x13x21xf32>, tensor<2x19x21xf32>) -> tensor<2x19x21xf32>
  %u5 = tensor.cast %r5 : tensor<2x19x21xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()

  // Elementwise with a broadcast, dynamic; softmax; column sums; dynamic row
  // reductions and an elementwise chain; transpose.
  %bias2 = call @fill2d(%c1, %c53, %c2) : (index, index, index) -> tensor<?x?xf32>
  %bias = tensor.collapse_shape %bias2 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %r6 = call @bias_relu(%d0, %bias) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  call @print2d(%r6) : (tensor<?x?xf32>) -> ()
  %r7 = call @softmax(%d) : (tensor<37x53xf32>) -> tensor<37x53xf32>
  %r7d = tensor.cast %r7 : tensor<37x53xf32> to tensor<?x?xf32>
  call @print2d(%r7d) : (tensor<?x?xf32>) -> ()
  %init2 = call @fill2d(%c1, %c53, %c3) : (index, index, index) -> tensor<?x?xf32>
  %init = tensor.collapse_shape %init2 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %r8 = call @colsum(%d0, %init) : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %u8 = tensor.cast %r8 : tensor<?xf32> to tensor<*xf32>
  call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
  %r15:2 = call @rows_dynamic(%d0) : (tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>)
  %u15 = tensor.cast %r15#0 : tensor<?xf32> to tensor<*xf32>
  call @printMemrefF32(%u15) : (tensor<*xf32>) -> ()
  call @print2d(%r15#1) : (tensor<?x?xf32>) -> ()
  %r17 = call @exp_edges() : () -> tensor<20xf32>
  %u17 = tensor.cast %r17 : tensor<20xf32> to tensor<*xf32>
  call @printMemrefF32(%u17) : (tensor<*xf32>) -> ()
  %r9 = call @transpose(%d) : (tensor<37x53xf32>) -> tensor<53x37xf32>
  %r9d = tensor.cast %r9 : tensor<53x37xf32> to tensor<?x?xf32>
  call @print2d(%r9d) : (tensor<?x?xf32>) -> ()

  // matvec and vecmat.
  %xv = tensor.cast %bias : tensor<?xf32> to tensor<53xf32>
  %y2 = call @fill2d(%c1, %c37, %c4) : (index, index, index) -> tensor<?x?xf32>
  %yd = tensor.collapse_shape %y2 [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %y = tensor.cast %yd : tensor<?xf32> to tensor<37xf32>
  %r10 = call @matvec(%d, %xv, %y) : (tensor<37x53xf32>, tensor<53xf32>, tensor<37xf32>) -> tensor<37xf32>
  %u10 = tensor.cast %r10 : tensor<37xf32> to tensor<*xf32>
  call @printMemrefF32(%u10) : (tensor<*xf32>) -> ()
  %r11 = call @vecmat(%y, %d, %xv) : (tensor<37xf32>, tensor<37x53xf32>, tensor<53xf32>) -> tensor<53xf32>
  %u11 = tensor.cast %r11 : tensor<53xf32> to tensor<*xf32>
  call @printMemrefF32(%u11) : (tensor<*xf32>) -> ()

  // Convolution (stride 2), depthwise convolution, max pooling (stride 2).
  %ci0 = call @fill2d(%c143, %c5, %c5) : (index, index, index) -> tensor<?x?xf32>
  %cf0 = call @fill2d(%c45, %c7, %c6) : (index, index, index) -> tensor<?x?xf32>
  %co0 = call @fill2d(%c1, %c7, %c7) : (index, index, index) -> tensor<?x?xf32>
  %ci2 = tensor.cast %ci0 : tensor<?x?xf32> to tensor<143x5xf32>
  %cf2 = tensor.cast %cf0 : tensor<?x?xf32> to tensor<45x7xf32>
  %ci = tensor.expand_shape %ci2 [[0, 1, 2], [3]] output_shape [1, 11, 13, 5] : tensor<143x5xf32> into tensor<1x11x13x5xf32>
  %cf = tensor.expand_shape %cf2 [[0, 1, 2], [3]] output_shape [3, 3, 5, 7] : tensor<45x7xf32> into tensor<3x3x5x7xf32>
  %zero = arith.constant 0.25 : f32
  %ce = tensor.empty() : tensor<1x5x6x7xf32>
  %co = linalg.fill ins(%zero : f32) outs(%ce : tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32>
  %r12 = call @conv_strided(%ci, %cf, %co) : (tensor<1x11x13x5xf32>, tensor<3x3x5x7xf32>, tensor<1x5x6x7xf32>) -> tensor<1x5x6x7xf32>
  %u12 = tensor.cast %r12 : tensor<1x5x6x7xf32> to tensor<*xf32>
  call @printMemrefF32(%u12) : (tensor<*xf32>) -> ()
  %ri0 = call @fill2d(%c165, %c8, %c2) : (index, index, index) -> tensor<?x?xf32>
  %rw0 = call @fill2d(%c72, %c7, %c3) : (index, index, index) -> tensor<?x?xf32>
  %ri2 = tensor.cast %ri0 : tensor<?x?xf32> to tensor<165x8xf32>
  %rw2 = tensor.cast %rw0 : tensor<?x?xf32> to tensor<72x7xf32>
  %ri = tensor.expand_shape %ri2 [[0, 1, 2], [3]] output_shape [1, 11, 15, 8] : tensor<165x8xf32> into tensor<1x11x15x8xf32>
  %rw = tensor.expand_shape %rw2 [[0, 1, 2], [3]] output_shape [3, 3, 8, 7] : tensor<72x7xf32> into tensor<3x3x8x7xf32>
  %re = tensor.empty() : tensor<1x3x6x7xf32>
  %ro = linalg.fill ins(%zero : f32) outs(%re : tensor<1x3x6x7xf32>) -> tensor<1x3x6x7xf32>
  %r16 = call @conv_rows(%ri, %rw, %ro) : (tensor<1x11x15x8xf32>, tensor<3x3x8x7xf32>, tensor<1x3x6x7xf32>) -> tensor<1x3x6x7xf32>
  %u16 = tensor.cast %r16 : tensor<1x3x6x7xf32> to tensor<*xf32>
  call @printMemrefF32(%u16) : (tensor<*xf32>) -> ()
  %di0 = call @fill2d(%c9, %c6, %c1) : (index, index, index) -> tensor<?x?xf32>
  %di1 = call @fill2d(%c99, %c6, %c2) : (index, index, index) -> tensor<?x?xf32>
  %di2 = tensor.cast %di1 : tensor<?x?xf32> to tensor<90x6xf32>
  %di = tensor.expand_shape %di2 [[0, 1, 2], [3]] output_shape [1, 9, 10, 6] : tensor<90x6xf32> into tensor<1x9x10x6xf32>
  %df2 = tensor.cast %di0 : tensor<?x?xf32> to tensor<9x6xf32>
  %df = tensor.expand_shape %df2 [[0, 1], [2]] output_shape [3, 3, 6] : tensor<9x6xf32> into tensor<3x3x6xf32>
  %de = tensor.empty() : tensor<1x7x8x6xf32>
  %do = linalg.fill ins(%zero : f32) outs(%de : tensor<1x7x8x6xf32>) -> tensor<1x7x8x6xf32>
  %r13 = call @depthwise(%di, %df, %do) : (tensor<1x9x10x6xf32>, tensor<3x3x6xf32>, tensor<1x7x8x6xf32>) -> tensor<1x7x8x6xf32>
  %u13 = tensor.cast %r13 : tensor<1x7x8x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u13) : (tensor<*xf32>) -> ()
  %c11 = arith.constant 11 : index
  %c78 = arith.constant 78 : index
  %xi0 = call @fill2d(%c78, %c11, %c4) : (index, index, index) -> tensor<?x?xf32>
  %xf0 = call @fill2d(%c99, %c37, %c5) : (index, index, index) -> tensor<?x?xf32>
  %xi2 = tensor.cast %xi0 : tensor<?x?xf32> to tensor<78x11xf32>
  %xf2 = tensor.cast %xf0 : tensor<?x?xf32> to tensor<99x37xf32>
  %xi3 = tensor.expand_shape %xi2 [[0, 1, 2], [3]] output_shape [1, 6, 13, 11] : tensor<78x11xf32> into tensor<1x6x13x11xf32>
  %xf3 = tensor.expand_shape %xf2 [[0, 1, 2], [3]] output_shape [3, 3, 11, 37] : tensor<99x37xf32> into tensor<3x3x11x37xf32>
  %xi = tensor.cast %xi3 : tensor<1x6x13x11xf32> to tensor<?x?x?x?xf32>
  %xf = tensor.cast %xf3 : tensor<3x3x11x37xf32> to tensor<?x?x?x?xf32>
  %xe = tensor.empty() : tensor<1x4x11x37xf32>
  %xo0 = linalg.fill ins(%zero : f32) outs(%xe : tensor<1x4x11x37xf32>) -> tensor<1x4x11x37xf32>
  %xo = tensor.cast %xo0 : tensor<1x4x11x37xf32> to tensor<?x?x?x?xf32>
  %r27 = call @conv_dynamic(%xi, %xf, %xo) : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %u27 = tensor.cast %r27 : tensor<?x?x?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u27) : (tensor<*xf32>) -> ()
  %yi = tensor.cast %di : tensor<1x9x10x6xf32> to tensor<?x?x?x?xf32>
  %yf = tensor.cast %df : tensor<3x3x6xf32> to tensor<?x?x?xf32>
  %ye = tensor.empty() : tensor<1x5x6x6xf32>
  %yo0 = linalg.fill ins(%zero : f32) outs(%ye : tensor<1x5x6x6xf32>) -> tensor<1x5x6x6xf32>
  %yo = tensor.cast %yo0 : tensor<1x5x6x6xf32> to tensor<?x?x?x?xf32>
  %r28 = call @depthwise_dynamic(%yi, %yf, %yo) : (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %u28 = tensor.cast %r28 : tensor<?x?x?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u28) : (tensor<*xf32>) -> ()
  %pi0 = call @fill2d(%c99, %c6, %c3) : (index, index, index) -> tensor<?x?xf32>
  %pi2 = tensor.cast %pi0 : tensor<?x?xf32> to tensor<99x6xf32>
  %pi = tensor.expand_shape %pi2 [[0, 1, 2], [3]] output_shape [1, 9, 11, 6] : tensor<99x6xf32> into tensor<1x9x11x6xf32>
  %r14 = call @maxpool(%pi) : (tensor<1x9x11x6xf32>) -> tensor<1x4x5x6xf32>
  %u14 = tensor.cast %r14 : tensor<1x4x5x6xf32> to tensor<*xf32>
  call @printMemrefF32(%u14) : (tensor<*xf32>) -> ()
  return
}
