// The host paths of --target=cuda's stc-gpu-host-memory: a dense constant
// (memref.get_global, copied once to the device), a scalar read on the host
// (tensor.extract -> a host memref.load through a mirror) that feeds a
// kernel, an element written on the host (tensor.insert -> memref.store
// through a mirror, copied back), and a print. Used by test/gpu/host-paths.mlir
// (the lowering) and tools/gpu/device-run.sh (run on the GPU, compared with
// the CPU build).
func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<2x3xf32>
  // Kernel: w * w.
  %sq = linalg.mul ins(%w, %w : tensor<2x3xf32>, tensor<2x3xf32>)
                   outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  // Host read of a device element, used by the next kernel.
  %s = tensor.extract %sq[%c1, %c1] : tensor<2x3xf32>
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = linalg.add ins(%sq, %f : tensor<2x3xf32>, tensor<2x3xf32>)
                    outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  // Host write into a device buffer.
  %big = arith.constant 100.0 : f32
  %w2 = tensor.insert %big into %sum[%c0, %c0] : tensor<2x3xf32>
  %u = tensor.cast %w2 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
