// TF32 tensor-core matmul kernels (tools/common/gpu_mma_kernel.c, docs/gpu.md
// "TF32 tensor-core variants"): only with --gpu-tf32=on. A /tf32 schedule
// BMxBN/WMxWN/kBK replaces each f32 matmul whose N and K the tiles divide
// (any M) by one gpu.launch of (N/BN, ceil(M/BM)) blocks of one warp per
// WMxWN warp tile; A and B k-tiles in dynamic shared memory (double
// buffers, rows padded by 4 and 8 floats), rounded to TF32 when stored;
// (WM/16)(WN/8) nvvm.mma.sync m16n8k8 tf32 per k step of 8, f32
// accumulators loop-carried; C read, added and written after the k loop.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-tf32=on --gpu-schedule=64x64/32x32/k16/tf32 --mlir-print-ir-after-all %s -o %t.mlir 2>%t.log
// RUN: FileCheck %s < %t.log
// RUN: FileCheck %s --check-prefix=PTX < %t.mlir
// Without the opt-in there is no TF32 kernel anywhere: the default sites
// are f32 only, and a /tf32 schedule is an error (tf32-errors.test).
// RUN: stc-opt --tune-hot-paths --target=cuda %s | FileCheck %s --check-prefix=DEFAULT
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-tf32=off %s | FileCheck %s --check-prefix=DEFAULT
// With it, the default site family gains the TF32 kernels, tier 0 (after
// cuBLAS, before the f32 kernels), eligibility STC_RT_ELIGIBLE_TF32 (4):
// the runtime tries them only when the policy allows TF32.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-tf32=on %s | FileCheck %s --check-prefix=SITES

func.func @mm(%a: tensor<197x64xf32>, %b: tensor<64x256xf32>, %c: tensor<197x256xf32>) -> tensor<197x256xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<197x64xf32>, tensor<64x256xf32>)
                     outs(%c : tensor<197x256xf32>) -> tensor<197x256xf32>
  return %r : tensor<197x256xf32>
}

// Right after stc-gpu-map-forall: N/64 = 4 by ceil(197/64) = 4 blocks of
// 4 warps; 2 x (64x20) + 2 x (16x72) floats of shared memory.
// CHECK-LABEL: IR Dump After StcGpuMapForall
// CHECK: func.func @mm(
// CHECK-SAME: stc.gpu_schedule = "gpu_b64x64_w32x32_k16_tf32"
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[NT:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[SMEM:.*]] = arith.constant 19456 : i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C4]], {{.*}} = %[[C4]], {{.*}}) threads({{.*}}) in ({{.*}} = %[[NT]], {{.*}}) dynamic_shared_memory_size %[[SMEM]]
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<2x64x20xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2x16x72xf32, #gpu.address_space<workgroup>>
// TF32 rounding constants: exponent mask, half an ulp, mantissa cut.
// CHECK: %[[EXP:.*]] = arith.constant dense<2139095040> : vector<4xi32>
// CHECK: %[[HALF:.*]] = arith.constant dense<4096> : vector<4xi32>
// CHECK: %[[CUT:.*]] = arith.constant dense<-8192> : vector<4xi32>
// A's rows past M = 197 are read from row 196.
// CHECK: arith.minui %{{.*}}, %c196
// CHECK: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<197x64xf32>, vector<4xf32>
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.andi %{{.*}}, %[[EXP]] : vector<4xi32>
// CHECK: arith.cmpi eq, %{{.*}}, %[[EXP]] : vector<4xi32>
// CHECK: arith.addi %{{.*}}, %[[HALF]] : vector<4xi32>
// CHECK: arith.andi %{{.*}}, %[[CUT]] : vector<4xi32>
// CHECK: arith.select
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<2x64x20xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// 2 x 4 m16n8 tiles x 4 accumulators per lane, as f32 iter_args; C is not
// touched in the loop.
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NOT: %arg2
// CHECK-COUNT-16: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: %arg2
// CHECK: vector.store {{.*}} : memref<2x16x72xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// After the loop: rows past M neither read nor written; C += the
// accumulators in pairs (c0 c1, c2 c3 of the fragment layout).
// CHECK: arith.cmpi ult, %{{.*}}, %c197
// CHECK-NEXT: scf.if
// CHECK-NEXT: vector.from_elements %[[R:.*]]#0, %[[R]]#1 : vector<2xf32>
// CHECK-NEXT: vector.load %arg2{{.*}} {alignment = 8 : i64} : memref<197x256xf32>, vector<2xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: vector.store {{.*}}, %arg2{{.*}} {alignment = 8 : i64} : memref<197x256xf32>, vector<2xf32>
// CHECK: arith.cmpi ult, %{{.*}}, %c197
// CHECK-NEXT: scf.if
// CHECK-NEXT: vector.from_elements %[[R]]#2, %[[R]]#3 : vector<2xf32>
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul

// The embedded assembly holds the tensor-core instruction, 16 per k step of 16.
// PTX-COUNT-16: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-NOT: mma.sync

// DEFAULT-NOT: tf32
// DEFAULT: ("gpu_cublas\00")
// DEFAULT-NOT: tf32

// SITES: ("reference\00")
// SITES-NEXT: ("1\00")
// SITES-NEXT: ("gpu_cublas\00")
// SITES-NEXT: ("1\00")
// SITES-NEXT: ("gpu_b128x256_w64x64_k16_tf32\00")
// SITES-NEXT: ("1\00")
// SITES-NEXT: ("gpu_b128x128_w64x64_k16_tf32\00")
// SITES-NEXT: ("1\00")
// SITES-NEXT: ("gpu_b128x64_w32x32_k16_tf32\00")
// SITES-NEXT: ("1\00")
// SITES-NEXT: ("gpu_b128x128_t8x8_k8_shared\00")
// SITES: __rt_variants()
// SITES: %[[E1:.*]] = llvm.mlir.constant(3 : i32) : i32
// SITES-NEXT: llvm.insertvalue %[[E1]], %{{.*}}[1, 5]
// SITES: %[[E2:.*]] = llvm.mlir.constant(4 : i32) : i32
// SITES-NEXT: llvm.insertvalue %[[E2]], %{{.*}}[2, 5]
// SITES: %[[E3:.*]] = llvm.mlir.constant(4 : i32) : i32
// SITES-NEXT: llvm.insertvalue %[[E3]], %{{.*}}[3, 5]
// SITES: %[[E4:.*]] = llvm.mlir.constant(4 : i32) : i32
// SITES-NEXT: llvm.insertvalue %[[E4]], %{{.*}}[4, 5]
// SITES: %[[E5:.*]] = llvm.mlir.constant(1 : i32) : i32
// SITES-NEXT: llvm.insertvalue %[[E5]], %{{.*}}[5, 5]
// SITES: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
