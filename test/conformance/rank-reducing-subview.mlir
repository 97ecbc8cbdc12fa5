// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/rank-reducing-subview.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// (upstream spells the subview types without offset: ?, which MLIR 22 rejects)
// Rank-reducing subviews (a row and a column) of a 2x2 buffer that @main
// allocates and frees itself; no linalg op at all.
// REF-PIPELINE: builtin.module(convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-arith-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i2 = arith.constant 2 : index
  %v0 = arith.constant 0.0 : f32
  %v1 = arith.constant 1.0 : f32
  %v2 = arith.constant 2.0 : f32
  %v3 = arith.constant 3.0 : f32
  %buf = memref.alloc(%i2, %i2) : memref<?x?xf32>
  memref.store %v0, %buf[%i0, %i0] : memref<?x?xf32>
  memref.store %v1, %buf[%i0, %i1] : memref<?x?xf32>
  memref.store %v2, %buf[%i1, %i0] : memref<?x?xf32>
  memref.store %v3, %buf[%i1, %i1] : memref<?x?xf32>
  %row = memref.subview %buf[%i1, 0] [1, %i2] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[1], offset: ?>>
  %col = memref.subview %buf[0, %i1] [%i2, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?], offset: ?>>
  %all = memref.cast %buf : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%all) : (memref<*xf32>) -> ()
  %r = memref.cast %row : memref<?xf32, strided<[1], offset: ?>> to memref<*xf32>
  call @printMemrefF32(%r) : (memref<*xf32>) -> ()
  %c = memref.cast %col : memref<?xf32, strided<[?], offset: ?>> to memref<*xf32>
  call @printMemrefF32(%c) : (memref<*xf32>) -> ()
  memref.dealloc %buf : memref<?x?xf32>
  return
}

// CHECK: Unranked Memref base@ = {{.*}} rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT:      [
// CHECK-SAME:  [0,   1],
// CHECK-NEXT:  [2,   3]
// CHECK-SAME: ]
// CHECK: [2,  3]
// CHECK: [1,  3]
