// Every built-in schedule (passes/schedules/<name>.mlir, embedded in
// stc-opt at build time) applies cleanly to its op kind: one RUN per
// schedule, on the static shapes check-all.sh calls "div" (every schedule
// promises those, stc.dynamic = "divisible" ones included), with no remark
// about a dropped schedule. Dynamic shapes: dynamic-shapes.mlir.
// The last RUN fails when a schedule file has no RUN line here.

// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_mkn' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_mkn
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_pack_vec' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_pack_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_parallel_vec' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_parallel_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile16' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile16
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile16_vec' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile16_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile32' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile32
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile32_mkn_vec' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile32_mkn_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile32_vec' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile32_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile64x64x32' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile64x64x32
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_tile64x64x32_vec' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_tile64x64x32_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=conv_decompose_vec' %s 2>&1 | FileCheck %s -DNAME=conv_decompose_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=conv_parallel_decompose_vec' %s 2>&1 | FileCheck %s -DNAME=conv_parallel_decompose_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=conv_im2col' %s 2>&1 | FileCheck %s -DNAME=conv_im2col
// RUN: stc-opt --stc-multi-variant='all=true schedules=conv_im2col_vec' %s 2>&1 | FileCheck %s -DNAME=conv_im2col_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_mkn' %s 2>&1 | FileCheck %s -DNAME=matmul_mkn
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_pack_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_pack_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_parallel_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_parallel_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_parallel_reg8x32_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_parallel_reg8x32_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile16' %s 2>&1 | FileCheck %s -DNAME=matmul_tile16
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile16_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_tile16_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile32' %s 2>&1 | FileCheck %s -DNAME=matmul_tile32
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile32_mkn_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_tile32_mkn_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile32_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_tile32_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile64x64x128_reg8x32_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_tile64x64x128_reg8x32_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile64x64x32' %s 2>&1 | FileCheck %s -DNAME=matmul_tile64x64x32
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_tile64x64x32_vec' %s 2>&1 | FileCheck %s -DNAME=matmul_tile64x64x32_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=reduction_split8_vec' %s 2>&1 | FileCheck %s -DNAME=reduction_split8_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=reduction_tile8x64_vec' %s 2>&1 | FileCheck %s -DNAME=reduction_tile8x64_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=reduction_tile_reduction_vec' %s 2>&1 | FileCheck %s -DNAME=reduction_tile_reduction_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=conv_nchw_decompose_vec' %s 2>&1 | FileCheck %s -DNAME=conv_nchw_decompose_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=conv_nchw_im2col_vec' %s 2>&1 | FileCheck %s -DNAME=conv_nchw_im2col_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=depthwise_conv_decompose_vec' %s 2>&1 | FileCheck %s -DNAME=depthwise_conv_decompose_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matvec_tile8x64_vec' %s 2>&1 | FileCheck %s -DNAME=matvec_tile8x64_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matvec_tile_reduction_vec' %s 2>&1 | FileCheck %s -DNAME=matvec_tile_reduction_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=vecmat_kn_tile16x64_vec' %s 2>&1 | FileCheck %s -DNAME=vecmat_kn_tile16x64_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=vecmat_tile64x16_vec' %s 2>&1 | FileCheck %s -DNAME=vecmat_tile64x16_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=matmul_blas' %s 2>&1 | FileCheck %s -DNAME=matmul_blas
// RUN: stc-opt --stc-multi-variant='all=true schedules=batch_matmul_blas' %s 2>&1 | FileCheck %s -DNAME=batch_matmul_blas
// RUN: stc-opt --stc-multi-variant='all=true schedules=matvec_blas' %s 2>&1 | FileCheck %s -DNAME=matvec_blas
// RUN: stc-opt --stc-multi-variant='all=true schedules=vecmat_blas' %s 2>&1 | FileCheck %s -DNAME=vecmat_blas
// RUN: stc-opt --stc-multi-variant='all=true schedules=pooling_nhwc_max_rows_vec' %s 2>&1 | FileCheck %s -DNAME=pooling_nhwc_max_rows_vec
// RUN: stc-opt --stc-multi-variant='all=true schedules=pooling_nhwc_sum_rows_vec' %s 2>&1 | FileCheck %s -DNAME=pooling_nhwc_sum_rows_vec
// RUN: for f in %stc_src_root/passes/schedules/*.mlir; do n=$(basename $f .mlir); grep -q "schedules=$n'" %s || { echo "no RUN line for built-in schedule $n"; exit 1; }; done

// CHECK-NOT: remark
// CHECK: stc.schedule = "[[NAME]]", stc.variant_of = @__stc_site_
// CHECK-NOT: remark
// CHECK-NOT: stc.schedule

func.func @matmul(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>, %c: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%c : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

func.func @batch_matmul(%a: tensor<2x128x64xf32>, %b: tensor<2x64x128xf32>, %c: tensor<2x128x128xf32>) -> tensor<2x128x128xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x128x64xf32>, tensor<2x64x128xf32>) outs(%c : tensor<2x128x128xf32>) -> tensor<2x128x128xf32>
  return %r : tensor<2x128x128xf32>
}

func.func @conv(%i: tensor<1x34x34x16xf32>, %f: tensor<3x3x16x32xf32>, %o: tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x34x34x16xf32>, tensor<3x3x16x32xf32>) outs(%o : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  return %r : tensor<1x32x32x32xf32>
}

func.func @reduction(%x: tensor<256x512xf32>, %r0: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<256x512xf32>) outs(%r0 : tensor<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

func.func @matvec(%a: tensor<512x512xf32>, %x: tensor<512xf32>, %y: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.matvec ins(%a, %x : tensor<512x512xf32>, tensor<512xf32>) outs(%y : tensor<512xf32>) -> tensor<512xf32>
  return %r : tensor<512xf32>
}

func.func @vecmat(%x: tensor<512xf32>, %a: tensor<512x512xf32>, %y: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.vecmat ins(%x, %a : tensor<512xf32>, tensor<512x512xf32>) outs(%y : tensor<512xf32>) -> tensor<512xf32>
  return %r : tensor<512xf32>
}

func.func @conv_nchw(%i: tensor<1x16x34x34xf32>, %f: tensor<32x16x3x3xf32>, %o: tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x16x34x34xf32>, tensor<32x16x3x3xf32>) outs(%o : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  return %r : tensor<1x32x32x32xf32>
}

func.func @depthwise_conv(%i: tensor<1x66x66x64xf32>, %f: tensor<3x3x64xf32>, %o: tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32> {
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x66x66x64xf32>, tensor<3x3x64xf32>) outs(%o : tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  return %r : tensor<1x64x64x64xf32>
}

func.func @pooling_max(%i: tensor<1x64x64x64xf32>, %o: tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32> {
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %w : tensor<1x64x64x64xf32>, tensor<2x2xf32>) outs(%o : tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  return %r : tensor<1x32x32x64xf32>
}

func.func @pooling_sum(%i: tensor<1x64x64x64xf32>, %o: tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32> {
  %w = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %w : tensor<1x64x64x64xf32>, tensor<2x2xf32>) outs(%o : tensor<1x32x32x64xf32>) -> tensor<1x32x32x64xf32>
  return %r : tensor<1x32x32x64xf32>
}
