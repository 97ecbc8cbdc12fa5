// y += x W with a 1 MiB constant W, for tools/gpu/constant_loop.c: called
// in a loop, it must copy W to the device once per process
// (stc_rt_gpu_constant), not once per call.
func.func @apply(%x: memref<1x1024xf32>, %y: memref<1x256xf32>)
    attributes {llvm.emit_c_interface} {
  %tx = bufferization.to_tensor %x restrict : memref<1x1024xf32> to tensor<1x1024xf32>
  %ty = bufferization.to_tensor %y restrict writable : memref<1x256xf32> to tensor<1x256xf32>
  %w = arith.constant dense<0.5> : tensor<1024x256xf32>
  %r = linalg.matmul ins(%tx, %w : tensor<1x1024xf32>, tensor<1024x256xf32>)
                     outs(%ty : tensor<1x256xf32>) -> tensor<1x256xf32>
  bufferization.materialize_in_destination %r in restrict writable %y
      : (tensor<1x256xf32>, memref<1x256xf32>) -> ()
  return
}
