// stc-lower-blas: after bufferization, an op marked stc.blas becomes a call
// of the runtime's entry point with every operand cast to a fully dynamic
// strided memref, and the entry point is declared once, private, with
// llvm.emit_c_interface (so compiled code calls _mlir_ciface_...). A marked
// op it cannot lower keeps its default lowering, with a remark; a symbol of
// the entry point's name that is something else is an error.

// RUN: stc-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},stc-lower-blas)' %s | FileCheck %s

// CHECK-LABEL: module {
// CHECK: func.func private @stc_rt_blas_matmul_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-NOT: func.func private @stc_rt_blas_matmul_f32
// CHECK-LABEL: func.func @two(
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<32x16xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[B:.*]] = memref.cast %arg1 : memref<16x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[C:.*]] = memref.cast %arg2 : memref<32x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @stc_rt_blas_matmul_f32(%[[A]], %[[B]], %[[C]])
// CHECK: call @stc_rt_blas_matmul_f32(
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @two(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>, %c: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %r = linalg.matmul {stc.blas} ins(%a, %b : tensor<32x16xf32>, tensor<16x8xf32>) outs(%c : tensor<32x8xf32>) -> tensor<32x8xf32>
  %s = linalg.matmul {stc.blas} ins(%a, %b : tensor<32x16xf32>, tensor<16x8xf32>) outs(%r : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %s : tensor<32x8xf32>
}

// -----

// CHECK-LABEL: module {
// CHECK-DAG: func.func private @stc_rt_blas_batch_matmul_f64(memref<?x?x?xf64, strided<[?, ?, ?], offset: ?>>, {{.*}}) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @stc_rt_blas_matvec_f32(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @stc_rt_blas_vecmat_f32(memref<?xf32, strided<[?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?xf32, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @kinds(
// CHECK: call @stc_rt_blas_batch_matmul_f64(
// CHECK: call @stc_rt_blas_matvec_f32(
// CHECK: call @stc_rt_blas_vecmat_f32(
func.func @kinds(%a: tensor<?x8x4xf64>, %b: tensor<?x4x8xf64>, %c: tensor<?x8x8xf64>,
                 %m: tensor<8x4xf32>, %x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<?x8x8xf64>, tensor<8xf32>, tensor<4xf32>) {
  %r = linalg.batch_matmul {stc.blas} ins(%a, %b : tensor<?x8x4xf64>, tensor<?x4x8xf64>) outs(%c : tensor<?x8x8xf64>) -> tensor<?x8x8xf64>
  %v = linalg.matvec {stc.blas} ins(%m, %x : tensor<8x4xf32>, tensor<4xf32>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  %w = linalg.vecmat {stc.blas} ins(%y, %m : tensor<8xf32>, tensor<8x4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %r, %v, %w : tensor<?x8x8xf64>, tensor<8xf32>, tensor<4xf32>
}

// -----

// Integers: the default lowering, and the mark is dropped.
// CHECK-LABEL: func.func @ints(
// CHECK: linalg.matmul ins(
// CHECK-NOT: call
func.func @ints(%a: tensor<8x4xi32>, %b: tensor<4x8xi32>, %c: tensor<8x8xi32>) -> tensor<8x8xi32> {
  // expected-remark @below {{stc-lower-blas: op marked stc.blas keeps its default lowering: its element type is neither f32 nor f64}}
  %r = linalg.matmul {stc.blas} ins(%a, %b : tensor<8x4xi32>, tensor<4x8xi32>) outs(%c : tensor<8x8xi32>) -> tensor<8x8xi32>
  return %r : tensor<8x8xi32>
}

// -----

// expected-error @below {{stc-lower-blas: symbol @stc_rt_blas_matmul_f32 exists and is not the runtime's declaration of that name}}
func.func @stc_rt_blas_matmul_f32() {
  return
}
func.func @clash(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul {stc.blas} ins(%a, %b : tensor<8x4xf32>, tensor<4x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A matmul reading A and B transposed: the entry point gets transposed
// strided views (column-major to BLAS), C as is.
// CHECK-LABEL: func.func @transposed(
// CHECK: %[[A:.*]] = memref.cast %arg0 : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[AT:.*]] = memref.transpose %[[A]] (d0, d1) -> (d1, d0)
// CHECK: %[[B:.*]] = memref.cast %arg1 : memref<3x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[BT:.*]] = memref.transpose %[[B]] (d0, d1) -> (d1, d0)
// CHECK: %[[C:.*]] = memref.cast %arg2
// CHECK-NOT: memref.transpose
// CHECK: call @stc_rt_blas_matmul_f32(%[[AT]], %[[BT]], %[[C]])
func.func @transposed(%t: tensor<4x8xf32>, %u: tensor<3x4xf32>, %f: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %tr = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] {stc.blas}
      ins(%t, %u : tensor<4x8xf32>, tensor<3x4xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %tr : tensor<8x3xf32>
}
