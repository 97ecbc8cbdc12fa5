// Payload for the one-op convention check in check-all.sh: @kernel holds two
// linalg.matmul ops and only the first carries transform.target_tag =
// "stc_target". A schedule applied with the tagged op as payload root must
// transform that op alone: afterwards exactly one linalg.matmul (the untagged
// one) is left, and the printed product is unchanged. Out: E = (A * B) * B.

func.func private @printMemrefF32(tensor<*xf32>)

func.func @kernel(%a: tensor<64x48xf32>, %b: tensor<48x48xf32>) -> tensor<64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %d = linalg.matmul {transform.target_tag = "stc_target"}
      ins(%a, %b : tensor<64x48xf32>, tensor<48x48xf32>) outs(%z : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.matmul ins(%d, %b : tensor<64x48xf32>, tensor<48x48xf32>) outs(%z : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

func.func @main() {
  %ea = tensor.empty() : tensor<64x48xf32>
  %eb = tensor.empty() : tensor<48x48xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%ea : tensor<64x48xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %v = math.sin %f : f32
    linalg.yield %v : f32
  } -> tensor<64x48xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%eb : tensor<48x48xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %i3 = arith.muli %i, %c3 : index
    %s = arith.addi %i3, %j : index
    %c = arith.index_cast %s : index to i64
    %f = arith.sitofp %c : i64 to f32
    %v = math.cos %f : f32
    linalg.yield %v : f32
  } -> tensor<48x48xf32>
  %r = call @kernel(%a, %b) : (tensor<64x48xf32>, tensor<48x48xf32>) -> tensor<64x48xf32>
  %u = tensor.cast %r : tensor<64x48xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
