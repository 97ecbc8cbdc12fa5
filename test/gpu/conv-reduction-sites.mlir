// GPU dispatch sites for convolutions and row reductions (--target=cuda,
// tools/common/gpu_conv_schedule.c): conv:PxF variants of
// linalg.conv_2d_nhwc_hwcf (each thread P output pixels x F channels in
// registers, implicit GEMM) and red:warp / red:warp/v4 / red:block variants
// of a linalg.generic reducing its innermost dimension (a warp or a block
// per row, xor-shuffle trees, the generic's own body cloned into the loop).
// A kernel that does not handle an op declines it with a remark; an op that
// every variant declines is no site (the default kernel).
// RUN: stc-opt --tune-hot-paths --target=cuda --mlir-print-ir-after-all %s -o %t.mlir 2>%t.log
// RUN: FileCheck %s --check-prefix=REMARK < %t.log
// RUN: FileCheck %s --check-prefix=SITES < %t.log
// RUN: FileCheck %s --check-prefix=CONV2 < %t.log
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=conv:4x4,conv:2x8 --mlir-print-ir-after-all %s -o /dev/null 2>%t.conv.log
// RUN: FileCheck %s --check-prefix=CONV < %t.conv.log
// RUN: FileCheck %s --check-prefix=RED < %t.log
// RUN: FileCheck %s --check-prefix=PTX < %t.mlir
// An explicit list: only those variants; bad items are errors.
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=conv:2x4,red:block --mlir-print-ir-after-all %s -o /dev/null 2>%t.list.log
// RUN: FileCheck %s --check-prefix=LIST < %t.list.log
// RUN: not stc-opt --tune-hot-paths --target=cuda --gpu-sites=conv:4 %s 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not stc-opt --tune-hot-paths --target=cuda --gpu-sites=conv:32x32 %s 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not stc-opt --tune-hot-paths --target=cuda --gpu-sites=conv:16x15 %s 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: not stc-opt --tune-hot-paths --target=cuda --gpu-sites=red:tree %s 2>&1 | FileCheck %s --check-prefix=BADRED
// The largest tile: 16 pixels x 16 channels (64 vectors of 4).
// RUN: stc-opt --tune-hot-paths --target=cuda --gpu-sites=conv:16x16 %s -o /dev/null

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red2 = affine_map<(d0, d1) -> (d0)>
#col2 = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red3 = affine_map<(d0, d1, d2) -> (d0, d1)>

func.func @conv(%i: tensor<1x18x18x8xf32>, %f: tensor<3x3x8x16xf32>, %o: tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
     ins(%i, %f : tensor<1x18x18x8xf32>, tensor<3x3x8x16xf32>) outs(%o : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  return %r : tensor<1x16x16x16xf32>
}

func.func @conv7(%i: tensor<1x9x9x3xf32>, %f: tensor<3x3x3x7xf32>, %o: tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
     ins(%i, %f : tensor<1x9x9x3xf32>, tensor<3x3x3x7xf32>) outs(%o : tensor<1x4x4x7xf32>) -> tensor<1x4x4x7xf32>
  return %r : tensor<1x4x4x7xf32>
}

func.func @rmax(%s: tensor<4x128x128xf32>, %m: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %max = linalg.generic {indexing_maps = [#id3, #red3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<4x128x128xf32>) outs(%m : tensor<4x128xf32>) {
  ^bb0(%v: f32, %a: f32):
    %r = arith.maximumf %v, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  return %max : tensor<4x128xf32>
}

func.func @sumexp(%x: tensor<64x254xf32>, %m: tensor<64xf32>, %z: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #red2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<64x254xf32>, tensor<64xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%v: f32, %mx: f32, %a: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

func.func @colsum(%x: tensor<64x32xf32>, %z: tensor<32xf32>) -> tensor<32xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #col2], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<64x32xf32>) outs(%z : tensor<32xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.addf %v, %a : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

func.func @rowsub(%x: tensor<64x32xf32>, %z: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x32xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%v: f32, %a: f32):
    %s = arith.subf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// 7 output channels: no conv variant; the reduced dimension 254: no v4;
// a reduction over the outer dimension and a subtracting body: none.
// REMARK: remark: stc-multi-variant: schedule 'gpu_conv_p1_f4' declines site 'conv7/linalg.conv_2d_nhwc_hwcf#{{.*}}': 7 output channels are not a multiple of the 4 channels per thread
// REMARK: remark: stc-multi-variant: schedule 'gpu_conv_p1_f2' declines site 'conv7/linalg.conv_2d_nhwc_hwcf#{{.*}}': 7 output channels are not a multiple of the 2 channels per thread
// REMARK: remark: stc-multi-variant: schedule 'gpu_conv_p2_f4' declines site 'conv7/
// REMARK: remark: stc-multi-variant: schedule 'gpu_red_warp_v4' declines site 'sumexp/linalg.generic#{{.*}}': the reduced dimension (254) is not a multiple of 4
// REMARK: remark: stc-multi-variant: schedule 'gpu_red_warp' declines site 'colsum/linalg.generic#{{.*}}': the innermost dimension is not the only reduction dimension
// REMARK: remark: stc-multi-variant: schedule 'gpu_red_block' declines site 'rowsub/linalg.generic#{{.*}}': the body's result is not addf/mulf/maximumf/minimumf/maxnumf/minnumf of the accumulator

// The sites and their variants, in the list's order after the reference.
// SITES-LABEL: IR Dump After StcMultiVariant
// SITES: func.func private @__stc_site_conv_{{[a-z0-9_]+}}({{.*}}stc.site = "conv/linalg.conv_2d_nhwc_hwcf
// SITES-SAME: name = "reference"
// SITES-SAME: name = "gpu_conv_p1_f4"
// SITES-SAME: name = "gpu_conv_p1_f2"
// SITES-SAME: name = "gpu_conv_p2_f4"
// SITES: func.func @conv7(
// SITES-NOT: call @__stc_site
// SITES: linalg.conv_2d_nhwc_hwcf
// SITES: func.func private @__stc_site_rmax_{{[a-z0-9_]+}}({{.*}}stc.site = "rmax/linalg.generic
// SITES-SAME: name = "reference"
// SITES-SAME: name = "gpu_red_warp"
// SITES-SAME: name = "gpu_red_warp_v4"
// SITES-SAME: name = "gpu_red_block"
// SITES: func.func private @__stc_site_sumexp_{{[a-z0-9_]+}}({{.*}}stc.site = "sumexp/linalg.generic
// SITES-SAME: name = "gpu_red_warp", revision = "1", symbol = @{{[A-Za-z0-9_]+}}, workspace_bytes = 0 : i64}, {eligibility = "static-shape", name = "gpu_red_block"
// SITES: func.func @colsum(
// SITES-NOT: call @__stc_site
// SITES: linalg.generic
// SITES: func.func @rowsub(
// SITES-NOT: call @__stc_site
// SITES: linalg.generic
// SITES-LABEL: IR Dump After

// conv:4x4 on 1x16x16x16 outputs: 16/4 = 4 channel groups on x, 64 pixel
// groups of 4 on y, one block of 256 threads; accumulators from the output
// (4 pixels x one vector of 4 channels), loop-carried through kh, kw, c
// (c by 4: one 128-bit input load per pixel, 16 FMAs per input vector);
// stores only for pixels inside the output.
// CONV-LABEL: IR Dump After StcGpuMapForall
// CONV: func.func private @__stc_site_conv_{{.*}}__gpu_conv_p4_f4(
// CONV-NOT: linalg.conv_2d_nhwc_hwcf
// CONV: %[[C256:.*]] = arith.constant 256 : index
// CONV: gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %[[C256]],
// CONV-COUNT-4: vector.load %arg2{{.*}} : memref<1x16x16x16xf32>, vector<4xf32>
// CONV: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CONV: scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CONV: scf.for %[[C:.*]] = %{{.*}} to %c8 step %c4{{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CONV-COUNT-4: vector.load %arg0[{{.*}}, %[[C]]] {alignment = 16 : i64} : memref<1x18x18x8xf32>, vector<4xf32>
// CONV-COUNT-16: vector.fma
// CONV-NOT: vector.fma
// CONV: scf.yield
// CONV-COUNT-4: scf.if
// CONV: gpu.terminator
// CONV: func.func private @__stc_site_conv_{{.*}}__gpu_conv_p2_f8(
// CONV: gpu.launch
// CONV: func.func @conv7(
// CONV: linalg.conv_2d_nhwc_hwcf

// conv:1x2: vectors of 2 channels.
// CONV2-LABEL: IR Dump After StcGpuMapForall
// CONV2: func.func private @__stc_site_conv_{{.*}}__gpu_conv_p1_f2(
// CONV2: gpu.launch
// CONV2: vector.fma {{.*}} : vector<2xf32>
// CONV2: gpu.terminator

// Reductions: a warp per row (8 rows per block: 512 rows of 4x128 -> 64
// blocks), 128-bit loads for v4, 5 xor shuffles, lane 0 combines with the
// output; the block variant has one 256-thread block per row, the warp
// totals in workgroup memory, a barrier and a second tree. The generic's
// body (exp(x - max)) runs inside the row loop.
// RED-LABEL: IR Dump After StcGpuMapForall
// RED: func.func private @__stc_site_rmax_{{.*}}__gpu_red_warp(
// RED: memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<4x128x128xf32> into memref<512x128xf32>
// RED: %[[C64:.*]] = arith.constant 64 : index
// RED: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[C64]],
// RED: scf.for
// RED: memref.load {{.*}} : memref<512x128xf32>
// RED: arith.maximumf
// RED-COUNT-5: gpu.shuffle  xor
// RED: func.func private @__stc_site_rmax_{{.*}}__gpu_red_warp_v4(
// RED: scf.for
// RED: vector.load {{.*}} {alignment = 16 : i64} : memref<512x128xf32>, vector<4xf32>
// RED-COUNT-4: arith.maximumf
// RED: func.func private @__stc_site_rmax_{{.*}}__gpu_red_block(
// RED: gpu.launch {{.*}} workgroup(%[[SM:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// RED-COUNT-5: gpu.shuffle  xor
// RED: memref.store {{.*}}, %[[SM]]
// RED: gpu.barrier
// RED: memref.load %[[SM]]
// RED-COUNT-5: gpu.shuffle  xor
// RED: func.func private @__stc_site_sumexp_{{.*}}__gpu_red_warp(
// RED-NOT: linalg.generic
// RED: scf.for
// RED: arith.subf
// RED: math.exp
// RED: arith.addf
// RED: scf.yield
// RED: func.func @colsum(
// RED: linalg.generic

// The reduction kernels' PTX has butterfly shuffles.
// PTX: gpu.binary @__stc_site_rmax_{{[a-z0-9_]+}}__gpu_red_warp_kernel
// PTX-SAME: shfl.sync.bfly.b32

// LIST: IR Dump After StcMultiVariant
// LIST: func.func private @__stc_site_conv_{{[a-z0-9_]+}}({{.*}}stc.site = "conv/linalg.conv_2d_nhwc_hwcf{{.*}}variants = [{eligibility = "always", name = "reference"{{[^]]*}}name = "gpu_conv_p2_f4"{{[^]]*}}}]}
// LIST: func.func private @__stc_site_rmax_{{[a-z0-9_]+}}({{.*}}stc.site = "rmax/linalg.generic{{.*}}variants = [{eligibility = "always", name = "reference"{{[^]]*}}name = "gpu_red_block"{{[^]]*}}}]}
// Remarks are printed at the end.
// LIST: remark: stc-multi-variant: schedule 'gpu_conv_p2_f4' declines site 'conv7/
// BAD: invalid --gpu-sites item 'conv:4' (expected conv:PxF, e.g. conv:4x4)
// BIG: invalid --gpu-sites item 'conv:32x32' (conv:32x32: P from 1 to 16 pixels, F even, from 2 to 32 channels, at most 64 accumulators (P times F/4 or F/2))
// ODD: invalid --gpu-sites item 'conv:16x15' (conv:16x15: P from 1 to 16 pixels, F even
// BADRED: invalid --gpu-sites item 'red:tree' (expected red:warp, red:warp/v4 or red:block)
