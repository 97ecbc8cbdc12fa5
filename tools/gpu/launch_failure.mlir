// A GPU dispatch site one of whose compiled variants cannot launch, for
// tools/gpu/device-run.sh: built with
//   --gpu-sites=128x128/8x8/k128/shared,64x64/4x4/k16/shared,cublas
// the 128x128/8x8/k128 /shared kernel asks for 266240 bytes (260 KiB) of
// dynamic shared memory per block, over any current device's limit (227 KiB
// on sm_90): its launch is refused, the trial runner rejects it with that
// note, and the program goes on with another variant. The inputs are small
// multiples of 1/4, so every summation order gives the exact result, which
// the CPU build prints too. @mm is called twice: the first call tunes, the
// second runs the winner.
func.func private @printMemrefF32(tensor<*xf32>)

func.func @mm(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>,
              %c: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>)
                     outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// ((i * p + j * q) mod 11 - 5) / 4
func.func @pattern(%p: index, %q: index) -> tensor<256x256xf32> {
  %e = tensor.empty() : tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<256x256xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ip = arith.muli %i, %p : index
    %jq = arith.muli %j, %q : index
    %s = arith.addi %ip, %jq : index
    %c11 = arith.constant 11 : index
    %m = arith.remui %s, %c11 : index
    %c5 = arith.constant 5 : index
    %d = arith.subi %m, %c5 : index
    %di = arith.index_cast %d : index to i32
    %f = arith.sitofp %di : i32 to f32
    %quarter = arith.constant 0.25 : f32
    %v = arith.mulf %f, %quarter : f32
    linalg.yield %v : f32
  } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

func.func @main() {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c2 = arith.constant 2 : index
  %a = call @pattern(%c7, %c3) : (index, index) -> tensor<256x256xf32>
  %b = call @pattern(%c5, %c2) : (index, index) -> tensor<256x256xf32>
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %c = linalg.fill ins(%one : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r1 = call @mm(%a, %b, %c) : (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %r2 = call @mm(%a, %b, %r1) : (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %u = tensor.cast %r2 : tensor<256x256xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
