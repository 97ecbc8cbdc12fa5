// --gpu-schedule=BMxBN/TMxTN/kBK (tools/common/gpu_schedule.c): a matmul
// whose sizes the tiles divide becomes one gpu.launch of (N/BN, M/BM) blocks
// of (BN/TN, BM/TM) threads; each thread keeps its TM x TN tile of C in
// registers (a vector loop-carried through the k loop, read before it and
// written after it) and does TM*TN FMAs per k. No allocation in the kernel.
// A matmul the tiles do not divide keeps the default kernel, with a remark.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-schedule=64x32/4x2/k8 --mlir-print-ir-after-all %s -o %t.mlir 2>%t.log; FileCheck %s < %t.log
// RUN: FileCheck %s --check-prefix=REMARK < %t.log
// RUN: FileCheck %s --check-prefix=PTX < %t.mlir
// Batch: the batch on blocks' z.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-schedule=32x32/4x4/k16 --mlir-print-ir-after-all %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BATCH

func.func @mm(%a: tensor<128x48xf32>, %b: tensor<48x96xf32>, %c: tensor<128x96xf32>) -> tensor<128x96xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<128x48xf32>, tensor<48x96xf32>)
                     outs(%c : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}

func.func @odd(%a: tensor<37x48xf32>, %b: tensor<48x96xf32>, %c: tensor<37x96xf32>) -> tensor<37x96xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<37x48xf32>, tensor<48x96xf32>)
                     outs(%c : tensor<37x96xf32>) -> tensor<37x96xf32>
  return %r : tensor<37x96xf32>
}

func.func @bmm(%a: tensor<3x64x48xf32>, %b: tensor<3x48x96xf32>, %c: tensor<3x64x96xf32>) -> tensor<3x64x96xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x64x48xf32>, tensor<3x48x96xf32>)
                           outs(%c : tensor<3x64x96xf32>) -> tensor<3x64x96xf32>
  return %r : tensor<3x64x96xf32>
}

// REMARK: remark: --gpu-schedule gpu_b64x32_t4x2_k8: M=37, N=96, K=48 are not multiples of 64, 32, 8: the default kernel

// CHECK-LABEL: IR Dump After StcGpuMapForall
// CHECK: func.func @mm({{.*}}stc.gpu_schedule = "gpu_b64x32_t4x2_k8"
// CHECK-NOT: memref.alloc
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C3]], {{.*}} = %{{.*}}, {{.*}}) threads({{.*}}) in (%{{.*}} = %[[C16:.*]], %{{.*}} = %[[C16]], %{{.*}} = %{{.*}})
// CHECK-NOT: memref.alloc
// CHECK-COUNT-4: vector.load {{.*}} : memref<4x2xf32, {{.*}}>, vector<2xf32>
// CHECK: %[[INIT:.*]] = vector.from_elements {{.*}} : vector<4x2xf32>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (vector<4x2xf32>)
// CHECK-COUNT-64: vector.fma
// CHECK: scf.yield
// CHECK: vector.extract %[[ACC]]
// CHECK-COUNT-4: vector.store {{.*}} : memref<4x2xf32, {{.*}}>, vector<2xf32>
// CHECK-NOT: memref.alloc
// CHECK: gpu.terminator
// CHECK: func.func @odd
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
// CHECK: func.func @bmm

// The kernel: FMAs on registers, 256 threads.
// PTX: gpu.binary @mm_kernel
// PTX-SAME: .maxntid 16, 16, 1
// PTX-SAME: fma.rn.f32

// BATCH-LABEL: IR Dump After StcGpuMapForall
// BATCH: func.func @bmm
// BATCH: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C3:.*]], {{.*}} = %[[C2:.*]], {{.*}} = %[[C3]]) threads({{.*}}) in (%{{.*}} = %[[C8:.*]], %{{.*}} = %[[C8]], %{{.*}} = %{{.*}})
// BATCH: scf.for {{.*}} iter_args({{.*}}) -> (vector<1x4x4xf32>)
// BATCH-COUNT-256: vector.fma

// /shared: each k step's A and B tiles are copied into workgroup memory by
// all threads (launch workgroup attributions, no allocation), with barriers
// around each thread's FMAs from shared memory.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-schedule=64x32/4x2/k16/shared --mlir-print-ir-after-all %s -o %t.shared.mlir 2>%t.shared.log; FileCheck %s --check-prefix=SHARED < %t.shared.log
// RUN: FileCheck %s --check-prefix=SHARED-REMARK < %t.shared.log
// RUN: FileCheck %s --check-prefix=SHARED-PTX < %t.shared.mlir
// SHARED-REMARK: remark: --gpu-schedule: /shared is for linalg.matmul only: the default kernel
// SHARED-LABEL: IR Dump After StcGpuMapForall
// SHARED: func.func @mm(
// SHARED-NOT: memref.alloc
// SHARED: gpu.launch {{.*}} workgroup(%[[SA:.*]] : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>)
// SHARED-NOT: memref.alloc
// SHARED: scf.for
// SHARED: memref.view %[[SA]]
// SHARED: memref.view %[[SB]]
// SHARED: gpu.barrier
// SHARED: vector.fma
// SHARED: gpu.barrier
// SHARED-NOT: memref.alloc
// SHARED: gpu.terminator
// SHARED-PTX: gpu.binary @mm_kernel
// SHARED-PTX-SAME: .shared .align
// SHARED-PTX-SAME: ld.shared.b32
// SHARED-PTX-SAME: bar.sync
