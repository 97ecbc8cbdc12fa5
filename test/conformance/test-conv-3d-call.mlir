// Upstream case: mlir/test/Integration/Dialect/Linalg/CPU/test-conv-3d-call.mlir
// (LLVM Project, MLIR 22; Apache-2.0 WITH LLVM-exception). The program is
// this project's own equivalent; the CHECK lines are upstream's, the oracle.
// A 3-D convolution (linalg.conv_3d) on memrefs that @main allocates and frees.
// (upstream also tiles the conv with a transform script in a second RUN
// line; the schedule does not change the answer, and stc picks its own.)
// REF-PIPELINE: builtin.module(convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-arith-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)
// RUN: %S/Inputs/run-case.sh ref %s | FileCheck %s
// RUN: %S/Inputs/run-case.sh default %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh all-hot %s %t.d | FileCheck %s
// RUN: %S/Inputs/run-case.sh cached %s %t.d | FileCheck %s

func.func private @printMemrefF32(memref<*xf32>)

func.func @filled(%d1: index, %d2: index, %d3: index, %v: f32) -> memref<?x?x?xf32> {
  %b = memref.alloc(%d1, %d2, %d3) : memref<?x?x?xf32>
  linalg.fill ins(%v : f32) outs(%b : memref<?x?x?xf32>)
  return %b : memref<?x?x?xf32>
}

func.func @conv(%input: memref<?x?x?xf32>, %filter: memref<?x?x?xf32>, %output: memref<?x?x?xf32>) {
  linalg.conv_3d  ins(%input, %filter : memref<?x?x?xf32>, memref<?x?x?xf32>) outs(%output : memref<?x?x?xf32>)
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
  %f = call @filled(%i3, %i3, %i3, %two) : (index, index, index, f32) -> memref<?x?x?xf32>
  %x = call @filled(%i8, %i8, %i8, %two) : (index, index, index, f32) -> memref<?x?x?xf32>
  %y = call @filled(%i6, %i6, %i6, %zero) : (index, index, index, f32) -> memref<?x?x?xf32>
  memref.store %ten, %x[%i0, %i0, %i3] : memref<?x?x?xf32>
  call @conv(%x, %f, %y) : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>) -> ()
  %p = memref.cast %y : memref<?x?x?xf32> to memref<*xf32>
  call @printMemrefF32(%p) : (memref<*xf32>) -> ()
  memref.dealloc %f : memref<?x?x?xf32>
  memref.dealloc %x : memref<?x?x?xf32>
  memref.dealloc %y : memref<?x?x?xf32>
  return
}

// CHECK:       Unranked Memref {{.*}}
// CHECK-NEXT:  [
// CHECK-SAME:   [
// CHECK-SAME:    [108,    124,    124,    124,    108,    108],
// CHECK-COUNT-5: [108,    108,    108,    108,    108,    108]
// CHECK-SAME:   ],
// CHECK-NEXT:   [
// CHECK-COUNT-6: [108,    108,    108,    108,    108,    108]
// CHECK-SAME:   ],
// CHECK-NEXT:   [
// CHECK-COUNT-6: [108,    108,    108,    108,    108,    108]
// CHECK-SAME:   ],
// CHECK-NEXT:   [
// CHECK-COUNT-6: [108,    108,    108,    108,    108,    108]
// CHECK-SAME:   ],
// CHECK-NEXT:   [
// CHECK-COUNT-6: [108,    108,    108,    108,    108,    108]
// CHECK-SAME:   ],
// CHECK-NEXT:   [
// CHECK-COUNT-6: [108,    108,    108,    108,    108,    108]
// CHECK-SAME:   ]
// CHECK-SAME:  ]
