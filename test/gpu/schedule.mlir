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

// /shared: a generated kernel (any M, N and K multiples of BN and BK): the
// A and B k-tiles double-buffered in dynamic shared memory (A transposed),
// 128-bit global loads one k step ahead, fragments read from shared memory
// as vectors, the accumulators loop-carried vectors from 0 (C is read,
// added to and written after the k loop only), one barrier per k step.
// 37 rows: a partial last block row, whose rows past M touch no C.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-schedule=64x32/4x2/k16/shared --mlir-print-ir-after-all %s -o %t.shared.mlir 2>%t.shared.log; FileCheck %s --check-prefix=SHARED < %t.shared.log
// RUN: FileCheck %s --check-prefix=SHARED-REMARK < %t.shared.log
// RUN: FileCheck %s --check-prefix=SHARED-PTX < %t.shared.mlir
// SHARED-REMARK: remark: --gpu-schedule: /shared is for linalg.matmul only: the default kernel
// SHARED-LABEL: IR Dump After StcGpuMapForall
// SHARED: func.func @mm(%[[A:.*]]: memref<128x48xf32>, %[[B:.*]]: memref<48x96xf32>, %[[C:.*]]: memref<128x96xf32>)
// SHARED-SAME: stc.gpu_schedule = "gpu_b64x32_t4x2_k16_shared"
// SHARED-NOT: memref.alloc
// SHARED: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c2, {{.*}}) threads({{.*}}) in ({{.*}} = %c256, {{.*}}) dynamic_shared_memory_size %c12800_i32
// SHARED: %[[DYN:.*]] = gpu.dynamic_shared_memory
// SHARED: %[[AS:.*]] = memref.view %[[DYN]][%c0][] {{.*}} to memref<2x16x68xf32, #gpu.address_space<workgroup>>
// SHARED: %[[BS:.*]] = memref.view %[[DYN]][%c8704][] {{.*}} to memref<2x16x32xf32, #gpu.address_space<workgroup>>
// SHARED-NOT: %[[C]][
// SHARED: vector.load %[[A]]{{.*}} {alignment = 16 : i64} : memref<128x48xf32>, vector<4xf32>
// SHARED: memref.store {{.*}}, %[[AS]]
// SHARED: vector.store {{.*}}, %[[BS]]
// SHARED: gpu.barrier
// SHARED: scf.for {{.*}} iter_args({{.*}}) -> (vector<2xf32>, vector<2xf32>, vector<2xf32>, vector<2xf32>)
// SHARED-NOT: %[[C]][
// SHARED: vector.load %[[A]]{{.*}} : memref<128x48xf32>, vector<4xf32>
// SHARED-NOT: %[[C]][
// SHARED: vector.load %[[AS]]{{.*}} {alignment = 16 : i64} : memref<2x16x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// SHARED: vector.load %[[BS]]{{.*}} : memref<2x16x32xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// SHARED-COUNT-4: vector.fma
// SHARED-NOT: %[[C]][
// SHARED: gpu.barrier
// SHARED-NOT: gpu.barrier
// SHARED-NOT: %[[C]][
// SHARED: scf.yield
// SHARED-COUNT-4: vector.load %[[C]]{{.*}} : memref<128x96xf32>, vector<2xf32>
// SHARED-NOT: %[[C]][
// SHARED: vector.store {{.*}}, %[[C]]
// SHARED-NOT: memref.alloc
// SHARED: gpu.terminator
// SHARED: func.func @odd(
// SHARED: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c1{{.*}}, {{.*}})
// SHARED: scf.for
// SHARED: scf.yield
// SHARED: arith.cmpi ult, {{.*}}, %c37
// SHARED-NEXT: scf.if
// SHARED-NEXT: vector.load {{.*}} : memref<37x96xf32>, vector<2xf32>
// SHARED-NEXT: arith.addf
// SHARED-NEXT: vector.store {{.*}} : memref<37x96xf32>, vector<2xf32>
// SHARED: func.func @bmm
// SHARED: linalg.batch_matmul
// SHARED-PTX: gpu.binary @mm_kernel
// SHARED-PTX-SAME: .shared .align 16 .b8 __dynamic_shmem
// SHARED-PTX-SAME: ld.global.v4.{{[bf]}}32
// SHARED-PTX-SAME: bar.sync
// SHARED-PTX-SAME: ld.shared.v4.{{[bf]}}32
// SHARED-PTX-SAME: fma.rn.f32

// /splitS: K split over S blocks on z (each a K/S range), whose partial sums
// are added to C atomically (no C load, no plain store).
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-schedule=64x32/4x2/k16/shared/split3 --mlir-print-ir-after-all %s -o %t.split.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: IR Dump After StcGpuMapForall
// SPLIT: func.func @mm(%[[A:.*]]: memref<128x48xf32>, %[[B:.*]]: memref<48x96xf32>, %[[C:.*]]: memref<128x96xf32>)
// SPLIT-SAME: stc.gpu_schedule = "gpu_b64x32_t4x2_k16_shared_split3"
// SPLIT: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[BZ:.*]]) in ({{.*}} = %c3, {{.*}} = %c2, {{.*}} = %[[C3:.*]]) threads
// SPLIT: arith.muli %[[BZ]], %c16
// SPLIT-NOT: %[[C]][
// SPLIT: scf.for
// SPLIT-NOT: %[[C]][
// SPLIT: scf.yield
// SPLIT-NOT: vector.load %[[C]]
// SPLIT-NOT: vector.store {{.*}} %[[C]]
// SPLIT-COUNT-8: memref.atomic_rmw addf {{.*}}, %[[C]][{{.*}}] : (f32, memref<128x96xf32>) -> f32
// SPLIT-NOT: %[[C]][
// SPLIT: gpu.terminator
