// Placement (tools/common/gpu_placement.c): a buffer no kernel reaches stays
// in host memory with plain loads and stores; one a kernel reads is a
// gpu.alloc, and the host's stores into it go through a mirror.
// RUN: stc-opt --tune-hot-paths --target=cuda --mlir-print-ir-after-all %s -o /dev/null 2>&1 | FileCheck %s

func.func @f(%x: f32, %y: f32, %i: index) -> (f32, tensor<2xf32>) {
  // Host only: built and read on the host (at an index known at run time,
  // so that it cannot fold away).
  %h = tensor.from_elements %x, %y : tensor<2xf32>
  %s = tensor.extract %h[%i] : tensor<2xf32>
  // Read by a kernel.
  %d = tensor.from_elements %y, %x : tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.add ins(%d, %d : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %s, %r : f32, tensor<2xf32>
}

// CHECK-LABEL: IR Dump After StcGpuHostMemory
// CHECK: func.func @f
// CHECK: %[[H:.*]] = memref.alloc() {{.*}}: memref<2xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[H]]
// CHECK-NEXT: memref.store %{{.*}}, %[[H]]
// CHECK-NEXT: memref.load %[[H]]
// CHECK: %[[D:.*]] = gpu.alloc () : memref<2xf32>
// CHECK: %[[M:.*]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT: gpu.memcpy %[[M]], %[[D]]
// CHECK-NEXT: memref.store %{{.*}}, %[[M]]
// CHECK-NEXT: gpu.memcpy %[[D]], %[[M]]
// CHECK: gpu.launch_func {{.*}}args({{.*}}%[[D]]
