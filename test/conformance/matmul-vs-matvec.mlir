// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/matmul-vs-matvec.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// A matmul of memrefs against a column-by-column matvec over subviews, each
// result allocated by a callee and freed by @main (memref.dealloc).
// REF-PIPELINE: builtin.module(convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-arith-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @product_by_matmul(%lhs: memref<?x?xf32>, %rhs: memref<?x?xf32>) -> memref<?x?xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %lhs, %i0 : memref<?x?xf32>
  %cols = memref.dim %rhs, %i1 : memref<?x?xf32>
  %out = memref.alloc(%rows, %cols) : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<?x?xf32>)
  linalg.matmul ins(%lhs, %rhs : memref<?x?xf32>, memref<?x?xf32>) outs(%out : memref<?x?xf32>)
  return %out : memref<?x?xf32>
}

func.func @product_by_matvec(%lhs: memref<?x?xf32>, %rhs: memref<?x?xf32>) -> memref<?x?xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %lhs, %i0 : memref<?x?xf32>
  %inner = memref.dim %lhs, %i1 : memref<?x?xf32>
  %cols = memref.dim %rhs, %i1 : memref<?x?xf32>
  %out = memref.alloc(%rows, %cols) : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<?x?xf32>)
  scf.for %j = %i0 to %cols step %i1 {
    %col = memref.subview %rhs[0, %j] [%inner, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?], offset: ?>>
    %dst = memref.subview %out[0, %j] [%rows, 1] [1, 1] : memref<?x?xf32> to memref<?xf32, strided<[?], offset: ?>>
    linalg.matvec ins(%lhs, %col : memref<?x?xf32>, memref<?xf32, strided<[?], offset: ?>>)
                  outs(%dst : memref<?xf32, strided<[?], offset: ?>>)
  }
  return %out : memref<?x?xf32>
}

func.func @main() {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %m = arith.constant 5 : index
  %k = arith.constant 3 : index
  %n = arith.constant 2 : index
  %thirteen = arith.constant 13.0 : f32
  %seventeen = arith.constant 17.0 : f32
  %a = memref.alloc(%m, %k) : memref<?x?xf32>
  %b = memref.alloc(%k, %n) : memref<?x?xf32>
  linalg.fill ins(%thirteen : f32) outs(%a : memref<?x?xf32>)
  linalg.fill ins(%seventeen : f32) outs(%b : memref<?x?xf32>)
  memref.store %thirteen, %b[%i0, %i0] : memref<?x?xf32>
  %p1 = call @product_by_matmul(%a, %b) : (memref<?x?xf32>, memref<?x?xf32>) -> memref<?x?xf32>
  %p2 = call @product_by_matvec(%a, %b) : (memref<?x?xf32>, memref<?x?xf32>) -> memref<?x?xf32>
  scf.for %i = %i0 to %m step %i1 {
    scf.for %j = %i0 to %n step %i1 {
      %x = memref.load %p1[%i, %j] : memref<?x?xf32>
      %y = memref.load %p2[%i, %j] : memref<?x?xf32>
      %same = arith.cmpf oeq, %x, %y : f32
      cf.assert %same, "matmul and matvec disagree"
    }
  }
  %printable = memref.cast %p2 : memref<?x?xf32> to memref<*xf32>
  call @printMemrefF32(%printable) : (memref<*xf32>) -> ()
  memref.dealloc %p1 : memref<?x?xf32>
  memref.dealloc %p2 : memref<?x?xf32>
  memref.dealloc %a : memref<?x?xf32>
  memref.dealloc %b : memref<?x?xf32>
  return
}

// CHECK: Unranked Memref base@ = {{.*}} rank = 2 offset = 0 sizes = [5, 2] strides = [2, 1] data =
// CHECK-NEXT:      [
// CHECK-SAME:  [611,   663],
// CHECK-NEXT:  [611,   663],
// CHECK-NEXT:  [611,   663],
// CHECK-NEXT:  [611,   663],
// CHECK-NEXT:  [611,   663]
// CHECK-SAME: ]
