// An op of a kind stc has no variant schedules for (linalg.dot,
// linalg.mmt4d), planned for variants by the scheduling pass, is no site,
// and a remark names it and says why (issue 11: no silent non-sites). A
// matmul beside them still becomes a site.
// RUN: stc-opt --tune-hot-paths --hot-path-options='hot-share=1.0 cold-share=1.0 min-samples=0 variants-per-hot=2' %s -o /dev/null 2>&1 | FileCheck %s
// CHECK-DAG: remark: stc-multi-variant: 'dot/linalg.dot#{{[0-9a-f]+}}' (linalg.dot) is planned for variants but is not a site
// CHECK-DAG: remark: stc-multi-variant: 'mmt4d/linalg.mmt4d#{{[0-9a-f]+}}' (linalg.mmt4d) is planned for variants but is not a site
// CHECK-NOT: 'mm/linalg.matmul#{{[0-9a-f]+}}' is planned for variants but is not a site

func.func @dot(%a: tensor<1024xf32>, %b: tensor<1024xf32>, %c: tensor<f32>) -> tensor<f32> {
  %r = linalg.dot ins(%a, %b : tensor<1024xf32>, tensor<1024xf32>) outs(%c : tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

func.func @mmt4d(%a: tensor<4x16x8x1xf32>, %b: tensor<2x16x8x1xf32>, %c: tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32> {
  %r = linalg.mmt4d ins(%a, %b : tensor<4x16x8x1xf32>, tensor<2x16x8x1xf32>) outs(%c : tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32>
  return %r : tensor<4x2x8x8xf32>
}

func.func @mm(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
