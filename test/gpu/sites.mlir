// GPU dispatch sites (--target=cuda without --gpu-schedule): each static
// matmul / batch_matmul that a GPU schedule fits becomes a site whose
// reference is the default kernel, with one variant per schedule whose
// tiles divide the op (register-tiled: M, N and K; /shared, f32 matmul only,
// takes any M: N and K, K by BK*S with /splitS), plus
// cuBLAS for f32 (stc_rt_cublas_*, eligible only where cuBLAS loads). The
// site descriptor marks every argument as device memory (stc_rt_arg.memory
// = 1), so that the runtime tunes it with the GPU trial runner.
// Without a profile the hot-path plan ranks by static cost (test/gpu/plan.mlir):
// rows, mm, bmm and ksplit are hot (the whole list), mm64 and odd warm (2
// variants: all that fit them); the explicit lists below force every op.
// RUN: stc-opt --tune-hot-paths --target=cuda %s -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: FileCheck %s --check-prefix=VARIANT < %t.mlir
// RUN: FileCheck %s --check-prefix=PTX < %t.mlir
// An explicit list, and sites off.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=cublas,64x64/4x4/k8 %s | FileCheck %s --check-prefix=LIST
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=off %s | FileCheck %s --check-prefix=OFF
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=128x128/8x8/k128/shared %s | FileCheck %s --check-prefix=BIG
// A module-wide --gpu-schedule makes no sites either.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-schedule=64x64/4x4/k8 %s | FileCheck %s --check-prefix=OFF

func.func @mm(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>)
                     outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// 37 rows: no schedule divides; cuBLAS takes any shape.
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

// f64: no cuBLAS variant (its entry points are f32), the schedules apply.
func.func @mm64(%a: tensor<64x64xf64>, %b: tensor<64x64xf64>, %c: tensor<64x64xf64>) -> tensor<64x64xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf64>, tensor<64x64xf64>)
                     outs(%c : tensor<64x64xf64>) -> tensor<64x64xf64>
  return %r : tensor<64x64xf64>
}

// 100 rows: the register-tiled schedules do not divide M, every /shared
// kernel does (any M: a partial last block row).
func.func @rows(%a: tensor<100x256xf32>, %b: tensor<256x128xf32>, %c: tensor<100x128xf32>) -> tensor<100x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<100x256xf32>, tensor<256x128xf32>)
                     outs(%c : tensor<100x128xf32>) -> tensor<100x128xf32>
  return %r : tensor<100x128xf32>
}

// K = 96: 16 divides it, 16*4 does not (no split-K); N = 64: no BN = 128 tile.
func.func @ksplit(%a: tensor<64x96xf32>, %b: tensor<96x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x96xf32>, tensor<96x64xf32>)
                     outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// Not a contraction: no site, the default kernel.
func.func @add(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.add ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// The matmul site: reference, cuBLAS (tier 0), the five /shared kernels
// (tier 1) and the two register-tiled schedules (tier 2): all divide
// 128 x 128 x 64.
// CHECK: @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__rt_str0("mm/linalg.matmul#
// CHECK-NEXT: ("linalg.matmul\00")
// CHECK-NEXT: ("reference\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_cublas\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b128x128_t8x8_k8_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b128x64_t8x4_k16_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k16_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k16_shared_split4\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b32x64_t2x4_k16_shared_split4\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k8\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b32x32_t2x2_k8\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: __rt_str20("{{[0-9a-f]+}}\00")
// Every argument is device memory (field 3 of stc_rt_arg = 1).
// CHECK: @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__rt_args() {{.*}} !llvm.array<3 x struct<(i32, i32, i32, i32)>>
// CHECK: %[[M0:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.insertvalue %[[M0]], %{{.*}}[0, 3]
// CHECK: %[[M1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.insertvalue %[[M1]], %{{.*}}[1, 3]
// CHECK: %[[M2:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.insertvalue %[[M2]], %{{.*}}[2, 3]
// The cuBLAS variant's eligibility is STC_RT_ELIGIBLE_CUBLAS (3).
// CHECK: @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<9 x
// CHECK: %[[E:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: llvm.insertvalue %[[E]], %{{.*}}[1, 5]
// The dispatch: slot fast path, else the runtime.
// CHECK: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}(
// CHECK: llvm.call @stc_rt_site_enter(
// CHECK: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__ref(
// CHECK: gpu.launch_func {{.*}}@__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__ref_kernel::
// CHECK: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_cublas(
// CHECK: llvm.call @stc_rt_cublas_matmul_f32(

// A /shared variant is the generated kernel (stc-gpu-map-forall replaced
// its linalg.matmul after bufferization): 1-D blocks of 256 threads, 16896
// bytes of dynamic shared memory for 64x64/k16 (A 2x16x68 and B 2x16x64
// floats), split-K over the grid's z (4 blocks per tile).
// VARIANT-LABEL: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_b64x64_t4x4_k16_shared_split4(
// VARIANT-DAG: %[[TWO:.*]] = llvm.mlir.constant(2 : index) : i64
// VARIANT-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : index) : i64
// VARIANT-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : index) : i64
// VARIANT-DAG: %[[NT:.*]] = llvm.mlir.constant(256 : index) : i64
// VARIANT-DAG: %[[SMEM:.*]] = llvm.mlir.constant(16896 : i32) : i32
// VARIANT: gpu.launch_func {{.*}}__gpu_b64x64_t4x4_k16_shared_split4_kernel::{{.*}} blocks in (%[[TWO]], %[[TWO]], %[[FOUR]]) threads in (%[[NT]], %[[ONE]], %[[ONE]]) : i64 dynamic_shared_memory_size %[[SMEM]]
// Each scheduled variant launches its own kernel with its block geometry:
// 64x64/4x4 is 16 x 16 threads in 2 x 2 blocks for 128 x 128.
// VARIANT-LABEL: llvm.func @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_b64x64_t4x4_k8(
// VARIANT: %[[T:.*]] = llvm.mlir.constant(16 : index) : i64
// VARIANT: gpu.launch_func {{.*}}__gpu_b64x64_t4x4_k8_kernel::{{.*}} threads in (%[[T]], %[[T]],
// VARIANT: llvm.call @mgpuStreamSynchronize(
// VARIANT-LABEL: llvm.func @_mlir_ciface___stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_b64x64_t4x4_k8(
// In the kernels' assembly, the /shared kernels load fragments from shared memory
// 128 bits at a time; split-K adds into C atomically; the register-tiled
// kernels do neither.
// PTX: gpu.binary @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__ref_kernel
// PTX-NOT: ld.shared.v4
// PTX: gpu.binary @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_b128x128_t8x8_k8_shared_kernel {{.*}}ld.shared.v4
// PTX-NOT: atom.global.add.f32
// PTX: gpu.binary @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_b64x64_t4x4_k16_shared_split4_kernel {{.*}}ld.shared.v4{{.*}}atom.global.add.f32
// PTX: gpu.binary @__stc_site_mm_linalg_matmul_{{[0-9a-f]+}}__gpu_b64x64_t4x4_k8_kernel
// PTX-NOT: ld.shared.v4
// PTX: gpu.binary @__stc_site_odd

// 37 x 96 x 48: only cuBLAS fits.
// CHECK: ("odd/linalg.matmul#
// CHECK-NEXT: ("linalg.matmul\00")
// CHECK-NEXT: ("reference\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_cublas\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: internal constant {{.*}}__rt_str6("{{[0-9a-f]+}}\00")
// CHECK: __rt_variants() {{.*}} !llvm.array<2 x

// The batch_matmul: cuBLAS (strided batched) and the one schedule dividing
// 64 x 96 x 48.
// CHECK: ("bmm/linalg.batch_matmul#
// CHECK-NEXT: ("linalg.batch_matmul\00")
// CHECK-NEXT: ("reference\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_cublas\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b32x32_t2x2_k8\00")
// CHECK: llvm.call @stc_rt_cublas_batch_matmul_f32(

// f64: no cuBLAS, no /shared kernel (f32 only; stc.element_type).
// CHECK: ("mm64/linalg.matmul#
// CHECK-NEXT: ("linalg.matmul\00")
// CHECK-NEXT: ("reference\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k8\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b32x32_t2x2_k8\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: __rt_str8("{{[0-9a-f]+}}\00")

// 100 x 128 x 256: cuBLAS and every /shared kernel, no register-tiled one.
// CHECK: ("rows/linalg.matmul#
// CHECK-NEXT: ("linalg.matmul\00")
// CHECK-NEXT: ("reference\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_cublas\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b128x128_t8x8_k8_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b128x64_t8x4_k16_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k16_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k16_shared_split4\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b32x64_t2x4_k16_shared_split4\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: __rt_str16("{{[0-9a-f]+}}\00")

// 64 x 64 x 96: K = 96 is no multiple of 16*4 (no split-K), N = 64 of no
// BN = 128 tile; 128x64 takes the 64 rows as one partial block row.
// CHECK: ("ksplit/linalg.matmul#
// CHECK-NEXT: ("linalg.matmul\00")
// CHECK-NEXT: ("reference\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_cublas\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b128x64_t8x4_k16_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k16_shared\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b64x64_t4x4_k8\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: ("gpu_b32x32_t2x2_k8\00")
// CHECK-NEXT: ("1\00")
// CHECK-NEXT: __rt_str14("{{[0-9a-f]+}}\00")

// The elementwise op is no site.
// CHECK-NOT: __stc_site_add
// CHECK: gpu.binary @add_kernel

// LIST: ("mm/linalg.matmul#
// LIST-NEXT: ("linalg.matmul\00")
// LIST-NEXT: ("reference\00")
// LIST-NEXT: ("1\00")
// LIST-NEXT: ("gpu_cublas\00")
// LIST-NEXT: ("1\00")
// LIST-NEXT: ("gpu_b64x64_t4x4_k8\00")
// LIST-NEXT: ("1\00")
// LIST-NEXT: __rt_str8("{{[0-9a-f]+}}\00")

// OFF-NOT: stc_rt_site_enter
// OFF-NOT: __stc_site_
// OFF: gpu.binary

// A site's /shared variant may ask for more than 48 KiB of shared memory
// (here 260 KiB: A 2x128x132 and B 2x128x128 floats): whether the device
// allows it is decided at launch (runtime/gpu.c opts in above 48 KiB; over
// the device's limit the launch is refused and the trial runner rejects the
// variant with that note: tools/gpu/device-run.sh's launch-failure
// program).
// BIG-LABEL: llvm.func @__stc_site_rows_linalg_matmul_{{[0-9a-f]+}}__gpu_b128x128_t8x8_k128_shared(
// BIG: %[[SMEM:.*]] = llvm.mlir.constant(266240 : i32) : i32
// BIG: gpu.launch_func {{.*}}__gpu_b128x128_t8x8_k128_shared_kernel::{{.*}} dynamic_shared_memory_size %[[SMEM]]
