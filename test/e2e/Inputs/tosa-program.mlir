// A TOSA program, as model front ends emit: a batched matmul, a bias add,
// a ReLU (clamp) and a row sum. test/e2e/tosa.test compiles it with
// --tune-hot-paths (which lowers TOSA to linalg on tensors first) and
// compares with upstream: mlir-opt's TOSA conversion, then run-reference.sh.
func.func private @printMemrefF32(tensor<*xf32>)

func.func @layer(%x: tensor<2x12x40xf32>, %w: tensor<2x40x24xf32>, %bias: tensor<1x1x24xf32>) -> tensor<2x12x24xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %x, %w, %zp, %zp : (tensor<2x12x40xf32>, tensor<2x40x24xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x12x24xf32>
  %b = tosa.add %mm, %bias : (tensor<2x12x24xf32>, tensor<1x1x24xf32>) -> tensor<2x12x24xf32>
  %r = tosa.clamp %b {min_val = 0.0 : f32, max_val = 3.0e38 : f32} : (tensor<2x12x24xf32>) -> tensor<2x12x24xf32>
  return %r : tensor<2x12x24xf32>
}

func.func @main() {
  %x = "tosa.const"() <{values = dense<[[[0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 0.125, -0.5]]]> : tensor<1x1x8xf32>}> : () -> tensor<1x1x8xf32>
  %xs = "tosa.const_shape"() <{values = dense<[2, 12, 5]> : tensor<3xindex>}> : () -> !tosa.shape<3>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<2x12x40xf32>}> : () -> tensor<2x12x40xf32>
  %xt = tosa.tile %x, %xs : (tensor<1x1x8xf32>, !tosa.shape<3>) -> tensor<2x12x40xf32>
  %xa = tosa.add %xt, %one : (tensor<2x12x40xf32>, tensor<2x12x40xf32>) -> tensor<2x12x40xf32>
  %w0 = "tosa.const"() <{values = dense<[[[0.25, -0.5, 1.0], [0.75, 0.125, -1.0]]]> : tensor<1x2x3xf32>}> : () -> tensor<1x2x3xf32>
  %ws = "tosa.const_shape"() <{values = dense<[2, 20, 8]> : tensor<3xindex>}> : () -> !tosa.shape<3>
  %w = tosa.tile %w0, %ws : (tensor<1x2x3xf32>, !tosa.shape<3>) -> tensor<2x40x24xf32>
  %bias = "tosa.const"() <{values = dense<-2.0> : tensor<1x1x24xf32>}> : () -> tensor<1x1x24xf32>
  %r = call @layer(%xa, %w, %bias) : (tensor<2x12x40xf32>, tensor<2x40x24xf32>, tensor<1x1x24xf32>) -> tensor<2x12x24xf32>
  %s = tosa.reduce_sum %r {axis = 2 : i32} : (tensor<2x12x24xf32>) -> tensor<2x12x1xf32>
  %us = tensor.cast %s : tensor<2x12x1xf32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  %u = tensor.cast %r : tensor<2x12x24xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
