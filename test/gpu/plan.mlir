// The hot-path plan selects the GPU sites (docs/gpu.md "The plan"):
// stc-hot-path-schedule ranks the regions (a profile, else the static cost
// estimate) and plans each matmul / batch_matmul: hot = the whole GPU list,
// warm = the first 2 by tier (cuBLAS, then the /shared kernels), cold = no
// site (the default kernel), within a budget of 4 whole lists; a dynamic
// shape asks for 1 variant (only cuBLAS fits it).
//
// No profile: the static estimate makes @big hot and the others warm.
// RUN: stc-opt --tune-hot-paths --target=cuda %s -o %t.static.mlir 2> %t.static.err
// RUN: FileCheck %s --check-prefix=STATIC < %t.static.err
// RUN: FileCheck %s --check-prefix=STATIC-IR < %t.static.mlir
//
// A profile (recorded on the CPU: region ids do not depend on the target)
// makes @small and @dyn hot, @mid warm and @big cold.
// RUN: stc-opt --tune-hot-paths --target=cuda --hot-path-profile=%S/Inputs/plan-profile.yaml %s -o %t.prof.mlir 2> %t.prof.err
// RUN: FileCheck %s --check-prefix=PROF < %t.prof.err
// RUN: FileCheck %s --check-prefix=PROF-IR < %t.prof.mlir
// RUN: FileCheck %s --check-prefix=PROF-SITES < %t.prof.mlir
//
// A stale profile (no id matches) or an empty one: every region is cold, no
// site, every op keeps its default kernel; the program still lowers.
// RUN: printf 'stc-profile: 1\nregions:\n  - id: "gone/linalg.matmul#00000000"\n    count: 5\n    total-ns: 1000\n    max-ns: 300\n' > %t.stale.yaml
// RUN: stc-opt --tune-hot-paths --target=cuda --hot-path-profile=%t.stale.yaml %s -o %t.stale.mlir 2> %t.stale.err
// RUN: FileCheck %s --check-prefix=STALE < %t.stale.err
// RUN: FileCheck %s --check-prefix=NO-SITES < %t.stale.mlir
// RUN: printf 'stc-profile: 1\nregions: []\n' > %t.empty.yaml
// RUN: stc-opt --tune-hot-paths --target=cuda --hot-path-profile=%t.empty.yaml %s -o %t.empty.mlir
// RUN: FileCheck %s --check-prefix=NO-SITES < %t.empty.mlir
//
// A bad variant-ops (name:N needs N > 0) is a usage error.
// RUN: not stc-opt --tune-hot-paths --target=cuda --hot-path-options='variant-ops=linalg.matmul:0' %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-OPS
// BAD-OPS: stc-hot-path-schedule: option 'variant-ops': expected a comma-separated list of op names, each optionally name:N with N > 0, got 'linalg.matmul:0'
//
// The budget: 9 variants are the hot @small's 8 and @dyn's 1; @mid is cut.
// RUN: stc-opt --tune-hot-paths --target=cuda --hot-path-profile=%S/Inputs/plan-profile.yaml --hot-path-options='budget=9' %s -o %t.budget.mlir 2> %t.budget.err
// RUN: FileCheck %s --check-prefix=BUDGET < %t.budget.err
// RUN: FileCheck %s --check-prefix=BUDGET-IR < %t.budget.mlir
//
// variants-per-hot / variants-per-warm: the most promising first.
// RUN: stc-opt --tune-hot-paths --target=cuda --hot-path-profile=%S/Inputs/plan-profile.yaml --hot-path-options='variants-per-hot=3 variants-per-warm=1' %s -o /dev/null 2> %t.per.err
// RUN: FileCheck %s --check-prefix=PER < %t.per.err
//
// An explicit --gpu-sites list with a profile: the plan picks among the list.
// RUN: stc-opt --tune-hot-paths --target=cuda --hot-path-profile=%S/Inputs/plan-profile.yaml --gpu-sites=cublas,64x64/4x4/k8,32x32/2x2/k8 %s -o %t.list.mlir 2> %t.list.err
// RUN: FileCheck %s --check-prefix=LIST < %t.list.err
// RUN: FileCheck %s --check-prefix=LIST-IR < %t.list.mlir
// Without a plan option the list is forced on every op it fits (all=true).
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=cublas,64x64/4x4/k8 %s -o %t.forced.mlir 2> %t.forced.err
// RUN: FileCheck %s --check-prefix=FORCED < %t.forced.err
// RUN: FileCheck %s --check-prefix=FORCED-IR < %t.forced.mlir

func.func @big(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>, %c: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>)
                     outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

func.func @mid(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x128xf32>)
                     outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

func.func @small(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>, %c: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>)
                     outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

func.func @dyn(%a: tensor<?x64xf32>, %b: tensor<64x64xf32>, %c: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x64xf32>, tensor<64x64xf32>)
                     outs(%c : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// A reduction: tunable on the CPU, no GPU variants: never planned here.
func.func @sum(%a: tensor<4096xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%a : tensor<4096xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// STATIC: remark: stc-hot-path-schedule: region 'big/linalg.matmul#{{[0-9a-f]+}}': rank 1 of 10, hot, {{.*}} of estimated cost {{.*}}, plan variants:8
// STATIC: remark: stc-hot-path-schedule: region 'small/linalg.matmul#{{[0-9a-f]+}}': rank 2 of 10, hot, {{.*}}, plan variants:8
// STATIC: remark: stc-hot-path-schedule: region 'mid/linalg.matmul#{{[0-9a-f]+}}': rank 3 of 10, warm, {{.*}}, plan variants:2
// STATIC: remark: stc-hot-path-schedule: region 'dyn/linalg.matmul#{{[0-9a-f]+}}': rank 4 of 10, warm, {{.*}}dynamic dims counted as 1), plan variants:1 (at most 1 variant fits a dynamic shape)
// STATIC: remark: stc-hot-path-schedule: region 'sum/linalg.reduce#{{[0-9a-f]+}}': {{.*}}, plan default (no variants for this op kind on the target: variant-ops)
// STATIC: remark: stc-hot-path-schedule: no profile: ranked by static cost estimate (FLOPs + bytes); 10 regions: 2 hot, 2 warm, 6 cold; 19 of 32 variants planned
// STATIC-DAG: remark: stc-multi-variant: 'big/linalg.matmul#{{[0-9a-f]+}}': cuda site with 8 of the 8 variants that fit (hot, plan variants:8): gpu_cublas, gpu_b128x128_t8x8_k8_shared,
// STATIC-DAG: remark: stc-multi-variant: 'mid/linalg.matmul#{{[0-9a-f]+}}': cuda site with 2 of the 8 variants that fit (warm, plan variants:2, the most promising first): gpu_cublas, gpu_b128x128_t8x8_k8_shared{{$}}
// STATIC-DAG: remark: stc-multi-variant: 'dyn/linalg.matmul#{{[0-9a-f]+}}': cuda site with 1 of the 1 variants that fit (warm, plan variants:1): gpu_cublas; dynamic shape: only cuBLAS and the reference
// Site tables (the reference first).
// STATIC-IR-DAG: @__stc_site_big_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<9 x
// STATIC-IR-DAG: @__stc_site_small_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<9 x
// STATIC-IR-DAG: @__stc_site_mid_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<3 x
// STATIC-IR-DAG: @__stc_site_dyn_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<2 x
// STATIC-IR-NOT: @__stc_site_sum

// PROF: remark: stc-hot-path-schedule: region 'small/linalg.matmul#{{[0-9a-f]+}}': rank 1 of 10, hot, 60.0% of profiled time (1000 calls, 600000 ns), plan variants:8
// PROF: remark: stc-hot-path-schedule: region 'dyn/linalg.matmul#{{[0-9a-f]+}}': rank 2 of 10, hot, 34.0% {{.*}}, plan variants:1 (at most 1 variant fits a dynamic shape)
// PROF: remark: stc-hot-path-schedule: region 'mid/linalg.matmul#{{[0-9a-f]+}}': rank 3 of 10, warm, {{.*}}, plan variants:2
// PROF: remark: stc-hot-path-schedule: region 'big/linalg.matmul#{{[0-9a-f]+}}': rank 4 of 10, cold, 0.1% of profiled time (1 call, 500 ns), plan default{{$}}
// PROF: remark: stc-hot-path-schedule: profile '{{.*}}plan-profile.yaml': 8 entries, 8 matched, 0 stale; 10 regions: 2 hot, 1 warm, 7 cold; 11 of 32 variants planned
// PROF-DAG: remark: stc-multi-variant: 'small/linalg.matmul#{{[0-9a-f]+}}': cuda site with 8 of the 8 variants that fit (hot, plan variants:8): gpu_cublas, gpu_b128x128_t8x8_k8_shared, gpu_b128x64_t8x4_k16_shared, gpu_b64x64_t4x4_k16_shared, gpu_b64x64_t4x4_k16_shared_split4, gpu_b32x64_t2x4_k16_shared_split4, gpu_b64x64_t4x4_k8, gpu_b32x32_t2x2_k8{{$}}
// PROF-DAG: remark: stc-multi-variant: 'mid/linalg.matmul#{{[0-9a-f]+}}': cuda site with 2 of the 8 variants that fit (warm, plan variants:2, the most promising first): gpu_cublas, gpu_b128x128_t8x8_k8_shared{{$}}
// PROF-DAG: remark: stc-multi-variant: 'dyn/linalg.matmul#{{[0-9a-f]+}}': cuda site with 1 of the 1 variants that fit (hot, plan variants:1): gpu_cublas; dynamic shape: only cuBLAS and the reference (the generated kernels need static M, N and K)
// PROF-NOT: stc-multi-variant: 'big/
// The cold @big is no site: its matmul is the default kernel, in @big.
// PROF-SITES-DAG: @__stc_site_small_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<9 x
// PROF-SITES-DAG: @__stc_site_mid_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<3 x
// PROF-SITES-DAG: @__stc_site_dyn_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<2 x
// PROF-IR-NOT: __stc_site_big
// PROF-IR: llvm.func @big(
// PROF-IR-NOT: __stc_site
// PROF-IR: gpu.launch_func {{.*}}@big_kernel::
// PROF-IR-NOT: __stc_site_big

// BUDGET: region 'small/linalg.matmul#{{[0-9a-f]+}}': {{.*}}, plan variants:8
// BUDGET: region 'dyn/linalg.matmul#{{[0-9a-f]+}}': {{.*}}, plan variants:1
// BUDGET: region 'mid/linalg.matmul#{{[0-9a-f]+}}': rank 3 of 10, warm, {{.*}}, plan default (variant budget exhausted)
// BUDGET: remark: stc-hot-path-schedule: variant budget exhausted after 9 variants; 1 later tunable regions keep the default plan
// BUDGET: 9 of 9 variants planned
// BUDGET-NOT: stc-multi-variant: 'mid/
// BUDGET-IR-DAG: @__stc_site_small_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<9 x
// BUDGET-IR-DAG: @__stc_site_dyn_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<2 x
// BUDGET-IR-NOT: @__stc_site_mid
// BUDGET-IR-NOT: @__stc_site_big

// PER-DAG: remark: stc-multi-variant: 'small/linalg.matmul#{{[0-9a-f]+}}': cuda site with 3 of the 8 variants that fit (hot, plan variants:3, the most promising first): gpu_cublas, gpu_b128x128_t8x8_k8_shared, gpu_b128x64_t8x4_k16_shared{{$}}
// PER-DAG: remark: stc-multi-variant: 'mid/linalg.matmul#{{[0-9a-f]+}}': cuda site with 1 of the 8 variants that fit (warm, plan variants:1, the most promising first): gpu_cublas{{$}}

// LIST: region 'small/linalg.matmul#{{[0-9a-f]+}}': {{.*}}, plan variants:3
// LIST: 6 of 12 variants planned
// LIST-DAG: 'small/linalg.matmul#{{[0-9a-f]+}}': cuda site with 3 of the 3 variants that fit (hot, plan variants:3): gpu_cublas, gpu_b64x64_t4x4_k8, gpu_b32x32_t2x2_k8{{$}}
// LIST-DAG: 'mid/linalg.matmul#{{[0-9a-f]+}}': cuda site with 2 of the 3 variants that fit (warm, plan variants:2, the most promising first): gpu_cublas, gpu_b64x64_t4x4_k8{{$}}
// LIST-IR-NOT: @__stc_site_big

// FORCED-NOT: stc-hot-path-schedule
// FORCED-DAG: 'big/linalg.matmul#{{[0-9a-f]+}}': cuda site with 2 of the 2 variants that fit (no hot-path plan: all=true, every op a variant fits (--target=cuda: an explicit --gpu-sites list alone)): gpu_cublas, gpu_b64x64_t4x4_k8{{$}}
// FORCED-DAG: 'mid/linalg.matmul#{{[0-9a-f]+}}': cuda site with 2 of the 2 variants
// FORCED-DAG: 'small/linalg.matmul#{{[0-9a-f]+}}': cuda site with 2 of the 2 variants
// FORCED-DAG: 'dyn/linalg.matmul#{{[0-9a-f]+}}': cuda site with 1 of the 1 variants
// FORCED-IR-DAG: @__stc_site_big_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<3 x
// FORCED-IR-DAG: @__stc_site_mid_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<3 x
// FORCED-IR-DAG: @__stc_site_small_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<3 x
// FORCED-IR-DAG: @__stc_site_dyn_linalg_matmul_{{[0-9a-f]+}}__rt_variants() {{.*}} !llvm.array<2 x

// STALE: 1 entries, 0 matched, 1 stale; 10 regions: 0 hot, 0 warm, 10 cold; 0 of 32 variants planned
// STALE-NOT: stc-multi-variant
// NO-SITES-NOT: __stc_site
// NO-SITES: gpu.binary @big_kernel
// NO-SITES-NOT: __stc_site
