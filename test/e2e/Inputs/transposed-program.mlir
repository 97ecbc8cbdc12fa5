// Contractions whose operands are read transposed (a linalg.matmul's and
// batch_matmul's indexing_maps), as attention writes Q K^T: A^T B, A B^T
// and a batched A B^T, each planned for variants and printed. The BLAS
// variants hand the runtime transposed strided views.
func.func private @printMemrefF32(tensor<*xf32>)

#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
#bmk = affine_map<(b, m, n, k) -> (b, m, k)>
#bnk = affine_map<(b, m, n, k) -> (b, n, k)>
#bmn = affine_map<(b, m, n, k) -> (b, m, n)>

func.func @at_b(%a: tensor<36x40xf32>, %b: tensor<36x52xf32>, %c: tensor<40x52xf32>) -> tensor<40x52xf32> {
  %r = linalg.matmul indexing_maps = [#km, #kn, #mn] {stc.plan = "variants:8"}
      ins(%a, %b : tensor<36x40xf32>, tensor<36x52xf32>) outs(%c : tensor<40x52xf32>) -> tensor<40x52xf32>
  return %r : tensor<40x52xf32>
}

func.func @a_bt(%a: tensor<40x36xf32>, %b: tensor<52x36xf32>, %c: tensor<40x52xf32>) -> tensor<40x52xf32> {
  %r = linalg.matmul indexing_maps = [#mk, #nk, #mn] {stc.plan = "variants:8"}
      ins(%a, %b : tensor<40x36xf32>, tensor<52x36xf32>) outs(%c : tensor<40x52xf32>) -> tensor<40x52xf32>
  return %r : tensor<40x52xf32>
}

func.func @batched_a_bt(%a: tensor<3x20x16xf32>, %b: tensor<3x24x16xf32>, %c: tensor<3x20x24xf32>) -> tensor<3x20x24xf32> {
  %r = linalg.batch_matmul indexing_maps = [#bmk, #bnk, #bmn] {stc.plan = "variants:8"}
      ins(%a, %b : tensor<3x20x16xf32>, tensor<3x24x16xf32>) outs(%c : tensor<3x20x24xf32>) -> tensor<3x20x24xf32>
  return %r : tensor<3x20x24xf32>
}

func.func @fill2d(%rows: index, %cols: index, %seed: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
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
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c36 = arith.constant 36 : index
  %c40 = arith.constant 40 : index
  %c52 = arith.constant 52 : index
  %c60 = arith.constant 60 : index
  %c72 = arith.constant 72 : index
  %c16 = arith.constant 16 : index
  %x0 = call @fill2d(%c36, %c40, %c1) : (index, index, index) -> tensor<?x?xf32>
  %y0 = call @fill2d(%c36, %c52, %c2) : (index, index, index) -> tensor<?x?xf32>
  %z0 = call @fill2d(%c40, %c52, %c3) : (index, index, index) -> tensor<?x?xf32>
  %x = tensor.cast %x0 : tensor<?x?xf32> to tensor<36x40xf32>
  %y = tensor.cast %y0 : tensor<?x?xf32> to tensor<36x52xf32>
  %z = tensor.cast %z0 : tensor<?x?xf32> to tensor<40x52xf32>
  %r1 = call @at_b(%x, %y, %z) : (tensor<36x40xf32>, tensor<36x52xf32>, tensor<40x52xf32>) -> tensor<40x52xf32>
  %u1 = tensor.cast %r1 : tensor<40x52xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %p0 = call @fill2d(%c40, %c36, %c2) : (index, index, index) -> tensor<?x?xf32>
  %q0 = call @fill2d(%c52, %c36, %c1) : (index, index, index) -> tensor<?x?xf32>
  %w0 = call @fill2d(%c40, %c52, %c1) : (index, index, index) -> tensor<?x?xf32>
  %p = tensor.cast %p0 : tensor<?x?xf32> to tensor<40x36xf32>
  %q = tensor.cast %q0 : tensor<?x?xf32> to tensor<52x36xf32>
  %w = tensor.cast %w0 : tensor<?x?xf32> to tensor<40x52xf32>
  %r2 = call @a_bt(%p, %q, %w) : (tensor<40x36xf32>, tensor<52x36xf32>, tensor<40x52xf32>) -> tensor<40x52xf32>
  %u2 = tensor.cast %r2 : tensor<40x52xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  %g0 = call @fill2d(%c60, %c16, %c3) : (index, index, index) -> tensor<?x?xf32>
  %h0 = call @fill2d(%c72, %c16, %c2) : (index, index, index) -> tensor<?x?xf32>
  %k0 = call @fill2d(%c60, %c16, %c1) : (index, index, index) -> tensor<?x?xf32>
  %g2 = tensor.cast %g0 : tensor<?x?xf32> to tensor<60x16xf32>
  %h2 = tensor.cast %h0 : tensor<?x?xf32> to tensor<72x16xf32>
  %g = tensor.expand_shape %g2 [[0, 1], [2]] output_shape [3, 20, 16] : tensor<60x16xf32> into tensor<3x20x16xf32>
  %h = tensor.expand_shape %h2 [[0, 1], [2]] output_shape [3, 24, 16] : tensor<72x16xf32> into tensor<3x24x16xf32>
  %zero = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<3x20x24xf32>
  %k = linalg.fill ins(%zero : f32) outs(%e : tensor<3x20x24xf32>) -> tensor<3x20x24xf32>
  %r3 = call @batched_a_bt(%g, %h, %k) : (tensor<3x20x16xf32>, tensor<3x24x16xf32>, tensor<3x20x24xf32>) -> tensor<3x20x24xf32>
  %u3 = tensor.cast %r3 : tensor<3x20x24xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  return
}
