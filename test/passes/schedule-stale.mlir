// A profile whose entries mostly name regions that no longer exist
// (Inputs/schedule-stale.yaml: 1 of 3 matches). By default the stale
// entries are counted in the summary remark and ignored; with strict, a
// profile matching fewer than half its entries is an error.

// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-stale.yaml' %s 2>&1 >/dev/null | FileCheck %s
// RUN: stc-opt --verify-diagnostics --stc-hot-path-schedule='profile=%S/Inputs/schedule-stale.yaml strict' %s
// RUN: not stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-stale.yaml strict=true' %s 2>&1 | FileCheck %s --check-prefix=STRICT
// strict=false is the default behaviour.
// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-stale.yaml strict=false' %s 2>&1 >/dev/null | FileCheck %s

// Regions without profile entries have no samples: cold, default plan.
// CHECK-NOT: plan variants
// CHECK: remark: stc-hot-path-schedule: profile '{{.*}}schedule-stale.yaml': 3 entries, 1 matched, 2 stale; 4 regions: 1 hot, 0 warm, 3 cold; 0 of 16 variants planned

// STRICT: error: stc-hot-path-schedule: profile '{{.*}}schedule-stale.yaml' matches only 1 of its 3 entries (strict: at least half must match this program)

// expected-error@+1 {{matches only 1 of its 3 entries}}
module {
  func.func @main(%a: tensor<16x16xf32>, %b: tensor<32x32xf32>, %c: tensor<48x48xf32>)
      -> (tensor<16x16xf32>, tensor<32x32xf32>, tensor<48x48xf32>) {
    %0 = linalg.matmul ins(%a, %a : tensor<16x16xf32>, tensor<16x16xf32>)
                       outs(%a : tensor<16x16xf32>) -> tensor<16x16xf32>
    %1 = linalg.matmul ins(%b, %b : tensor<32x32xf32>, tensor<32x32xf32>)
                       outs(%b : tensor<32x32xf32>) -> tensor<32x32xf32>
    %2 = linalg.matmul ins(%c, %c : tensor<48x48xf32>, tensor<48x48xf32>)
                       outs(%c : tensor<48x48xf32>) -> tensor<48x48xf32>
    return %0, %1, %2 : tensor<16x16xf32>, tensor<32x32xf32>, tensor<48x48xf32>
  }
}
