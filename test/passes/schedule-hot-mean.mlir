// hot-mean-ns=<t> selects the original hints store's absolute rule: a region
// is hot iff its mean time per dispatch is >= t, and cold otherwise (no warm
// band). The profile (Inputs/schedule-hot-mean.yaml) has means of 150000,
// exactly 100000 and 99999 ns: with t = 100000 the first two are hot (the
// boundary is inclusive) and the third cold; t = 100001 makes the second cold
// too. The default share rule would make all three matmuls hot.

// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-hot-mean.yaml hot-mean-ns=100000' %s 2>/dev/null | FileCheck %s --check-prefix=MEAN
// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-hot-mean.yaml hot-mean-ns=100001' %s 2>/dev/null | FileCheck %s --check-prefix=ABOVE
// RUN: stc-opt --stc-hot-path-schedule='profile=%S/Inputs/schedule-hot-mean.yaml' %s 2>/dev/null | FileCheck %s --check-prefix=SHARE

// MEAN: func.func @main({{.*}} attributes {stc.hotness = "cold"
// MEAN: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:4"
// MEAN-SAME: tensor<16x16xf32>
// MEAN: linalg.matmul {stc.hotness = "hot", stc.plan = "variants:4"
// MEAN-SAME: tensor<32x32xf32>
// MEAN: linalg.matmul {stc.hotness = "cold", stc.plan = "default"
// MEAN-SAME: tensor<48x48xf32>

// ABOVE: linalg.matmul {stc.hotness = "hot"
// ABOVE-SAME: tensor<16x16xf32>
// ABOVE: linalg.matmul {stc.hotness = "cold"
// ABOVE-SAME: tensor<32x32xf32>
// ABOVE: linalg.matmul {stc.hotness = "cold"
// ABOVE-SAME: tensor<48x48xf32>

// SHARE: linalg.matmul {stc.hotness = "hot"
// SHARE-SAME: tensor<16x16xf32>
// SHARE: linalg.matmul {stc.hotness = "hot"
// SHARE-SAME: tensor<32x32xf32>
// SHARE: linalg.matmul {stc.hotness = "hot"
// SHARE-SAME: tensor<48x48xf32>

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
