// A measured compile-time budget (issue 11 item 3, DESIGN section 4): with
// budget-ms, stc-hot-path-schedule cuts its plan by an estimate and records
// the budget on the module; stc-multi-variant measures the time it really
// spends and, once the budget is spent, leaves the sites still to build to
// the default lowering with a remark. Sites are built hottest first (the
// 512^3 matmul, rank 1, before the 256^3 one).
// A 1 ms budget is spent before the first site (loading the schedules
// alone takes longer): both remarks, hottest first.
// RUN: stc-opt --tune-hot-paths --hot-path-options='hot-share=1.0 cold-share=1.0 min-samples=0 budget-ms=1 ms-per-variant=0' %s 2>&1 | FileCheck %s --check-prefix=SPENT
// SPENT: remark: stc-multi-variant: 'b/linalg.matmul#{{[0-9a-f]+}}' is planned for variants but is not a site: the compile-time budget of 1 ms is spent
// SPENT: remark: stc-multi-variant: 'a/linalg.matmul#{{[0-9a-f]+}}' is planned for variants but is not a site: the compile-time budget of 1 ms is spent
// SPENT-NOT: @__stc_site_
// An ample budget: both sites, each next to its function.
// RUN: stc-opt --tune-hot-paths --hot-path-options='hot-share=1.0 cold-share=1.0 min-samples=0 budget-ms=600000 ms-per-variant=1' %s 2>&1 | FileCheck %s --check-prefix=AMPLE
// AMPLE-NOT: budget of
// AMPLE-DAG: llvm.func @__stc_site_a_linalg_matmul_{{[0-9a-f]+}}(
// AMPLE-DAG: llvm.func @__stc_site_b_linalg_matmul_{{[0-9a-f]+}}(
// The option of stc-multi-variant itself is checked like the others.
// RUN: not stc-opt --pass-pipeline='builtin.module(stc-multi-variant{budget-ms=soon})' %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: stc-multi-variant: option 'budget-ms'

func.func @a(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>, %z: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %r = linalg.matmul ins(%x, %y : tensor<256x256xf32>, tensor<256x256xf32>) outs(%z : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

func.func @b(%x: tensor<512x512xf32>, %y: tensor<512x512xf32>, %z: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %r = linalg.matmul ins(%x, %y : tensor<512x512xf32>, tensor<512x512xf32>) outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}
