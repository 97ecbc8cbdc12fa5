// stc-site-results-in-place, on bufferized site functions: a variant that
// returns a buffer other than its init argument copies it there and returns
// the argument, when its site's reference works in place; a variant whose
// reference does not, or whose results do not match its trailing
// arguments, is left alone. drop-equivalent-buffer-results (twice: the
// dispatch comes before its reference) then gives every function of the
// site the signature (memrefs...) -> ().

// RUN: stc-opt --split-input-file --pass-pipeline='builtin.module(stc-site-results-in-place)' %s | FileCheck %s
// RUN: stc-opt --split-input-file --pass-pipeline='builtin.module(stc-site-results-in-place,drop-equivalent-buffer-results,drop-equivalent-buffer-results)' %s | FileCheck %s --check-prefix=DROP

// CHECK-LABEL: func.func private @S__out_of_place(
// CHECK-SAME: %[[A:.*]]: memref<?x?xf32>, %[[C:.*]]: memref<?x?xf32>) -> memref<?x?xf32>
// CHECK: %[[T:.*]] = memref.alloc
// CHECK: memref.copy %[[T]], %[[C]] : memref<?x?xf32> to memref<?x?xf32>
// CHECK-NEXT: return %[[C]] : memref<?x?xf32>
// DROP-LABEL: func.func @caller(
// DROP: call @S(%{{.*}}, %{{.*}}) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
// DROP: func.func private @S(%{{.*}}: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>) attributes
// DROP: func.func private @S__ref(%{{.*}}: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>) attributes
// DROP: func.func private @S__out_of_place(%{{.*}}: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>) attributes
func.func @caller(%a: memref<?x?xf32>, %c: memref<?x?xf32>) -> memref<?x?xf32> {
  %r = call @S(%a, %c) : (memref<?x?xf32>, memref<?x?xf32>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}
func.func private @S(%a: memref<?x?xf32>, %c: memref<?x?xf32>) -> memref<?x?xf32>
    attributes {stc.site = "s", stc.site_descriptor = {reference = 0 : i64, variants = [{name = "reference", symbol = @S__ref}, {name = "out_of_place", symbol = @S__out_of_place}]}} {
  %r = call @S__ref(%a, %c) : (memref<?x?xf32>, memref<?x?xf32>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}
func.func private @S__ref(%a: memref<?x?xf32>, %c: memref<?x?xf32>) -> memref<?x?xf32> attributes {stc.reference} {
  linalg.copy ins(%a : memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return %c : memref<?x?xf32>
}
func.func private @S__out_of_place(%a: memref<?x?xf32>, %c: memref<?x?xf32>) -> memref<?x?xf32> attributes {stc.variant_of = @S} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %c, %c0 : memref<?x?xf32>
  %n = memref.dim %c, %c1 : memref<?x?xf32>
  %t = memref.alloc(%m, %n) : memref<?x?xf32>
  linalg.copy ins(%a : memref<?x?xf32>) outs(%t : memref<?x?xf32>)
  return %t : memref<?x?xf32>
}

// -----

// The reference returns a new buffer (its init is not written): callers may
// rely on the init's old value, so the variant must not write it.
// CHECK-LABEL: func.func private @T__v(
// CHECK-NOT: memref.copy
// CHECK: return %{{.*}} : memref<4xf32>
func.func private @T(%c: memref<4xf32>) -> memref<4xf32>
    attributes {stc.site = "t", stc.site_descriptor = {reference = 0 : i64, variants = [{name = "reference", symbol = @T__ref}]}} {
  %r = call @T__ref(%c) : (memref<4xf32>) -> memref<4xf32>
  return %r : memref<4xf32>
}
func.func private @T__ref(%c: memref<4xf32>) -> memref<4xf32> attributes {stc.reference} {
  %t = memref.alloc() : memref<4xf32>
  return %t : memref<4xf32>
}
func.func private @T__v(%c: memref<4xf32>) -> memref<4xf32> attributes {stc.variant_of = @T} {
  %t = memref.alloc() : memref<4xf32>
  return %t : memref<4xf32>
}
