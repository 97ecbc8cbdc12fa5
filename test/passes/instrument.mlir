// stc-instrument: the region timer ABI (include/stc/rt_region.h). Each
// computing op is outlined into a private no_inline function and its call is
// bracketed by stc_rt_region_begin / stc_rt_region_end; each function body is
// begun at entry and ended before every return; ids are NUL-terminated
// constant globals.

// RUN: stc-opt --split-input-file --stc-instrument %s | FileCheck %s
// RUN: stc-opt --split-input-file --stc-instrument='functions=false' %s | FileCheck %s --check-prefix=NOFUNC
// RUN: stc-opt --split-input-file --pass-pipeline='builtin.module(stc-instrument{ops=linalg.matmul})' %s | FileCheck %s --check-prefix=ONLYMM

// The ABI: two private declarations, once per module, before everything.
// CHECK-LABEL: module {
// CHECK-NEXT: func.func private @stc_rt_region_begin(!llvm.ptr) -> i64
// CHECK-NEXT: func.func private @stc_rt_region_end(!llvm.ptr, i64, i64)
// CHECK-NEXT: llvm.mlir.global internal constant @[[FID:__stc_region_id_[0-9a-f]+]]("[[FNAME:matmul/func.func#[0-9a-f]+]]\00") {addr_space = 0 : i32}
// CHECK-NEXT: llvm.mlir.global internal constant @[[OID:__stc_region_id_[0-9a-f]+]]("[[ONAME:matmul/linalg.matmul#[0-9a-f]+]]\00") {addr_space = 0 : i32}
// CHECK: func.func @matmul(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {stc.region = "[[FNAME]]"} {
// CHECK-NEXT: %[[FP:.*]] = llvm.mlir.addressof @[[FID]] : !llvm.ptr
// CHECK-NEXT: %[[FT:.*]] = call @stc_rt_region_begin(%[[FP]]) : (!llvm.ptr) -> i64
// CHECK-NEXT: %[[OP:.*]] = llvm.mlir.addressof @[[OID]] : !llvm.ptr
// CHECK-NEXT: %[[OT:.*]] = call @stc_rt_region_begin(%[[OP]]) : (!llvm.ptr) -> i64
// CHECK-NEXT: %[[R:.*]] = call @matmul__stc_region_0(%[[A]], %[[B]], %[[C]]) {no_inline} : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// 4x8 + 8x16 + 4x16 operands and a 4x16 result, f32: 1152 bytes.
// CHECK-NEXT: %[[OB:.*]] = arith.constant 1152 : i64
// CHECK-NEXT: call @stc_rt_region_end(%[[OP]], %[[OT]], %[[OB]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK-NEXT: %[[FB:.*]] = arith.constant 1152 : i64
// CHECK-NEXT: call @stc_rt_region_end(%[[FP]], %[[FT]], %[[FB]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK-NEXT: return %[[R]] : tensor<4x16xf32>
// CHECK: func.func private @matmul__stc_region_0(%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<8x16xf32>, %[[Z:.*]]: tensor<4x16xf32>) -> tensor<4x16xf32> attributes {no_inline, stc.outlined_region = "[[ONAME]]"} {
// CHECK-NEXT: %[[M:.*]] = linalg.matmul {stc.region = "[[ONAME]]"} ins(%[[X]], %[[Y]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[Z]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[M]] : tensor<4x16xf32>

// NOFUNC-LABEL: module {
// NOFUNC: func.func @matmul(
// NOFUNC-NOT: stc.region
// NOFUNC-SAME: {
// NOFUNC-NEXT: llvm.mlir.addressof
// NOFUNC-NEXT: call @stc_rt_region_begin
// NOFUNC-NEXT: call @matmul__stc_region_0
// NOFUNC-NEXT: arith.constant 1152
// NOFUNC-NEXT: call @stc_rt_region_end
// NOFUNC-NEXT: return
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A payload that uses a value from outside gets it as an argument; a dynamic
// shape makes the byte count 0.
// CHECK-LABEL: module {
// CHECK: func.func @scale(%[[X:.*]]: tensor<?xf32>, %[[S:.*]]: f32)
// CHECK: %[[R:.*]] = call @scale__stc_region_0(%[[X]], %[[S]]) {no_inline} : (tensor<?xf32>, f32) -> tensor<?xf32>
// CHECK-NEXT: %[[N:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @stc_rt_region_end(%{{.*}}, %{{.*}}, %[[N]])
// CHECK: func.func private @scale__stc_region_0(%[[OUT:.*]]: tensor<?xf32>, %[[SCALE:.*]]: f32) -> tensor<?xf32>
// CHECK: = linalg.generic
// CHECK-SAME: outs(%[[OUT]] : tensor<?xf32>)
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32

// Only matmuls with ops=linalg.matmul: the generic stays where it was.
// ONLYMM-LABEL: module {
// ONLYMM: func.func @scale(
// ONLYMM-SAME: stc.region = "scale/func.func#
// ONLYMM-NOT: __stc_region_0
// ONLYMM: = linalg.generic
// ONLYMM-NOT: __stc_region_0
// ONLYMM: return
#map = affine_map<(d0) -> (d0)>
func.func @scale(%x: tensor<?xf32>, %scale: f32) -> tensor<?xf32> {
  %0 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]}
      outs(%x : tensor<?xf32>) {
  ^bb0(%out: f32):
    %m = arith.mulf %out, %scale : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// Memrefs: the outlined function returns nothing. A function body ends its
// region before every return, on every path.
// CHECK-LABEL: module {
// CHECK: func.func @branches(
// CHECK-NEXT: %[[P:.*]] = llvm.mlir.addressof
// CHECK-NEXT: %[[T:.*]] = call @stc_rt_region_begin(%[[P]])
// CHECK-NEXT: cf.cond_br
// CHECK: call @branches__stc_region_0(%{{.*}}, %{{.*}}, %{{.*}}) {no_inline} : (memref<4x4xf32>, memref<4x4xf32>, memref<4x4xf32>) -> ()
// CHECK-NEXT: arith.constant 192 : i64
// CHECK-NEXT: call @stc_rt_region_end
// CHECK-NEXT: %[[B1:.*]] = arith.constant 193 : i64
// CHECK-NEXT: call @stc_rt_region_end(%[[P]], %[[T]], %[[B1]])
// CHECK-NEXT: return
// CHECK: ^bb2:
// CHECK-NEXT: %[[B2:.*]] = arith.constant 193 : i64
// CHECK-NEXT: call @stc_rt_region_end(%[[P]], %[[T]], %[[B2]])
// CHECK-NEXT: return
// CHECK: func.func private @branches__stc_region_0(%{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>, %{{.*}}: memref<4x4xf32>) attributes {no_inline, stc.outlined_region = "branches/linalg.matmul#
// CHECK-NEXT: linalg.matmul {stc.region = "branches/linalg.matmul#
// CHECK-NEXT: return{{$}}
func.func @branches(%flag: i1, %a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  cf.cond_br %flag, ^yes, ^no
^yes:
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>)
                outs(%c : memref<4x4xf32>)
  return
^no:
  return
}

// -----

// Existing declarations of the right type are reused; declarations and
// functions without bodies are not regions.
// CHECK-LABEL: module {
// CHECK-COUNT-1: func.func private @stc_rt_region_begin
// CHECK-NOT: func.func private @stc_rt_region_begin
// CHECK: func.func private @external(tensor<2xf32>) -> tensor<2xf32>
// CHECK-NOT: stc.region
// CHECK: func.func @uses_external(
// CHECK-SAME: stc.region = "uses_external/func.func#
func.func private @stc_rt_region_begin(!llvm.ptr) -> i64
func.func private @external(tensor<2xf32>) -> tensor<2xf32>
func.func @uses_external(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @external(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
