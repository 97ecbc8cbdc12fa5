// A tiny model for the install test: C = A * B with A (64x64) all 1.0 and
// B[k][j] = 0.5 * (j mod 4) (exact in f32), so C[i][j] = 32 * (j mod 4):
// rows of 0 32 64 96 0 32 64 96.
// Prints C's top-left 2x8 corner with printMemrefF32.
#id2 = affine_map<(i, j) -> (i, j)>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                     outs(%z : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %c : tensor<64x64xf32>
}

func.func @main() {
  %one = arith.constant 1.0 : f32
  %ea = tensor.empty() : tensor<64x64xf32>
  %a = linalg.fill ins(%one : f32) outs(%ea : tensor<64x64xf32>) -> tensor<64x64xf32>
  %eb = tensor.empty() : tensor<64x64xf32>
  %b = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%eb : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %m = arith.remui %j, %c4 : index
    %mi = arith.index_cast %m : index to i64
    %f = arith.uitofp %mi : i64 to f32
    %half = arith.constant 0.5 : f32
    %v = arith.mulf %f, %half : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  %c = call @matmul(%a, %b) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %corner = tensor.extract_slice %c[0, 0] [2, 8] [1, 1] : tensor<64x64xf32> to tensor<2x8xf32>
  %u = tensor.cast %corner : tensor<2x8xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
