// stc-hoist-accumulators: a k loop's accumulator tile (a transfer_read /
// transfer_write pair of one memref at loop-invariant indices) is read
// before the loop, carried in registers and written after it. Left in
// place: a pair whose memref another op of the loop writes, and a pair on
// a view (the pipeline folds views first: fold-memref-alias-ops, cse).
// Whole programs through the pass are compared with the upstream route by
// test/e2e and test/tune-hot-paths (soundness, forced variants).
// RUN: stc-opt --split-input-file --stc-hoist-accumulators %s | FileCheck %s

// CHECK-LABEL: func.func @k_loop
// CHECK: %[[ACC:.*]] = vector.transfer_read %arg2[%arg3, %arg4]
// CHECK: %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[IT:.*]] = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK-NOT: vector.transfer_write
// CHECK: scf.yield
// CHECK: vector.transfer_write %[[SUM]], %arg2[%arg3, %arg4]
func.func @k_loop(%a: memref<64x128xf32>, %b: memref<128x96xf32>, %c: memref<64x96xf32>,
                  %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c128 step %c8 {
    %av = vector.transfer_read %a[%i, %k], %pad {in_bounds = [true, true]} : memref<64x128xf32>, vector<8x8xf32>
    %bv = vector.transfer_read %b[%k, %j], %pad {in_bounds = [true, true]} : memref<128x96xf32>, vector<8x32xf32>
    %cv = vector.transfer_read %c[%i, %j], %pad {in_bounds = [true, true]} : memref<64x96xf32>, vector<8x32xf32>
    %r = vector.contract {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                          iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
         %av, %bv, %cv : vector<8x8xf32>, vector<8x32xf32> into vector<8x32xf32>
    vector.transfer_write %r, %c[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, memref<64x96xf32>
  }
  return
}

// -----

// Another write to the accumulator's memref in the loop: not hoisted.
// CHECK-LABEL: func.func @other_write
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: vector.transfer_read %arg1
// CHECK: vector.transfer_write
// CHECK: memref.store
func.func @other_write(%a: memref<64x128xf32>, %c: memref<64x96xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c128 step %c8 {
    %av = vector.transfer_read %a[%i, %k], %pad {in_bounds = [true]} : memref<64x128xf32>, vector<32xf32>
    %cv = vector.transfer_read %c[%i, %j], %pad {in_bounds = [true]} : memref<64x96xf32>, vector<32xf32>
    %r = arith.addf %av, %cv : vector<32xf32>
    vector.transfer_write %r, %c[%i, %j] {in_bounds = [true]} : vector<32xf32>, memref<64x96xf32>
    memref.store %pad, %c[%k, %j] : memref<64x96xf32>
  }
  return
}

// -----

// A pair on a view: upstream leaves it (the pipeline folds views first).
// CHECK-LABEL: func.func @on_a_view
// CHECK-NOT: iter_args
// CHECK: vector.transfer_write {{.*}}, %subview[
func.func @on_a_view(%a: memref<64x128xf32>, %c: memref<64x96xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %pad = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c128 step %c8 {
    %tile = memref.subview %c[%i, %j] [8, 32] [1, 1] : memref<64x96xf32> to memref<8x32xf32, strided<[96, 1], offset: ?>>
    %av = vector.transfer_read %a[%i, %k], %pad {in_bounds = [true]} : memref<64x128xf32>, vector<32xf32>
    %cv = vector.transfer_read %tile[%c0, %c0], %pad {in_bounds = [true]} : memref<8x32xf32, strided<[96, 1], offset: ?>>, vector<32xf32>
    %r = arith.addf %av, %cv : vector<32xf32>
    vector.transfer_write %r, %tile[%c0, %c0] {in_bounds = [true]} : vector<32xf32>, memref<8x32xf32, strided<[96, 1], offset: ?>>
  }
  return
}
