// Region ids (passes/region_id.h): the format, the ".<n>" suffix for
// identical ops in one function, and stability: the same program printed in
// generic form, with other SSA names, other locations and its functions
// reordered keeps every id; a changed shape, payload or attribute changes the
// id of that op only; an stc.* attribute changes nothing.

// RUN: stc-opt --stc-instrument %s | FileCheck %s

// RUN: stc-opt --stc-instrument %s | grep -o 'stc.region = "[^"]*"' | LC_ALL=C sort > %t.base
// RUN: stc-opt --mlir-print-op-generic %s | stc-opt --stc-instrument | grep -o 'stc.region = "[^"]*"' | LC_ALL=C sort > %t.generic
// RUN: diff %t.base %t.generic
// RUN: stc-opt --stc-instrument %S/Inputs/region-ids-reordered.mlir | grep -o 'stc.region = "[^"]*"' | LC_ALL=C sort > %t.reordered
// RUN: diff %t.base %t.reordered

// RUN: stc-opt --stc-instrument %S/Inputs/region-ids-changed.mlir | grep -o 'stc.region = "[^"]*"' | LC_ALL=C sort > %t.changed
// RUN: LC_ALL=C comm -13 %t.base %t.changed | FileCheck %s --check-prefix=NEW --implicit-check-not=stc.region
// RUN: LC_ALL=C comm -23 %t.base %t.changed | FileCheck %s --check-prefix=GONE --implicit-check-not=stc.region
// RUN: LC_ALL=C comm -12 %t.base %t.changed | FileCheck %s --check-prefix=KEPT --implicit-check-not=stc.region

// Instrumenting twice changes nothing.
// RUN: stc-opt --stc-instrument %s -o %t.once
// RUN: stc-opt --stc-instrument %t.once -o %t.twice
// RUN: diff %t.once %t.twice

#map = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @main(
// CHECK-SAME: stc.region = "main/func.func#{{[0-9a-f]{8}"}}
// CHECK-LABEL: func.func private @main__stc_region_0(
// CHECK: linalg.matmul {stc.region = "[[MM:main/linalg.matmul#[0-9a-f]{8}]]"}
// CHECK-LABEL: func.func private @main__stc_region_1(
// CHECK: linalg.matmul {stc.region = "[[MM]].1"}
// CHECK-LABEL: func.func private @main__stc_region_2(
// CHECK: = linalg.generic
// CHECK-SAME: stc.region = "[[GEN_ADD:main/linalg.generic#[0-9a-f]{8}]]"
// Another payload is another op: its own hash, not a ".1" of the first.
// CHECK-LABEL: func.func private @main__stc_region_3(
// CHECK: = linalg.generic
// CHECK-SAME: stc.region = "main/linalg.generic#{{[0-9a-f]{8}"}}
// CHECK-NOT: stc.region = "[[GEN_ADD]]
// The fill is data movement, not a region: it stays in @main.
// CHECK-NOT: __stc_region_4
// CHECK-LABEL: func.func @helper(
// CHECK-SAME: stc.region = "helper/func.func#{{[0-9a-f]{8}"}}
// CHECK-LABEL: func.func private @helper__stc_region_0(
// CHECK: linalg.add {stc.region = "helper/linalg.add#{{[0-9a-f]{8}"}}}
func.func @main(%a: tensor<16x32xf32>, %b: tensor<32x8xf32>,
                %c: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%c : tensor<16x8xf32>) -> tensor<16x8xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<16x32xf32>, tensor<32x8xf32>)
                     outs(%0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<16x8xf32>) outs(%1 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<16x8xf32>) outs(%2 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %in, %out : f32
    linalg.yield %p : f32
  } -> tensor<16x8xf32>
  %zero = arith.constant 0.0 : f32
  %4 = linalg.fill ins(%zero : f32) outs(%3 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}

func.func @helper(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = linalg.add ins(%x, %y : tensor<8x8xf32>, tensor<8x8xf32>)
                  outs(%y : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// The changed program (Inputs/region-ids-changed.mlir): the second generic's
// payload, a new attribute on the first generic, and @helper's shapes.
// NEW: stc.region = "helper/func.func#
// NEW: stc.region = "helper/linalg.add#
// NEW: stc.region = "main/linalg.generic#
// NEW: stc.region = "main/linalg.generic#
// GONE: stc.region = "helper/func.func#
// GONE: stc.region = "helper/linalg.add#
// GONE: stc.region = "main/linalg.generic#
// GONE: stc.region = "main/linalg.generic#
// An stc.* attribute on the first matmul and @main's changed body keep ids.
// KEPT: stc.region = "main/func.func#
// KEPT: stc.region = "main/linalg.matmul#{{[0-9a-f]{8}"}}
// KEPT: stc.region = "main/linalg.matmul#{{[0-9a-f]{8}\.1"}}
