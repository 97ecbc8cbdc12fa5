// Each tunable op kind planned for variants becomes a site: a dispatch
// function carrying stc.site and the descriptor, a reference (stc.reference)
// and one variant per schedule of its kind (stc.variant_of, stc.schedule).
// Built-in schedules cover matmul, batch_matmul, conv_2d_nhwc_hwcf and
// reductions; Inputs/library.yaml covers the other kinds. `schedules=` pins
// the names so that new built-ins do not change this test.

// RUN: stc-opt --stc-multi-variant='variant-library=%S/Inputs/library.yaml schedules=matmul_tile16,matmul_mkn,batch_matmul_tile16,conv_im2col,reduction_split8_vec,tile4_any,vecmat_tile4,depthwise_tile1,nchw_tile1' %s | FileCheck %s

// CHECK-LABEL: func.func @mm(
// CHECK-NOT: linalg.matmul ins
// CHECK: call @[[MM:__stc_site_mm_linalg_matmul_[0-9a-f]+]](%arg0, %arg1, %arg2) {stc.site = "mm/linalg.matmul#{{[0-9a-f]+}}"}
// CHECK-NOT: linalg.matmul ins
// CHECK: return
// CHECK: func.func private @[[MM]](
// CHECK-SAME: stc.site = "mm/linalg.matmul#{{[0-9a-f]+}}"
// CHECK-SAME: stc.site_descriptor = {args = [{element = "f32", rank = 2 : i64, role = "input"}, {element = "f32", rank = 2 : i64, role = "input"}, {element = "f32", rank = 2 : i64, role = "both"}], op = "linalg.matmul", reference = 0 : i64,
// CHECK-SAME: variants = [{eligibility = "always", name = "reference", revision = "1", symbol = @[[MM]]__ref, workspace_bytes = 0 : i64}, {eligibility = "always", name = "matmul_mkn", revision = "1", symbol = @[[MM]]__matmul_mkn, workspace_bytes = 0 : i64}, {eligibility = "always", name = "matmul_tile16", revision = "1", symbol = @[[MM]]__matmul_tile16, workspace_bytes = 0 : i64}]}
// CHECK-NEXT: call @[[MM]]__ref(%arg0, %arg1, %arg2)
// CHECK: func.func private @[[MM]]__ref(
// CHECK-SAME: attributes {llvm.emit_c_interface, stc.reference}
// CHECK-NEXT: linalg.matmul
// CHECK: func.func private @[[MM]]__matmul_mkn(
// CHECK-SAME: attributes {llvm.emit_c_interface, stc.schedule = "matmul_mkn", stc.variant_of = @[[MM]]}
// CHECK: linalg.generic
// CHECK: func.func private @[[MM]]__matmul_tile16(
// CHECK-SAME: attributes {llvm.emit_c_interface, stc.schedule = "matmul_tile16", stc.variant_of = @[[MM]]}
// CHECK: scf.for
func.func @mm(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul {stc.plan = "variants:4"} ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}

// CHECK-LABEL: func.func @bmm(
// CHECK: call @[[BMM:__stc_site_bmm_linalg_batch_matmul_[0-9a-f]+]](
// CHECK: func.func private @[[BMM]](
// CHECK-SAME: stc.site = "bmm/linalg.batch_matmul#
// CHECK: func.func private @[[BMM]]__ref(
// CHECK: func.func private @[[BMM]]__batch_matmul_tile16(
// CHECK-SAME: stc.schedule = "batch_matmul_tile16", stc.variant_of = @[[BMM]]}
func.func @bmm(%a: tensor<2x32x16xf32>, %b: tensor<2x16x32xf32>, %c: tensor<2x32x32xf32>) -> tensor<2x32x32xf32> {
  %r = linalg.batch_matmul {stc.plan = "variants:4"} ins(%a, %b : tensor<2x32x16xf32>, tensor<2x16x32xf32>) outs(%c : tensor<2x32x32xf32>) -> tensor<2x32x32xf32>
  return %r : tensor<2x32x32xf32>
}

// CHECK-LABEL: func.func @conv(
// CHECK: call @[[CONV:__stc_site_conv_linalg_conv_2d_nhwc_hwcf_[0-9a-f]+]](
// CHECK: func.func private @[[CONV]](
// CHECK-SAME: stc.site = "conv/linalg.conv_2d_nhwc_hwcf#
// CHECK: func.func private @[[CONV]]__ref(
// CHECK: func.func private @[[CONV]]__conv_im2col(
// CHECK-SAME: stc.schedule = "conv_im2col", stc.variant_of = @[[CONV]]}
func.func @conv(%i: tensor<1x10x10x4xf32>, %f: tensor<3x3x4x8xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {stc.plan = "variants:4", dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x10x10x4xf32>, tensor<3x3x4x8xf32>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @red(
// CHECK: call @[[RED:__stc_site_red_linalg_generic_[0-9a-f]+]](
// CHECK: func.func private @[[RED]](
// CHECK-SAME: args = [{element = "f32", rank = 2 : i64, role = "input"}, {element = "f32", rank = 1 : i64, role = "both"}], op = "linalg.generic"
// CHECK: func.func private @[[RED]]__ref(
// CHECK: func.func private @[[RED]]__reduction_split8_vec(
// CHECK-SAME: stc.schedule = "reduction_split8_vec", stc.variant_of = @[[RED]]}
func.func @red(%x: tensor<16x64xf32>, %r0: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<16x64xf32>) outs(%r0 : tensor<16xf32>) attrs = {stc.plan = "variants:4"} {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @mv(
// CHECK: call @[[MV:__stc_site_mv_linalg_matvec_[0-9a-f]+]](
// CHECK: func.func private @[[MV]]__tile4_any(
// CHECK-SAME: stc.schedule = "tile4_any", stc.variant_of = @[[MV]]}
func.func @mv(%a: tensor<16x8xf32>, %x: tensor<8xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.matvec {stc.plan = "variants:2"} ins(%a, %x : tensor<16x8xf32>, tensor<8xf32>) outs(%y : tensor<16xf32>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// CHECK-LABEL: func.func @vm(
// CHECK: call @[[VM:__stc_site_vm_linalg_vecmat_[0-9a-f]+]](
// CHECK: func.func private @[[VM]]__vecmat_tile4(
// CHECK-SAME: stc.schedule = "vecmat_tile4", stc.variant_of = @[[VM]]}
func.func @vm(%x: tensor<16xf32>, %a: tensor<16x8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.vecmat {stc.plan = "variants:2"} ins(%x, %a : tensor<16xf32>, tensor<16x8xf32>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @dw(
// CHECK: call @[[DW:__stc_site_dw_linalg_depthwise_conv_2d_nhwc_hwc_[0-9a-f]+]](
// CHECK: func.func private @[[DW]]__depthwise_tile1(
// CHECK-SAME: stc.schedule = "depthwise_tile1", stc.variant_of = @[[DW]]}
func.func @dw(%i: tensor<1x10x10x8xf32>, %f: tensor<3x3x8xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %r = linalg.depthwise_conv_2d_nhwc_hwc {stc.plan = "variants:2", dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x10x10x8xf32>, tensor<3x3x8xf32>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @nchw(
// CHECK: call @[[NCHW:__stc_site_nchw_linalg_conv_2d_nchw_fchw_[0-9a-f]+]](
// CHECK: func.func private @[[NCHW]]__nchw_tile1(
// CHECK-SAME: stc.schedule = "nchw_tile1", stc.variant_of = @[[NCHW]]}
func.func @nchw(%i: tensor<1x4x10x10xf32>, %f: tensor<6x4x3x3xf32>, %o: tensor<1x6x8x8xf32>) -> tensor<1x6x8x8xf32> {
  %r = linalg.conv_2d_nchw_fchw {stc.plan = "variants:2", dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x4x10x10xf32>, tensor<6x4x3x3xf32>) outs(%o : tensor<1x6x8x8xf32>) -> tensor<1x6x8x8xf32>
  return %r : tensor<1x6x8x8xf32>
}
