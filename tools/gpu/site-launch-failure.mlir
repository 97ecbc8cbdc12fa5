// A GPU dispatch site one of whose variants cannot run, for
// tools/gpu/device-run.sh: built with
//   --gpu-sites=64x64/4x4/k8,128x128/8x8/k64/shared
// the /shared variant needs 64 KiB of static shared memory per block (A and
// B tiles of 128x64 and 64x128 f32), over the 48 KiB a kernel may declare,
// so the driver's PTX JIT refuses its module and its launches fail. The
// runtime's GPU trial runner rejects it with a note; the program prints the
// CPU build's result. (With --gpu-format=bin, ptxas refuses it at compile
// time instead.)
func.func @main() {
  %a = arith.constant dense<0.5> : tensor<256x256xf32>
  %b = arith.constant dense<0.25> : tensor<256x256xf32>
  %c0 = arith.constant dense<1.0> : tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>)
                     outs(%c0 : tensor<256x256xf32>) -> tensor<256x256xf32>
  %s = tensor.extract_slice %r[0, 0] [2, 4] [1, 1] : tensor<256x256xf32> to tensor<2x4xf32>
  %u = tensor.cast %s : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(tensor<*xf32>)
