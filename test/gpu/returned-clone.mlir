// A public function that returns (a tensor equivalent to) one of its
// arguments: ownership-based deallocation returns a clone, memref.alloc +
// memref.copy. The clone lives where its source lives (gpu_placement.c), so
// it is a device allocation filled by a device-to-device copy, not a host
// buffer filled by a device-to-host transfer in every call (the matmul
// bench's slowdown after 0a571f3). The destination-passing form that
// tools/gpu/matmul.mlir.in uses makes no clone at all: one launch, one wait.
// RUN: stc-opt --tune-hot-paths --target=cuda --mlir-print-ir-after-all %s -o /dev/null 2>&1 | FileCheck %s

func.func @returns_arg(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<64x48xf32>)
    -> tensor<64x48xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>)
                     outs(%c : tensor<64x48xf32>) -> tensor<64x48xf32>
  return %r : tensor<64x48xf32>
}

func.func @in_place(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  %ta = bufferization.to_tensor %a restrict : memref<64x32xf32> to tensor<64x32xf32>
  %tb = bufferization.to_tensor %b restrict : memref<32x48xf32> to tensor<32x48xf32>
  %tc = bufferization.to_tensor %c restrict writable : memref<64x48xf32> to tensor<64x48xf32>
  %r = linalg.matmul ins(%ta, %tb : tensor<64x32xf32>, tensor<32x48xf32>)
                     outs(%tc : tensor<64x48xf32>) -> tensor<64x48xf32>
  bufferization.materialize_in_destination %r in restrict writable %c
      : (tensor<64x48xf32>, memref<64x48xf32>) -> ()
  return
}

// CHECK-LABEL: IR Dump After GpuAsyncRegionPass
// CHECK: func.func @returns_arg(%[[A:.*]]: memref<64x32xf32>, %[[B:.*]]: memref<32x48xf32>, %[[C:.*]]: memref<64x48xf32>)
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch_func async
// CHECK-NOT: memref.alloc
// CHECK: %[[CLONE:.*]], %{{.*}} = gpu.alloc async
// CHECK-NEXT: gpu.memcpy async [%{{.*}}] %[[CLONE]], %[[C]]
// CHECK-NEXT: gpu.wait
// CHECK-NEXT: return %[[CLONE]]
// CHECK: func.func @in_place
// CHECK-NOT: alloc
// CHECK-NOT: memcpy
// CHECK: gpu.launch_func async
// CHECK-NEXT: gpu.wait
// CHECK-NEXT: return
