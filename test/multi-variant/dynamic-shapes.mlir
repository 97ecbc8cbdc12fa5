// A site with a dynamic dimension gets only the schedules that promise
// dynamic shapes (stc.dynamic / dynamic: yes); a static site also gets the
// static-only ones, marked eligible "static-shape" in its descriptor.

// RUN: stc-opt --stc-multi-variant='variant-library=%S/Inputs/library.yaml schedules=mm_rows8_any,mm_rows8_static' %s | FileCheck %s
// Every built-in on dynamic shapes: the shape-safe ones apply without a
// remark on the dynamic sites, and none promised only for static shapes
// (reduction_split8_vec: "divisible") is tried there.
// RUN: stc-opt --stc-multi-variant='all=true' %s -o %t 2> %t.err
// RUN: not grep "site 'dyn" %t.err
// RUN: FileCheck %s --check-prefix=BUILTIN < %t

// CHECK-LABEL: func.func @dyn(
// CHECK: call @[[DYN:__stc_site_dyn_linalg_matmul_[0-9a-f]+]](
// CHECK: func.func private @[[DYN]](
// CHECK-SAME: {eligibility = "always", name = "mm_rows8_any", revision = "1", symbol = @[[DYN]]__mm_rows8_any, workspace_bytes = 0 : i64}]
// CHECK: func.func private @[[DYN]]__ref(%arg0: tensor<?x?xf32>
// CHECK: func.func private @[[DYN]]__mm_rows8_any(
// CHECK-SAME: stc.schedule = "mm_rows8_any", stc.variant_of = @[[DYN]]}
// CHECK-NOT: stc.variant_of = @[[DYN]]
// CHECK-LABEL: func.func @static(
// CHECK: call @[[ST:__stc_site_static_linalg_matmul_[0-9a-f]+]](
// CHECK: func.func private @[[ST]](
// CHECK-SAME: {eligibility = "static-shape", name = "mm_rows8_static", revision = "1", symbol = @[[ST]]__mm_rows8_static, workspace_bytes = 0 : i64}]
// CHECK: func.func private @[[ST]]__mm_rows8_any(
// CHECK: func.func private @[[ST]]__mm_rows8_static(
// CHECK-SAME: stc.schedule = "mm_rows8_static", stc.variant_of = @[[ST]]}

// BUILTIN-LABEL: func.func @dyn(
// BUILTIN: stc.schedule = "matmul_tile32_vec", stc.variant_of = @__stc_site_dyn_
// BUILTIN-LABEL: func.func @dynred(
// BUILTIN-NOT: stc.schedule = "reduction_split8_vec"
// BUILTIN: stc.schedule = "reduction_tile8x64_vec", stc.variant_of = @__stc_site_dynred_
// BUILTIN-NOT: stc.schedule = "reduction_split8_vec"
// A dynamic pooling site: the pooling schedules are static-only, so only
// its reference.
// BUILTIN-LABEL: func.func @dynpool(
// BUILTIN: func.func private @__stc_site_dynpool_linalg_pooling_nhwc_max_{{[0-9a-f]+}}__ref(
// BUILTIN-NOT: stc.schedule = "pooling_nhwc_max_rows_vec"
// BUILTIN-LABEL: func.func @static(

func.func @dyn(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul {stc.plan = "variants:8"} ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @dynred(%x: tensor<?x?xf32>, %r0: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%r0 : tensor<?xf32>) attrs = {stc.plan = "variants:8"} {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @dynpool(%i: tensor<1x?x?x8xf32>, %o: tensor<1x?x?x8xf32>) -> tensor<1x?x?x8xf32> {
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>, stc.plan = "variants:8"} ins(%i, %w : tensor<1x?x?x8xf32>, tensor<2x2xf32>) outs(%o : tensor<1x?x?x8xf32>) -> tensor<1x?x?x8xf32>
  return %r : tensor<1x?x?x8xf32>
}

func.func @static(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul {stc.plan = "variants:8"} ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
