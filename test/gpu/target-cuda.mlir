// --tune-hot-paths --target=cuda: every linalg op becomes a kernel in a
// gpu.binary (PTX for sm_90 by default), buffers are device allocations, and
// host code that reads a buffer (printMemrefF32) reads a host mirror copied
// from the device.
// RUN: stc-opt --tune-hot-paths --target=cuda %s | FileCheck %s
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-chip=sm_80 --gpu-block=8,8 %s | FileCheck %s --check-prefix=CHIP
// RUN: stc-opt --tune-hot-paths --target=cuda --emit=obj %s -o %t.o
// RUN: nm %t.o | FileCheck %s --check-prefix=OBJ

func.func private @printMemrefF32(tensor<*xf32>)

func.func @scale_add(%a: tensor<100x70xf32>, %b: tensor<100x70xf32>) -> tensor<100x70xf32> {
  %e = tensor.empty() : tensor<100x70xf32>
  %r = linalg.add ins(%a, %b : tensor<100x70xf32>, tensor<100x70xf32>)
                  outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  return %r : tensor<100x70xf32>
}

func.func @main() {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<100x70xf32>
  %a = linalg.fill ins(%one : f32) outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  %r = call @scale_add(%a, %a) : (tensor<100x70xf32>, tensor<100x70xf32>) -> tensor<100x70xf32>
  %u = tensor.cast %r : tensor<100x70xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// CHECK-LABEL: llvm.func @scale_add
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @scale_add_kernel::@scale_add_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.call @mgpuStreamSynchronize
// CHECK: gpu.binary @scale_add_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">, {{.*}}assembly = "
// CHECK-LABEL: llvm.func @main
// CHECK: gpu.launch_func
// CHECK: llvm.call @scale_add
// The host mirror: a host allocation, a device -> host copy, the print.
// CHECK: llvm.call @malloc
// CHECK: llvm.call @mgpuMemcpy
// CHECK: llvm.call @mgpuStreamSynchronize
// CHECK: llvm.call @printMemrefF32
// CHECK: llvm.call @free
// CHECK-NOT: memref.
// CHECK-NOT: linalg.

// CHIP: gpu.binary @scale_add_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">
// CHIP: .target sm_80

// OBJ: U mgpuLaunchKernel
// OBJ: U mgpuModuleLoadJIT
// OBJ: U printMemrefF32
// OBJ: T scale_add
