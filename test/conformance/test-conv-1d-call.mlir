// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-conv-1d-call.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// A 1-D convolution (linalg.conv_1d) on memrefs that @main allocates and frees.
// (upstream also tiles the conv with a transform script in a second RUN
// line; the schedule does not change the answer, and stc picks its own.)
// REF-PIPELINE: builtin.module(convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-arith-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @filled(%d1: index, %v: f32) -> memref<?xf32> {
  %b = memref.alloc(%d1) : memref<?xf32>
  linalg.fill ins(%v : f32) outs(%b : memref<?xf32>)
  return %b : memref<?xf32>
}

func.func @conv(%input: memref<?xf32>, %filter: memref<?xf32>, %output: memref<?xf32>) {
  linalg.conv_1d  ins(%input, %filter : memref<?xf32>, memref<?xf32>) outs(%output : memref<?xf32>)
  return
}

func.func @main() {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i3 = arith.constant 3 : index
  %i6 = arith.constant 6 : index
  %i8 = arith.constant 8 : index
  %ten = arith.constant 10.0 : f32
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %f = call @filled(%i3, %two) : (index, f32) -> memref<?xf32>
  %x = call @filled(%i8, %two) : (index, f32) -> memref<?xf32>
  %y = call @filled(%i6, %zero) : (index, f32) -> memref<?xf32>
  memref.store %ten, %x[%i3] : memref<?xf32>
  call @conv(%x, %f, %y) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  %p = memref.cast %y : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%p) : (memref<*xf32>) -> ()
  memref.dealloc %f : memref<?xf32>
  memref.dealloc %x : memref<?xf32>
  memref.dealloc %y : memref<?xf32>
  return
}

// CHECK:       Unranked Memref {{.*}}
// CHECK-NEXT:  [12, 28, 28, 28, 12, 12]
