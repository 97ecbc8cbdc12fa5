// A schedule whose application fails on a site (here mm_only_generic, which
// casts its target to linalg.generic: a linalg.matmul is not one) is dropped
// for that site with a remark; the other schedules still make variants, and
// no half-transformed variant is left behind.

// RUN: stc-opt --verify-diagnostics --stc-multi-variant='variant-library=%S/Inputs/library.yaml schedules=mm_only_generic,mm_rows8_any' %s | FileCheck %s

// CHECK-LABEL: func.func @mm(
// CHECK: func.func private @[[SITE:__stc_site_mm_linalg_matmul_[0-9a-f]+]](
// CHECK-SAME: variants = [{eligibility = "always", name = "reference", {{.*}}}, {eligibility = "always", name = "mm_rows8_any", {{.*}}}]}
// CHECK-NOT: mm_only_generic
// CHECK: func.func private @[[SITE]]__ref(
// CHECK: func.func private @[[SITE]]__mm_rows8_any(
// CHECK-NOT: mm_only_generic
func.func @mm(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  // expected-remark@+1 {{schedule 'mm_only_generic' does not apply to site 'mm/linalg.matmul#}}
  %r = linalg.matmul {stc.plan = "variants:2"} ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
