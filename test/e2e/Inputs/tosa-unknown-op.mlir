// Input of tosa.test: a TOSA op that no conversion to linalg knows.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = tosa.custom %x {operator_name = "frobnicate", domain_name = "acme", implementation_attrs = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
