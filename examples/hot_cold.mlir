// One hot and one cold matmul, for profile-guided scheduling: the
// 192x192x192 linalg.matmul in @hot_loop runs 50 times in an scf.for whose
// iterations depend on each other (state_{k+1} = state_k + sin(state_k) * W),
// so nothing can hoist it; @cold_once (a 256x256x256 linalg.matmul) runs once. In: nothing (main
// builds deterministic inputs). Out, printed with printMemrefF32: the final
// state's row sums (192), its top-left 4x8 corner, and the cold product's row
// sums (256).
//
// W's entries are at most 0.5/192 in magnitude (spectral radius about 0.03),
// so each step changes the state by a bounded amount and rounding differences
// between schedules grow by only a few times over the 50 steps.

#id2 = affine_map<(i, j) -> (i, j)>
#rowsum_in = affine_map<(i, j) -> (i, j)>
#rowsum_out = affine_map<(i, j) -> (i, 0)>

func.func private @printMemrefF32(tensor<*xf32>)

// 50 steps of state += sin(state) * w. The matmul accumulates into the
// loop-carried state in place; its left operand is recomputed from the state
// every step, so it can neither be hoisted nor folded.
func.func @hot_loop(%x: tensor<192x192xf32>, %w: tensor<192x192xf32>) -> tensor<192x192xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  %r = scf.for %k = %c0 to %c50 step %c1 iter_args(%s = %x) -> (tensor<192x192xf32>) {
    %e = tensor.empty() : tensor<192x192xf32>
    %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%s : tensor<192x192xf32>) outs(%e : tensor<192x192xf32>) {
    ^bb0(%v: f32, %o: f32):
      %sv = math.sin %v : f32
      linalg.yield %sv : f32
    } -> tensor<192x192xf32>
    %n = linalg.matmul ins(%a, %w : tensor<192x192xf32>, tensor<192x192xf32>)
                       outs(%s : tensor<192x192xf32>) -> tensor<192x192xf32>
    scf.yield %n : tensor<192x192xf32>
  }
  return %r : tensor<192x192xf32>
}

func.func @cold_once(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>)
                      outs(%z : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %mm : tensor<256x256xf32>
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

// Row sums as an Nx1 tensor.
func.func private @row_sums(%t: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %t, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%n) : tensor<?x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x1xf32>) -> tensor<?x1xf32>
  %s = linalg.generic {indexing_maps = [#rowsum_in, #rowsum_out],
                       iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<?x?xf32>) outs(%z : tensor<?x1xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  return %s : tensor<?x1xf32>
}

func.func @main() {
  %c192 = arith.constant 192 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  %kw = arith.constant 0.0026 : f32  // 0.5 / 192
  %kc = arith.constant 0.125 : f32
  %s0 = arith.constant 0 : index
  %s1 = arith.constant 17 : index
  %s2 = arith.constant 29 : index
  %s3 = arith.constant 41 : index
  %xd = call @input2d(%c192, %c192, %s0, %one) : (index, index, index, f32) -> tensor<?x?xf32>
  %wd = call @input2d(%c192, %c192, %s1, %kw) : (index, index, index, f32) -> tensor<?x?xf32>
  %ad = call @input2d(%c256, %c256, %s2, %one) : (index, index, index, f32) -> tensor<?x?xf32>
  %bd = call @input2d(%c256, %c256, %s3, %kc) : (index, index, index, f32) -> tensor<?x?xf32>
  %x = tensor.cast %xd : tensor<?x?xf32> to tensor<192x192xf32>
  %w = tensor.cast %wd : tensor<?x?xf32> to tensor<192x192xf32>
  %a = tensor.cast %ad : tensor<?x?xf32> to tensor<256x256xf32>
  %b = tensor.cast %bd : tensor<?x?xf32> to tensor<256x256xf32>

  %hot = call @hot_loop(%x, %w) : (tensor<192x192xf32>, tensor<192x192xf32>) -> tensor<192x192xf32>
  %cold = call @cold_once(%a, %b) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>

  %hotd = tensor.cast %hot : tensor<192x192xf32> to tensor<?x?xf32>
  %hs = call @row_sums(%hotd) : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %uhs = tensor.cast %hs : tensor<?x1xf32> to tensor<*xf32>
  call @printMemrefF32(%uhs) : (tensor<*xf32>) -> ()
  %corner = tensor.extract_slice %hot[0, 0] [4, 8] [1, 1] : tensor<192x192xf32> to tensor<4x8xf32>
  %uc = tensor.cast %corner : tensor<4x8xf32> to tensor<*xf32>
  call @printMemrefF32(%uc) : (tensor<*xf32>) -> ()
  %coldd = tensor.cast %cold : tensor<256x256xf32> to tensor<?x?xf32>
  %cs = call @row_sums(%coldd) : (tensor<?x?xf32>) -> tensor<?x1xf32>
  %ucs = tensor.cast %cs : tensor<?x1xf32> to tensor<*xf32>
  call @printMemrefF32(%ucs) : (tensor<*xf32>) -> ()
  return
}
