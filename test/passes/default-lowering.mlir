// stc-default-lowering: every linalg op outside the variants is tiled and
// vectorized (contractions down to FMAs), on static, odd and dynamic
// shapes; a variant keeps its own schedule; an op no default schedule
// applies to keeps its scalar-loop lowering, with a remark when asked.
// RUN: stc-opt --split-input-file --stc-default-lowering %s | FileCheck %s
// RUN: stc-opt --split-input-file --verify-diagnostics --stc-default-lowering='remarks=true' %s -o /dev/null
// RUN: not stc-opt --stc-default-lowering='remarks=maybe' %s 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not stc-opt --stc-default-lowering='colour=red' %s 2>&1 | FileCheck %s --check-prefix=BADNAME
// BADOPT: stc-default-lowering: option 'remarks': expected true or false, got 'maybe'
// BADNAME: unknown option 'colour' for pass 'stc-default-lowering' (valid options: remarks)

// CHECK-LABEL: func.func @matmul_odd
// CHECK-NOT: linalg.
// CHECK: scf.for
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_odd(%a: tensor<37x29xf32>, %b: tensor<29x53xf32>, %c: tensor<37x53xf32>) -> tensor<37x53xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<37x29xf32>, tensor<29x53xf32>) outs(%c : tensor<37x53xf32>) -> tensor<37x53xf32>
  return %r : tensor<37x53xf32>
}

// CHECK-LABEL: func.func @matmul_dynamic
// CHECK-NOT: linalg.
// CHECK: vector.create_mask
// CHECK: vector.fma
// CHECK-NOT: linalg.
// CHECK: return
func.func @matmul_dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// Cache blocks that divide the static sizes (64 x 192 x 128 here, not
// 64 x 256 x 128): no tile is dynamic, so nothing is masked.
// CHECK-LABEL: func.func @matmul_blocks_divide
// CHECK-NOT: vector.create_mask
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: vector.create_mask
// CHECK: return
func.func @matmul_blocks_divide(%a: tensor<64x512xf32>, %b: tensor<512x384xf32>, %c: tensor<64x384xf32>) -> tensor<64x384xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x384xf32>) outs(%c : tensor<64x384xf32>) -> tensor<64x384xf32>
  return %r : tensor<64x384xf32>
}

// One row (a decode step): 1 x 128 x 4 register tiles.
// CHECK-LABEL: func.func @decode
// CHECK: vector.fma {{.*}} : vector<128xf32>
// CHECK: return
func.func @decode(%a: tensor<1x768xf32>, %b: tensor<768x3072xf32>, %c: tensor<1x3072xf32>) -> tensor<1x3072xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<1x768xf32>, tensor<768x3072xf32>) outs(%c : tensor<1x3072xf32>) -> tensor<1x3072xf32>
  return %r : tensor<1x3072xf32>
}

// CHECK-LABEL: func.func @relu
// CHECK-NOT: linalg.
// CHECK: vector.transfer_read
// CHECK: arith.maximumf {{.*}} : vector<8x32xf32>
// CHECK-NOT: linalg.
// CHECK: return
func.func @relu(%x: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %q = arith.maximumf %a, %zero : f32
    linalg.yield %q : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// A row reduction (dynamic here): 8 rows by 64 columns of partial sums
// added elementwise along the row, then one horizontal reduction per row.
// CHECK-LABEL: func.func @rowsum
// CHECK-NOT: linalg.
// CHECK: scf.for
// CHECK: arith.addf {{.*}} : vector<8x64xf32>
// CHECK: vector.reduction <add>
// CHECK-NOT: linalg.
// CHECK: return
func.func @rowsum(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %o : f32
    linalg.yield %q : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Elementwise results whose init is a tensor.empty go to the buffer of an
// input of the same type and map that is used last there: %y's input is a
// function argument (the caller's buffer: not reused), %t's input %y is read
// again by %u (not reused), %u writes over %y (it reads y from its init).
// CHECK-LABEL: func.func @in_place
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<16x64xf32>
// CHECK: %[[Y:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: arith.addf %[[X:.*]], %[[X]] : vector<8x32xf32>
// CHECK: %[[T:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: %[[U:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[Y]])
// CHECK: tensor.extract_slice %[[T]]
// CHECK: arith.subf
// CHECK: return %[[U]]
func.func @in_place(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %a : f32
    linalg.yield %q : f32
  } -> tensor<16x64xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.addf %a, %one : f32
    linalg.yield %q : f32
  } -> tensor<16x64xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%y, %t : tensor<16x64xf32>, tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.subf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<16x64xf32>
  return %u : tensor<16x64xf32>
}

// exp on vectors of f32 becomes arithmetic (no expf call per lane): a
// polynomial scaled by powers of two built from the exponent bits.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: math.floor {{.*}} : vector<8x32xf32>
// CHECK: arith.bitcast {{.*}} : vector<8x32xi32> to vector<8x32xf32>
// CHECK: arith.cmpf uno
// CHECK-NOT: math.exp
// CHECK: return
func.func @exp(%x: tensor<64x96xf32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<64x96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.exp %a : f32
    linalg.yield %q : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// A static NHWC convolution with a 3x3 filter over channels in multiples
// of 8 runs by rows: tiles that divide every static size (7 output columns
// of 28, 32 filters, 8 channels), no padding, decomposed into 1-D
// convolutions lowered to FMAs.
// CHECK-LABEL: func.func @conv_static
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.pad
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.pad
// CHECK: return
func.func @conv_static(%in: tensor<1x30x30x128xf32>, %f: tensor<3x3x128x128xf32>, %o: tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<1x30x30x128xf32>, tensor<3x3x128x128xf32>) outs(%o : tensor<1x28x28x128xf32>) -> tensor<1x28x28x128xf32>
  return %r : tensor<1x28x28x128xf32>
}

// A 1x1 filter (a matmul in disguise) becomes im2col: the patch gather
// stays a linalg.generic (scalar loops beat vector gathers), the
// matmul-like product gets the contraction schedule.
// CHECK-LABEL: func.func @conv_1x1
// CHECK: linalg.generic
// CHECK: vector.fma
// CHECK: return
func.func @conv_1x1(%in: tensor<1x14x14x64xf32>, %f: tensor<1x1x64x32xf32>, %o: tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32> {
  // expected-remark @+1 {{'linalg.generic' keeps the scalar-loop lowering: an indexing map is not a projected permutation}}
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<1x14x14x64xf32>, tensor<1x1x64x32xf32>) outs(%o : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  return %r : tensor<1x14x14x32xf32>
}

// A static depthwise convolution: 7 of 14 output columns (a divisor: no
// partial tile, no padding) by 16 channels, all 3 filter columns per row.
// CHECK-LABEL: func.func @depthwise_static
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.pad
// CHECK: vector.fma {{.*}} : vector<1x7x16xf32>
// CHECK-NOT: tensor.pad
// CHECK: return
func.func @depthwise_static(%in: tensor<1x16x16x32xf32>, %f: tensor<3x3x32xf32>, %o: tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32> {
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<1x16x16x32xf32>, tensor<3x3x32xf32>) outs(%o : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  return %r : tensor<1x14x14x32xf32>
}

// A dynamically shaped convolution runs by rows too: the tile loops of the
// dynamic output columns (8), filters (32) and input channels (8) are
// peeled; full tiles are vectorized (no pad, no copy), the partial ones
// stay convolutions (scalar loops later) and are not tiled again.
// CHECK-LABEL: func.func @conv_dynamic
// CHECK-NOT: tensor.pad
// CHECK-NOT: copy
// CHECK: scf.for {{.*}} step %c8
// CHECK: scf.for {{.*}} step %c32
// CHECK: scf.for {{.*}} step %c8
// CHECK-NOT: linalg.
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK-NOT: tensor.pad
// CHECK-NOT: copy
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}}tensor<1x1x8x?xf32>
// CHECK-NOT: tensor.pad
// CHECK-NOT: copy
// CHECK-NOT: vector.
// CHECK: return
func.func @conv_dynamic(%in: tensor<?x?x?x?xf32>, %f: tensor<?x?x?x?xf32>, %o: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) outs(%o : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// A dynamic convolution over a static 5 input channels: rows lose there
// (as for a static one, which would become im2col), so it keeps the loops.
// CHECK-LABEL: func.func @conv_dynamic_few_channels
// CHECK-NOT: vector.
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: return
func.func @conv_dynamic_few_channels(%in: tensor<?x?x?x5xf32>, %f: tensor<3x3x5x64xf32>, %o: tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32> {
  // expected-remark @+1 {{'linalg.conv_2d_nhwc_hwcf' keeps the scalar-loop lowering: conv_decompose_vec pads every tile of a dynamic shape (slower than the loops); an indexing map is not a projected permutation}}
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%in, %f : tensor<?x?x?x5xf32>, tensor<3x3x5x64xf32>) outs(%o : tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %r : tensor<?x?x?x64xf32>
}

// A dynamically shaped depthwise convolution keeps the scalar loops: the
// built-in pads every tile of a dynamic shape (20x slower than the loops),
// and peeled full tiles measured no faster than the loops.
// CHECK-LABEL: func.func @depthwise_dynamic
// CHECK-NOT: tensor.pad
// CHECK-NOT: copy
// CHECK-NOT: vector.
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}}tensor<?x?x?x?xf32>
// CHECK-NOT: tensor.pad
// CHECK-NOT: copy
// CHECK-NOT: vector.
// CHECK: return
func.func @depthwise_dynamic(%in: tensor<?x?x?x?xf32>, %f: tensor<?x?x?xf32>, %o: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  // expected-remark @+1 {{'linalg.depthwise_conv_2d_nhwc_hwc' keeps the scalar-loop lowering: depthwise_conv_decompose_vec pads every tile of a dynamic shape (slower than the loops); an indexing map is not a projected permutation}}
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%in, %f : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) outs(%o : tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// A variant (stc.variant_of) keeps the schedule it was made with.
// CHECK-LABEL: func.func private @site__variant
// CHECK: linalg.matmul
func.func private @site__variant(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32>
    attributes {stc.variant_of = @site, stc.schedule = "matmul_mkn"} {
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A 1-D convolution written as a linalg.generic whose body takes the max
// of the products (not a convolution the vectorizer knows, and its input map
// is not a projected permutation): no default schedule vectorizes it; it
// keeps the scalar-loop lowering.
// CHECK-LABEL: func.func @shifted_max
// CHECK: linalg.generic
func.func @shifted_max(%x: tensor<40xf32>, %w: tensor<5xf32>, %init: tensor<36xf32>) -> tensor<36xf32> {
  // expected-remark @+1 {{stc-default-lowering: 'linalg.generic' keeps the scalar-loop lowering}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i + j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<40xf32>, tensor<5xf32>) outs(%init : tensor<36xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.maximumf %p, %o : f32
    linalg.yield %q : f32
  } -> tensor<36xf32>
  return %r : tensor<36xf32>
}
