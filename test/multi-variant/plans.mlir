// Which ops become sites, and how many variants they get: stc.plan decides
// ("default" and no plan: none), all=true takes every tunable op, and
// max-variants caps both. Non-tunable ops (elementwise generic, fill) and
// ops on memrefs are never sites.

// RUN: stc-opt --stc-multi-variant='schedules=matmul_mkn,matmul_tile16,matmul_tile32' %s | FileCheck %s --check-prefix=PLAN
// RUN: stc-opt --stc-multi-variant='schedules=matmul_mkn,matmul_tile16,matmul_tile32 max-variants=1' %s | FileCheck %s --check-prefix=CAP
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_mkn,matmul_tile16,matmul_tile32' %s | FileCheck %s --check-prefix=ALL
// Idempotent: the functions the pass made are never sites again.
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_mkn,matmul_tile16,matmul_tile32' %s -o %t.once
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_mkn,matmul_tile16,matmul_tile32' %t.once -o %t.twice
// RUN: diff %t.once %t.twice

// PLAN-LABEL: func.func @hot(
// PLAN: call @__stc_site_hot_linalg_matmul_
// PLAN: __stc_site_hot_linalg_matmul_{{[0-9a-f]+}}__ref(
// PLAN: __stc_site_hot_linalg_matmul_{{[0-9a-f]+}}__matmul_mkn(
// PLAN: __stc_site_hot_linalg_matmul_{{[0-9a-f]+}}__matmul_tile16(
// PLAN-NOT: __stc_site_hot_linalg_matmul_{{[0-9a-f]+}}__matmul_tile32(
// PLAN-LABEL: func.func @cold(
// PLAN-NEXT: linalg.matmul {stc.plan = "default"}
// PLAN-LABEL: func.func @unplanned(
// PLAN-NEXT: linalg.matmul ins
// PLAN-LABEL: func.func @not_tunable(
// PLAN: linalg.fill
// PLAN-NEXT: linalg.generic
// PLAN-LABEL: func.func @on_memrefs(
// PLAN-NEXT: linalg.matmul
// PLAN-NOT: stc.variant_of

// CAP-COUNT-1: stc.variant_of = @__stc_site_hot_
// CAP-NOT: stc.variant_of

// ALL-COUNT-3: stc.variant_of = @__stc_site_hot_
// ALL-COUNT-3: stc.variant_of = @__stc_site_cold_
// ALL-COUNT-3: stc.variant_of = @__stc_site_unplanned_
// ALL-NOT: stc.variant_of
// ALL-NOT: stc.site = "not_tunable
// ALL-NOT: stc.site = "on_memrefs

func.func @hot(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul {stc.plan = "variants:2"} ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

func.func @cold(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul {stc.plan = "default"} ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

func.func @unplanned(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

func.func @not_tunable(%a: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %z = linalg.fill {stc.plan = "variants:2"} ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<32x32xf32>) outs(%z : tensor<32x32xf32>) attrs = {stc.plan = "variants:2"} {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

func.func @on_memrefs(%a: memref<32x16xf32>, %b: memref<16x32xf32>, %c: memref<32x32xf32>) {
  linalg.matmul {stc.plan = "variants:2"} ins(%a, %b : memref<32x16xf32>, memref<16x32xf32>) outs(%c : memref<32x32xf32>)
  return
}
