// An instrumented module still lowers to pure LLVM dialect with the upstream
// pipeline (NOTES-mlir-c-api.md), and the region timer functions become
// external llvm.func declarations with the C signatures of rt_region.h.

// RUN: stc-opt --stc-instrument %s -o %t.instrumented
// RUN: mlir-opt %t.instrumented --pass-pipeline='builtin.module(one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},cse,canonicalize,convert-linalg-to-loops,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts)' -o %t.llvm
// RUN: FileCheck %s < %t.llvm
// Nothing but LLVM dialect ops is left: every line is an llvm op, a block
// label, a closing brace or the module.
// RUN: not grep -Ev '^ *(llvm\.|%[^ ]+ = llvm\.|\^bb[0-9]+|\}|module \{|$)' %t.llvm

// CHECK-DAG: llvm.func @stc_rt_region_begin(!llvm.ptr) -> i64
// CHECK-DAG: llvm.func @stc_rt_region_end(!llvm.ptr, i64, i64)
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("mlp/linalg.matmul#{{[0-9a-f]+}}\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("mlp/linalg.generic#{{[0-9a-f]+}}\00")
// CHECK-DAG: llvm.mlir.global internal constant @{{.*}}("mlp/func.func#{{[0-9a-f]+}}\00")
// CHECK-LABEL: llvm.func @mlp(
// CHECK: llvm.call @stc_rt_region_begin(
// CHECK: llvm.call @stc_rt_region_begin(
// CHECK: llvm.call @mlp__stc_region_0(
// CHECK: llvm.call @stc_rt_region_end(
// CHECK: llvm.call @stc_rt_region_begin(
// CHECK: llvm.call @mlp__stc_region_1(
// CHECK: llvm.call @stc_rt_region_end(
// CHECK: llvm.call @stc_rt_region_end(
// CHECK: llvm.return
// CHECK-LABEL: llvm.func @mlp__stc_region_0(
// CHECK-LABEL: llvm.func @mlp__stc_region_1(

#map_bias = affine_map<(d0, d1) -> (d1)>
#map_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %bias: tensor<32xf32>) -> tensor<8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32xf32>) -> tensor<8x32xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>)
                      outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
  %out = linalg.generic {indexing_maps = [#map_bias, #map_id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%bias : tensor<32xf32>) outs(%mm : tensor<8x32xf32>) {
  ^bb0(%b: f32, %v: f32):
    %sum = arith.addf %v, %b : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<8x32xf32>
  return %out : tensor<8x32xf32>
}
