// A reduction whose output map has a constant result ((d0, d1) -> (d0, 0),
// a row sum into a ?x1 tensor) is not made a site: MLIR 22's partial-
// reduction tiling, which the reduction schedules use, crashes on it. The
// op keeps its default lowering; a projected-permutation reduction still
// becomes a site.
// RUN: stc-opt --stc-multi-variant='all=true' %s 2>/dev/null | FileCheck %s

#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d0, 0)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @constant_map
// CHECK: linalg.generic
// CHECK-NOT: call @__stc_site
func.func @constant_map(%t: tensor<?x?xf32>, %z: tensor<?x1xf32>) -> tensor<?x1xf32> {
  %s = linalg.generic {indexing_maps = [#in, #col], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<?x?xf32>) outs(%z : tensor<?x1xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  return %s : tensor<?x1xf32>
}

// CHECK-LABEL: func.func @projected
// CHECK: call @__stc_site_projected_linalg_generic_
func.func @projected(%t: tensor<?x?xf32>, %z: tensor<?xf32>) -> tensor<?xf32> {
  %s = linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<?x?xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.addf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %s : tensor<?xf32>
}
