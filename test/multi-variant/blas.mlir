// Vendor-BLAS variants (schedules with stc.requires = "blas"): offered only
// for ops the runtime's entry points compute exactly (include/stc/rt_blas.h)
// - matmul, batch_matmul, matvec, vecmat with default maps, f32 or f64
// throughout - for static and dynamic shapes alike, with eligibility "blas"
// in the descriptor and the op marked stc.blas for stc-lower-blas. Other
// schedules still apply where BLAS does not.

// RUN: stc-opt --split-input-file --stc-multi-variant='all=true schedules=matmul_blas,batch_matmul_blas,matvec_blas,vecmat_blas,matmul_mkn' %s 2>&1 | FileCheck %s

// CHECK-LABEL: func.func @f32_static(
// CHECK: stc.site_descriptor = {{.*}}variants = [{eligibility = "always", name = "reference"{{.*}}}, {eligibility = "blas", name = "matmul_blas", revision = "1", symbol = @[[S:__stc_site_[a-z0-9_]+]]__matmul_blas, workspace_bytes = 0 : i64}, {eligibility = "always", name = "matmul_mkn"
// CHECK: func.func private @[[S]]__matmul_blas(
// CHECK-SAME: stc.schedule = "matmul_blas"
// CHECK-NEXT: linalg.matmul {stc.blas} ins
func.func @f32_static(%a: tensor<32x16xf32>, %b: tensor<16x8xf32>, %c: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x8xf32>) outs(%c : tensor<32x8xf32>) -> tensor<32x8xf32>
  return %r : tensor<32x8xf32>
}

// -----

// The entry points read sizes at run time: dynamic shapes get it too.
// CHECK-LABEL: func.func @f64_dynamic(
// CHECK: static_shape = false, variants = [{{.*}}{eligibility = "blas", name = "matmul_blas"
// CHECK: linalg.matmul {stc.blas} ins({{.*}} : tensor<?x?xf64>, tensor<?x?xf64>)
func.func @f64_dynamic(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) outs(%c : tensor<?x?xf64>) -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}

// -----

// No BLAS for integers, mixed precision, or maps other than a (transposed)
// matmul's (here A broadcast along m); matmul_mkn still applies.
// CHECK-LABEL: func.func @not_blas(
// CHECK-NOT: matmul_blas
// CHECK-COUNT-3: name = "matmul_mkn"
// CHECK-NOT: matmul_blas
func.func @not_blas(%a: tensor<8x4xi32>, %b: tensor<4x8xi32>, %c: tensor<8x8xi32>,
                    %h: tensor<8x4xf16>, %hb: tensor<4x8xf16>, %f: tensor<8x8xf32>,
                    %v: tensor<4xf32>, %u: tensor<4x8xf32>) -> (tensor<8x8xi32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<8x4xi32>, tensor<4x8xi32>) outs(%c : tensor<8x8xi32>) -> tensor<8x8xi32>
  %m = linalg.matmul ins(%h, %hb : tensor<8x4xf16>, tensor<4x8xf16>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %tr = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%v, %u : tensor<4xf32>, tensor<4x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r, %m, %tr : tensor<8x8xi32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// Transposed operands (A^T B^T here, as a matmul's indexing_maps write
// them) are BLAS too: stc-lower-blas hands the entry point transposed views.
// CHECK-LABEL: func.func @transposed(
// CHECK: {eligibility = "blas", name = "matmul_blas"
// CHECK: linalg.matmul indexing_maps = [#map{{[0-9]*}}, #map{{[0-9]*}}, #map{{[0-9]*}}] {stc.blas}
func.func @transposed(%t: tensor<4x8xf32>, %u: tensor<3x4xf32>, %f: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %tr = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%t, %u : tensor<4x8xf32>, tensor<3x4xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %tr : tensor<8x3xf32>
}

// -----

// CHECK-LABEL: func.func @other_kinds(
// CHECK-DAG: {eligibility = "blas", name = "batch_matmul_blas"
// CHECK-DAG: {eligibility = "blas", name = "matvec_blas"
// CHECK-DAG: {eligibility = "blas", name = "vecmat_blas"
// CHECK-DAG: linalg.batch_matmul {stc.blas}
// CHECK-DAG: linalg.matvec {stc.blas}
// CHECK-DAG: linalg.vecmat {stc.blas}
func.func @other_kinds(%a: tensor<2x8x4xf32>, %b: tensor<2x4x8xf32>, %c: tensor<2x8x8xf32>,
                       %m: tensor<8x4xf32>, %x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<2x8x8xf32>, tensor<8xf32>, tensor<4xf32>) {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%c : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %v = linalg.matvec ins(%m, %x : tensor<8x4xf32>, tensor<4xf32>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  %w = linalg.vecmat ins(%y, %m : tensor<8xf32>, tensor<8x4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %r, %v, %w : tensor<2x8x8xf32>, tensor<8xf32>, tensor<4xf32>
}
