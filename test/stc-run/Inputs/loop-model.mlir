// A model whose time is in a matmul called 200 times from a loop; a small add
// runs once. Used by the profile-guided loop tests.
func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @main() {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %a = linalg.fill ins(%one : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c200 = arith.constant 200 : index
  scf.for %i = %c0 to %c200 step %c1 {
    %m = func.call @matmul(%a, %a, %z) : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  }
  %v = arith.constant dense<1.0> : tensor<4xf32>
  %s = func.call @add(%v, %v) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
