// stc-gpu-host-memory on test/gpu/Inputs/host-paths.mlir: a constant's
// device copy is the process's one copy of it (stc_rt_gpu_constant, by the
// global's host address: made on first use, not at every execution, never
// freed by the function), a host read (tensor.extract) and a
// host write (tensor.insert) each go through a host mirror (copy in; for the
// write, copy back), the print reads a mirror, and nothing else on the host
// touches device memory. (tools/gpu/device-run.sh runs the program on a GPU.)
// RUN: stc-opt --tune-hot-paths --target=cuda --mlir-print-ir-after-all %S/Inputs/host-paths.mlir -o /dev/null 2>&1 | FileCheck %s

// CHECK-LABEL: IR Dump After StcGpuHostMemory
// CHECK: func.func private @stc_rt_gpu_constant(index, index) -> index
// CHECK: func.func @main
// CHECK: %[[GLOBAL:.*]] = memref.get_global @__constant_2x3xf32
// CHECK-NEXT: %[[HOST:.*]] = memref.extract_aligned_pointer_as_index %[[GLOBAL]]
// CHECK-NEXT: %[[BYTES:.*]] = arith.constant 24 : index
// CHECK-NEXT: %[[DEV:.*]] = call @stc_rt_gpu_constant(%[[HOST]], %[[BYTES]]) : (index, index) -> index
// CHECK-NEXT: %[[WORD:.*]] = arith.index_cast %[[DEV]] : index to i64
// CHECK-NEXT: %[[PTR:.*]] = llvm.inttoptr %[[WORD]] : i64 to !llvm.ptr
// The descriptor: both pointers the device copy, offset 0, sizes [2, 3],
// strides [3, 1].
// CHECK: llvm.insertvalue %[[PTR]], %{{.*}}[0]
// CHECK-NEXT: llvm.insertvalue %[[PTR]], %{{.*}}[1]
// CHECK: llvm.mlir.constant(2 : i64)
// CHECK-NEXT: llvm.insertvalue {{.*}}[3, 0]
// CHECK-NEXT: llvm.mlir.constant(3 : i64)
// CHECK-NEXT: llvm.insertvalue {{.*}}[4, 0]
// CHECK-NEXT: llvm.mlir.constant(3 : i64)
// CHECK-NEXT: llvm.insertvalue {{.*}}[3, 1]
// CHECK-NEXT: llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[D:.*]] = llvm.insertvalue {{.*}}[4, 1]
// CHECK-NEXT: %[[W:.*]] = builtin.unrealized_conversion_cast %[[D]] : {{.*}} to memref<2x3xf32>
// No copy of the constant in the function (the two gpu.alloc before the
// launch are the kernels' outputs).
// CHECK-NOT: memref.alloc
// CHECK-NOT: gpu.memcpy
// CHECK: gpu.launch_func @main_kernel::@main_kernel {{.*}}args({{.*}}%[[W]]
// The host read: mirror in, load, free.
// CHECK: %[[M1:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: gpu.memcpy %[[M1]], %[[SQ:.*]] : memref<2x3xf32>, memref<2x3xf32>
// CHECK-NEXT: %[[S:.*]] = memref.load %[[M1]][
// CHECK-NEXT: memref.dealloc %[[M1]]
// CHECK: gpu.launch_func @main_kernel_0::@main_kernel {{.*}}args({{.*}}%[[S]] : f32
// The host write: mirror in, store, copy back, free.
// CHECK: %[[M2:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: gpu.memcpy %[[M2]], %[[SUM:.*]] : memref<2x3xf32>, memref<2x3xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[M2]][
// CHECK-NEXT: gpu.memcpy %[[SUM]], %[[M2]]
// CHECK-NEXT: memref.dealloc %[[M2]]
// The print reads a mirror, rebuilt through the cast.
// CHECK: %[[M3:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: gpu.memcpy %[[M3]], %[[SUM]]
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[M3]] : memref<2x3xf32> to memref<*xf32>
// CHECK-NEXT: call @printMemrefF32(%[[CAST]])
// CHECK-NEXT: memref.dealloc %[[M3]]
// Device buffers are freed on the device (ownership-based deallocation).
// CHECK-NEXT: gpu.dealloc %[[SUM]]
// CHECK-NEXT: gpu.dealloc %[[SQ]]
// CHECK-NOT: %[[W]]
// CHECK-NEXT: return
